import { describe, expect, test } from "bun:test";
import { keywordExamples, keywordLines } from "../../../web/keyword-examples";

describe("Settings' keyword boxes", () => {
  test("one keyword or phrase per line; commas still separate, spaces never do", () => {
    expect(keywordLines("STOP\nstop texting me\n\n  quit  ")).toEqual(["STOP", "stop texting me", "quit"]);
    expect(keywordLines("STOP, QUIT; ENOUGH")).toEqual(["STOP", "QUIT", "ENOUGH"]);
  });
  test("what a list matches, from its own words", () => {
    expect(keywordExamples("opt-out", "STOP\nstop texting me")).toEqual({ yes: ["STOP", "stop!", "Stop texting me"], no: "stop by later" });
    expect(keywordExamples("help", "HELP\nINFO")).toEqual({ yes: ["HELP", "help!", "Info"], no: "I need help" });
    expect(keywordExamples("reply", "hours")).toEqual({ yes: ["HOURS", "hours!"], no: "Hours please" });
    expect(keywordExamples("opt-out", "  \n!!")).toEqual({ yes: [], no: null });
  });
});

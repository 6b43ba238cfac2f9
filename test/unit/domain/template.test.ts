import { describe, expect, test } from "bun:test";
import { builtinVariables, fallbackProblems, renderTemplate, templateVariables } from "../../../src/domain/template";

/** Far above what a loaded machine takes (a load average of 8 on 2 cores), far below a quadratic blow-up. */
const LINEAR_BOUND_MS = 10_000;

describe("renderTemplate: placeholders", () => {
  test("replaces a placeholder by the value", () => {
    expect(renderTemplate("Hi {{firstName}}!", { firstName: "Ada" })).toEqual({
      content: "Hi Ada!",
      variablesUsed: ["firstName"],
    });
  });

  test("whitespace inside the braces is trimmed (spaces, tabs, newlines)", () => {
    const vars = { name: "Ada" };
    expect(renderTemplate("{{ name }}|{{name  }}|{{\tname\t}}|{{\n name \n}}", vars).content).toBe("Ada|Ada|Ada|Ada");
  });

  test("names are case-sensitive", () => {
    const r = renderTemplate("{{Name}}/{{name}}/{{NAME}}", { name: "ada", Name: "Ada" });
    expect(r.content).toBe("Ada/ada/");
    expect(r.variablesUsed).toEqual(["Name", "name", "NAME"]);
  });

  test("a missing variable becomes empty text and is still listed", () => {
    const r = renderTemplate("Hi {{firstName}}, code {{code}}.", { firstName: "Ada" });
    expect(r.content).toBe("Hi Ada, code .");
    expect(r.variablesUsed).toEqual(["firstName", "code"]);
  });

  test("repeated placeholders are each replaced and listed once, in first-appearance order", () => {
    const r = renderTemplate("{{b}} {{a}} {{b}} {{ a }}", { a: "1", b: "2" });
    expect(r.content).toBe("2 1 2 1");
    expect(r.variablesUsed).toEqual(["b", "a"]);
  });

  test("adjacent placeholders", () => {
    expect(renderTemplate("{{a}}{{b}}{{a}}", { a: "x", b: "y" }).content).toBe("xyx");
  });

  test("names may contain digits, _, . and -", () => {
    const vars = { field_1: "a", "order.id": "b", "zip-code": "c", _x: "d", "2nd": "e" };
    const r = renderTemplate("{{field_1}}{{order.id}}{{zip-code}}{{_x}}{{2nd}}", vars);
    expect(r.content).toBe("abcde");
    expect(r.variablesUsed).toEqual(["field_1", "order.id", "zip-code", "_x", "2nd"]);
  });

  test("unicode letters in names and values", () => {
    expect(renderTemplate("Bonjour {{prénom}} 👋", { prénom: "Zoë 😀" }).content).toBe("Bonjour Zoë 😀 👋");
  });

  test("template without placeholders is unchanged", () => {
    expect(renderTemplate("Plain text { } }} {", {})).toEqual({ content: "Plain text { } }} {", variablesUsed: [] });
    expect(renderTemplate("", {})).toEqual({ content: "", variablesUsed: [] });
  });
});

describe("renderTemplate: malformed placeholders stay literal", () => {
  test("unclosed {{", () => {
    expect(renderTemplate("Hi {{firstName", { firstName: "Ada" }).content).toBe("Hi {{firstName");
    expect(renderTemplate("Hi {{firstName}", { firstName: "Ada" }).content).toBe("Hi {{firstName}");
    expect(renderTemplate("{{", {}).content).toBe("{{");
  });

  test("empty braces", () => {
    expect(renderTemplate("a{{}}b{{  }}c", {})).toEqual({ content: "a{{}}b{{  }}c", variablesUsed: [] });
  });

  test("names with spaces or other characters", () => {
    const vars = { "first name": "x", "a!": "y" };
    expect(renderTemplate("{{first name}} {{a!}}", vars).content).toBe("{{first name}} {{a!}}");
  });

  test("single braces are not placeholders", () => {
    expect(renderTemplate("{name} {{name}", { name: "x" }).content).toBe("{name} {{name}");
  });

  test("an unclosed {{ before a good placeholder does not swallow it", () => {
    expect(renderTemplate("{{ oops {{name}}", { name: "Ada" }).content).toBe("{{ oops Ada");
  });

  test("triple braces keep the extra brace as text", () => {
    expect(renderTemplate("{{{name}}}", { name: "Ada" }).content).toBe("{Ada}");
  });
});

describe("renderTemplate: values are inserted verbatim", () => {
  test("no recursion into values containing placeholders", () => {
    const r = renderTemplate("{{a}}", { a: "{{b}}", b: "nope" });
    expect(r.content).toBe("{{b}}");
    expect(r.variablesUsed).toEqual(["a"]);
  });

  test("values with $ patterns are not treated as replacement patterns", () => {
    expect(renderTemplate("{{a}}", { a: "$& $1 $$" }).content).toBe("$& $1 $$");
  });

  test("object prototype names are not variables", () => {
    expect(renderTemplate("{{constructor}}{{toString}}{{__proto__}}", {}).content).toBe("");
  });

  const PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "prototype", "valueOf", "__defineGetter__"];

  test.each(PROTOTYPE_NAMES)("{{%s}} is a name like any other: absent → empty or its fallback, present → the value", (name) => {
    const t = `[{{${name}}}][{{ ${name} | none }}]`;
    expect(renderTemplate(t, {}).content).toBe("[][none]");
    expect(renderTemplate(t, new Map()).content).toBe("[][none]");
    expect(renderTemplate(t, Object.create(null)).content).toBe("[][none]");
    // JSON.parse and Object.fromEntries define `__proto__` as an own key, like any other.
    expect(renderTemplate(t, JSON.parse(`{"${name}":"v"}`)).content).toBe("[v][v]");
    expect(renderTemplate(t, Object.fromEntries([[name, "v"]])).content).toBe("[v][v]");
    expect(renderTemplate(t, new Map([[name, "v"]])).content).toBe("[v][v]");
    expect(renderTemplate(t, {}).variablesUsed).toEqual([name]);
  });

  test("linear time on adversarial input", () => {
    const t = "{{ ".repeat(50_000) + "{{a".repeat(50_000) + "{".repeat(100_000);
    const start = performance.now();
    expect(renderTemplate(t, { a: "x" }).content).toBe(t);
    // Catches a quadratic blow-up (minutes on this input), not a speed: scripts/bench/hostile-input.ts measures it.
    expect(performance.now() - start).toBeLessThan(LINEAR_BOUND_MS);
  });
});

describe("templateVariables", () => {
  test("distinct names in order", () => {
    expect(templateVariables("Hi {{ firstName }} {{lastName}}, {{firstName}} {{}} {{bad name}}")).toEqual([
      "firstName",
      "lastName",
    ]);
    expect(templateVariables("none")).toEqual([]);
  });
});

describe("builtinVariables", () => {
  const base = { phoneNumber: "+14155552671", formName: "Contact us", timezone: "UTC" };
  // 2024-03-10T06:30:00Z: a Sunday; New York is still on EST (UTC-5) until 07:00Z that day.
  const now = Date.UTC(2024, 2, 10, 6, 30, 0);

  test("all names are always present", () => {
    const v = builtinVariables({ ...base, now });
    expect(v).toEqual({
      firstName: "",
      lastName: "",
      fullName: "",
      email: "",
      phoneNumber: "+14155552671",
      source: "",
      formName: "Contact us",
      date: "2024-03-10",
      time: "06:30",
    });
  });

  test("fullName joins and trims", () => {
    expect(builtinVariables({ ...base, now, firstName: "Ada", lastName: "Lovelace" }).fullName).toBe("Ada Lovelace");
    expect(builtinVariables({ ...base, now, firstName: "Ada" }).fullName).toBe("Ada");
    expect(builtinVariables({ ...base, now, lastName: "Lovelace" }).fullName).toBe("Lovelace");
  });

  test("passes through email and source", () => {
    const v = builtinVariables({ ...base, now, email: "a@example.com", source: "landing" });
    expect(v.email).toBe("a@example.com");
    expect(v.source).toBe("landing");
  });

  test("date and time are in the form's timezone", () => {
    const ny = builtinVariables({ ...base, now, timezone: "America/New_York" });
    expect(ny.date).toBe("2024-03-10");
    expect(ny.time).toBe("01:30");
    const tokyo = builtinVariables({ ...base, now: Date.UTC(2024, 11, 31, 15, 5), timezone: "Asia/Tokyo" });
    expect(tokyo.date).toBe("2025-01-01");
    expect(tokyo.time).toBe("00:05");
    const la = builtinVariables({ ...base, now: Date.UTC(2024, 0, 1, 3, 0), timezone: "America/Los_Angeles" });
    expect(la.date).toBe("2023-12-31");
    expect(la.time).toBe("19:00");
  });

  test("midnight is 00:00, not 24:00", () => {
    expect(builtinVariables({ ...base, now: Date.UTC(2024, 5, 1, 0, 0) }).time).toBe("00:00");
  });

  test("an unknown timezone falls back to UTC", () => {
    const v = builtinVariables({ ...base, now, timezone: "Not/AZone" });
    expect(v.date).toBe("2024-03-10");
    expect(v.time).toBe("06:30");
  });

  test("the per-minute reuse shows what formatting each instant would, across clock changes and odd offsets", () => {
    /** The date and time of `at` in `zone`, formatted afresh. */
    const fresh = (at: number, zone: string) => {
      const p: Record<string, string> = {};
      const fmt = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
      for (const x of fmt.formatToParts(new Date(at))) p[x.type] = x.value;
      return `${p.year}-${p.month}-${p.day} ${p.hour === "24" ? "00" : p.hour}:${p.minute}`;
    };
    const cases: Array<[string, number]> = [
      ["America/New_York", Date.UTC(2024, 2, 10, 6, 58)], // spring forward at 07:00Z
      ["America/New_York", Date.UTC(2024, 10, 3, 5, 58)], // fall back at 06:00Z
      ["Australia/Lord_Howe", Date.UTC(2024, 3, 6, 14, 58)], // a 30-minute change at 15:00Z
      ["Asia/Kathmandu", Date.UTC(2024, 0, 1, 0, 0)], // +05:45
      ["Africa/Monrovia", Date.UTC(1970, 0, 1, 0, 0)], // -00:44:30 until 1972: minutes straddle UTC minutes
      ["Pacific/Apia", Date.UTC(2011, 11, 30, 9, 58)], // skipped a whole day
    ];
    for (const [zone, start] of cases) {
      // Steps of 7.3 s over four minutes, forwards, so each minute is first computed then reused.
      for (let at = start; at < start + 4 * 60_000; at += 7_300) {
        const v = builtinVariables({ ...base, now: at, timezone: zone });
        expect(`${v.date} ${v.time}`).toBe(fresh(at, zone));
      }
    }
  });

  test("renders together with custom values (custom wins over computed names)", () => {
    const vars = { ...builtinVariables({ ...base, now, firstName: "Ada" }), date: "next Tuesday" };
    expect(renderTemplate("Hi {{firstName}}, see you {{date}} at {{ time }} via {{formName}}", vars).content).toBe(
      "Hi Ada, see you next Tuesday at 06:30 via Contact us",
    );
  });
});

describe("renderTemplate: fallbacks {{ name | text }}", () => {
  test("the fallback is used when the value is missing", () => {
    const r = renderTemplate("Hi {{firstName | there}}, thanks!", {});
    expect(r).toEqual({ content: "Hi there, thanks!", variablesUsed: ["firstName"] });
  });

  test("the fallback is used when the value is empty or only whitespace", () => {
    expect(renderTemplate("Hi {{firstName|there}}!", { firstName: "" }).content).toBe("Hi there!");
    expect(renderTemplate("Hi {{firstName|there}}!", { firstName: "  \t" }).content).toBe("Hi there!");
  });

  test("a present value wins over the fallback, as written", () => {
    expect(renderTemplate("Hi {{ firstName | there }}!", { firstName: " Ada" }).content).toBe("Hi  Ada!");
  });

  test("the fallback's ends are trimmed, inner spaces and punctuation kept", () => {
    expect(renderTemplate("{{ who |  dear customer, friend.  }}", {}).content).toBe("dear customer, friend.");
    expect(renderTemplate("{{\nwho\n|\nthere\n}}", {}).content).toBe("{{\nwho\n|\nthere\n}}");
  });

  test("without a fallback a missing value is still empty text", () => {
    expect(renderTemplate("Hi {{firstName}}!", {}).content).toBe("Hi !");
  });

  test("a malformed fallback stays literal text", () => {
    for (const t of ["{{a |}}", "{{a | }}", "{{a | b | c}}", "{{a | {b}}", "{{a | b", "{{a | b}", `{{a | ${"x".repeat(101)}}}`]) {
      expect(renderTemplate(t, { a: "" }).content).toBe(t);
    }
    expect(renderTemplate(`{{a | ${"x".repeat(100)}}}`, {}).content).toBe("x".repeat(100));
  });

  test("a fallback is not itself a template", () => {
    expect(renderTemplate("{{a | {{b}}}}", { b: "B" }).content).toBe("{{a | B}}");
  });

  test("stays linear on hostile input", () => {
    const t = "{{a|".repeat(20_000) + "x";
    const start = performance.now();
    renderTemplate(t, {});
    fallbackProblems(t);
    expect(performance.now() - start).toBeLessThan(LINEAR_BOUND_MS);
  });
});

describe("fallbackProblems", () => {
  test("well-formed fallbacks and plain placeholders have none", () => {
    expect(fallbackProblems("Hi {{firstName | there}}, {{topic}} {{ a|b }} {not} {{ two words | x }}")).toEqual([]);
  });

  test("each malformed one is named", () => {
    expect(fallbackProblems("Hi {{firstName |}} and {{ x | a | b }} and {{y|ok}} and {{z | open")).toEqual([
      "{{firstName |}}",
      "{{ x | a | b }}",
      "{{z | open",
    ]);
    expect(fallbackProblems(`{{a|${"x".repeat(101)}}}`)[0]).toEndWith("…");
    expect(fallbackProblems("{{a|line\nbreak}}")).toEqual(["{{a|line\nbreak}}"]);
  });
});

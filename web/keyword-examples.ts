/**
 * The Settings keyword boxes' pure parts: how a box's text becomes keywords, and the examples
 * shown under it (docs/api-decisions.md, "Keyword phrases").
 */
import { parseKeyword, type KeywordUse } from "../src/domain/keywords";

/**
 * Keywords as typed in a box: one per line. Commas and semicolons separate too, so a list typed
 * the old way ("STOP, END") never becomes one phrase that nobody texts and leaves STOP out.
 */
export const keywordLines = (v: string) => v.split(/[\n,;]+/).map((w) => w.trim()).filter(Boolean);

const sentence = (k: string) => k.charAt(0) + k.slice(1).toLowerCase();

/** What a list will match, with examples built from its own keywords (as typed, before saving). */
export function keywordExamples(use: KeywordUse, typed: string): { yes: string[]; no: string | null } {
  const list = keywordLines(typed).map(parseKeyword).filter((k): k is string => k !== null);
  if (list.length === 0) return { yes: [], no: null };
  const first = list[0];
  const phrase = list.find((k) => k.includes(" "));
  const yes = [...new Set([first, `${first.toLowerCase()}!`, ...(phrase ? [sentence(phrase)] : list[1] ? [sentence(list[1])] : [])])];
  const no =
    use === "opt-out" && list.includes("STOP")
      ? "stop by later"
      : use === "help"
        ? `I need ${first.toLowerCase()}`
        : `${sentence(first)} please`;
  return { yes, no };
}


/**
 * Sending has one home (docs/api-decisions.md, "The house, round two: one sending path"):
 * src/services/sending/ puts every text in the queue and writes every new message row, and
 * src/services/opt-outs.ts makes every opt-out decision. Checked on the source, comments and
 * string contents blanked:
 * - `queue.insert(` is called in src/services/sending/ alone (a re-queued row goes through its
 *   `requeue`, the webhook's entry through `queueAhead`);
 * - `INSERT INTO messages` is written only in the message stores, each statement behind a named
 *   store function, and those functions (the intake applier's batch statements included: the form
 *   path's texts, admitted by the webhook's job, written in the applier's batch by
 *   sending/applied.ts) are used by src/services/sending/ alone;
 * - outside opt-outs.ts and the sending module, no code tests a contact's stored opt-out flag:
 *   it is handed to `admit()` (or opt-outs.ts), never branched on.
 * Each failure lists every offending file:line.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { blankComments, sourceFiles } from "./source-text";

const SRC = resolve(import.meta.dir, "../../src");
const SENDING = "services/sending/";
const OPT_OUTS = "services/opt-outs.ts";

const files = sourceFiles(SRC).map((p) => {
  const text = readFileSync(p, "utf8");
  return { path: relative(SRC, p), text, code: blankComments(text, true), sql: blankComments(text) };
});

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;
const hits = (f: { path: string; code: string }, re: RegExp) => [...f.code.matchAll(re)].map((m) => `${f.path}:${lineOf(f.code, m.index!)}: ${m[0].trim()}`);

/** The names a file imports (`import { a, b as c } from "…"`), type-only imports included. */
function importedNames(text: string): string[] {
  return [...text.matchAll(/^[ \t]*import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+["'][^"']+["']/gm)].flatMap((m) =>
    m[1].split(",").map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]).filter(Boolean),
  );
}

/** The store functions (and the applier's statement set's constant) that insert into messages. */
const MESSAGE_INSERTS = ["insertMessageRow", "insertTemplateMessage"];
const APPLIER_INSERT = "MESSAGE_INSERT";

/** A stored opt-out flag read as a condition: `if (c.optedOut`, `!row.opted_out`, `x.optedOut === 1 ? …`, `… && c.optedOut`. */
const DECIDES = [
  /\bif\s*\(\s*!?\s*[\w$]+(?:\??\.[\w$]+)*\??\.(?:optedOut|opted_out)\b/g,
  /!\s*[\w$]+(?:\??\.[\w$]+)*\??\.(?:optedOut|opted_out)\b/g,
  /[\w$)\]]\??\.(?:optedOut|opted_out)\b\s*(?:[!=]==?\s*(?:1|0|true|false)\s*)?(?:\?(?![.?:])|&&|\|\|)/g,
  /(?:&&|\|\|)\s*[\w$]+(?:\??\.[\w$]+)*\??\.(?:optedOut|opted_out)\b(?!\s*[:=])/g,
];

describe("sending has one home", () => {
  test("only the sending module calls queue.insert", () => {
    const offenders = files.filter((f) => !f.path.startsWith(SENDING)).flatMap((f) => hits(f, /\bqueue\??\.insert\s*\(/g));
    expect(offenders).toEqual([]);
    // and the sending module does (the check above would pass if the call were renamed away)
    expect(files.filter((f) => f.path.startsWith(SENDING)).some((f) => /\bqueue\.insert\s*\(/.test(f.code))).toBe(true);
  });

  test("every INSERT INTO messages is a named message-store statement", () => {
    const insert = /\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+messages\b/i;
    const withInsert = files.filter((f) => insert.test(f.sql));
    expect(withInsert.filter((f) => !f.path.startsWith("db/")).map((f) => f.path)).toEqual([]);
    // Each file that writes one defines one of the guarded names: a new insert must be added here, on purpose.
    const unnamed = withInsert.filter((f) => ![...MESSAGE_INSERTS, APPLIER_INSERT].some((n) => new RegExp(`\\b(?:function|const)\\s+${n}\\b`).test(f.code)));
    expect(unnamed.map((f) => f.path)).toEqual([]);
    expect(withInsert.length).toBeGreaterThanOrEqual(3);
  });

  test("only the sending module imports the message inserts or runs the applier's message statements", () => {
    const offenders = files
      .filter((f) => !f.path.startsWith(SENDING) && !f.path.startsWith("db/"))
      .flatMap((f) => importedNames(f.text).filter((n) => MESSAGE_INSERTS.includes(n)).map((n) => `${f.path} imports ${n}`));
    expect(offenders).toEqual([]);
    const users = files.filter((f) => !f.path.startsWith("db/") && /\.messageInserts?\b/.test(f.code)).map((f) => f.path);
    expect(users).toEqual([`${SENDING}applied.ts`]);
    const sending = files.filter((f) => f.path.startsWith(SENDING)).flatMap((f) => importedNames(f.text));
    expect(sending).toEqual(expect.arrayContaining(MESSAGE_INSERTS));
  });

  test("no code outside opt-outs.ts and the sending module branches on a contact's opt-out flag", () => {
    // Requested changes, not the stored state: an API body's or an import cell's `optedOut`,
    // handed to opt-outs.ts's setOptOut / importOptOut.
    const requests: Record<string, RegExp> = {
      "services/contacts.ts": /\bextra\.optedOut\b/,
      "services/contact-import-rows.ts": /\boptOut\.optedOut\b/,
    };
    const scanned = files.filter((f) => /^(?:services|http|lib|queue)\//.test(f.path) && f.path !== OPT_OUTS && !f.path.startsWith(SENDING));
    const offenders = scanned.flatMap((f) =>
      DECIDES.flatMap((re) => hits(f, re)).filter((h) => {
        const line = f.text.split("\n")[Number(h.split(":")[1]) - 1];
        return !requests[f.path]?.test(line);
      }),
    );
    expect(offenders).toEqual([]);
  });

  test("the opt-out detector finds the decisions it is meant to", () => {
    const probe = (code: string) => {
      const f = { path: "x.ts", code };
      return DECIDES.some((re) => hits(f, re).length > 0);
    };
    expect(probe("if (c.optedOut) return 'opted-out';")).toBe(true);
    expect(probe("if (contact?.opted_out === 1) {")).toBe(true);
    expect(probe("const skip = !row.optedOut;")).toBe(true);
    expect(probe("x = c.optedOut ? 'no' : 'yes';")).toBe(true);
    expect(probe("if (mayQueue && c.optedOut) return;")).toBe(true);
    // handing the flag on is no decision
    expect(probe("admit({ recipient: { optedOut: c.optedOut === 1 } })")).toBe(false);
    expect(probe("f({ optedOut: contact?.optedOut ?? false })")).toBe(false);
    expect(probe("interface X { optedOut?: boolean }")).toBe(false);
  });
});

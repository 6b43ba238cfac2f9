/**
 * Every shell command in the README runs as written (docs/api-decisions.md, "The README is a
 * guide; the reference lives in docs/"). The README's ```sh blocks are read in order and run with
 * bash against a scratch `textwire serve` on a temp database, as a reader would type them: the
 * variables a block exports are there for the next ones. What a reader fills in by hand is filled
 * in the same way here, and only that:
 *   - `http://localhost:8080` is the scratch server's address (the README's `npm start` default);
 *   - `txwire_sk_...` is the admin key the scratch server printed on its first start;
 *   - `<the form id from the answer>` (any `<…form…id…>` placeholder) is the form id an earlier
 *     block's answer carried (`data.form.id`);
 *   - `TEXTWIRE_DB` points the `npx textwire …` commands at the scratch database, as the default
 *     `./data/textwire.db` would point them at the one `npm start` made.
 * A block preceded by `<!-- not run in tests: why -->` is skipped (installing, the suite itself,
 * building the executable); there are few of them, and each says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer } from "../helpers/spawn-server";

const ROOT = join(import.meta.dir, "..", "..");
const SKIP = /<!--\s*not run in tests:\s*([^>]+?)\s*-->\s*$/;

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** Why it is not run, when the README says so. */
  skip?: string;
}

/** The ```sh and ```bash blocks of a Markdown text, each with the reason it is skipped, if any. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === "") before--;
    const skip = before >= 0 ? SKIP.exec(lines[before]!)?.[1] : undefined;
    out.push({ line: start + 1, code: body.join("\n"), skip });
  }
  return out;
}

/** Every JSON object in a command's output, one per line or one per answer (curl prints no newline). */
function answersIn(stdout: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  for (const piece of stdout.replace(/}\s*{/g, "}\n{").split("\n")) {
    const t = piece.trim();
    if (!t.startsWith("{")) continue;
    try {
      found.push(JSON.parse(t));
    } catch {
      // not JSON: a line of prose output
    }
  }
  return found;
}

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = shellBlocks(readme);

describe("the README's shell blocks", () => {
  test("are found, and only a few are skipped, each with its reason", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const skipped = blocks.filter((b) => b.skip);
    expect(skipped.length).toBeLessThanOrEqual(4);
    for (const b of skipped) expect(b.skip!.length).toBeGreaterThan(5);
    // The reader's two commands stay exactly as they are.
    expect(blocks.map((b) => b.code)).toContain("npm install && npm start");
    expect(blocks.map((b) => b.code)).toContain("npm test");
  });

  test("the parser sees a skip marker only right above its block", () => {
    const md = "<!-- not run in tests: installs -->\n```sh\nnpm i\n```\n\ntext\n```sh\necho hi\n```\n";
    expect(shellBlocks(md)).toEqual([
      { line: 2, code: "npm i", skip: "installs" },
      { line: 7, code: "echo hi", skip: undefined },
    ]);
  });
});

describe("every command in the README runs as written against a scratch server", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof spawnServer>>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "textwire-readme-"));
    server = await spawnServer(join(dir, "textwire.db"));
  });
  afterAll(async () => {
    server?.proc.kill("SIGTERM");
    await server?.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test("each block exits 0 and every answer it prints is a success", async () => {
    expect(server.key).toMatch(/^txwire_sk_/);
    const state = join(dir, "state.sh");
    writeFileSync(state, "");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
    env.PATH = `${join(ROOT, "node_modules/.bin")}:${env.PATH ?? ""}`;
    env.TEXTWIRE_DB = join(dir, "textwire.db");
    let formId: string | undefined;
    const ran: Array<{ code: string; stdout: string }> = [];
    for (const block of blocks.filter((b) => !b.skip)) {
      let code = block.code.replaceAll("http://localhost:8080", server.url).replaceAll("txwire_sk_...", server.key!);
      if (/<[^>\n]*form[^>\n]*id[^>\n]*>/i.test(code)) {
        expect(formId).toBeDefined(); // an earlier block's answer carried it
        code = code.replace(/<[^>\n]*form[^>\n]*id[^>\n]*>/gi, formId!);
      }
      // As in one terminal: what earlier blocks exported is set; a failing command stops the block.
      const script = `set -eo pipefail\n. ${JSON.stringify(state)}\n${code}\nexport -p > ${JSON.stringify(state)}\n`;
      const p = Bun.spawn(["bash", "-c", script], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, exit] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      const where = `README.md line ${block.line}:\n${code}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`;
      if (exit !== 0) throw new Error(`exit ${exit} at ${where}`);
      for (const answer of answersIn(stdout)) {
        if ("status" in answer && answer.status !== "success" && answer.status !== "ok") throw new Error(`an answer that is not a success at ${where}`);
        const data = answer.data as { form?: { id?: unknown } } | undefined;
        if (typeof data?.form?.id === "string") formId = data.form.id;
      }
      ran.push({ code, stdout });
    }
    // What the README promises each of its steps shows: the form, the queued text, the HTML form.
    expect(formId).toBeDefined();
    expect(ran.some((r) => r.code.includes("/webhook") && r.stdout.includes('"messageId"'))).toBe(true);
    const embed = ran.find((r) => r.code.includes("/embed"));
    expect(embed?.stdout).toContain("<form");
    expect(embed?.stdout).toContain('name="_gotcha"');
    // `tls init` made the certificates next to the database the reader's server uses.
    if (ran.some((r) => r.code.includes("tls init"))) expect(existsSync(join(dir, "tls", "server.crt"))).toBe(true);
    const messages = (await (await fetch(`${server.url}/v1/messages?limit=10`, { headers: { Authorization: `Bearer ${server.key}` } })).json()) as {
      data: { messages: Array<{ content: string; status: string; recipientPhone: string }> };
    };
    expect(messages.data.messages).toContainEqual(
      expect.objectContaining({ content: "Hi Ann, thanks! We will call you back today.", status: "queued", recipientPhone: "+14155552671" }),
    );
  }, 120_000);
});

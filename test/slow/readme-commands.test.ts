/**
 * Every shell command in the README runs as written, and so do the API guides' (docs/forms.md,
 * docs/contacts.md, docs/events.md) — docs/api-decisions.md, "The README is a guide; the
 * reference lives in docs/". Each document's ```sh blocks are read in order and run with bash
 * against its own scratch `textwire serve` on a temp database, as a reader would type them: the
 * variables a block exports are there for the next ones (a guide starts where the README left
 * off: `$TW` and `$KEY` set). What a reader fills in by hand is filled in the same way here, and
 * only that:
 *   - `http://localhost:8080` is the scratch server's address (the README's `npm start` default);
 *   - `txwire_sk_...` is the admin key the scratch server printed on its first start;
 *   - `<the form id from the answer>` (any `<…form…id…>` placeholder) is the form id an earlier
 *     block's answer carried (`data.form.id`); `<contact_id>` and `<id1>`, `<id2>` the first
 *     and second contact ids answers carried (`data.contact.id`);
 *   - `TEXTWIRE_DB` points the `npx textwire …` commands at the scratch database, as the default
 *     `./data/textwire.db` would point them at the one `npm start` made.
 * A block preceded by `<!-- not run in tests: why -->` is skipped (installing, the suite itself,
 * building the executable); there are few of them, and each says why.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

interface Ran {
  code: string;
  stdout: string;
}

/**
 * Runs a document's blocks against a fresh scratch server; throws, naming the block, at the first
 * one that exits non-zero or prints an answer that is not a success. `cwd` is where the reader
 * stands: the project folder for the README (`npx textwire …`), a scratch folder for the guides
 * (their exports write files).
 */
async function runDocument(doc: string, inProjectFolder: boolean, check: (ran: Ran[], ctx: { url: string; key: string; dir: string }) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "textwire-doc-commands-"));
  const server = await spawnServer(join(dir, "textwire.db"));
  try {
    expect(server.key).toMatch(/^txwire_sk_/);
    const state = join(dir, "state.sh");
    // A guide's reader has set the README's variables already.
    writeFileSync(state, doc === "README.md" ? "" : `export TW=${server.url}/v1\nexport KEY=${server.key}\n`);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
    env.PATH = `${join(ROOT, "node_modules/.bin")}:${env.PATH ?? ""}`;
    env.TEXTWIRE_DB = join(dir, "textwire.db");
    // `npx textwire` is the project's own command: never looked up in the registry from a test.
    env.NPM_CONFIG_OFFLINE = "true";
    const work = join(dir, "work");
    mkdirSync(work);
    let formId: string | undefined;
    const contactIds: string[] = [];
    const ran: Ran[] = [];
    for (const block of shellBlocks(readFileSync(join(ROOT, doc), "utf8")).filter((b) => !b.skip)) {
      let code = block.code.replaceAll("http://localhost:8080", server.url).replaceAll("txwire_sk_...", server.key!);
      const fill = (placeholder: RegExp, value: string | undefined) => {
        if (!placeholder.test(code)) return;
        if (value === undefined) throw new Error(`${doc} line ${block.line}: ${placeholder} is filled in from an earlier answer, and none carried it`);
        code = code.replace(new RegExp(placeholder.source, "gi"), value);
      };
      fill(/<[^>\n]*form[^>\n]*id[^>\n]*>/i, formId);
      fill(/<contact_id>/i, contactIds[0]);
      fill(/<id1>/i, contactIds[0]);
      fill(/<id2>/i, contactIds[1]);
      // As in one terminal: what earlier blocks exported is set; a failing command stops the block.
      const script = `set -eo pipefail\n. ${JSON.stringify(state)}\n${code}\nexport -p > ${JSON.stringify(state)}\n`;
      const p = Bun.spawn(["bash", "-c", script], { cwd: inProjectFolder ? ROOT : work, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, exit] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      const where = `${doc} line ${block.line}:\n${code}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`;
      if (exit !== 0) throw new Error(`exit ${exit} at ${where}`);
      for (const answer of answersIn(stdout)) {
        if ("status" in answer && answer.status !== "success" && answer.status !== "ok") throw new Error(`an answer that is not a success at ${where}`);
        const data = answer.data as { form?: { id?: unknown }; contact?: { id?: unknown } } | undefined;
        if (typeof data?.form?.id === "string") formId = data.form.id;
        if (typeof data?.contact?.id === "string" && !contactIds.includes(data.contact.id)) contactIds.push(data.contact.id);
      }
      ran.push({ code, stdout });
    }
    await check(ran, { url: server.url, key: server.key!, dir });
  } finally {
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function messagesOf(url: string, key: string) {
  const answer = (await (await fetch(`${url}/v1/messages?limit=10`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
    data: { messages: Array<{ content: string; status: string; recipientPhone: string }> };
  };
  return answer.data.messages;
}

describe("every command runs as written against a scratch server", () => {
  test("README.md: each block exits 0 and every answer it prints is a success", async () => {
    await runDocument("README.md", true, async (ran, { url, key, dir }) => {
      // What the README promises its steps show: the form, the queued text, the HTML form.
      expect(ran.some((r) => r.code.includes("/webhook") && r.stdout.includes('"messageId"'))).toBe(true);
      const embed = ran.find((r) => r.code.includes("/embed"));
      expect(embed?.stdout).toContain("<form");
      expect(embed?.stdout).toContain('name="_gotcha"');
      // `tls init` made the certificates next to the database the reader's server uses.
      if (ran.some((r) => r.code.includes("tls init"))) expect(existsSync(join(dir, "tls", "server.crt"))).toBe(true);
      expect(await messagesOf(url, key)).toContainEqual(
        expect.objectContaining({ content: "Hi Ann, thanks! We will call you back today.", status: "queued", recipientPhone: "+14155552671" }),
      );
    });
  }, 120_000);

  test("docs/forms.md: the form, its submission and a protected public form", async () => {
    await runDocument("docs/forms.md", false, async (ran, { url, key }) => {
      expect(ran.length).toBeGreaterThanOrEqual(3);
      expect(await messagesOf(url, key)).toContainEqual(
        expect.objectContaining({ content: "Hi Ann, thanks for contacting Contact us! We will call you about solar panels.", recipientPhone: "+14155552671" }),
      );
    });
  }, 120_000);

  test("docs/contacts.md: create, update, list, search, export, re-import, analytics, a broadcast's dry run", async () => {
    await runDocument("docs/contacts.md", false, async (ran) => {
      expect(ran.length).toBeGreaterThanOrEqual(8);
      const imported = ran.find((r) => r.code.includes("/contacts/import"));
      expect(imported?.stdout).toContain('"updated":2');
    });
  }, 120_000);

  test("docs/events.md: its one block needs the internet and says so", () => {
    const blocks = shellBlocks(readFileSync(join(ROOT, "docs/events.md"), "utf8"));
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) expect(b.skip).toBeDefined();
  });
});

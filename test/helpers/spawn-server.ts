import { existsSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const bun = join(root, "node_modules", ".bin", "bun");

/**
 * Starts `textwire serve` as a child process on `dbPath` (for tests that kill it); resolves with
 * its URL and, on a first start, an operator admin key. `serve` prints a setup address on an empty
 * database, so that key is made as a headless install makes it: `textwire accounts create`, then
 * `textwire keys create --operator`.
 */
export async function spawnServer(dbPath: string, extraArgs: string[] = []) {
  let key: string | undefined;
  if (!existsSync(dbPath)) {
    const run = async (args: string[]) => {
      const p = Bun.spawn([bun, "src/main.ts", ...args, "--json", "--db", dbPath], { cwd: root, stdout: "pipe", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`${args.join(" ")} failed: ${await new Response(p.stderr).text()}`);
      return JSON.parse(await new Response(p.stdout).text());
    };
    const account = await run(["accounts", "create", "--name", "Default account"]);
    key = (await run(["keys", "create", "--account", account.accountId, "--operator"])).apiKey as string;
  }
  const proc = Bun.spawn(
    [bun, "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbPath, "--log-format", "json", "--webhook-limit-per-minute", "1000000", ...extraArgs],
    { cwd: root, stdout: "pipe", stderr: "ignore" },
  );
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!/Textwire listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += dec.decode(value);
  }
  reader.releaseLock();
  const url = out.match(/Textwire listening on (http:\/\/\S+)/)![1].replace("localhost", "127.0.0.1");
  return { proc, url, key };
}

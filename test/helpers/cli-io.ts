import type { CliIO } from "../../src/cli/common";

/** A CLI run's input and output in memory: the lines it printed to each stream, and its environment. */
export function cliIO(env: Record<string, string> = {}): { cli: CliIO; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l), env, isTTY: false };
  return { cli, out, err };
}

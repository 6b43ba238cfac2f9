/**
 * How the owner runs Textwire's commands on this server: `textwire` for the single compiled
 * executable, `npx textwire` when it runs from a project folder (npm start, bun src/main.ts).
 * Every command the API or the dashboard shows starts with it (docs/api-decisions.md, "The
 * dashboard never locks itself out; honest status").
 */
export type CliCommand = "textwire" | "npx textwire";

/** A compiled Bun executable runs its entry point from its embedded file system ("/$bunfs/…", "B:/~BUN/…"). */
export function isCompiledExecutable(main: string = Bun.main): boolean {
  return main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
}

export function cliCommand(main?: string): CliCommand {
  return isCompiledExecutable(main) ? "textwire" : "npx textwire";
}

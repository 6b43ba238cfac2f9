#!/usr/bin/env bun
/**
 * Builds the single executable dist/textwire (or dist/textwire-<target> with --target).
 * The migrations are embedded (src/db/migrations.gen.ts imports them as text), and the binary
 * ignores .env and bunfig.toml in the directory it is started from.
 *
 *   bun scripts/build.ts                          # this machine → dist/textwire
 *   bun scripts/build.ts --target linux-arm64     # Raspberry Pi → dist/textwire-linux-arm64
 *   bun scripts/build.ts --all                    # linux-x64 and linux-arm64
 */
import { $ } from "bun";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const targets: Array<string | null> = args.includes("--all")
  ? ["linux-x64", "linux-arm64"]
  : args.includes("--target")
    ? [args[args.indexOf("--target") + 1]]
    : [null];

await $`${process.execPath} ${join(root, "scripts/embed-migrations.ts")}`.quiet();
for (const target of targets) {
  const outfile = join(root, "dist", target ? `textwire-${target}` : "textwire");
  const result = await Bun.build({
    // Worker entry points must be listed to be in the binary (Bun docs, "Single-file executable" → Worker).
    entrypoints: [join(root, "src/main.ts"), join(root, "src/services/backup-worker.ts")],
    compile: {
      ...(target ? { target: `bun-${target}` as Bun.Build.CompileTarget } : {}),
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    minify: true,
    sourcemap: "linked",
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    process.exit(1);
  }
  console.log(`built ${outfile}`);
}

/**
 * The Litestream program carried inside the compiled executable (docs/operations.md, "One file"):
 * scripts/build.ts embeds the target's binary with its SHA-256; on first use it is written to a
 * private folder (0700, this user's) and checked against that checksum before every first run in
 * a process, so a file swapped on disk is never executed.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMBEDDED_LITESTREAM } from "./litestream-embedded.gen";

export type Embedded = { file: string; sha256: string; target: string } | null;

export class LitestreamChecksumError extends Error {}

const verified = new Map<string, string>();
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The folder it is put in: `<tmp>/textwire-<uid>` (PrivateTmp under the systemd unit). */
export function litestreamCacheDir(root: string = tmpdir()): string {
  return join(root, `textwire-${process.getuid?.() ?? "user"}`);
}

/** The path of the embedded Litestream, put in place and verified; undefined when this build carries none. */
export function embeddedLitestream(embedded: Embedded = EMBEDDED_LITESTREAM, dir: string = litestreamCacheDir()): string | undefined {
  if (!embedded) return undefined;
  const cached = verified.get(embedded.sha256);
  if (cached && existsSync(cached)) return cached;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  // A folder someone else made (or can write to) could hold a swapped program between check and run.
  if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()) || (st.mode & 0o022) !== 0) {
    throw new LitestreamChecksumError(`${dir} is not a private folder of this user: remove it, or set TMPDIR to another folder.`);
  }
  const path = join(dir, `litestream-${embedded.sha256.slice(0, 16)}`);
  if (existsSync(path) && sha256(readFileSync(path)) === embedded.sha256) {
    verified.set(embedded.sha256, path);
    return path;
  }
  const bytes = readFileSync(embedded.file);
  if (sha256(bytes) !== embedded.sha256) throw new LitestreamChecksumError("the Litestream program inside this executable does not match its checksum: the file is damaged; download or build it again.");
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes, { mode: 0o700 });
  chmodSync(tmp, 0o700);
  renameSync(tmp, path);
  verified.set(embedded.sha256, path);
  return path;
}

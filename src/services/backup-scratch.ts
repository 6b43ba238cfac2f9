/**
 * Where a backup made inside the server is built, and how it reaches the disk without starving
 * the webhook's fsyncs.
 *
 * `VACUUM INTO` writes the whole copy at once and its final fsync flushes all of it: on a small
 * VPS disk a 100 MB flush queues every WAL fsync of the request path behind it. So the copy is
 * built in memory-backed scratch space (`/dev/shm`, a tmpfs) when it fits with room to spare, and
 * only then written to its destination in small chunks, each made durable with `fdatasync` and
 * followed by a pause as long as that sync took: the disk is never busy with the backup for more
 * than half the time, and a webhook commit waits for one chunk at most. An admin download never
 * touches the disk at all (it is streamed from the scratch file and deleted).
 */
import { accessSync, closeSync, constants, existsSync, fdatasyncSync, openSync, readSync, statSync, statfsSync, writeSync } from "node:fs";
import { freemem } from "node:os";

/** The memory-backed scratch directory the server prefers (Linux; elsewhere absent → disk). */
export const MEMORY_SCRATCH_DIR = "/dev/shm";
/** One chunk of the paced copy: small enough that a commit waiting behind it waits a few ms. */
export const PACED_CHUNK_BYTES = 4 * 1024 * 1024;
/** Memory the machine keeps beyond the scratch copy, so a backup never pushes it into trouble. */
const MEMORY_HEADROOM_BYTES = 256 * 1024 * 1024;

/** Bytes a copy of the database can take at most: the file plus its WAL. */
export function databaseBytes(dbPath: string): number {
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
  return size(dbPath) + size(`${dbPath}-wal`);
}

/**
 * The memory-backed directory when a copy of `bytes` fits there and in free memory with room to
 * spare; null otherwise (the caller then builds the copy on disk, as before).
 */
export function memoryScratch(bytes: number, dir = MEMORY_SCRATCH_DIR, free: () => number = freemem): string | null {
  try {
    if (!statSync(dir).isDirectory()) return null;
    accessSync(dir, constants.W_OK);
    const fs = statfsSync(dir);
    const room = Number(fs.bavail) * Number(fs.bsize);
    const need = bytes * 1.2 + MEMORY_HEADROOM_BYTES;
    return room >= need && free() >= need ? dir : null;
  } catch {
    return null;
  }
}

/**
 * Copies `from` into the new file `to` in chunks, each followed by `fdatasync` and a pause as
 * long as the sync took (at least `minPauseMs`), so other writers' fsyncs get the disk between
 * chunks. `to` is durable when this returns. Synchronous: meant for the backup Worker.
 */
export function pacedCopy(from: string, to: string, opts: { chunkBytes?: number; minPauseMs?: number } = {}): void {
  const chunk = opts.chunkBytes ?? PACED_CHUNK_BYTES;
  const minPause = opts.minPauseMs ?? 2;
  const src = openSync(from, "r");
  let dst: number | null = null;
  try {
    dst = openSync(to, "wx");
    const buf = Buffer.allocUnsafe(chunk);
    let pos = 0;
    for (;;) {
      const n = readSync(src, buf, 0, chunk, pos);
      if (n === 0) break;
      let off = 0;
      while (off < n) off += writeSync(dst, buf, off, n - off, pos + off);
      pos += n;
      const t0 = performance.now();
      fdatasyncSync(dst);
      Bun.sleepSync(Math.max(minPause, performance.now() - t0));
    }
  } finally {
    if (dst !== null) closeSync(dst);
    closeSync(src);
  }
}

/**
 * Keeps the server's resident memory under a ceiling while it is busy (target: peak RSS < 150 MB
 * under the webhook bench; docs/api-decisions.md, "Peak memory under webhook load").
 *
 * Under load JavaScriptCore lets the HTTP thread's heap grow far past what stays alive (~37 MiB of
 * heap for ~15 MiB live at 1,000 req/s), and mimalloc keeps the freed pages; neither gives them back
 * until a full collection. An asynchronous collection (`Bun.gc(false)`) did not lower the peak; a
 * synchronous full one (`Bun.gc(true)`) did, by 10–15 MB, but it stops the thread for a while
 * (15–120 ms on a busy 2-core machine). So it runs only when it is needed: checked every
 * TRIM_CHECK_MS (one `/proc/self/statm` read, ~16 µs), a full collection when the process's resident
 * memory is at least TRIM_ABOVE_BYTES and TRIM_GROWTH_BYTES above the lowest reading since the last
 * one, at most once per TRIM_MIN_GAP_MS. The growth rule means: never at idle (nothing grows), and
 * when what stays alive is itself above the ceiling (a larger --sqlite-cache-mb), a collection only
 * once there is that much new garbage to free — not one per check.
 *
 * Started on the HTTP thread by `textwire serve`; the applier's Worker does not need it (its heap
 * stays under ~10 MiB, and a collection there gave nothing measurable).
 */

/** How often resident memory is read. */
export const TRIM_CHECK_MS = 250;
/** Resident memory (bytes) from which a full collection may run: the 150 MB target less the growth between two checks and after. */
export const TRIM_ABOVE_BYTES = 128 * 1024 * 1024;
/** Growth above the lowest reading since the last collection before another one runs. */
export const TRIM_GROWTH_BYTES = 8 * 1024 * 1024;
/** At most one full collection per this long, whatever the readings (bounds the pauses). */
export const TRIM_MIN_GAP_MS = 1_000;
/**
 * And the gap after a collection is at least this many times as long as it took: at most ~2% of
 * the thread's time goes to them. A large live heap (a million queued texts, a bigger page cache)
 * makes each one slower — 100 ms means the next waits 5 s, not 1.
 */
export const TRIM_GAP_PER_PAUSE = 50;

export interface MemoryTrimDeps {
  /** The process's resident memory in bytes. */
  rss: () => number;
  /** A synchronous full collection. */
  collect: () => void;
  /** Milliseconds, monotonic. */
  now: () => number;
}

const processDeps: MemoryTrimDeps = {
  rss: () => process.memoryUsage.rss(),
  collect: () => Bun.gc(true),
  now: () => performance.now(),
};

/** The decision, apart from the timer (unit-tested with fake readings). */
export class MemoryTrim {
  private low = Infinity;
  private last = -Infinity;
  private gap = TRIM_MIN_GAP_MS;
  /** How many collections it ran. */
  collections = 0;

  constructor(private readonly deps: MemoryTrimDeps = processDeps) {}

  /** One reading; true when it ran a collection. */
  tick(): boolean {
    const rss = this.deps.rss();
    this.low = Math.min(this.low, rss);
    const now = this.deps.now();
    if (rss < Math.max(TRIM_ABOVE_BYTES, this.low + TRIM_GROWTH_BYTES) || now - this.last < this.gap) return false;
    this.deps.collect();
    this.collections++;
    const after = this.deps.now();
    this.gap = Math.max(TRIM_MIN_GAP_MS, (after - now) * TRIM_GAP_PER_PAUSE);
    this.last = after;
    // mimalloc returns the freed pages shortly after: the next readings fall, and the lowest of
    // them is where growth is measured from again.
    this.low = Infinity;
    return true;
  }
}

/** Starts the checks on this thread; returns the stop function. */
export function startMemoryTrim(deps?: MemoryTrimDeps): () => void {
  const trim = new MemoryTrim(deps);
  const timer = setInterval(() => trim.tick(), TRIM_CHECK_MS);
  // Never what keeps the process alive.
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

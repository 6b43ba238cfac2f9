/**
 * The queue's order (src/queue/priority-queue.ts): the stored node, its total comparator and the
 * boot's bulk sort into that order. Pure, like the queue.
 */
import { PRIORITY_RANK, type Priority } from "../domain/statuses";
import type { QueueEntry } from "./priority-queue";

/**
 * The stored form of an entry: a private copy (callers cannot reorder the queue by mutating what
 * they passed in) with one fixed shape and the numeric priority rank, for a fast comparator.
 */
export interface Node {
  readonly id: string;
  readonly accountId: string;
  readonly priority: Priority;
  readonly scheduledFor: number;
  readonly seq: number;
  /** PRIORITY_RANK[priority] */
  readonly r: number;
}

export function toNode(e: QueueEntry): Node {
  return makeNode(e.id, e.accountId, e.priority, e.scheduledFor, e.seq);
}

export function makeNode(id: string, accountId: string, priority: Priority, scheduledFor: number, seq: number): Node {
  if (!Object.hasOwn(PRIORITY_RANK, priority)) throw new TypeError(`unknown priority ${JSON.stringify(priority)}`);
  if (typeof id !== "string" || typeof accountId !== "string") throw new TypeError("id and accountId must be strings");
  // NaN or ±Infinity would make the comparator inconsistent and silently corrupt the order.
  if (!Number.isFinite(scheduledFor)) throw new TypeError(`scheduledFor must be a finite number, got ${scheduledFor}`);
  if (!Number.isFinite(seq)) throw new TypeError(`seq must be a finite number, got ${seq}`);
  return { id, accountId, priority, scheduledFor, seq, r: PRIORITY_RANK[priority] };
}

export function toEntry(n: Node): QueueEntry {
  return { id: n.id, accountId: n.accountId, priority: n.priority, scheduledFor: n.scheduledFor, seq: n.seq };
}

export function compare(a: Node, b: Node): number {
  return a.r - b.r || a.scheduledFor - b.scheduledFor || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function emptyCounts(): Record<Priority, number> {
  return { urgent: 0, high: 0, normal: 0, low: 0 };
}

/** First index in the sorted `chunk` whose node is not before `node`. */
export function lowerBound(chunk: Node[], node: Node): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(chunk[mid], node) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isSorted(nodes: Node[]): boolean {
  for (let i = 1; i < nodes.length; i++) if (compare(nodes[i - 1], nodes[i]) >= 0) return false;
  return true;
}

/** Below this many nodes the comparator sort is cheap enough. */
const RADIX_MIN = 4096;
/** The radix keys are `scheduledFor − min` split into 16-bit digits; at most three of them. */
const RADIX_RANGE = 2 ** 48;

/**
 * `nodes` in queue order (may sort in place and return `nodes`, or return a new array).
 *
 * A comparator sort of a million objects takes ~0.5 s here, half the boot budget, so large loads
 * use a stable LSD radix sort of indices on (priority, scheduledFor) — a few linear passes over
 * typed arrays — and then comparator-sort only the runs that tie on both (by seq, then id).
 * Rows read already in queue order (an ORDER BY at boot) are recognised and not sorted at all.
 */
export function sortInQueueOrder(nodes: Node[]): Node[] {
  const n = nodes.length;
  if (isSorted(nodes)) return nodes;
  if (n < RADIX_MIN) return nodes.sort(compare);

  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const t = nodes[i].scheduledFor;
    if (!Number.isInteger(t)) return nodes.sort(compare); // fractional ms: no integer digits
    if (t < min) min = t;
    if (t > max) max = t;
  }
  if (max - min >= RADIX_RANGE) return nodes.sort(compare);

  // Digits of key = scheduledFor − min (< 2^48), least significant first, then the priority.
  // Each digit is extracted once into a typed array so the passes touch no objects.
  const range = max - min;
  const digits: Uint16Array[] = [];
  const passes = range >= 2 ** 32 ? 3 : range >= 2 ** 16 ? 2 : 1;
  for (let p = 0; p <= passes; p++) digits.push(new Uint16Array(n));
  for (let i = 0; i < n; i++) {
    const node = nodes[i];
    const k = node.scheduledFor - min;
    const high = Math.floor(k / 4294967296);
    const low = k - high * 4294967296;
    digits[0][i] = low & 0xffff;
    if (passes > 1) digits[1][i] = low >>> 16;
    if (passes > 2) digits[2][i] = high;
    digits[passes][i] = node.r;
  }

  let src = new Uint32Array(n);
  let dst = new Uint32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  const counts = new Uint32Array(65536);
  for (const digit of digits) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[digit[i]]++;
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const index = src[i];
      dst[counts[digit[index]]++] = index;
    }
    const t = src;
    src = dst;
    dst = t;
  }

  const out: Node[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = nodes[src[i]];

  // Runs equal in (priority, scheduledFor) keep input order; put them in (seq, id) order.
  for (let a = 0; a < n; ) {
    let b = a + 1;
    while (b < n && out[b].r === out[a].r && out[b].scheduledFor === out[a].scheduledFor) b++;
    if (b - a > 1) {
      const run = out.slice(a, b);
      if (!isSorted(run)) {
        run.sort(compare);
        for (let i = a; i < b; i++) out[i] = run[i - a];
      }
    }
    a = b;
  }
  return out;
}

/**
 * Benchmark of the in-memory priority queue at a million queued messages (one account).
 *
 *   bun scripts/bench/queue.ts [count]      (default 1,000,000)
 *
 * Measures the boot rebuild from rows in several read orders, then 100k each of rank / position /
 * insert / remove (and 10k of takeDue / nextDueAt / countByPriority),
 * timing every operation on its own to report mean, p50, p99 and max.
 */
import os from "node:os";
import { MessageQueue, PRIORITY_RANK, type Priority, type QueueEntry } from "../../src/queue/priority-queue";
import { rng } from "../../test/helpers/rng";

const COUNT = Number(process.argv[2] ?? 1_000_000);
const OPS = 100_000;
const ACCOUNT = "acct-bench";
const NOW = Date.UTC(2026, 10, 21, 15, 0, 0);
const MINUTE = 60_000;

const random = rng(20261121);

let peakRss = process.memoryUsage().rss;
const sampleRss = () => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
};

/** Priority mix of a busy appliance: mostly normal, a little urgent. */
function pickPriority(): Priority {
  const x = random();
  return x < 0.03 ? "urgent" : x < 0.15 ? "high" : x < 0.85 ? "normal" : "low";
}

/**
 * A message created in the last 24 h: 60% due at creation, 25% delayed by minutes (form
 * `delayMinutes`), 10% pushed to a later day (per-form daily limit), 5% scheduled days ahead.
 */
function pickDelay(): number {
  const x = random();
  if (x < 0.6) return 0;
  if (x < 0.85) return Math.floor(random() * 120) * MINUTE;
  if (x < 0.95) return (24 * 60 + Math.floor(random() * 600)) * MINUTE;
  return Math.floor(random() * 7 * 24 * 60) * MINUTE;
}

/** A new submission arriving now. */
function newEntry(seq: number, at: number): QueueEntry {
  return { id: Bun.randomUUIDv7("hex", at), accountId: ACCOUNT, priority: pickPriority(), scheduledFor: at + pickDelay(), seq };
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

interface Stats {
  name: string;
  ops: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
}

/** Times `op(i)` for i in [0, ops), each call on its own, in nanoseconds. */
function measure(name: string, ops: number, op: (i: number) => void): Stats {
  Bun.gc(true); // the previous phase's garbage is not charged to this one
  Bun.sleepSync(200); // and the collector's concurrent sweep finishes before timing starts
  const samples = new Float64Array(ops);
  for (let i = 0; i < ops; i++) {
    const t0 = Bun.nanoseconds();
    op(i);
    samples[i] = Bun.nanoseconds() - t0;
  }
  sampleRss();
  samples.sort();
  let sum = 0;
  for (const s of samples) sum += s;
  return { name, ops, mean: sum / ops, p50: samples[Math.floor(ops * 0.5)], p99: samples[Math.floor(ops * 0.99)], max: samples[ops - 1] };
}

function time<T>(fn: () => T): [T, number] {
  const t0 = Bun.nanoseconds();
  const result = fn();
  return [result, (Bun.nanoseconds() - t0) / 1e6];
}

const fmtUs = (ns: number) => (ns / 1000).toFixed(2).padStart(9);
const fmtMb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const fmtInt = (n: number) => n.toLocaleString("en-US");

// ---- machine ------------------------------------------------------------------------------------
const cpus = os.cpus();
console.log("Machine");
console.log(`  cpu       ${cpus[0]?.model ?? "unknown"}`);
console.log(`  cores     ${cpus.length}`);
console.log(`  memory    ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`);
console.log(`  bun       ${Bun.version}`);
console.log(`  platform  ${process.platform}/${process.arch}`);
console.log();

// ---- data ---------------------------------------------------------------------------------------
// Each message's fields are drawn once; every load scenario then materialises fresh row objects
// (with fresh id strings) in its own read order, as rows coming off SQLite at boot would be.
const createdAt = new Float64Array(COUNT);
const scheduledFor = new Float64Array(COUNT);
const priorityOf: Priority[] = new Array(COUNT);
for (let seq = 0; seq < COUNT; seq++) {
  createdAt[seq] = NOW - 24 * 60 * MINUTE + Math.floor((seq / COUNT) * 24 * 60 * MINUTE);
  scheduledFor[seq] = createdAt[seq] + pickDelay();
  priorityOf[seq] = pickPriority();
}
const rowFor = (seq: number): QueueEntry => ({
  id: Bun.randomUUIDv7("hex", createdAt[seq]),
  accountId: ACCOUNT,
  priority: priorityOf[seq],
  scheduledFor: scheduledFor[seq],
  seq,
});
const materialise = (order: ArrayLike<number>): QueueEntry[] => Array.from(order, rowFor);

const mix = { urgent: 0, high: 0, normal: 0, low: 0 } as Record<Priority, number>;
let dueNow = 0;
for (let seq = 0; seq < COUNT; seq++) {
  mix[priorityOf[seq]]++;
  if (scheduledFor[seq] <= NOW) dueNow++;
}
console.log(`Queue: ${fmtInt(COUNT)} messages, one account, created over the last 24 h`);
console.log(`  mix       ${(Object.keys(mix) as Priority[]).map((p) => `${p} ${((mix[p] / COUNT) * 100).toFixed(0)}%`).join(", ")}`);
console.log(`  due now   ${((dueNow / COUNT) * 100).toFixed(0)}%, the rest scheduled up to 7 days ahead`);
console.log();

// ---- rebuild ------------------------------------------------------------------------------------
const seqs = Array.from({ length: COUNT }, (_, seq) => seq);
const queueOrder = [...seqs].sort(
  (a, b) => PRIORITY_RANK[priorityOf[a]] - PRIORITY_RANK[priorityOf[b]] || scheduledFor[a] - scheduledFor[b] || a - b,
);
const randomOrder = shuffle([...seqs]);

const queue = new MessageQueue();
/** Rebuilds from `rows` and returns the time in ms; collects garbage first so loads don't pay for each other. */
function timeRebuild(rows: QueueEntry[]): number {
  queue.clear();
  Bun.gc(true);
  Bun.sleepSync(200);
  const [, ms] = time(() => queue.rebuild(rows));
  sampleRss();
  if (queue.size() !== COUNT) throw new Error(`rebuild lost entries: ${queue.size()}`);
  return ms;
}
const rebuilds: [string, number][] = [];
rebuilds.push(["rows in creation order (no ORDER BY)", timeRebuild(materialise(seqs))]);
rebuilds.push(["rows already in queue order (ORDER BY)", timeRebuild(materialise(queueOrder))]);
rebuilds.push(["rows in random order", timeRebuild(materialise(randomOrder))]);
// Worst case: random order AND the row objects scattered in memory (built in creation order,
// then shuffled), so nearly every row read is a cache miss.
rebuilds.push(["random order, rows scattered in memory", timeRebuild(shuffle(materialise(seqs)))]);
// The queue the operations below run against: rows in creation order, a second time (warm JIT).
const entries = materialise(seqs);
rebuilds.push(["creation order again (warm JIT)", timeRebuild(entries)]);

console.log(`Rebuild of ${fmtInt(COUNT)} at boot (target < 1000 ms)`);
for (const [name, ms] of rebuilds) console.log(`  ${name.padEnd(42)} ${ms.toFixed(0).padStart(6)} ms`);
console.log();

// ---- operations ---------------------------------------------------------------------------------
const probeIds = Array.from({ length: OPS }, () => entries[Math.floor(random() * COUNT)].id);
const stats: Stats[] = [];

// Warm the JIT on the hot paths before measuring.
for (let i = 0; i < 20_000; i++) queue.rank(probeIds[i % OPS]);

stats.push(measure("(timer only, empty op)", OPS, () => {}));
stats.push(measure("rank", OPS, (i) => queue.rank(probeIds[i])));
stats.push(measure("position", OPS, (i) => queue.position(probeIds[i], NOW, 60)));

// New submissions arriving: created now, mostly due immediately.
const fresh = Array.from({ length: OPS }, (_, i) => newEntry(COUNT + i, NOW + i));
stats.push(measure("insert (new message)", OPS, (i) => queue.insert(fresh[i])));
// Re-insert of the same ids with a new schedule (retry / reschedule).
const moved = fresh.map((e) => ({ ...e, scheduledFor: e.scheduledFor + 30 * MINUTE }));
stats.push(measure("insert (replace id)", OPS, (i) => queue.insert(moved[i])));
stats.push(measure("remove (new messages)", OPS, (i) => queue.remove(moved[i].id)));
// Random removals across the whole queue (sent / cancelled messages).
const removeIds = shuffle(entries.map((e) => e.id)).slice(0, OPS);
stats.push(measure("remove (random)", OPS, (i) => queue.remove(removeIds[i])));

const leased = new Set<string>(queue.takeDue(ACCOUNT, NOW, 50).map((e) => e.id));
stats.push(measure("takeDue(limit 50, 50 leased)", 10_000, () => queue.takeDue(ACCOUNT, NOW, 50, (id) => leased.has(id))));
stats.push(measure("nextDueAt", 10_000, () => queue.nextDueAt(ACCOUNT, NOW)));
stats.push(measure("countByPriority", 10_000, () => queue.countByPriority(ACCOUNT)));

console.log(`Operations at ~${fmtInt(COUNT)} queued (µs per op; each op timed alone, timer overhead included)`);
console.log(`  ${"operation".padEnd(30)} ${"ops".padStart(8)} ${"mean".padStart(9)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`);
for (const s of stats) {
  console.log(`  ${s.name.padEnd(30)} ${fmtInt(s.ops).padStart(8)} ${fmtUs(s.mean)} ${fmtUs(s.p50)} ${fmtUs(s.p99)} ${fmtUs(s.max)}`);
}
console.log();

sampleRss();
console.log("Memory");
console.log(`  peak RSS (sampled)      ${fmtMb(peakRss)}`);
console.log(`  max RSS (getrusage)     ${fmtMb(process.resourceUsage().maxRSS * 1024)}`);

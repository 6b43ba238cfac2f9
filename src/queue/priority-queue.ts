/**
 * The in-memory priority queue of `queued` messages.
 *
 * SQLite is the truth; this index is rebuilt from it at boot and kept in step by the services. It
 * answers the questions the database cannot answer cheaply at a million queued messages:
 * a message's `queuePosition` (rank), and which messages are due next for a device.
 *
 * Order within an account (total, so every rank is well defined):
 *   priority (urgent 0 … low 3), then `scheduledFor` ascending, then `seq` (creation order),
 *   then `id` (string order) as the last tiebreak.
 * `queuePosition` uses this plain order; "urgent first once due" only matters for what is handed
 * out, and `takeDue` walks the priorities in order, so a due urgent message always leaves first.
 *
 * Structure, per account: the entries split into sorted chunks of at most CHUNK_MAX entries,
 * plus a Fenwick tree over the chunk sizes. Rank = (entries in earlier chunks, from the tree) +
 * index inside the chunk; both found by binary search, so ~log n without scanning. Splitting or
 * dropping a chunk rebuilds the tree in O(chunks), which happens once per ~CHUNK_MAX/2 writes.
 * The boot `rebuild` sorts once (a radix sort for large loads, see sortInQueueOrder) and cuts the
 * result into half-full chunks.
 *
 * Ids are looked up in an IdIndex (./id-index.ts), not a Map: see there why.
 *
 * Pure: imports nothing but its own index, never reads the clock; `now` is epoch milliseconds from the caller.
 *
 * The heaps, the rank index and the due walk share one set of invariants over the same arrays and
 * are kept together here; the order itself (the comparator and the boot's bulk sort) is
 * ./queue-order.ts.
 */

import { IdIndex } from "./id-index";
import { compare, emptyCounts, lowerBound, makeNode, sortInQueueOrder, toEntry, toNode, type Node } from "./queue-order";

import { PRIORITIES_BY_RANK as PRIORITIES, PRIORITY_RANK, type Priority } from "../domain/statuses";

// The ranks have one home (src/domain/statuses.ts); re-exported for the queue's callers.
export { PRIORITY_RANK, type Priority };

export interface QueueEntry {
  id: string;
  accountId: string;
  priority: Priority;
  /** Epoch milliseconds; the message is due once `scheduledFor <= now`. */
  scheduledFor: number;
  /** Creation order (e.g. createdAt in ms, or a row sequence); ties fall back to `id`. */
  seq: number;
}

/** A chunk splits in two once it holds more than this many entries. */
const CHUNK_MAX = 1024;
/** Bulk load fills chunks to half, so the first inserts do not split every chunk at once. */
const CHUNK_FILL = CHUNK_MAX >> 1;
/** After a removal, a chunk merges with a neighbour when together they fit in this many. */
const CHUNK_MERGE = CHUNK_MAX >> 1;

const MS_PER_MINUTE = 60_000;

/**
 * `max(scheduledFor, now + (queuePosition − 1) / sendRatePerMinute minutes)`, rounded up to a
 * whole millisecond (timestamps are rendered to the millisecond; "not before" rounds up).
 */
export function estimateDelivery(scheduledFor: number, queuePosition: number, now: number, sendRatePerMinute: number): number {
  if (!(sendRatePerMinute > 0) || !Number.isFinite(sendRatePerMinute)) {
    throw new RangeError(`sendRatePerMinute must be a finite number > 0, got ${sendRatePerMinute}`);
  }
  const ahead = Math.max(0, queuePosition - 1);
  return Math.max(scheduledFor, Math.ceil(now + (ahead / sendRatePerMinute) * MS_PER_MINUTE));
}

/** Adds one entry to a load (see MessageQueue.load): the fields of a QueueEntry, as arguments. */
export type QueueLoadAdd = (id: string, accountId: string, priority: Priority, scheduledFor: number, seq: number) => void;

/** One account's queued messages, in queue order. */
class AccountQueue {
  /** Non-empty sorted chunks; every node of chunk k sorts before every node of chunk k+1. */
  private chunks: Node[][] = [];
  /** Fenwick tree over chunk sizes (1-based; tree[0] unused). */
  private tree: Int32Array = new Int32Array(1);
  size = 0;
  /** Entries per priority rank. */
  readonly counts = [0, 0, 0, 0];

  /** Replaces the contents with `sorted` (already in queue order, unique ids). */
  load(sorted: Node[]): void {
    const chunks: Node[][] = [];
    for (let i = 0; i < sorted.length; i += CHUNK_FILL) chunks.push(sorted.slice(i, i + CHUNK_FILL));
    this.chunks = chunks;
    this.size = sorted.length;
    this.counts.fill(0);
    for (const n of sorted) this.counts[n.r]++;
    this.rebuildTree();
  }

  insert(node: Node): void {
    this.size++;
    this.counts[node.r]++;
    const chunks = this.chunks;
    if (chunks.length === 0) {
      chunks.push([node]);
      this.rebuildTree();
      return;
    }
    const c = this.chunkFor(node);
    const chunk = chunks[c];
    chunk.splice(lowerBound(chunk, node), 0, node);
    if (chunk.length > CHUNK_MAX) {
      chunks.splice(c + 1, 0, chunk.splice(chunk.length >> 1));
      this.rebuildTree();
    } else {
      this.treeAdd(c, 1);
    }
  }

  /** Removes a node known to be stored here. */
  remove(node: Node): void {
    const [c, i] = this.locate(node);
    const chunks = this.chunks;
    const chunk = chunks[c];
    chunk.splice(i, 1);
    this.size--;
    this.counts[node.r]--;
    if (chunk.length === 0) {
      chunks.splice(c, 1);
      this.rebuildTree();
    } else if (c + 1 < chunks.length && chunk.length + chunks[c + 1].length <= CHUNK_MERGE) {
      chunks[c] = chunk.concat(chunks[c + 1]);
      chunks.splice(c + 1, 1);
      this.rebuildTree();
    } else if (c > 0 && chunk.length + chunks[c - 1].length <= CHUNK_MERGE) {
      chunks[c - 1] = chunks[c - 1].concat(chunk);
      chunks.splice(c, 1);
      this.rebuildTree();
    } else {
      this.treeAdd(c, -1);
    }
  }

  /** 1-based position of a node known to be stored here. */
  rank(node: Node): number {
    const [c, i] = this.locate(node);
    return this.prefix(c) + i + 1;
  }

  /** Due nodes (scheduledFor <= now) in queue order, priority by priority, skipping `exclude`d ids. */
  takeDue(now: number, limit: number, exclude: ((id: string) => boolean) | undefined, out: QueueEntry[]): void {
    const chunks = this.chunks;
    for (let r = 0; r < 4 && out.length < limit; r++) {
      if (this.counts[r] === 0) continue;
      // Within a priority nodes are sorted by scheduledFor, so the first not-yet-due one ends it.
      let [c, i] = this.seek((n) => n.r >= r);
      for (; c < chunks.length; c++, i = 0) {
        const chunk = chunks[c];
        for (; i < chunk.length; i++) {
          const n = chunk[i];
          if (n.r !== r || n.scheduledFor > now) break;
          if (exclude !== undefined && exclude(n.id)) continue;
          out.push(toEntry(n));
          if (out.length >= limit) return;
        }
        if (i < chunk.length) break;
      }
    }
  }

  /** Earliest scheduledFor > now, over all priorities; undefined if every node is due. */
  nextDueAt(now: number): number | undefined {
    let earliest: number | undefined;
    for (let r = 0; r < 4; r++) {
      if (this.counts[r] === 0) continue;
      const [c, i] = this.seek((n) => n.r > r || (n.r === r && n.scheduledFor > now));
      const n = this.chunks[c]?.[i];
      if (n !== undefined && n.r === r && (earliest === undefined || n.scheduledFor < earliest)) earliest = n.scheduledFor;
    }
    return earliest;
  }

  /** Chunk that holds `node`, or where it belongs: the first whose last node is not before it. */
  private chunkFor(node: Node): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (compare(chunk[chunk.length - 1], node) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private locate(node: Node): [chunk: number, index: number] {
    const c = this.chunkFor(node);
    const i = lowerBound(this.chunks[c], node);
    if (this.chunks[c][i] !== node) throw new Error(`queue index corrupted: ${node.id} not where its key says`);
    return [c, i];
  }

  /**
   * First position whose node satisfies `atOrAfter` (monotone: false… then true… in queue order);
   * [chunks.length, 0] when none does.
   */
  private seek(atOrAfter: (n: Node) => boolean): [chunk: number, index: number] {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (atOrAfter(chunk[chunk.length - 1])) hi = mid;
      else lo = mid + 1;
    }
    if (lo === chunks.length) return [lo, 0];
    const chunk = chunks[lo];
    let a = 0;
    let b = chunk.length - 1; // the last node satisfies it, by choice of chunk
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (atOrAfter(chunk[mid])) b = mid;
      else a = mid + 1;
    }
    return [lo, a];
  }

  private rebuildTree(): void {
    const chunks = this.chunks;
    const n = chunks.length;
    const tree = new Int32Array(n + 1);
    for (let i = 1; i <= n; i++) {
      tree[i] += chunks[i - 1].length;
      const j = i + (i & -i);
      if (j <= n) tree[j] += tree[i];
    }
    this.tree = tree;
  }

  private treeAdd(chunk: number, delta: number): void {
    const tree = this.tree;
    for (let i = chunk + 1; i < tree.length; i += i & -i) tree[i] += delta;
  }

  /** Number of nodes in chunks [0, chunk). */
  private prefix(chunk: number): number {
    const tree = this.tree;
    let sum = 0;
    for (let i = chunk; i > 0; i -= i & -i) sum += tree[i];
    return sum;
  }
}

/** When the text at a position will be handed to a phone: `at` epoch ms, and what it rests on. */
export type QueueEstimator = (accountId: string, queuePosition: number, scheduledFor: number, now: number) => { at: number; basis: string };

export class MessageQueue {
  private byId = new IdIndex<Node>();
  private accounts = new Map<string, AccountQueue>();

  constructor(
    /**
     * From the phones' real capacity (services/sending-estimate.ts, given by the wiring); without
     * it, the contract's plain formula (estimateDelivery).
     */
    private readonly estimator?: QueueEstimator,
  ) {}

  /**
   * Replaces the whole queue with `entries` (any order; a repeated id keeps its last entry).
   * All or nothing: if an entry is invalid it throws and the queue keeps its previous contents.
   */
  rebuild(entries: Iterable<QueueEntry>): void {
    this.load((add) => {
      for (const e of entries) add(e.id, e.accountId, e.priority, e.scheduledFor, e.seq);
    });
  }

  /**
   * `rebuild` for a loader that produces the entries itself (the boot read from SQLite): `fill`
   * calls `add` once per entry, so no QueueEntry object is made only to be copied. Same rules:
   * any order (rows already grouped by account and in queue order are not sorted again), a
   * repeated id keeps its last entry, all or nothing.
   */
  load(fill: (add: QueueLoadAdd) => void): void {
    const byId = new IdIndex<Node>();
    const accounts = new Map<string, AccountQueue>();
    const groups = new Map<string, Node[]>();
    // Boot rows usually come clustered by account: remember the last group instead of a lookup.
    let lastAccountId: string | undefined;
    let lastGroup: Node[] = [];
    let repeatedIds = false;
    // One pass over the input: every extra pass over a million objects costs tens of ms.
    fill((id, accountId, priority, scheduledFor, seq) => {
      const node = makeNode(id, accountId, priority, scheduledFor, seq);
      if (byId.set(node) !== undefined) repeatedIds = true;
      if (node.accountId !== lastAccountId) {
        lastAccountId = node.accountId;
        let group = groups.get(lastAccountId);
        if (group === undefined) groups.set(lastAccountId, (group = []));
        lastGroup = group;
      }
      lastGroup.push(node);
    });
    for (let [accountId, group] of groups) {
      // A repeated id keeps only its last entry (the one the map holds).
      if (repeatedIds) group = group.filter((node) => byId.get(node.id) === node);
      if (group.length === 0) continue;
      const account = new AccountQueue();
      account.load(sortInQueueOrder(group));
      accounts.set(accountId, account);
    }
    this.byId = byId;
    this.accounts = accounts;
  }

  /** Adds an entry; an entry with the same id (in any account) is replaced. */
  insert(entry: QueueEntry): void {
    const node = toNode(entry);
    const old = this.byId.get(node.id);
    if (old !== undefined) {
      if (compare(old, node) === 0 && old.accountId === node.accountId) return;
      this.removeNode(old);
    }
    this.byId.set(node);
    let account = this.accounts.get(node.accountId);
    if (account === undefined) {
      account = new AccountQueue();
      this.accounts.set(node.accountId, account);
    }
    account.insert(node);
  }

  /** Removes an entry; false if it was not queued. */
  remove(id: string): boolean {
    const node = this.byId.get(id);
    if (node === undefined) return false;
    this.removeNode(node);
    return true;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** A copy of the stored entry. */
  get(id: string): QueueEntry | undefined {
    const node = this.byId.get(id);
    return node === undefined ? undefined : toEntry(node);
  }

  /** 1-based position within its account's queue; 0 if not queued. */
  rank(id: string): number {
    const node = this.byId.get(id);
    if (node === undefined) return 0;
    return this.accounts.get(node.accountId)!.rank(node);
  }

  /** Entries queued for one account, or in all accounts when none is given. */
  /** Accounts that have (or had) messages in the queue. */
  accountIds(): string[] {
    return [...this.accounts.keys()];
  }

  size(accountId?: string): number {
    if (accountId === undefined) return this.byId.size;
    return this.accounts.get(accountId)?.size ?? 0;
  }

  countByPriority(accountId?: string): Record<Priority, number> {
    const result = emptyCounts();
    const add = (account: AccountQueue) => {
      for (let r = 0; r < 4; r++) result[PRIORITIES[r]] += account.counts[r];
    };
    if (accountId === undefined) for (const account of this.accounts.values()) add(account);
    else {
      const account = this.accounts.get(accountId);
      if (account !== undefined) add(account);
    }
    return result;
  }

  /**
   * Up to `limit` due entries (scheduledFor <= now) of the account, in queue order, skipping ids
   * for which `exclude` answers true (leased). Walks each priority from its start and stops at its
   * first not-yet-due entry, so future messages cost nothing and never block due ones.
   */
  takeDue(accountId: string, now: number, limit: number, exclude?: (id: string) => boolean): QueueEntry[] {
    const out: QueueEntry[] = [];
    const account = this.accounts.get(accountId);
    if (account === undefined || !(limit > 0)) return out;
    account.takeDue(now, limit, exclude, out);
    return out;
  }

  /** Earliest scheduledFor among the account's entries not yet due at `now`; undefined if none. */
  nextDueAt(accountId: string, now: number): number | undefined {
    return this.accounts.get(accountId)?.nextDueAt(now);
  }


  /** The message's `queuePosition` and `estimatedDelivery` (epoch ms); undefined if not queued. */
  position(id: string, now: number, sendRatePerMinute: number): { queuePosition: number; estimatedDelivery: number; basis?: string } | undefined {
    const node = this.byId.get(id);
    if (node === undefined) return undefined;
    const queuePosition = this.accounts.get(node.accountId)!.rank(node);
    if (this.estimator) {
      const e = this.estimator(node.accountId, queuePosition, node.scheduledFor, now);
      return { queuePosition, estimatedDelivery: e.at, basis: e.basis };
    }
    return { queuePosition, estimatedDelivery: estimateDelivery(node.scheduledFor, queuePosition, now, sendRatePerMinute) };
  }

  clear(): void {
    this.byId.clear();
    this.accounts.clear();
  }

  private removeNode(node: Node): void {
    this.byId.delete(node.id);
    const account = this.accounts.get(node.accountId)!;
    account.remove(node);
    if (account.size === 0) this.accounts.delete(node.accountId);
  }
}

/**
 * The queue's id → entry index: an open-addressing hash table (linear probing, load ≤ 1/2) over
 * a slot array and a typed array of the entries' id hashes.
 *
 * Why not a `Map<string, Node>`: at boot the queue indexes every queued message, and a JS Map
 * filled with a million id strings fresh from SQLite took ~1 s here (its growth rehashes, and
 * each fresh string is hashed by the engine on the way in) — most of the boot at a million
 * queued (target < 1.5 s). This table doubles as it fills (sizing it up front measured no
 * gain), hashes each id in a tight loop and stores the hash beside the slot, so a probe compares
 * strings only on an equal hash: ~0.4 s for the same million, and lookups stay O(1).
 *
 * Removal shifts the following entries of the probe run back (no tombstones), so a table that
 * sees many inserts and removals does not slow down. Pure: imports nothing.
 */

/** A 32-bit FNV-1a of the string's UTF-16 code units, then a final mix so the low bits (the slot) depend on every character. */
export function hashId(id: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x45d9f3b);
  return h ^ (h >>> 16);
}

const MIN_CAPACITY = 16;

/** Smallest power of two that keeps `entries` at most half full. */
function capacityFor(entries: number): number {
  let cap = MIN_CAPACITY;
  while (cap < entries * 2) cap *= 2;
  return cap;
}

export class IdIndex<T extends { readonly id: string }> {
  private slots!: (T | undefined)[];
  private hashes!: Int32Array;
  private mask = 0;
  /** Entries stored. */
  size = 0;

  /**
   * `expected`: how many entries are about to be stored (the boot load), so the table is not
   * grown step by step. `hash` is replaceable for tests (a constant hash makes every id collide).
   */
  constructor(
    expected = 0,
    private readonly hash: (id: string) => number = hashId,
  ) {
    this.allocate(capacityFor(expected));
  }

  get(id: string): T | undefined {
    const h = this.hash(id);
    const slots = this.slots;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const entry = slots[i];
      if (entry === undefined) return undefined;
      if (this.hashes[i] === h && entry.id === id) return entry;
    }
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Stores `entry` under its id; returns the entry it replaced (same id), if any. */
  set(entry: T): T | undefined {
    if ((this.size + 1) * 2 > this.slots.length) this.resize(this.slots.length * 2);
    const id = entry.id;
    const h = this.hash(id);
    const slots = this.slots;
    const mask = this.mask;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const old = slots[i];
      if (old === undefined) break;
      if (this.hashes[i] === h && old.id === id) {
        slots[i] = entry;
        return old;
      }
    }
    slots[i] = entry;
    this.hashes[i] = h;
    this.size++;
    return undefined;
  }

  /** Removes the entry with this id; false if there was none. */
  delete(id: string): boolean {
    const h = this.hash(id);
    const slots = this.slots;
    const hashes = this.hashes;
    const mask = this.mask;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const entry = slots[i];
      if (entry === undefined) return false;
      if (hashes[i] === h && entry.id === id) break;
    }
    // Backward shift: move each later entry of the run into the hole unless its home slot lies
    // cyclically in (hole, its slot] — then it is already reachable from its home.
    for (let j = (i + 1) & mask; slots[j] !== undefined; j = (j + 1) & mask) {
      const home = hashes[j] & mask;
      const reachable = i <= j ? i < home && home <= j : i < home || home <= j;
      if (reachable) continue;
      slots[i] = slots[j];
      hashes[i] = hashes[j];
      i = j;
    }
    slots[i] = undefined;
    this.size--;
    return true;
  }

  clear(): void {
    this.allocate(MIN_CAPACITY);
    this.size = 0;
  }

  private allocate(capacity: number): void {
    this.slots = new Array<T | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  private resize(capacity: number): void {
    const oldSlots = this.slots;
    const oldHashes = this.hashes;
    this.allocate(capacity);
    const slots = this.slots;
    const hashes = this.hashes;
    const mask = this.mask;
    for (let k = 0; k < oldSlots.length; k++) {
      const entry = oldSlots[k];
      if (entry === undefined) continue;
      const h = oldHashes[k];
      let i = h & mask;
      while (slots[i] !== undefined) i = (i + 1) & mask;
      slots[i] = entry;
      hashes[i] = h;
    }
  }
}

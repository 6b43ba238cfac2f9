/**
 * The overlay: acknowledged, not yet applied webhook submissions, in memory, as the request
 * path's rules need them (the contact by phone, the duplicate window, the per-recipient, daily
 * and monthly limits). Read inside a group-commit job together with intake_applied.seq (same
 * snapshot), so an entry is counted either from SQLite or from here, never both and never
 * neither (docs/api-decisions.md, "The webhook's append-only intake").
 */

/** One acknowledged, not yet applied entry, as the request path's rules need it. */
export interface PendingEntry {
  seq: number;
  accountId: string;
  phone: string;
  formId: string;
  contactId: string;
  /** Set for a queued message. */
  messageId: string | null;
  createdAt: number;
  /** Epoch ms (queued messages). */
  scheduledFor: number;
}

const EMPTY: PendingEntry[] = [];

export class IntakeOverlay {
  /** Unapplied entries in seq order, and the same indexed by account+phone and by form. */
  private pending: PendingEntry[] = [];
  private pendingHead = 0;
  private readonly byPhone = new Map<string, PendingEntry[]>();
  private readonly byForm = new Map<string, PendingEntry[]>();

  /** Adds an entry the running job is about to commit. */
  add(e: PendingEntry): void {
    this.pending.push(e);
    push(this.byPhone, `${e.accountId}\u0000${e.phone}`, e);
    if (e.messageId !== null) push(this.byForm, e.formId, e);
  }

  /** Takes back the entries of a job whose COMMIT failed. */
  remove(seq: number): void {
    const drop = (list: PendingEntry[] | undefined) => {
      if (!list) return;
      const i = list.findIndex((x) => x.seq === seq);
      if (i >= 0) list.splice(i, 1);
    };
    const e = this.pending.find((x, i) => i >= this.pendingHead && x.seq === seq);
    if (!e) return;
    this.pending.splice(this.pending.indexOf(e), 1);
    drop(this.byPhone.get(`${e.accountId}\u0000${e.phone}`));
    drop(this.byForm.get(e.formId));
  }

  /** Unapplied entries for this account's phone number past `appliedSeq` (read in the same snapshot). */
  forPhone(accountId: string, phone: string, appliedSeq: number): PendingEntry[] {
    const list = this.byPhone.get(`${accountId}\u0000${phone}`);
    if (!list || list.length === 0) return EMPTY;
    return list[0].seq > appliedSeq ? list : list.filter((x) => x.seq > appliedSeq);
  }

  /** Unapplied queued messages of a form scheduled in [from, to). */
  countScheduled(formId: string, from: number, to: number, appliedSeq: number): number {
    const list = this.byForm.get(formId);
    if (!list) return 0;
    let n = 0;
    for (const x of list) if (x.seq > appliedSeq && x.scheduledFor >= from && x.scheduledFor < to) n++;
    return n;
  }

  /** Unapplied messages counted by the monthly quota (created in the month starting `monthStart`). */
  pendingMessages(accountId: string, monthStart: number, appliedSeq: number): number {
    let n = 0;
    for (let i = this.pendingHead; i < this.pending.length; i++) {
      const x = this.pending[i];
      if (x.accountId === accountId && x.messageId !== null && x.createdAt >= monthStart && x.seq > appliedSeq) n++;
    }
    return n;
  }

  /** Entries not applied yet. */
  size(): number {
    return this.pending.length - this.pendingHead;
  }

  /** The applier has applied everything up to `seq`: those entries leave (they arrive in seq order). */
  prune(seq: number): void {
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead].seq <= seq) {
      const e = this.pending[this.pendingHead++];
      shift(this.byPhone, `${e.accountId}\u0000${e.phone}`, e);
      if (e.messageId !== null) shift(this.byForm, e.formId, e);
    }
    if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
  }
}

function push(map: Map<string, PendingEntry[]>, key: string, e: PendingEntry) {
  const list = map.get(key);
  if (list) list.push(e);
  else map.set(key, [e]);
}

function shift(map: Map<string, PendingEntry[]>, key: string, e: PendingEntry) {
  const list = map.get(key);
  if (!list) return;
  if (list[0] === e) list.shift();
  else {
    const i = list.indexOf(e);
    if (i >= 0) list.splice(i, 1);
  }
  if (list.length === 0) map.delete(key);
}

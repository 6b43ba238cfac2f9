/**
 * The long-poll's parked callers, per account (services/leases.ts, `waitNext`): a caller with
 * nothing to take parks here until a message is queued for its account (`wake`), its own timer
 * runs out, or the server stops (`releaseAll`: parked long-polls answer now and new ones do not
 * park, so the drain of in-flight requests is not held up for their whole wait).
 */
export class LeaseWaiters {
  private readonly parked = new Map<string, Set<() => void>>();
  /** Set by `releaseAll` (shutdown); cleared when the lease sweeper starts again. */
  stopped = false;

  /** Resolves after `ms`, or sooner when the account is woken or the server stops. */
  park(accountId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.parked.get(accountId);
      if (!set) this.parked.set(accountId, (set = new Set()));
      const wake = () => {
        clearTimeout(timer);
        this.parked.get(accountId)?.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  /** Wakes every caller parked for the account. */
  wake(accountId: string): void {
    const set = this.parked.get(accountId);
    if (!set) return;
    this.parked.delete(accountId);
    for (const wake of set) wake();
  }

  releaseAll(): void {
    this.stopped = true;
    for (const set of this.parked.values()) for (const wake of set) wake();
    this.parked.clear();
  }

  /** Callers parked for the account (tests, metrics). */
  count(accountId: string): number {
    return this.parked.get(accountId)?.size ?? 0;
  }
}

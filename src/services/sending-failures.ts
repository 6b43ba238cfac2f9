/**
 * Failover: what a phone's send results do to its budgets (docs/phones.md, "When a phone or SIM
 * is paused"). Called by the phone's reports (phone-reports.ts) after each Sent or Failed it
 * applied; the failure's words are classified by domain/send-failure.ts.
 *
 * - Android's limit (`Send result: RESULT_ERROR_LIMIT_EXCEEDED …`): the whole phone waits out
 *   Android's one-minute window.
 * - No service, radio off: the SIM waits 1 min, doubling up to 30 min while it keeps failing.
 * - Generic failures: after 3 in a row, the same back-off. A text sent from the SIM clears it.
 * - A pause writes its row and `device.paused` in one transaction; the texts the paused phone or
 *   SIM still holds go back to the queue at once (the phone is told MessageCancelled, so it drops
 *   them) and any phone with budget takes them — a sticky contact's only once its phone has been
 *   paused longer than the account's `stickyMoveAfterMinutes` (sending-capacity.ts).
 * - When a pause ends, `device.resumed` goes out (the 1 s sweep) and the phones are woken.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import type { DeviceRow } from "../db/stores/devices";
import { findDevice } from "../db/stores/devices";
import { latestLeaseSim, leasedOnSlot } from "../db/message-history";
import type { MessageRow } from "../db/message-rows";
import { classifyFailure, pauseFor } from "../domain/send-failure";
import { emitEvent } from "./events";
import type { LeaseService } from "./leases";
import type { SendingCapacity } from "./sending-capacity";
import { slotsOf } from "./device-limits";

export interface FailoverHooks {
  view(d: DeviceRow): unknown;
  released(d: DeviceRow, n: number): void;
  wake(accountId: string): void;
  holderOf(d: DeviceRow): string;
}

export class SendingFailures {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly capacity: SendingCapacity,
    private readonly leases: LeaseService,
    private readonly hooks: FailoverHooks,
  ) {}

  /** A report of the phone was applied to `row`: sent (reason null) or failed with `reason`. */
  reported(device: DeviceRow, row: Pick<MessageRow, "metadata" | "account_id" | "recipient_phone">, result: "sent" | "failed", reason: string | null): void {
    const now = this.clock();
    const slot = latestLeaseSim(row.metadata);
    if (result === "sent") {
      this.capacity.noteExchange(row.account_id, row.recipient_phone, device.id, slot, now);
      const p = this.capacity.pauseRow(device.id, slot);
      if (p && p.failures > 0) {
        this.sqlite.transaction(() => {
          this.capacity.clearPause(device.id, slot);
          if (p.until > now) emitEvent(this.sqlite, device.accountId, "device.resumed", () => ({ device: this.hooks.view(device), slot: slot || null }), now);
        })();
      }
      return;
    }
    const kind = classifyFailure(reason);
    if (kind === "text") return;
    const before = this.capacity.pauseRow(device.id, slot);
    const inRow = (before?.failures ?? 0) + 1;
    const pause = pauseFor(kind, inRow);
    const target = pause?.phone ? -1 : slot;
    let paused = false;
    this.sqlite.transaction(() => {
      // The SIM's failures in a row are kept even while it is not paused (the back-off counts them).
      if (!pause || target !== slot) {
        this.capacity.setPause({ deviceId: device.id, slot, until: before && before.until > now ? before.until : 0, reason: before?.reason ?? kind, failures: inRow, since: before?.since ?? now });
      }
      if (!pause) return;
      const current = this.capacity.pauseOf(device.id, target, now);
      const until = now + pause.ms;
      if (current && current.until >= until) return;
      this.capacity.setPause({ deviceId: device.id, slot: target, until, reason: pause.reason, failures: target === slot ? inRow : (current?.failures ?? 1), since: current?.since ?? now });
      paused = true;
      emitEvent(this.sqlite, device.accountId, "device.paused", () => ({
        device: this.hooks.view(device), slot: target < 0 ? null : target || null, pausedUntil: new Date(until).toISOString(), pauseReason: pause.reason,
      }), now);
    })();
    if (!paused) return;
    this.logger.warn("phone paused after a failure it reported", { deviceId: device.id, slot: target, reason: pause!.reason, failure: reason?.slice(0, 200) });
    this.failover(device, target);
  }

  /** The texts the paused phone (slot −1) or SIM holds go back to the queue for another phone. */
  private failover(device: DeviceRow, slot: number): void {
    const holder = this.hooks.holderOf(device);
    const slots = slot < 0 ? slotsOf(device) : [slot];
    const ids = slots.flatMap((s) => leasedOnSlot(this.sqlite, holder, s));
    const n = ids.length ? this.leases.releaseHolder(holder, ids, { tellHolder: true }) : 0;
    this.hooks.released(device, n);
    this.hooks.wake(device.accountId);
  }

  /** Pauses whose time is up: `device.resumed`, and the phones are woken (the 1 s timer). */
  sweep(now = this.clock()): void {
    const ended = this.capacity.endedPauses(now);
    if (!ended.length) return;
    const accounts = new Set<string>();
    this.sqlite.transaction(() => {
      for (const p of ended) {
        this.capacity.setPause({ ...p, until: 0 });
        const d = findDevice(this.sqlite, p.deviceId);
        if (!d) continue;
        // The phone's other pause may still hold it: resumed is said once nothing does.
        if (p.slot >= 0 && this.capacity.pauseOf(d.id, -1, now)) continue;
        accounts.add(d.accountId);
        emitEvent(this.sqlite, d.accountId, "device.resumed", () => ({ device: this.hooks.view(d), slot: p.slot <= 0 ? null : p.slot }), now);
      }
    })();
    for (const a of accounts) this.hooks.wake(a);
  }
}

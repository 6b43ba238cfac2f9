/**
 * A message's timeline for the detail view (GET /v1/messages/{id}): derived from what the row
 * keeps — created/scheduled/sent times, the lease history and failed attempts in its metadata
 * (db/stores/messages/history.ts, db/stores/messages/retries.ts) and the final status. Pure: no clock, no db.
 */

export type TimelineKind = "created" | "scheduled" | "leased" | "lease_expired" | "attempt_failed" | "sent" | "delivered" | "failed" | "cancelled";

export interface TimelineEvent {
  at: string;
  kind: TimelineKind;
  /** leased / lease_expired / sent: the phone that held the lease (its id or the deviceId it gave). */
  deviceId?: string | null;
  /** The registered phone's name, when the holder is one. */
  deviceName?: string | null;
  /** leased: when the lease ends (or ended) unless the phone reports first. */
  expiresAt?: string;
  /** leased: the SIM it was handed out with (0: the phone's own choice). */
  sim?: number;
  /** leased: why it went from another phone or SIM than its contact's own. */
  moved?: string;
  /** attempt_failed / failed / cancelled: the reason given. */
  reason?: string | null;
  /** attempt_failed: when the message went back to the queue (automatic retry) or was sent again by the owner. */
  retryAt?: string;
  /** attempt_failed: who sent it again. */
  by?: "automatic" | "owner";
  /**
   * sent / delivered: the time the phone reported when it was not believed (before its lease or
   * ahead of the server's clock); `at` is then the server's time of the report.
   */
  deviceTime?: string;
}

export interface TimelineInput {
  status: "queued" | "sent" | "failed" | "cancelled";
  createdAt: string;
  scheduledFor: string;
  sentAt: string | null;
  updatedAt: string;
  failureReason: string | null;
  leaseDeviceId: string | null;
  leaseExpiresAt: string | null;
  metadata: Record<string, unknown>;
}

/** A later schedule than this after creation is shown as its own step (a delay, quiet hours). */
const SCHEDULE_SHOWN_AFTER_MS = 1_000;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
/** A stored time: read back only when it is one (metadata is JSON anyone with the row could have edited). */
const time = (v: unknown): string | undefined => (typeof v === "string" && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : undefined);
const list = (v: unknown): Array<Record<string, unknown>> =>
  Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null) : [];

export function messageTimeline(m: TimelineInput, nameOf: (deviceId: string) => string | null = () => null): TimelineEvent[] {
  const out: TimelineEvent[] = [{ at: m.createdAt, kind: "created" }];
  const failures = list(m.metadata.failures);
  const leases = list(m.metadata.leases);
  // A retry moves scheduledFor, so the original schedule is only known while there was none.
  if (failures.length === 0 && Date.parse(m.scheduledFor) - Date.parse(m.createdAt) > SCHEDULE_SHOWN_AFTER_MS) {
    out.push({ at: m.scheduledFor, kind: "scheduled" });
  }
  const device = (id: string | null | undefined) => (id ? { deviceId: id, deviceName: nameOf(id) } : { deviceId: null, deviceName: null });
  leases.forEach((l, i) => {
    const at = time(l.at);
    if (!at) return;
    const id = str(l.deviceId) ?? null;
    const last = i === leases.length - 1;
    // The lease held now: its row has the live expiry (a phone's "Processed" may have moved it).
    const expiresAt = last && m.leaseExpiresAt && m.leaseDeviceId === id ? m.leaseExpiresAt : time(l.expiresAt);
    const sim = typeof l.sim === "number" && Number.isInteger(l.sim) ? { sim: l.sim } : {};
    const moved = str(l.moved) !== undefined ? { moved: str(l.moved)! } : {};
    out.push({ at, kind: "leased", ...device(id), ...(expiresAt ? { expiresAt } : {}), ...sim, ...moved });
    if (l.expired === true && expiresAt) out.push({ at: expiresAt, kind: "lease_expired", ...device(id) });
  });
  for (const f of failures) {
    const at = time(f.at);
    if (!at) continue;
    const retryAt = time(f.retryAt);
    out.push({ at, kind: "attempt_failed", reason: str(f.reason) ?? null, ...(retryAt ? { retryAt } : {}), by: f.by === "owner" ? "owner" : "automatic" });
  }
  const reported = (typeof m.metadata.deviceTimes === "object" && m.metadata.deviceTimes !== null ? m.metadata.deviceTimes : {}) as Record<string, unknown>;
  const raw = (k: string) => (str(reported[k]) !== undefined ? { deviceTime: str(reported[k])! } : {});
  if (m.status === "sent" && m.sentAt) {
    const holder = leases.length ? (str(leases[leases.length - 1].deviceId) ?? null) : null;
    out.push({ at: m.sentAt, kind: "sent", ...device(holder), ...raw("sentAt") });
    const deliveredAt = time(m.metadata.deliveredAt);
    if (deliveredAt) out.push({ at: deliveredAt, kind: "delivered", ...device(holder), ...raw("deliveredAt") });
  } else if (m.status === "failed") {
    out.push({ at: m.updatedAt, kind: "failed", reason: m.failureReason });
  } else if (m.status === "cancelled") {
    out.push({ at: m.updatedAt, kind: "cancelled", reason: m.failureReason });
  }
  // By time; equal times keep the order above (created, schedule, leases, failures, the end).
  return out.map((e, i) => ({ e, i, t: Date.parse(e.at) })).sort((a, b) => a.t - b.t || a.i - b.i).map((x) => x.e);
}

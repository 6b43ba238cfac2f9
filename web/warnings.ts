/**
 * The Overview's health warnings, from /health and the queue: pure, so they are unit-tested.
 */
export interface Health {
  status: string;
  database: string;
  tls?: { certificateExpiresAt: string; daysLeft: number };
}

/** Due messages older than this with nobody sending them are worth a warning. */
export const STUCK_AFTER_MS = 10 * 60_000;
/** The server warns this many days before its certificate expires; so does the Overview. */
export const CERT_WARNING_DAYS = 30;

export function healthWarnings(health: Health, oldestDueAt: string | null, now: number, age: (ms: number) => string): string[] {
  const out: string[] = [];
  if (health.status !== "ok" || health.database !== "ok") out.push("The server reports a database problem: check its log.");
  if (oldestDueAt && now - Date.parse(oldestDueAt) > STUCK_AFTER_MS) {
    out.push(`A message has been due for ${age(now - Date.parse(oldestDueAt))}: is a phone switched on and asking for work?`);
  }
  if (health.tls && health.tls.daysLeft < CERT_WARNING_DAYS) {
    const day = health.tls.certificateExpiresAt.slice(0, 10);
    out.push(
      health.tls.daysLeft < 0
        ? `The HTTPS certificate expired on ${day}: phones and browsers refuse the connection. Renew it (textwire tls renew) and restart.`
        : `The HTTPS certificate expires in ${health.tls.daysLeft} days (${day}): renew it (textwire tls renew) and restart.`,
    );
  }
  return out;
}

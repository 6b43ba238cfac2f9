/**
 * Asks phones to send the texts they received between `since` and `until` again
 * (MessagesExportRequested over their live event stream, as SMSGate's server does); they arrive
 * as sms:received and each is applied once (inbound texts are kept per phone and message id) and,
 * being history, take no action (the request is recorded for that). `deviceId` null: every
 * SMSGate phone of the account that is connected. A phone that is not connected would never hear
 * it: that is said (409), not acknowledged and lost.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import { EXPORT_OPEN_MS } from "../domain/inbound";
import type { DeviceEventHub } from "./device-events";

export interface InboxExportContext {
  sqlite: Database;
  clock: Clock;
  logger: Logger;
  events: DeviceEventHub;
  /** The account's own phone (DEVICE_NOT_FOUND otherwise). */
  own: (deviceId: string) => DeviceRow;
}

export function requestInboxExport(ctx: InboxExportContext, accountId: string, deviceId: string | null, sinceText: unknown, untilText: unknown): { deviceIds: string[] } {
  const errs: Array<{ field: string; message: string; requirement: string; provided: unknown }> = [];
  const when = (field: string, v: unknown): number => {
    const ms = typeof v === "string" && /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) errs.push({ field, message: `${field} must be a date and time such as 2026-01-31T00:00:00Z`, requirement: "ISO 8601 date-time", provided: v ?? null });
    return ms;
  };
  const since = when("since", sinceText);
  const until = when("until", untilText);
  if (!errs.length && since > until) errs.push({ field: "until", message: "until must not be before since", requirement: ">= since", provided: untilText });
  if (errs.length) throw validationError(errs);
  const connected = ctx.events.connectedDevices();
  let targets: DeviceRow[];
  if (deviceId !== null) {
    const d = ctx.own(deviceId);
    if (d.kind !== "smsgate" || !connected.has(d.id)) {
      throw new AppError("INVALID_STATE", {
        message: d.kind !== "smsgate"
          ? `"${d.name}" polls with an API key, not the SMSGate app: it cannot send its received texts again`
          : `The phone "${d.name}" is not connected right now: open the SMSGate app on it, check it is online, and ask again`,
        details: { deviceId: d.id, connected: false },
      });
    }
    targets = [d];
  } else {
    targets = store.listDevices(ctx.sqlite, accountId).filter((d) => d.kind === "smsgate" && connected.has(d.id));
    if (!targets.length) {
      throw new AppError("INVALID_STATE", { message: "None of this account's phones is connected right now: open the SMSGate app on one, check it is online, and ask again", details: { connected: 0 } });
    }
  }
  // SMSGate's server sends RFC 3339 times without fractions, and strings only (the app reads a map of strings).
  const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const data = { since: rfc3339(since), until: rfc3339(until), messageTypes: "SMS", webhookDelivery: "Individual", triggerWebhooks: "true" };
  // Remembered before the phones are asked (so the texts they send again are taken as history,
  // not new replies: domain/inbound.ts, isResentHistory), and forgotten for a phone the request
  // did not reach: the record never lags the request (docs/api-decisions.md, "Nothing the phone
  // reports is lost, and nobody takes the dashboard: hardening round three").
  const now = ctx.clock();
  const requestedAt = iso(now);
  ctx.sqlite.transaction(() => {
    for (const d of targets) {
      store.insertInboxExport(ctx.sqlite, { accountId, deviceId: d.id, since: iso(since), until: iso(until), requestedAt }, iso(now - EXPORT_OPEN_MS));
    }
  })();
  const sentTo: string[] = [];
  try {
    for (const d of targets) if (ctx.events.emit(accountId, "MessagesExportRequested", data, d.id) > 0) sentTo.push(d.id);
  } finally {
    const missed = targets.filter((d) => !sentTo.includes(d.id));
    if (missed.length) ctx.sqlite.transaction(() => missed.forEach((d) => store.deleteInboxExport(ctx.sqlite, d.id, requestedAt)))();
  }
  if (!sentTo.length) throw new AppError("INVALID_STATE", { message: "The phone's connection closed just now: ask again in a moment", details: { connected: 0 } });
  ctx.logger.info("inbox export requested", { accountId, deviceIds: sentTo, since: data.since, until: data.until });
  return { deviceIds: sentTo };
}

/**
 * Times reported by phones: MacroDroid and Tasker build `sentAt` from unpadded
 * variables ("2026-11-5T9:03:7") and often without a zone. Such a value is accepted; a zone-less
 * one is read as wall time in the account's time zone (UTC when the account has none).
 */
import { utcOffsetMinutesAt } from "./time-series";
import { isoParts } from "./message-transitions";

const LENIENT_RE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{1,2})(?::?(\d{2}))?)?$/;

/** Epoch ms of a device time, or null when it is not a plausible date-time. */
export function parseDeviceTime(value: string, timeZone: string | null): number | null {
  if (value.length > 64) return null;
  const m = LENIENT_RE.exec(value.trim());
  const parts = m ? isoParts(m) : null;
  if (!parts) return null;
  const { wall, zone } = parts;
  if (zone === "Z") return wall;
  if (zone !== null) return wall - zone * 60_000;
  if (!timeZone || timeZone === "UTC") return wall;
  // Wall time → instant: subtract the zone's offset, then correct once for a DST edge.
  let t = wall - utcOffsetMinutesAt(wall, timeZone) * 60_000;
  const again = wall - utcOffsetMinutesAt(t, timeZone) * 60_000;
  if (again !== t) t = again;
  return t;
}

/** The ISO form (Z) of a device time, or the value unchanged when it does not parse (the strict check then explains). */
export function normalizeDeviceTime(value: unknown, timeZone: string | null): unknown {
  if (typeof value !== "string") return value;
  const t = parseDeviceTime(value, timeZone);
  return t === null ? value : new Date(t).toISOString();
}

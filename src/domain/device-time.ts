/**
 * Times reported by phones (issue 10): MacroDroid and Tasker build `sentAt` from unpadded
 * variables ("2026-11-5T9:03:7") and often without a zone. Such a value is accepted; a zone-less
 * one is read as wall time in the account's time zone (UTC when the account has none).
 */
import { utcOffsetMinutesAt } from "./time-series";

const LENIENT_RE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{1,2})(?::?(\d{2}))?)?$/;

/** Epoch ms of a device time, or null when it is not a plausible date-time. */
export function parseDeviceTime(value: string, timeZone: string | null): number | null {
  if (value.length > 64) return null;
  const m = LENIENT_RE.exec(value.trim());
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, ohs, oms] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  const h = Number(hs);
  const mi = Number(mis);
  const s = ss === undefined ? 0 : Number(ss);
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, "0"));
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  if (d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (z) return wall;
  if (sign) {
    const oh = Number(ohs);
    const om = oms === undefined ? 0 : Number(oms);
    if (oh > 23 || om > 59) return null;
    return wall - (sign === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
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

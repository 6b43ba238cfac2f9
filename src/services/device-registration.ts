/**
 * Registering phones: registration tokens (API and CLI; shown once, stored as their SHA-256),
 * a phone registering with one (POST /api/mobile/v1/device), and finding the phone a device
 * token belongs to. Presence, limits and the phone protocol are in services/devices.ts and
 * services/phone-reports.ts.
 */
import type { Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import { sameHash } from "./phone-reports";

/** Registration tokens: default life and the longest allowed. */
export const REGISTRATION_TOKEN_HOURS_DEFAULT = 24;
export const REGISTRATION_TOKEN_HOURS_MAX = 24 * 365;
/** Device names, as given by the app or X-Device-Name. */
export const DEVICE_NAME_MAX = 100;
export const REGISTRATION_TOKEN_PREFIX = "txwire_reg_";
export const DEVICE_TOKEN_PREFIX = "txwire_dev_";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const token = (prefix: string) => prefix + randomBytes(24).toString("base64url");

/** A registration token for the SMSGate app: shown once, stored as its SHA-256 (API and CLI). */
export function createRegistrationToken(sqlite: Database, clock: Clock, accountId: string, body: { reusable?: unknown; expiresInHours?: unknown } = {}) {
  const errs: Array<{ field: string; message: string; requirement?: string; provided?: unknown }> = [];
  const reusable = body.reusable ?? false;
  if (typeof reusable !== "boolean") errs.push({ field: "reusable", message: "reusable must be true or false", requirement: "boolean", provided: reusable });
  const hours = body.expiresInHours ?? REGISTRATION_TOKEN_HOURS_DEFAULT;
  if (typeof hours !== "number" || !Number.isFinite(hours) || hours <= 0 || hours > REGISTRATION_TOKEN_HOURS_MAX) {
    errs.push({ field: "expiresInHours", message: `expiresInHours must be a number of hours above 0 and at most ${REGISTRATION_TOKEN_HOURS_MAX}`, requirement: `0 < hours <= ${REGISTRATION_TOKEN_HOURS_MAX}`, provided: hours });
  }
  if (errs.length) throw validationError(errs);
  const now = clock();
  const t = token(REGISTRATION_TOKEN_PREFIX);
  const expiresAt = iso(now + Math.round((hours as number) * 3_600_000));
  store.insertRegistrationToken(sqlite, { id: newId(), accountId, tokenHash: sha256(t), reusable: reusable as boolean, expiresAt, usedAt: null, createdAt: iso(now) });
  return { token: t, reusable: reusable as boolean, expiresAt };
}

/** Checks the registration token and writes the new SMSGate device (one transaction). */
export function registerPhone(sqlite: Database, now: number, presented: string | null, body: Record<string, unknown>, ip: string) {
  const row = presented ? store.findRegistrationToken(sqlite, sha256(presented)) : null;
  if (!row || !sameHash(row.tokenHash, sha256(presented!)) || Date.parse(row.expiresAt) <= now || (!row.reusable && row.usedAt)) {
    throw new AppError("AUTHENTICATION_ERROR", { message: "Invalid, used or expired registration token; create one with `textwire devices token --account ID`" });
  }
  const name = typeof body.name === "string" && body.name.trim() ? body.name.trim().slice(0, DEVICE_NAME_MAX) : "SMSGate phone";
  const simCards = Array.isArray(body.simCards) ? body.simCards.slice(0, 8) : [];
  const deviceToken = token(DEVICE_TOKEN_PREFIX);
  const id = newId();
  const at = iso(now);
  sqlite.transaction(() => {
    if (!row.reusable && !store.markRegistrationTokenUsed(sqlite, row.id, at)) {
      throw new AppError("AUTHENTICATION_ERROR", { message: "This registration token was already used" });
    }
    store.insertDevice(sqlite, {
      id, accountId: row.accountId, kind: "smsgate", externalId: null, name, tokenHash: sha256(deviceToken),
      signingKey: randomBytes(18).toString("base64url"),
      pushToken: typeof body.pushToken === "string" ? body.pushToken.slice(0, 4096) : null,
      simCards, appVersion: null, lastSeenAt: at, lastIp: ip, battery: null, sendRatePerMinute: null, sendingLimits: { limits: {}, sims: [] },
      createdAt: at, updatedAt: at,
    });
  })();
  return { id, token: deviceToken, login: row.accountId, name };
}

/** The device a Bearer device token belongs to, or null. */
export function deviceOfToken(sqlite: Database, presented: string | null): DeviceRow | null {
  if (!presented || !presented.startsWith(DEVICE_TOKEN_PREFIX)) return null;
  const digest = sha256(presented);
  const row = store.findDeviceByTokenHash(sqlite, digest);
  if (!row || !row.tokenHash || !sameHash(row.tokenHash, digest)) return null;
  return row;
}

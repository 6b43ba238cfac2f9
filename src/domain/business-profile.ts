/**
 * The business's profile: the name customers see in replies, its country (how phone numbers
 * without a +code are read) and its time zone. Pure: validation and the name a reply carries
 * (docs/api-decisions.md, "The business's name, the server address and HTTPS without breaking forms").
 */
import { isSupportedCountry } from "libphonenumber-js/max";
import { canonicalTimeZone } from "./time-series";
import type { FieldError } from "./submission";

/** The name a first start gives the account: a placeholder, never sent to a customer. */
export const DEFAULT_ACCOUNT_NAME = "Default account";
/** What a reply says instead of the name until a person has chosen one. */
export const UNNAMED_BUSINESS = "this number";
export const MAX_BUSINESS_NAME_LENGTH = 60;

export interface BusinessProfileInput {
  name: string;
  /** ISO 3166 alpha-2, upper case. */
  country: string;
  /** IANA time zone, canonical spelling. */
  timeZone: string;
}

/** The name a reply carries: the account's name once a person set it, else "this number". */
export function replyName(name: string | null | undefined, nameSet: boolean): string {
  return nameSet && name ? name : UNNAMED_BUSINESS;
}

/** Checks a profile as typed; every problem is reported, nothing is applied when there is one. */
export function parseBusinessProfile(body: unknown): { ok: true; profile: BusinessProfileInput } | { ok: false; errors: FieldError[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ field: "body", message: "the body must be a JSON object with name, country and timeZone", requirement: "object", provided: null }] };
  }
  const b = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const name = typeof b.name === "string" ? b.name.normalize("NFC").replace(/\s+/g, " ").trim() : "";
  if (typeof b.name !== "string" || name === "" || name.length > MAX_BUSINESS_NAME_LENGTH || /[\p{Cc}\p{Cf}]/u.test(b.name.replace(/[\t\n\r]/g, " "))) {
    errors.push({
      field: "name",
      message: `Type the business name your customers know, 1 to ${MAX_BUSINESS_NAME_LENGTH} characters`,
      requirement: `1-${MAX_BUSINESS_NAME_LENGTH} characters`,
      provided: typeof b.name === "string" ? `${b.name.length} characters` : (b.name ?? null),
    });
  }
  const country = typeof b.country === "string" ? b.country.trim().toUpperCase() : "";
  if (!/^[A-Z]{2}$/.test(country) || !isSupportedCountry(country as never)) {
    errors.push({ field: "country", message: "Choose a country (a two-letter code such as US, GB or FR)", requirement: "ISO 3166 alpha-2 code", provided: typeof b.country === "string" ? b.country.slice(0, 20) : (b.country ?? null) });
  }
  const zone = typeof b.timeZone === "string" ? canonicalTimeZone(b.timeZone.trim()) : null;
  if (zone === null) {
    errors.push({ field: "timeZone", message: "Choose a time zone such as America/New_York or Europe/London", requirement: "IANA time zone name", provided: typeof b.timeZone === "string" ? b.timeZone.slice(0, 64) : (b.timeZone ?? null) });
  }
  for (const k of Object.keys(b)) {
    if (!["name", "country", "timeZone"].includes(k)) errors.push({ field: k.slice(0, 50), message: `unknown field '${k.slice(0, 50)}'; allowed: name, country, timeZone`, requirement: "name, country, timeZone", provided: k.slice(0, 50) });
  }
  return errors.length ? { ok: false, errors } : { ok: true, profile: { name, country, timeZone: zone! } };
}

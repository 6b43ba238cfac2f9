/**
 * A contact's own time zone (docs/contacts.md, "Time zone"): an optional IANA name set by the
 * API, an import, the dashboard or a form's `timezone` field, else guessed from the number's
 * country where that country keeps one zone. Quiet hours and automations' sendAt use it when known, the form's zone
 * otherwise. Pure: no database, no clock.
 */
import { parsePhone } from "./phone";
import { canonicalTimeZone } from "./time-series";

/**
 * Countries that keep one zone on their mainland, by ISO code. Countries with several (US, CA,
 * AU, BR, MX, RU, ID, KZ, …) are absent: no guess beats the form's zone there.
 */
export const SINGLE_ZONE_COUNTRIES: Readonly<Record<string, string>> = {
  GB: "Europe/London",
  GG: "Europe/Guernsey",
  JE: "Europe/Jersey",
  IM: "Europe/Isle_of_Man",
  IE: "Europe/Dublin",
  FR: "Europe/Paris",
  DE: "Europe/Berlin",
  IT: "Europe/Rome",
  ES: "Europe/Madrid",
  PT: "Europe/Lisbon",
  NL: "Europe/Amsterdam",
  BE: "Europe/Brussels",
  LU: "Europe/Luxembourg",
  CH: "Europe/Zurich",
  AT: "Europe/Vienna",
  PL: "Europe/Warsaw",
  CZ: "Europe/Prague",
  SK: "Europe/Bratislava",
  HU: "Europe/Budapest",
  SI: "Europe/Ljubljana",
  HR: "Europe/Zagreb",
  RO: "Europe/Bucharest",
  BG: "Europe/Sofia",
  GR: "Europe/Athens",
  SE: "Europe/Stockholm",
  NO: "Europe/Oslo",
  DK: "Europe/Copenhagen",
  FI: "Europe/Helsinki",
  EE: "Europe/Tallinn",
  LV: "Europe/Riga",
  LT: "Europe/Vilnius",
  IS: "Atlantic/Reykjavik",
  TR: "Europe/Istanbul",
  IL: "Asia/Jerusalem",
  AE: "Asia/Dubai",
  JP: "Asia/Tokyo",
  KR: "Asia/Seoul",
  CN: "Asia/Shanghai",
  TW: "Asia/Taipei",
  HK: "Asia/Hong_Kong",
  SG: "Asia/Singapore",
  PH: "Asia/Manila",
  TH: "Asia/Bangkok",
  VN: "Asia/Ho_Chi_Minh",
  MY: "Asia/Kuala_Lumpur",
  IN: "Asia/Kolkata",
  PK: "Asia/Karachi",
  ZA: "Africa/Johannesburg",
  NG: "Africa/Lagos",
  KE: "Africa/Nairobi",
  EG: "Africa/Cairo",
  NZ: "Pacific/Auckland",
  AR: "America/Argentina/Buenos_Aires",
  CO: "America/Bogota",
  PE: "America/Lima",
  JM: "America/Jamaica",
  PR: "America/Puerto_Rico",
};

/** The zone of the number's country when it keeps one zone (E.164 in), else null. */
export function guessTimeZone(phoneE164: string): string | null {
  const country = parsePhone(phoneE164)?.country;
  return country ? (SINGLE_ZONE_COUNTRIES[country] ?? null) : null;
}

/**
 * The zone a contact's texts keep to: their own when set, else the guess from their number, else
 * the form's. The guess is made when used, never stored: setting or clearing `timeZone` is the
 * owner's, and a contact made before the table knew their country gets it at once.
 */
export function contactZone(contactTimeZone: string | null | undefined, phoneE164: string | null | undefined, formTimeZone: string): string {
  if (contactTimeZone) return contactTimeZone;
  return (phoneE164 ? guessTimeZone(phoneE164) : null) ?? formTimeZone;
}

/** A time zone as sent: its canonical IANA spelling, or null when Intl does not know it. */
export function parseContactTimeZone(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? canonicalTimeZone(v.trim()) : null;
}

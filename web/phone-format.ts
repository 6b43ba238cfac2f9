/**
 * Phone numbers as people write them: the account's own country's numbers in its national format
 * ("(415) 555-2671"), others in the international one ("+44 7700 900123"). libphonenumber's
 * smallest metadata is loaded after the first page shows (its own chunk), with the account's
 * country (GET /v1/account); until then a number shows as stored (E.164).
 */
import { signal } from "@preact/signals";
import { api } from "./api";
import type { AccountInfo } from "./api-types";

const formatter = signal<((e164: string) => string) | null>(null);
let loading = false;

function load(): void {
  if (loading) return;
  loading = true;
  Promise.all([import("libphonenumber-js/min"), api.get("/v1/account")])
    .then(([lib, r]) => {
      const home = r.data.account.defaultCountry;
      formatter.value = (e164) => {
        const p = lib.parsePhoneNumberFromString(e164);
        if (!p) return e164;
        return p.country === home ? p.formatNational() : p.formatInternational();
      };
    })
    .catch(() => (loading = false));
}

/** A stored number (E.164) as the dashboard shows it; a component calling it is redrawn once the formatter is ready. */
export function fmtPhone(e164: string | null | undefined): string {
  if (!e164) return "";
  const f = formatter.value;
  if (!f) {
    load();
    return e164;
  }
  return f(e164);
}

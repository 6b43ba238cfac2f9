/** Dates and numbers as an owner reads them, in the browser's own language and time zone. */
/** The browser's language, or English when it reports one Intl cannot use (e.g. "en-US@posix"). */
const locale = (() => {
  try {
    return new Intl.DateTimeFormat(navigator.language).resolvedOptions().locale;
  } catch {
    return "en";
  }
})();
export const zone = new Intl.DateTimeFormat(locale).resolvedOptions().timeZone || "UTC";
const dt = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" });
export const fmtDate = (iso: string | null | undefined) => (iso ? dt.format(new Date(iso)) : "—");
export const fmtNum = (n: number) => n.toLocaleString(locale);

export function fmtAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h`;
  return `${Math.round(h / 24)} days`;
}

/**
 * THE reading of tags written as text, everywhere (an import's tags column, the contacts list's
 * `tags=` filter, the dashboard's tag boxes): split on commas or semicolons ("vip, spring" and
 * "vip;spring" as a spreadsheet exports it), trimmed, empty ones dropped, each once. A tag itself
 * never holds either character (src/domain/contact-update.ts refuses them).
 */
export const TAG_SEPARATORS = /[,;]/;

export function splitTags(text: string): string[] {
  return [...new Set(text.split(TAG_SEPARATORS).map((t) => t.trim()).filter(Boolean))];
}

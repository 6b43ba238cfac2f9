/** A contact's name and tags as the dashboard's fields hold them (pure; unit-tested). */
import { splitTags } from "../src/domain/tags";
import { fullName } from "../src/domain/contact-name";

export const nameOf = (c: { firstName: string | null; lastName: string | null }) => fullName(c.firstName, c.lastName);

/** "Ann Marie Lee" → first name "Ann", last name "Marie Lee"; one word is a first name. */
export function splitName(text: string): { firstName: string | null; lastName: string | null } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  return { firstName: words[0] ?? null, lastName: words.slice(1).join(" ") || null };
}
/** Tags as typed: split on commas or semicolons, as everywhere (src/domain/tags.ts). */
export const parseTags = (text: string) => splitTags(text);

/**
 * A contact's name as one line, where messages, replies, broadcasts and the dashboard show it
 * (pure; the dashboard imports it too).
 */

/** First and last name joined by a space: "Ann Lee", "Ann", "Lee", or "" when neither is known. */
export function fullName(firstName: string | null | undefined, lastName: string | null | undefined): string {
  return [firstName, lastName].filter(Boolean).join(" ");
}

/** The name a message stores for its recipient (`recipient_name`): null when the contact has none. */
export function recipientName(contact: { firstName: string | null; lastName: string | null } | null | undefined): string | null {
  return contact ? fullName(contact.firstName, contact.lastName) || null : null;
}

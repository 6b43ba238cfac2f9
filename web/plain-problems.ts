/**
 * An API field problem in the owner's words: the field named by the label the page shows, never
 * by its API name ("phoneNumber must be …" → "Phone number: must be …"), as visitors get from the
 * server (docs/api-decisions.md, "Plain words for visitors"). The API keeps its names in `errors`.
 */

/** The API name a message starts with: the path's last part (`settings.delayMinutes` → `delayMinutes`). */
function nameOf(field: string): string {
  return field.split(".").pop()!.replace(/\[\d+\]$/, "");
}

/**
 * `labelOf` gives the page's label for an error's field (null: none, e.g. a whole row). The
 * message's leading API name is dropped; the label goes in front.
 */
export function plainProblem(field: string, message: string, labelOf: (field: string) => string | null): string {
  const label = labelOf(field);
  // Without a label the API's sentence stands as it is.
  if (!label) return message.charAt(0).toUpperCase() + message.slice(1);
  let rest = message;
  // The whole path (`customFields.Shoe size must …`), else its last part (`delayMinutes must …`).
  for (const name of [field, nameOf(field)]) {
    if (name && (message.startsWith(name + " ") || message.startsWith(name + ":"))) {
      rest = message.slice(name.length).replace(/^:?\s*/, "");
      break;
    }
  }
  return `${label}: ${rest}`;
}

/** The label of the longest listed prefix of `field` (`settings.allowedCountries[1]` → its list's label). */
export function labelFrom(labels: Record<string, string>): (field: string) => string | null {
  return (field) => {
    let best: string | null = null;
    let bestLength = -1;
    for (const [k, v] of Object.entries(labels)) {
      if ((field === k || field.startsWith(k + ".") || field.startsWith(k + "[")) && k.length > bestLength) [best, bestLength] = [v, k.length];
    }
    return best;
  };
}

/** What the contact pages call a contact's fields (custom fields by their own name). */
export const CONTACT_LABELS: Record<string, string> = {
  phoneNumber: "Phone number",
  firstName: "First name",
  lastName: "Last name",
  email: "E-mail",
  status: "Status",
  tags: "Tags",
  notes: "Notes",
  createdAt: "Added on",
  optedOut: "Opted out",
  optedOutAt: "Opted out on",
  lastResponseAt: "Last reply",
};

export const contactLabel = (field: string): string | null => {
  if (field.startsWith("customFields.")) return field.slice("customFields.".length);
  return labelFrom(CONTACT_LABELS)(field);
};

/**
 * Who may do what, written out in the product's words independently of src/http/permissions.ts:
 * the expectation table of test/api/http/permissions.test.ts (every route × every caller) and of
 * test/services/permissions.test.ts (the declared routes name exactly these permissions).
 */
import type { KeyPermission } from "../../src/http/permissions";
import type { Caller, SessionRole } from "./scenario";

export type KeyKind = "any key" | "admin key" | "operator key";
const ALL_ROLES: readonly SessionRole[] = ["owner", "admin", "staff", "viewer"];
const WORKERS: readonly SessionRole[] = ["owner", "admin", "staff"];
const MANAGERS: readonly SessionRole[] = ["owner", "admin"];
const OWNER: readonly SessionRole[] = ["owner"];

/** Who may do what: the people's roles (docs/api-decisions.md, "People, roles and the first run") and the key kinds. */
export const POLICY: Record<KeyPermission, { roles: readonly SessionRole[]; key: KeyKind }> = {
  "account.read": { roles: ALL_ROLES, key: "any key" },
  "settings.read": { roles: MANAGERS, key: "admin key" },
  "settings.write": { roles: MANAGERS, key: "admin key" },
  "forms.read": { roles: ALL_ROLES, key: "any key" },
  "forms.write": { roles: MANAGERS, key: "admin key" },
  "forms.embed": { roles: MANAGERS, key: "admin key" },
  "messages.read": { roles: ALL_ROLES, key: "any key" },
  "submissions.read": { roles: ALL_ROLES, key: "any key" },
  "messages.send": { roles: WORKERS, key: "any key" },
  "messages.write": { roles: WORKERS, key: "any key" },
  "phone.work": { roles: MANAGERS, key: "any key" },
  // Staff retry and cancel one message (PUT /v1/messages/:id/status).
  "phone.report": { roles: WORKERS, key: "any key" },
  "conversations.read": { roles: ALL_ROLES, key: "any key" },
  "conversations.write": { roles: WORKERS, key: "any key" },
  "contacts.read": { roles: ALL_ROLES, key: "any key" },
  "contacts.write": { roles: WORKERS, key: "any key" },
  "contacts.delete": { roles: MANAGERS, key: "admin key" },
  "contacts.export": { roles: MANAGERS, key: "admin key" },
  "contacts.import": { roles: MANAGERS, key: "admin key" },
  "broadcasts.read": { roles: ALL_ROLES, key: "any key" },
  // Staff send broadcasts from the dashboard; a key needs admin access for them.
  "broadcasts.write": { roles: WORKERS, key: "admin key" },
  "automations.read": { roles: ALL_ROLES, key: "any key" },
  "automations.write": { roles: MANAGERS, key: "admin key" },
  "devices.read": { roles: ALL_ROLES, key: "any key" },
  "devices.write": { roles: MANAGERS, key: "admin key" },
  "session.own": { roles: ALL_ROLES, key: "any key" },
  "sessions.manage": { roles: OWNER, key: "admin key" },
  "api-keys.manage": { roles: OWNER, key: "admin key" },
  "people.manage": { roles: OWNER, key: "admin key" },
  "event-endpoints.read": { roles: MANAGERS, key: "admin key" },
  "event-endpoints.write": { roles: MANAGERS, key: "admin key" },
  // The owner of the server's first account is its operator; keys only when made with --operator.
  operator: { roles: OWNER, key: "operator key" },
};

export const KEYS_HOLDING: Record<KeyKind, readonly Caller[]> = {
  "any key": ["operator key", "admin key", "standard key"],
  "admin key": ["operator key", "admin key"],
  "operator key": ["operator key"],
};


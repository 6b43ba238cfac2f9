import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { routeAccess } from "../plugins/route-access";
import { Envelope } from "../models/common";
import { Role } from "../models/sessions";
import { invitationLinkState, setupLinkState } from "../../services/link-state";

const LinkState = t.UnionEnum(["ready", "used", "expired", "unknown"], {
  description: "ready: the link works; used: it was used already; expired: its time ran out; unknown: no such link (mistyped, or replaced by a newer one)",
});
/** The token travels in the body, never the URL: it stays out of access logs and history. */
const TokenBody = t.Object({ token: t.String({ minLength: 1, maxLength: 200, description: "the token after # in the link" }) });
const InvitationState = Envelope(
  t.Object({
    state: LinkState,
    businessName: t.Union([t.String(), t.Null()], { description: "the business the person joins (a link that works, once the business is named)" }),
    role: t.Union([Role, t.Null()], { description: "the role they get (a link that works)" }),
    expiresAt: t.Union([t.String(), t.Null()]),
  }),
);
const SetupState = Envelope(t.Object({ state: LinkState }));

/**
 * Whether an invitation or setup link still works, read without using it, so its page can say so
 * before it shows a form (docs/api-decisions.md, "The owner hears back: each role sees what it can do").
 */
export function linkStateRoutes(deps: AppDeps) {
  return new Elysia({ name: "link-state-routes" })
    .use(routeAccess)
    .post("/v1/invitations/state", ({ body }) => ({ status: "success" as const, data: invitationLinkState(deps.sqlite, deps.clock, body.token) }), {
      permission: "sign-in",
      rateLimit: "sign-in",
      body: TokenBody,
      response: { 200: InvitationState },
      detail: { summary: "Whether an invitation link still works, and for which business and role (it is not used up)", tags: ["Dashboard"] },
    })
    .post("/v1/setup/state", ({ body }) => ({ status: "success" as const, data: setupLinkState(deps.sqlite, deps.clock, body.token) }), {
      permission: "sign-in",
      rateLimit: "sign-in",
      body: TokenBody,
      response: { 200: SetupState },
      detail: { summary: "Whether the setup link still works (it is not used up)", tags: ["Dashboard"] },
    });
}

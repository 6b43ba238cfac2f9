import { t } from "elysia";
import { checked, Envelope } from "./common";
import { PersonModel, Role } from "./sessions";

/** The routes check each field in plain words (a 400 names it); typed for the document. */
export const SetupBody = t.Object({
  token: checked(t.String(), "the token after # in the setup address `textwire serve` printed"),
  businessName: checked(t.String(), "the business's name: what customers see in replies"),
  country: t.Optional(checked(t.String(), "ISO 3166 alpha-2, e.g. US")),
  timeZone: t.Optional(checked(t.String(), "IANA time zone, e.g. America/Chicago")),
  name: checked(t.String(), "the owner's name"),
  email: checked(t.String(), "the owner's e-mail (they sign in with it)"),
  password: checked(t.String(), "at least 10 characters, not a common password"),
});

export const SetupStatus = Envelope(t.Object({ needed: t.Boolean({ description: "true until the first person has been set up" }) }));

export const AcceptInvitationBody = t.Object({
  token: checked(t.String(), "the token after # in the invitation link"),
  name: checked(t.String(), "the person's name"),
  email: checked(t.String(), "their e-mail (they sign in with it)"),
  password: checked(t.String(), "at least 10 characters, not a common password"),
});

export const InviteBody = t.Object({ role: checked(Role, "the role the invited person gets") });
export const RoleBody = t.Object({ role: checked(Role, "the new role") });
export const PersonIdParam = t.Object({ id: t.String({ maxLength: 200, description: "a person's id from GET /v1/people" }) });

export const PeopleAnswer = Envelope(t.Object({ people: t.Array(t.Object({ ...PersonModel.properties, createdAt: t.String() })) }));
export const PersonAnswer = Envelope(t.Object({ ...PersonModel.properties, createdAt: t.String() }));
export const InvitationAnswer = Envelope(
  t.Object({
    url: t.String({ description: "the one-time link to give the person (works once, for 72 hours)" }),
    role: Role,
    expiresAt: t.String(),
    addressSet: t.Boolean({ description: "false while no server address is set (Settings → Server): the link then uses the address this request came in on, which may not work from the person's own device" }),
  }),
);
export const PersonRemoved = Envelope(t.Object({ deletedId: t.String() }));
export const PasswordBody = t.Object({
  currentPassword: checked(t.String(), "your password now"),
  newPassword: checked(t.String(), "at least 10 characters, not a common password"),
});
export const PasswordChanged = Envelope(t.Object({ otherSessionsEnded: t.Number() }));
export const SignedOutEverywhere = Envelope(t.Object({ sessionsEnded: t.Number() }));

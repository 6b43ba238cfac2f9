import { t } from "elysia";
import { checked, PageQuery } from "./common";

export const InboundBody = t.Object({
  from: checked(t.String({ minLength: 1 }), "the sender's phone number, e.g. +14155552671"),
  body: checked(t.String({ maxLength: 10_000 }), "the text received (up to 10,000 characters)"),
  receivedAt: t.Optional(checked(t.Union([t.Number(), t.String()]), "epoch milliseconds (seconds are recognised) or ISO 8601; default: now")),
  deviceId: t.Optional(checked(t.String(), "free text naming the phone")),
  externalId: t.Optional(checked(t.String(), "the phone's id for the text: a repeat of (deviceId, externalId) is stored once")),
});

export const InboundMessage = t.Object({
  id: t.String(),
  direction: t.Literal("inbound"),
  contactId: t.String(),
  from: t.String({ description: "E.164" }),
  body: t.String(),
  receivedAt: t.String({ format: "date-time" }),
  deviceId: t.Union([t.String(), t.Null()]),
  externalId: t.Union([t.String(), t.Null()]),
  keyword: t.Union([t.UnionEnum(["opt-out", "opt-in", "help"]), t.Null()], { description: "the keyword the text was (account settings), if any; null for history (not handled as a keyword)" }),
  readAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  history: t.Boolean({ description: "true: a text the phone sent again because it was asked for its history (an SMSGate inbox export); stored and shown, but no action was taken (no keyword handling, no reply, no automation stop) and it was stored read" }),
});

const Paging = t.Object({ total: t.Integer(), page: t.Integer(), limit: t.Integer(), totalPages: t.Integer() });

export const InboundAnswer = t.Object({
  status: t.Literal("success"),
  message: t.String(),
  data: t.Object({
    message: InboundMessage,
    duplicate: t.Boolean(),
    fromTeam: t.Optional(t.Boolean({ description: "true: the sender is one of the team's own mobiles (their profile's number): nothing was stored, and contactId is empty" })),
  }),
});

const QueryText = (description: string) => t.Optional(t.String({ description }));

export const InboundListQuery = t.Object(
  {
    ...PageQuery,
    contactId: QueryText("only this contact's texts"),
    createdAfter: QueryText("ISO 8601 date or date-time, inclusive"),
    createdBefore: QueryText("ISO 8601 date or date-time, exclusive"),
  },
  { additionalProperties: true },
);

export const InboundListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ messages: t.Array(InboundMessage), pagination: Paging }),
});

import { t } from "elysia";

export const InboundBody = t.Object({
  from: t.Unknown({ description: "the sender's phone number, e.g. +14155552671" }),
  body: t.Unknown({ description: "the text received (up to 10,000 characters)" }),
  receivedAt: t.Optional(t.Unknown({ description: "epoch milliseconds (seconds are recognised) or ISO 8601; default: now" })),
  deviceId: t.Optional(t.Unknown({ description: "free text naming the phone" })),
  externalId: t.Optional(t.Unknown({ description: "the phone's id for the text: a repeat of (deviceId, externalId) is stored once" })),
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
  createdAt: t.String({ format: "date-time" }),
});

const Paging = t.Object({ total: t.Integer(), page: t.Integer(), limit: t.Integer(), totalPages: t.Integer() });

export const InboundAnswer = t.Object({
  status: t.Literal("success"),
  message: t.String(),
  data: t.Object({ message: InboundMessage, duplicate: t.Boolean() }),
});

const QueryText = (description: string) => t.Optional(t.String({ description }));

export const InboundListQuery = t.Object(
  {
    page: QueryText("page number, from 1 (default 1)"),
    limit: QueryText("page size, 1-100 (default 50)"),
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

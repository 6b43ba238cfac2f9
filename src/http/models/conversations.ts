import { t } from "elysia";
import { EnumQuery, PageQuery } from "./common";
import { CONTACT_STATUSES } from "../../domain/contact-update";

const QueryText = (description: string) => t.Optional(t.String({ description }));

export const ConversationListQuery = t.Object(
  {
    ...PageQuery,
    unread: t.Optional(t.String({ description: "true: only conversations with unread received texts; false: only read ones", "x-type": t.Boolean() })),
    status: EnumQuery(CONTACT_STATUSES, "the contact's status: new | contacted | responded | converted"),
    search: QueryText("matches the contact's name, e-mail or phone digits"),
  },
  { additionalProperties: true },
);

export const ThreadQuery = t.Object(
  {
    ...PageQuery,
    order: EnumQuery(["asc", "desc"], "asc (default: time order, oldest first) | desc"),
  },
  { additionalProperties: true },
);

export const ContactIdParam = t.Object({ contactId: t.String({ minLength: 1, maxLength: 200 }) });

const Nullable = <T extends ReturnType<typeof t.String>>(s: T) => t.Union([s, t.Null()]);
const Paging = t.Object({ total: t.Integer(), page: t.Integer(), limit: t.Integer(), totalPages: t.Integer() });
const ContactSummary = t.Object({
  id: t.String(),
  firstName: Nullable(t.String()),
  lastName: Nullable(t.String()),
  phoneNumber: t.String(),
  status: t.String(),
  optedOut: t.Boolean(),
});

export const ConversationListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    conversations: t.Array(
      t.Object({
        contactId: t.String(),
        contact: ContactSummary,
        unreadCount: t.Integer(),
        lastActivityAt: t.String(),
        lastMessage: t.Union([
          t.Object({ id: t.String(), direction: t.UnionEnum(["outbound", "inbound"]), preview: t.String(), at: t.String() }),
          t.Null(),
        ]),
      }),
    ),
    pagination: Paging,
    unreadTotal: t.Integer({ description: "unread received texts over the whole account" }),
  }),
});

export const ThreadAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    contact: ContactSummary,
    messages: t.Array(
      t.Object({
        id: t.String(),
        direction: t.UnionEnum(["outbound", "inbound"]),
        content: t.String(),
        status: t.String({ description: "queued | sent | failed | cancelled (outbound); received (inbound)" }),
        stage: t.String({ description: "outbound: queued | with-phone (a phone took it, no report yet) | sent | delivered (reported reaching the handset) | failed | cancelled; inbound: received" }),
        at: t.String({ description: "createdAt (outbound) or receivedAt (inbound): the time order" }),
        sentAt: Nullable(t.String()),
        failureReason: Nullable(t.String()),
        receivedAt: Nullable(t.String()),
        readAt: Nullable(t.String()),
        keyword: Nullable(t.String()),
        createdAt: t.String(),
        history: t.Boolean({ description: "an inbound text its phone sent again from its history (an SMSGate inbox export): shown, but no action was taken" }),
      }),
    ),
    pagination: Paging,
  }),
});

export const MarkReadAnswer = t.Object({
  status: t.Literal("success"),
  message: t.String(),
  data: t.Object({ contactId: t.String(), markedRead: t.Integer(), unreadCount: t.Integer() }),
});

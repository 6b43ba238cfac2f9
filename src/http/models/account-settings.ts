import { t } from "elysia";

const Words = t.Array(t.String());

export const AccountSettingsBody = t.Object(
  {
    optOutKeywords: t.Optional(t.Unknown({ description: "words that opt a number out (default STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE); null = default" })),
    optInKeywords: t.Optional(t.Unknown({ description: "words that opt a number back in (default START, UNSTOP, YES, SUBSCRIBE); null = default" })),
    helpKeywords: t.Optional(t.Unknown({ description: "words answered with helpReply (default HELP, INFO); null = default" })),
    optOutReply: t.Optional(t.Unknown({ description: "confirmation of an opt-out, 1-306 characters; {{accountName}} is replaced; null = default" })),
    optInReply: t.Optional(t.Unknown({ description: "confirmation of an opt-in; null = default" })),
    helpReply: t.Optional(t.Unknown({ description: "answer to HELP; null = default" })),
  },
  { additionalProperties: true },
);

const Settings = t.Object({
  optOutKeywords: Words,
  optInKeywords: Words,
  helpKeywords: Words,
  optOutReply: t.String(),
  optInReply: t.String(),
  helpReply: t.String(),
});

export const AccountSettingsAnswer = t.Object({
  status: t.Literal("success"),
  message: t.Optional(t.String()),
  data: t.Object({
    settings: Settings,
    preview: t.Object({ optOutReply: t.String(), optInReply: t.String(), helpReply: t.String() }),
    updatedAt: t.Union([t.String(), t.Null()]),
  }),
});

import { t } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { ACCOUNT_SETTING_KEYS, MAX_KEYWORDS, MAX_REPLY_LENGTH } from "../../domain/account-settings";
import { checked } from "./common";
import { LimitsInput, SendingLimits } from "./sending";
import { MAX_KEYWORD_LENGTH } from "../../domain/keywords";
import { MAX_BUSINESS_NAME_LENGTH } from "../../domain/business-profile";

const Words = t.Array(t.String());

/** A keyword list as the domain takes it: 1-30 words or short phrases, or null (default). */
const KeywordList = t.Union([t.Array(t.String({ minLength: 1, maxLength: MAX_KEYWORD_LENGTH }), { minItems: 1, maxItems: MAX_KEYWORDS }), t.Null()]);
const Reply = t.Union([t.String({ minLength: 1, maxLength: MAX_REPLY_LENGTH }), t.Null()]);

const SETTINGS: Record<(typeof ACCOUNT_SETTING_KEYS)[number] | "confirmCommonWords", [TSchema, string]> = {
  optOutKeywords: [KeywordList, "words or phrases (a text that is exactly one of them, any case, punctuation around it ignored) that opt a number out (default STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE); null = default"],
  optInKeywords: [KeywordList, "words that opt a number back in (default START, UNSTOP, YES, SUBSCRIBE); null = default"],
  helpKeywords: [KeywordList, "words answered with helpReply (default HELP, INFO); null = default"],
  optOutReply: [Reply, `confirmation of an opt-out, 1-${MAX_REPLY_LENGTH} characters; {{accountName}} is replaced; null = default`],
  optInReply: [Reply, "confirmation of an opt-in; null = default"],
  helpReply: [Reply, "answer to HELP; null = default"],
  sending: [
    t.Union([t.Object({ limits: t.Optional(LimitsInput), stickyMoveAfterMinutes: t.Optional(t.Unknown({ description: "whole minutes ≥ 1, or null for the default (10)" })) }, { additionalProperties: true }), t.Null()]),
    "how the phones send: limits (partsPerMinute, partsPerHour, partsPerDay, newRecipientsPerDay, newRecipientsPerMonth, spacingSeconds {min, max}: every phone's and SIM's budget unless it sets its own; null keys = default) and stickyMoveAfterMinutes (a contact's texts move off its own phone once that phone is paused or offline this long, default 10); null = defaults",
  ],
  confirmCommonWords: [t.Boolean(), "true saves keywords that are everyday words (\"me\", \"ok\", \"thanks\"); without it a list given with one it did not hold is refused with 409 COMMON_WORDS_UNCONFIRMED"],
};
const each = <T>(f: (type: TSchema, description: string) => T) => Object.fromEntries(Object.entries(SETTINGS).map(([k, [type, d]]) => [k, f(type, d)]));

/**
 * Checked by the domain (applySettingsPatch), which names every bad key, unknown ones too: so the
 * body stays open at run time. The document shows the closed object the domain accepts.
 */
export const AccountSettingsBody = t.Object(
  each((type, description) => t.Optional(checked(type, description))),
  { additionalProperties: true, "x-type": t.Object(each((type, description) => t.Optional({ ...type, description } as TSchema)), { additionalProperties: false }) },
);

const Settings = t.Object({
  optOutKeywords: Words,
  optInKeywords: Words,
  helpKeywords: Words,
  optOutReply: t.String(),
  optInReply: t.String(),
  helpReply: t.String(),
  sending: t.Object({ limits: SendingLimits, stickyMoveAfterMinutes: t.Integer({ minimum: 1 }) }),
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

const Replies = t.Object({ optOutReply: t.String(), optInReply: t.String(), helpReply: t.String() });

/**
 * The business's profile (PUT /v1/account/profile): checked by the domain (parseBusinessProfile),
 * which names every bad field in plain words, so the body stays open at run time.
 */
export const BusinessProfileBody = t.Object(
  {
    name: t.Optional(checked(t.String({ minLength: 1, maxLength: MAX_BUSINESS_NAME_LENGTH }), "the business's name as customers know it; replies to STOP, START and HELP carry it")),
    country: t.Optional(checked(t.String({ minLength: 2, maxLength: 2 }), "ISO 3166 two-letter code: how phone numbers without a +code are read")),
    timeZone: t.Optional(checked(t.String({ maxLength: 64 }), "IANA time zone, e.g. America/New_York")),
  },
  {
    additionalProperties: true,
    "x-type": t.Object(
      { name: t.String({ minLength: 1, maxLength: MAX_BUSINESS_NAME_LENGTH }), country: t.String({ minLength: 2, maxLength: 2 }), timeZone: t.String({ maxLength: 64 }) },
      { additionalProperties: false },
    ),
  },
);

export const BusinessProfileAnswer = t.Object({
  status: t.Literal("success"),
  message: t.Optional(t.String()),
  data: t.Object({
    name: t.String({ description: "the account's name" }),
    nameSet: t.Boolean({ description: "false until a person chose the name: until then replies say \"this number\" instead" }),
    country: t.String({ description: "ISO 3166 two-letter code" }),
    timeZone: t.Union([t.String(), t.Null()], { description: "IANA time zone; null when none was chosen" }),
    replies: t.Object(Replies.properties, { description: "the replies with {{accountName}} where the name goes" }),
    preview: t.Object(Replies.properties, { description: "the replies exactly as a customer receives them now" }),
  }),
});

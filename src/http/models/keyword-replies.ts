import { t, type TSchema } from "elysia";
import { checked, Envelope, Timestamp } from "./common";
import { MAX_KEYWORDS_PER_REPLY } from "../../domain/keyword-replies";
import { MAX_REPLY_LENGTH } from "../../domain/account-settings";
import { CONTACT_STATUSES, MAX_TAGS } from "../../domain/contact-update";
import { MAX_KEYWORD_LENGTH } from "../../domain/keywords";

const Status = t.Union([t.UnionEnum([...CONTACT_STATUSES] as [string, ...string[]]), t.Null()]);
const Keywords = t.Array(t.String({ minLength: 1, maxLength: MAX_KEYWORD_LENGTH }), { minItems: 1, maxItems: MAX_KEYWORDS_PER_REPLY });

const FIELDS: Record<string, [TSchema, string]> = {
  keywords: [Keywords, "words or short phrases; a text that is exactly one of them (any case, punctuation around it ignored) is answered. Not an opt-out, opt-in or help keyword, nor another reply's"],
  reply: [t.String({ minLength: 1, maxLength: MAX_REPLY_LENGTH }), "the answer, queued at priority high; {{accountName}} is replaced by the business's name"],
  addTags: [t.Array(t.String({ minLength: 1, maxLength: 50 }), { maxItems: MAX_TAGS }), "tags added to the contact who texted the keyword (default none)"],
  setStatus: [Status, "the status the contact is given, or null to leave it (default null)"],
  isActive: [t.Boolean(), "false switches the reply off without deleting it (default true)"],
  confirmCommonWords: [t.Boolean(), "true saves keywords that are everyday words (\"ok\", \"thanks\"); without it they are refused with 409 COMMON_WORDS_UNCONFIRMED"],
};
const each = <T>(f: (k: string, type: TSchema, d: string) => T) => Object.fromEntries(Object.entries(FIELDS).map(([k, [type, d]]) => [k, f(k, type, d)]));

/**
 * Checked by the domain (parseKeywordReply), which names every bad field, unknown ones too: so the
 * body stays open at run time. The document shows the closed object the domain accepts.
 */
const body = (required: string[]) =>
  t.Object(
    each((_k, type, d) => t.Optional(checked(type, d))),
    {
      additionalProperties: true,
      "x-type": t.Object(
        each((k, type, d) => (required.includes(k) ? { ...type, description: d } : t.Optional({ ...type, description: d } as TSchema))),
        { additionalProperties: false },
      ),
    },
  );

export const KeywordReplyCreateBody = body(["keywords", "reply"]);
export const KeywordReplyUpdateBody = body([]);

export const KeywordReply = t.Object({
  id: t.String(),
  keywords: t.Array(t.String(), { description: "as matched: upper-case, single spaces" }),
  reply: t.String({ description: "as saved, with {{accountName}} where the name goes" }),
  preview: t.String({ description: "the reply exactly as a customer receives it now" }),
  addTags: t.Array(t.String()),
  setStatus: Status,
  isActive: t.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const KeywordReplyAnswer = Envelope(t.Object({ keywordReply: KeywordReply }));
export const KeywordReplyListAnswer = Envelope(t.Object({ keywordReplies: t.Array(KeywordReply) }));

/**
 * Keyword replies (docs/api-decisions.md, "Keyword replies"): the owner's rules
 * (GET/POST /v1/keyword-replies, PUT/DELETE /v1/keyword-replies/<id>, admin) and the one place an
 * inbound text is answered by one (`answer()`, inside the inbound text's transaction).
 *
 * - A text is matched like STOP (src/domain/keywords.ts); STOP/START/HELP are decided first
 *   (src/services/inbound.ts asks here only when the text is none of them) and a reply cannot
 *   have one of their keywords.
 * - At most one answer per rule per contact per hour, read from the messages in the same
 *   transaction (db/stores/keyword-replies.ts ruleAnsweredSince): two texts arriving together
 *   are two transactions one after the other, and a restart forgets nothing.
 * - Never to an opted-out number: not queued then, and a reply queued before a STOP is cancelled
 *   with everything else (its metadata.source is not the STOP/START/HELP replies' one).
 * - The reply is queued `high`; the rule's tags and status are given to the contact whenever the
 *   rule matches (the inbound text's contact.updated carries them).
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import {
  countKeywordReplies,
  deleteKeywordReply,
  findKeywordReply,
  insertKeywordReply,
  KEYWORD_RULE_SOURCE,
  listKeywordReplies,
  ruleAnsweredSince,
  updateKeywordReply,
  type KeywordReplyRecord,
} from "../db/stores/keyword-replies";
import { contactTagsAndStatus, writeContactTagsAndStatus } from "../db/stores/contacts";
import { findAccount } from "../db/stores/accounts";
import type { MessageRow } from "../db/stores/messages/rows";
import {
  commonReplyWords,
  keywordCollisions,
  KEYWORD_REPLY_INTERVAL_MS,
  matchKeywordReply,
  MAX_KEYWORD_REPLIES,
  parseKeywordReply,
  withTags,
  type KeywordReplyInput,
  type KeywordRule,
} from "../domain/keyword-replies";
import { MAX_TAGS, type ContactStatus } from "../domain/contact-update";
import { smsInfo } from "../domain/sms-encoding";
import type { Sequence } from "../lib/seq";
import type { MonthlyQuota } from "./quota";
import { commonWordsError, type AccountSettingsService } from "./account-settings";
import { admit, newQueuedRow, writeQueued } from "./sending";

/** A keyword reply as the API shows it. */
export interface KeywordReply extends KeywordReplyInput {
  id: string;
  /** The reply exactly as a customer receives it ({{accountName}} filled in). */
  preview: string;
  createdAt: string;
  updatedAt: string;
}

type Rule = KeywordRule & { record: KeywordReplyRecord };

function inputOf(r: KeywordReplyRecord): KeywordReplyInput {
  return { keywords: r.keywords, reply: r.reply, addTags: r.addTags, setStatus: r.setStatus, isActive: r.isActive };
}

function rulesOf(records: KeywordReplyRecord[]): Rule[] {
  return records.map((r) => ({ id: r.id, keywords: r.keywords, isActive: r.isActive, record: r }));
}

export class KeywordReplyService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly settings: AccountSettingsService,
    private readonly seq: Sequence,
    private readonly quota: MonthlyQuota,
  ) {}

  private view(accountId: string, r: KeywordReplyRecord): KeywordReply {
    return { id: r.id, ...inputOf(r), preview: this.settings.render(accountId, r.reply), createdAt: r.createdAt, updatedAt: r.updatedAt };
  }

  private find(accountId: string, id: string): KeywordReplyRecord {
    const r = UUID_RE.test(id) ? findKeywordReply(this.sqlite, accountId, id) : null;
    if (!r) throw new AppError("KEYWORD_REPLY_NOT_FOUND", { details: { id: id.slice(0, 100) } });
    return r;
  }

  list(accountId: string): { keywordReplies: KeywordReply[] } {
    return { keywordReplies: listKeywordReplies(this.sqlite, accountId).map((r) => this.view(accountId, r)) };
  }

  get(accountId: string, id: string): KeywordReply {
    return this.view(accountId, this.find(accountId, id));
  }

  create(accountId: string, body: unknown): KeywordReply {
    const record = this.sqlite.transaction(() => {
      const v = this.checked(accountId, body, null);
      if (countKeywordReplies(this.sqlite, accountId) >= MAX_KEYWORD_REPLIES) {
        throw new AppError("INVALID_STATE", { message: `An account can have at most ${MAX_KEYWORD_REPLIES} keyword replies: delete one first.`, details: { limit: MAX_KEYWORD_REPLIES } });
      }
      const at = iso(this.clock());
      const r: KeywordReplyRecord = { id: newId(), accountId, ...this.columns(v), createdAt: at, updatedAt: at };
      insertKeywordReply(this.sqlite, r);
      return r;
    })();
    return this.view(accountId, record);
  }

  update(accountId: string, id: string, body: unknown): KeywordReply {
    const record = this.sqlite.transaction(() => {
      const current = this.find(accountId, id);
      const v = this.checked(accountId, body, current);
      const r: KeywordReplyRecord = { ...current, ...this.columns(v), updatedAt: nextUpdatedAt(this.clock(), current.updatedAt) };
      updateKeywordReply(this.sqlite, r);
      return r;
    })();
    return this.view(accountId, record);
  }

  delete(accountId: string, id: string): void {
    this.find(accountId, id);
    deleteKeywordReply(this.sqlite, accountId, id);
  }

  /** The keywords of the account's replies (Settings refuses them in the STOP/START/HELP lists). */
  keywordsInUse(accountId: string): Set<string> {
    return new Set(rulesOf(listKeywordReplies(this.sqlite, accountId)).flatMap((r) => r.keywords));
  }

  private columns(v: KeywordReplyInput) {
    return { keywords: v.keywords, reply: v.reply, addTags: v.addTags, setStatus: v.setStatus, isActive: v.isActive };
  }

  /** A body checked as a whole against the account's keywords (inside the caller's transaction). */
  private checked(accountId: string, body: unknown, current: KeywordReplyRecord | null): KeywordReplyInput {
    const before = current ? inputOf(current) : null;
    const p = parseKeywordReply(body, before);
    if (!p.ok) throw validationError(p.errors);
    const others = rulesOf(listKeywordReplies(this.sqlite, accountId)).filter((r) => r.id !== current?.id);
    const clash = keywordCollisions(p.value.keywords, this.settings.resolved(accountId), others);
    if (clash.length) throw validationError(clash);
    const common = commonReplyWords(p.value.keywords, before?.keywords ?? []);
    if (common.length && !p.confirmCommonWords) throw commonWordsError([{ field: "keywords", words: common }]);
    return p.value;
  }

  /**
   * The account's active rule the text matches, if any: read before the inbound transaction so a
   * monthly-quota unit can be reserved for the reply (src/services/inbound.ts).
   */
  match(accountId: string, text: string): Rule | null {
    return matchKeywordReply(text, rulesOf(listKeywordReplies(this.sqlite, accountId)));
  }

  /** Takes a unit of the account's monthly quota for a reply; false when the month's quota is used up (no reply then). */
  reserve(accountId: string): boolean {
    return admit({ quota: { quota: this.quota, accountId, limit: findAccount(this.sqlite, accountId)?.monthlyQuota ?? null } }).ok;
  }

  settle(accountId: string, created: boolean): void {
    this.quota.settle(accountId, created);
  }

  /**
   * Inside the inbound text's transaction, after the contact is linked: the rule's tags and status
   * given to the contact, and its reply queued unless the number opted out or this rule answered
   * it within the hour (see the module comment). `mayQueue` false: the month's quota is used up.
   * Returns the queued reply and whether the contact changed.
   */
  answer(
    accountId: string,
    rule: Rule,
    c: { contactId: string; phone: string; optedOut: boolean; recipientName: string | null; updatedAt: string },
    mayQueue: boolean,
    now: number,
  ): { reply: MessageRow | null; updatedAt: string } {
    // Read again inside the transaction: the rule may have been switched off or deleted meanwhile.
    const stored = findKeywordReply(this.sqlite, accountId, rule.id);
    if (!stored || !stored.isActive) return { reply: null, updatedAt: c.updatedAt };
    const v = inputOf(stored);
    let updatedAt = c.updatedAt;
    const contact = contactTagsAndStatus(this.sqlite, c.contactId);
    if (contact && (v.addTags.length > 0 || v.setStatus !== null)) {
      const tags = withTags(contact.tags, v.addTags, MAX_TAGS);
      const status: ContactStatus = v.setStatus ?? (contact.status as ContactStatus);
      if (JSON.stringify(tags) !== JSON.stringify(contact.tags) || status !== contact.status) {
        updatedAt = nextUpdatedAt(now, contact.updatedAt);
        writeContactTagsAndStatus(this.sqlite, c.contactId, { tags, status, updatedAt });
      }
    }
    if (!mayQueue || !admit({ recipient: { optedOut: c.optedOut } }).ok) return { reply: null, updatedAt };
    if (ruleAnsweredSince(this.sqlite, accountId, c.phone, stored.id, iso(now - KEYWORD_REPLY_INTERVAL_MS))) return { reply: null, updatedAt };
    const text = this.settings.render(accountId, v.reply);
    const info = smsInfo(text);
    const at = iso(now);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: c.contactId,
      content: text,
      recipient_phone: c.phone,
      recipient_name: c.recipientName,
      priority: "high",
      scheduled_for: at,
      metadata: JSON.stringify({ messageLength: text.length, variablesUsed: [], source: KEYWORD_RULE_SOURCE, keywordReplyId: stored.id, encoding: info.encoding, segments: info.segments }),
      seq: this.seq.next(),
      created_at: at,
    });
    writeQueued(this.sqlite, row, null);
    return { reply: row, updatedAt };
  }
}

/**
 * The words of what the team is told: a short text (one notice, or a batch of them in one text)
 * and the e-mail's subject and body. Pure: the caller gives the link's origin and the items
 * (docs/api-decisions.md, "The owner hears back", the team told).
 */

export interface NoticeItem {
  kind: "submission" | "reply";
  /** The sender's name, else their number. */
  who: string;
  /** The form (a submission). */
  formName: string | null;
  /** What they wrote, on one line. */
  preview: string;
  /** The dashboard path of the request or the conversation. */
  path: string;
  /** The sender opted out of texts: the team must reply another way. */
  optedOut?: boolean;
}

/** Longest preview of what a customer wrote in a one-notice text, in characters. */
export const NOTICE_PREVIEW_MAX = 90;
/** Senders named in a batch text before "and N more". */
const BATCH_NAMES_MAX = 3;

function clip(s: string, max: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length <= max ? one : `${one.slice(0, max - 1).trimEnd()}…`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The team text: "New request from Ann (Contact us): Do you bake…? https://…/inbox/<id>", or a batch's summary. */
export function noticeText(items: NoticeItem[], origin: string): string {
  if (items.length === 1) {
    const x = items[0];
    const said = x.preview ? `: ${clip(x.preview, NOTICE_PREVIEW_MAX)}` : "";
    const where = [x.formName, x.optedOut ? "opted out of texts: reply another way" : null].filter(Boolean).join("; ");
    const head = x.kind === "submission" ? `New request from ${x.who}${where ? ` (${where})` : ""}` : `${x.who} replied`;
    return `${head}${said} ${origin}${x.path}`;
  }
  const requests = items.filter((x) => x.kind === "submission").length;
  const replies = items.length - requests;
  const counts = [requests ? plural(requests, "new request", "new requests") : "", replies ? plural(replies, "reply", "replies") : ""].filter(Boolean).join(" and ");
  const names = [...new Set(items.map((x) => x.who))];
  const named = names.slice(0, BATCH_NAMES_MAX).join(", ") + (names.length > BATCH_NAMES_MAX ? ` and ${names.length - BATCH_NAMES_MAX} more` : "");
  const path = requests ? "/inbox" : "/conversations";
  return `${counts[0].toUpperCase()}${counts.slice(1)} from ${named} ${origin}${path}`;
}

/** The e-mail: a subject, and every item with what was written and its link. */
export function noticeEmail(items: NoticeItem[], origin: string, business: string): { subject: string; text: string } {
  const subject = items.length === 1 ? noticeText(items, "").trim().replace(/\s+\/\S*$/, "") : noticeText(items, "").replace(/\s+\/\S*$/, "");
  const lines = items.map((x) =>
    [
      x.kind === "submission" ? `New request from ${x.who}${x.formName ? ` (${x.formName})` : ""}` : `${x.who} replied`,
      x.optedOut ? "  Opted out of texts: reply another way (call or e-mail)." : "",
      x.preview ? `  ${x.preview}` : "",
      `  ${origin}${x.path}`,
    ]
      .filter(Boolean)
      .join("\n"),
  );
  return { subject: `${business}: ${clip(subject, 120)}`, text: `${lines.join("\n\n")}\n\n(You get these because you asked for them in your profile in Textwire.)\n` };
}

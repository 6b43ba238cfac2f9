/**
 * "Send a test submission" from the dashboard: the form's own checks and template on the values
 * the owner typed, answered with the text a visitor would get — and nothing written. No contact,
 * submission or message is made, and no existing contact is renamed or changed, whatever number
 * the values hold. Only when the owner asks is the text also sent, to the number they give
 * (their own), as a test message linked to no contact. Website posts never reach this: it is a
 * signed-in route of its own, not a flag on the public webhook (docs/api-decisions.md, "Test
 * submissions").
 */
import { validationError } from "../../errors";
import type { Actor } from "../../domain/people";
import { normalizePhone } from "../../domain/phone";
import { fieldLabel } from "../../domain/visitor-words";
import type { Message } from "../../db/stores/messages/rows";
import type { WebhookForm } from "./form-lookup";
import { checkSubmission } from "./write";

/** What the dashboard sends. */
export interface TestRequest {
  /** The form's fields as a visitor would fill them in (phoneNumber included). */
  values: Record<string, unknown>;
  /** Also send the text to this number (the owner's own); absent or blank: send nothing. */
  sendTo?: string | null;
}

export interface TestAnswer {
  message: string;
  text: string;
  characters: number;
  segments: number;
  /** What a post from the website would meet that this test does not (switched off, captcha …). */
  notes: string[];
  /** The test text sent on request, or null. */
  sent: { messageId: string; to: string; queuePosition: number; estimatedDelivery: string } | null;
}

/** The label of the dashboard's "send it to my phone" field, for its error sentence. */
export const SEND_TO_LABEL = "Your phone number";

export class TestSubmissions {
  constructor(
    private readonly clock: () => number,
    /** The account's form by id, as the webhook reads it; throws FORM_NOT_FOUND for another account's. */
    private readonly formOf: (accountId: string, formId: string) => WebhookForm,
    private readonly messages: {
      createTest(
        accountId: string,
        t: { phone: string; content: string; form: { id: string; name: string }; monthlyQuota: number | null; actor?: Actor },
      ): { message: Message; queuePosition: number; estimatedDelivery: string };
    },
  ) {}

  run(accountId: string, formId: string, req: TestRequest, ctx: { monthlyQuota: number | null; actor?: Actor }): TestAnswer {
    const form = this.formOf(accountId, formId);
    // The same checks and words a website's post gets (field labels, plain sentences).
    const { rendered, sms } = checkSubmission(form, { ...req.values }, this.clock());
    let to: string | null = null;
    if (typeof req.sendTo === "string" && req.sendTo.trim() !== "") {
      const p = normalizePhone(req.sendTo, { label: "sendTo", visitorLabel: SEND_TO_LABEL });
      if (!p.ok) throw validationError([{ field: "sendTo", message: p.message, requirement: p.requirement, provided: req.sendTo.slice(0, 100) }], p.visitor);
      to = p.e164;
    }
    const notes = notesFor(form);
    if (to === null) {
      return {
        message: "The form accepts these values; below is the text a visitor would get. Nothing was saved, no contact was made or changed, and no text was sent.",
        text: rendered.content,
        characters: rendered.content.length,
        segments: sms.segments,
        notes,
        sent: null,
      };
    }
    const r = this.messages.createTest(accountId, {
      phone: to,
      content: rendered.content,
      form: { id: form.id, name: form.name },
      monthlyQuota: ctx.monthlyQuota,
      actor: ctx.actor,
    });
    return {
      message: `The test text is on its way to ${to}. Nothing else was saved, and no contact was made or changed.`,
      text: rendered.content,
      characters: rendered.content.length,
      segments: sms.segments,
      notes,
      sent: { messageId: r.message.id, to, queuePosition: r.queuePosition, estimatedDelivery: r.estimatedDelivery },
    };
  }
}

/** What a real post from the website meets that the test skips, in the owner's words. */
function notesFor(form: WebhookForm): string[] {
  const notes: string[] = [];
  const p = form.protection;
  const s = form.settings;
  if (!form.isActive) notes.push("This form is switched off: posts from your website are refused until you switch it on.");
  if (p.allowedOrigins !== null) notes.push(`Posts are accepted only from ${p.allowedOrigins.join(", ")}.`);
  if (p.captcha !== null) notes.push("On your website, visitors also pass the “I am not a robot” check.");
  if (s.consentField !== null) {
    const def = form.fields.find((f) => f.name === s.consentField);
    notes.push(`On your website, no text is sent unless the visitor ticks ${`'${fieldLabel(s.consentField, def)}'`}.`);
  }
  if (s.delayMinutes > 0) notes.push(`On your website, the text goes out ${s.delayMinutes} minute${s.delayMinutes === 1 ? "" : "s"} after the post.`);
  if (p.quietHours !== null) notes.push(`Texts wait while quiet hours last (${p.quietHours.start}–${p.quietHours.end}).`);
  return notes;
}

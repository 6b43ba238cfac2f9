/**
 * Why a text was not sent, in plain words. The API stores the reason as the phone or the server
 * reported it (an Android SmsManager constant from the SMSGate app, or one of Textwire's own
 * words); the dashboard shows a sentence and keeps the code in a detail line for whoever
 * troubleshoots. docs/api-decisions.md, "The dashboard at phone width, in plain words".
 */

/** Codes folded as the retry policy folds them (src/domain/retry-policy.ts): case, `_`/`-`/spaces, the `RESULT_ERROR_` prefix. */
function fold(code: string): string {
  return code
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, " ")
    .replace(/^result error /, "")
    .replace(/^result /, "");
}

const SENTENCES: Record<string, string> = {
  // Android SmsManager results, as the SMSGate app reports them.
  "no service": "The phone had no signal.",
  "radio off": "The phone's mobile network was off (airplane mode?).",
  "generic failure": "The phone's network refused the text without saying why.",
  "null pdu": "The phone could not put the text together.",
  "limit exceeded": "The phone reached its limit of texts for now.",
  "short code not allowed": "The phone does not allow texts to short numbers.",
  "short code never allowed": "The phone does not allow texts to short numbers.",
  "fdn check failure": "The phone only texts numbers on its fixed dialling list.",
  "ril radio not available": "The phone's mobile network was not available.",
  "ril sms send fail retry": "The phone's network asked to try again later.",
  "ril network reject": "The mobile network refused the text.",
  "ril invalid state": "The phone's mobile network was not ready.",
  "ril invalid arguments": "The phone could not send the text to this number.",
  "ril no memory": "The phone ran out of memory while sending.",
  "ril request rate limited": "The mobile network limited how fast the phone may send.",
  "ril sim absent": "The phone has no SIM card in.",
  "ril network not ready": "The phone's mobile network was not ready.",
  "ril operation not allowed": "The mobile network did not allow the text.",
  "ril cancelled": "The phone cancelled the text.",
  "network reject": "The mobile network refused the text.",
  "network error": "The phone could not reach the mobile network.",
  "invalid sms format": "The phone could not put the text together.",
  "invalid smsc address": "The phone's text message centre number is wrong (a setting on the SIM).",
  "no default sms app": "The phone has no text message app set up.",
  "modem error": "The phone's modem failed while sending.",
  "encoding error": "The phone could not encode the text.",
  "system error": "The phone failed while sending.",
  "sms send retry failed": "The phone tried again and still could not send.",
  "operation not allowed": "The mobile network did not allow the text.",
  "sms blocked during emergency": "The phone does not send texts during an emergency call.",
  "user not allowed": "The phone does not allow the app to send texts.",
  // Textwire's own reasons.
  "no report": "The phone took the text but never said whether it was sent.",
  expired: "The text waited too long to be sent and was dropped.",
  "opted out": "The customer asked not to receive texts (they replied STOP).",
  "no consent": "The customer did not tick the box agreeing to receive texts.",
  "invalid phone": "The phone number is not a mobile number that can receive texts.",
  "rate limit": "A sending limit was reached.",
  quota: "This month's allowance of texts was used up.",
  cancelled: "The text was cancelled.",
};

export interface FailureReason {
  /** A sentence for the owner. */
  sentence: string;
  /** The code as stored, for the detail line; null when there was no code. */
  code: string | null;
}

/** The plain sentence for a stored reason; an unknown reason is shown as the phone wrote it. */
export function failureReason(code: string | null | undefined): FailureReason {
  if (!code || !code.trim()) return { sentence: "No reason was given.", code: null };
  const known = SENTENCES[fold(code)];
  if (known) return { sentence: known, code };
  return { sentence: `The phone reported: “${code.trim()}”.`, code };
}

/** The sentence alone (for a line of running text). */
export const failureSentence = (code: string | null | undefined): string => failureReason(code).sentence;

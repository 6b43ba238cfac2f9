/**
 * How many SMS parts a text needs (message metadata: encoding, segments).
 *
 * GSM-7 when every character is in the GSM 03.38 default alphabet or its extension table
 * (extension characters take two septets: ESC + char); otherwise UCS-2 (UTF-16 code units).
 * Single message: 160 septets / 70 units. Concatenated: 153 septets / 67 units per part, and —
 * as real handsets and gateways do — an ESC pair or a surrogate pair is never split across two
 * parts, so a part may carry one unit less than the nominal size.
 */

export type SmsEncoding = "GSM-7" | "UCS-2";

export interface SmsInfo {
  encoding: SmsEncoding;
  /** GSM-7: septets; UCS-2: UTF-16 code units. */
  units: number;
  /** Parts the text is sent as; empty text counts as one (an empty SMS is still one message). */
  segments: number;
}

export const GSM7_SINGLE = 160;
export const GSM7_PART = 153;
export const UCS2_SINGLE = 70;
export const UCS2_PART = 67;

/** GSM 03.38 default alphabet (0x1B, the escape, is not a character of its own). */
const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅå" +
  "Δ_ΦΓΛΩΠΨΣΘΞ" +
  "ÆæßÉ" +
  " !\"#¤%&'()*+,-./" +
  "0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§" +
  "¿abcdefghijklmnopqrstuvwxyzäöñüà";

/** GSM 03.38 extension table: each costs two septets. */
const GSM7_EXTENSION = "\f^{}\\[~]|€";

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

/** Septets per character, or undefined when the text cannot be sent as GSM-7. */
function gsmCosts(text: string): number[] | undefined {
  const costs: number[] = [];
  for (const ch of text) {
    if (BASIC.has(ch)) costs.push(1);
    else if (EXTENSION.has(ch)) costs.push(2);
    else return undefined;
  }
  return costs;
}

/** Parts needed when no character (cost) may straddle two parts. */
function pack(costs: number[], total: number, single: number, part: number): number {
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const c of costs) {
    if (used + c > part) {
      segments++;
      used = 0;
    }
    used += c;
  }
  return segments;
}

/** Septets per UTF-16 code unit (0: not in GSM-7); every GSM character is a single unit. */
const GSM_COST = new Uint8Array(0x10000);
for (const ch of GSM7_BASIC) GSM_COST[ch.charCodeAt(0)] = 1;
for (const ch of GSM7_EXTENSION) GSM_COST[ch.charCodeAt(0)] = 2;

export function smsInfo(text: string): SmsInfo {
  // One pass over the code units answers a text that fits one message (most texts): no per-
  // character strings or cost list. Longer texts are packed part by part below.
  let units = 0;
  for (let i = 0; i < text.length; i++) {
    const c = GSM_COST[text.charCodeAt(i)];
    if (c === 0) {
      units = -1;
      break;
    }
    units += c;
  }
  if (units >= 0 && units <= GSM7_SINGLE) return { encoding: "GSM-7", units, segments: 1 };
  if (units < 0 && text.length <= UCS2_SINGLE) return { encoding: "UCS-2", units: text.length, segments: 1 };
  const gsm = gsmCosts(text);
  if (gsm) {
    const units = gsm.reduce((a, b) => a + b, 0);
    return { encoding: "GSM-7", units, segments: pack(gsm, units, GSM7_SINGLE, GSM7_PART) };
  }
  const costs: number[] = [];
  for (const ch of text) costs.push(ch.length); // a code point outside the BMP is 2 units
  return { encoding: "UCS-2", units: text.length, segments: pack(costs, text.length, UCS2_SINGLE, UCS2_PART) };
}

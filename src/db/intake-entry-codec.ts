/**
 * How an intake entry (the JSON of an IntakeEntry) is kept in `submission_intake.entry`: raw
 * deflate with a fixed preset dictionary, behind a one-byte format tag. An entry is ~1.7 KB of JSON
 * (ids repeated in the consent and the 200's body, the posted values twice, the key names): one
 * row filled a 2 KiB page, so every webhook commit took a new page (page 1, the free list's page,
 * the parent and the leaf); compressed it is ~450 bytes, four to a 2 KiB page and two to the 1 KiB
 * pages of a database made since round four (docs/api-decisions.md, "Disk bytes, round three").
 *
 * A row written before this (JSON text) reads as it is: the column keeps either. The intake store
 * writes entries as text too when the server is busy (src/db/stores/intake.ts,
 * COMPRESS_WHEN_APART_MS).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";

/** The first byte of a compressed entry (JSON text never starts with it). */
const FORMAT_DEFLATE_V1 = 1;

/**
 * The preset dictionary of format 1: an entry's keys and fixed strings, so even the first
 * occurrence of each compresses. NEVER change it: rows written with it must stay readable (a new
 * dictionary is a new format tag).
 */
const DICTIONARY_V1 = Buffer.from(
  '{"kind":"queued","accountId":"","formId":"","formName":"","contactId":"","phone":"+1","firstName":"","lastName":"","email":"","custom":{},"source":null,' +
    '"consent":"{\\"source\\":\\"webhook\\",\\"formId\\":\\"\\",\\"at\\":\\"\\",\\"ipAddress\\":\\"\\"}","submissionId":"","messageId":"","at":"","suppressed":"recipient-limit",' +
    '"message":{"content":"","priority":"normal","priorityRank":2,"webhookData":"{\\"phoneNumber\\":\\"+1\\",\\"firstName\\":\\"\\",\\"lastName\\":\\"\\",\\"email\\":\\"\\"}",' +
    '"template":"","scheduledFor":"","metadata":"{\\"messageLength\\":,\\"variablesUsed\\":[],\\"source\\":\\"webhook\\",\\"ipAddress\\":\\"\\",\\"userAgent\\":null,' +
    '\\"encoding\\":\\"GSM-7\\",\\"encoding\\":\\"UCS-2\\",\\"segments\\":1}","seq":,"answer":"{\\"status\\":\\"success\\",\\"message\\":\\"Submission received; message queued\\",' +
    '\\"data\\":{\\"messageId\\":\\"\\",\\"contactId\\":\\"\\",\\"queuePosition\\":,\\"estimatedDelivery\\":\\"\\",\\"estimate\\":{\\"basis\\":\\"connected-phones\\"}}}"}}',
);

/** The stored form of an entry's JSON. */
export function encodeIntakeEntry(json: string): Uint8Array {
  const body = deflateRawSync(Buffer.from(json), { dictionary: DICTIONARY_V1 });
  const out = new Uint8Array(body.length + 1);
  out[0] = FORMAT_DEFLATE_V1;
  out.set(body, 1);
  return out;
}

/** An entry's JSON from its stored form (a compressed blob, or JSON text written before it). */
export function decodeIntakeEntry(stored: string | Uint8Array): string {
  if (typeof stored === "string") return stored;
  if (stored[0] === FORMAT_DEFLATE_V1) return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_V1 }).toString("utf8");
  // A blob of JSON text (a tool that wrote the column as bytes).
  return Buffer.from(stored).toString("utf8");
}

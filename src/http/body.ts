import { AppError } from "../errors";

/** application/json and any +json type (application/vnd.api+json, …). */
export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

export function payloadTooLarge(limit: number, provided: number): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", { message: `Request body is larger than ${limit} bytes`, details: { limit, provided } });
}

/**
 * The body as bytes, never more than `limit`: with Content-Length the outer handler has already
 * refused larger bodies; without it (chunked) we count while reading and stop at the limit.
 */
export async function readLimitedBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.headers.has("content-length")) {
    const buf = new Uint8Array(await request.arrayBuffer());
    if (buf.byteLength > limit) throw payloadTooLarge(limit, buf.byteLength);
    return buf;
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw payloadTooLarge(limit, size);
    }
    parts.push(value);
  }
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * How deeply a JSON body may nest its arrays and objects. Anything that walks a parsed value
 * recursively (schema checks, the validation error's copy of the value, JSON.stringify) overflows
 * the stack somewhere past a few thousand levels, and gets slow well before that; no body this API
 * takes needs more than a handful (docs/api-decisions.md, "Hostile input, round two").
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_SQUARE = 0x5b;
const CLOSE_SQUARE = 0x5d;
const OPEN_CURLY = 0x7b;
const CLOSE_CURLY = 0x7d;

/**
 * True when `bytes`, read as JSON, opens more than `max` arrays/objects inside one another. One
 * pass over the bytes, no allocation, before anything parses them: brackets inside strings (and
 * escaped quotes) do not count. UTF-8 is safe to scan byte by byte: every byte of a multi-byte
 * character is ≥ 0x80, so none looks like a quote, a backslash or a bracket. Text that is not JSON
 * is scanned the same way; the parser refuses it afterwards.
 */
export function jsonTooDeep(bytes: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === QUOTE) {
      // Skip the string: to the next quote that is not escaped.
      for (i++; i < n; i++) {
        const c = bytes[i];
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
    } else if (b === OPEN_SQUARE || b === OPEN_CURLY) {
      if (++depth > max) return true;
    } else if ((b === CLOSE_SQUARE || b === CLOSE_CURLY) && depth > 0) depth--;
  }
  return false;
}

export function jsonTooDeepError(max: number = MAX_JSON_DEPTH): AppError {
  const message = `The JSON body nests arrays and objects more than ${max} levels deep`;
  return new AppError("VALIDATION_ERROR", {
    message,
    details: { field: "body", requirement: `JSON nested at most ${max} levels deep`, provided: null },
    errors: [{ field: "body", message }],
  });
}

/** Throws the 400 for a body nested deeper than MAX_JSON_DEPTH (see jsonTooDeep). */
export function checkJsonDepth(bytes: Uint8Array): void {
  if (jsonTooDeep(bytes)) throw jsonTooDeepError();
}

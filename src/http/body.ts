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

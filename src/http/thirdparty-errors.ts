/**
 * SMSGate's error body for every error on /3rdparty/v1: `{"message", "code": <integer>, "data"}`.
 * Its clients decode `code` as an integer (client-go's ErrorResponse), so Textwire's envelope —
 * whoever produced it: the outer handler's 401/404/413/429, a schema's 400, a route's 404/409, a
 * 500 — is rewritten here, once, on the way out. `code` is the HTTP status, as SMSGate's server
 * answers; `data` carries Textwire's own code so nothing is lost (docs/api-decisions.md, "SMSGate
 * third-party API").
 */
export interface SmsgateErrorBody {
  message: string;
  code: number;
  data: string;
}

export async function asSmsgateError(res: Response): Promise<Response> {
  if (res.status < 400 || !/json/i.test(res.headers.get("content-type") ?? "")) return res;
  let envelope: { status?: unknown; message?: unknown; code?: unknown; errors?: unknown };
  try {
    envelope = (await res.clone().json()) as typeof envelope;
  } catch {
    return res;
  }
  if (envelope === null || typeof envelope !== "object" || envelope.status !== "error") return res;
  const body: SmsgateErrorBody = {
    message: smsgateMessage(envelope.message, envelope.errors),
    code: res.status,
    data: typeof envelope.code === "string" ? envelope.code : "ERROR",
  };
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(body), { status: res.status, headers });
}

/** One sentence a person can act on: with several refused fields, each is named (SMSGate has no list). */
function smsgateMessage(message: unknown, errors: unknown): string {
  const text = typeof message === "string" ? message : "Request failed";
  if (!Array.isArray(errors) || errors.length < 2) return text;
  const each = errors.map((e) => (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string" ? (e as { message: string }).message : null)).filter((m): m is string => m !== null);
  return each.length ? `${text}: ${each.join("; ")}` : text;
}

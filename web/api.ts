import { signal } from "@preact/signals";
import type { Answer, InitArgs, Op, PathsWith, Query, Session } from "./api-types";
import { retryDelaySeconds } from "./retry";

export type { Session };
/** The signed-in session as GET/POST /v1/session answer it; null = signed out, undefined = not known yet. */
export const session = signal<Session | null | undefined>(undefined);
export const isAdmin = () => session.value?.permission === "admin_access";
/**
 * Whether the signed-in person (or key) may do something, by the API's own permission names
 * (GET /v1/session `can`): pages show only the actions these allow (docs/dashboard.md, "Roles").
 */
export const can = (permission: string): boolean => session.value?.can.includes(permission) ?? false;
/** Whether the session acts as the server's operator (backups, server address, HTTPS, replication). */
export const isOperator = (): boolean => session.value?.operator === true;
/** Whether a person signed in (with their password), not a key: they never read about keys outside Settings → Developers. */
export const isPerson = (): boolean => Boolean(session.value?.user);

/**
 * After a sign-in (password, key, invitation or setup): the session with what it may do. The
 * caller sets `session` and navigates in one step, so the app never renders the sign-in page
 * signed in (which would send it to the Overview instead of where it was going).
 */
export async function fetchSession(): Promise<Session> {
  return (await api.get("/v1/session")).data;
}
/** People and API keys are an owner's (an admin key's session keeps them, as before people existed). */
export const isOwner = () => (session.value?.user ? session.value.user.role === "owner" : isAdmin());

/** An error answer of the API, in its envelope's words. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly body: any) {
    super(message);
  }
}

/**
 * While the server answers 429 (too many requests) or 503 (busy), the dashboard waits and asks
 * again by itself (web/retry.ts); the page keeps what it shows and a small notice says what is
 * happening (docs/api-decisions.md, "The dashboard never locks itself out; honest status").
 */
/** Seconds until the next try while the server is busy; null when nothing waits. */
export const busyRetry = signal<number | null>(null);
const waiting = new Map<number, number>();
let waitIds = 0;

function showWait(id: number, seconds: number | null) {
  if (seconds === null) waiting.delete(id);
  else waiting.set(id, seconds);
  busyRetry.value = waiting.size ? Math.max(...waiting.values()) : null;
}

async function waitBusy(id: number, seconds: number): Promise<void> {
  for (let left = seconds; left > 0; left--) {
    showWait(id, left);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * GETs in flight, by address: sections of one page that read the same answer (Settings' business
 * profile and replies, the account's limits) share one request instead of asking twice.
 */
const inFlight = new Map<string, Promise<unknown>>();

/**
 * The typed client: `api.get("/v1/forms/{id}", { path: { id } })`. The address, its path and
 * query parameters, the JSON body and the answer are the OpenAPI document's own
 * (web/api-schema.gen.ts), so `tsc -p web` refuses a call the API would not take and a page that
 * reads a field the API does not answer (docs/api-decisions.md, "The house, round two: a typed
 * dashboard"). Every call keeps the session cookie, the CSRF token, the busy-server retry and the
 * error envelope of `request` below.
 */
export const api = {
  get: <P extends PathsWith<"get">>(path: P, ...init: InitArgs<Op<P, "get">>) => call<Answer<P, "get">>("GET", path, init[0]),
  post: <P extends PathsWith<"post">>(path: P, ...init: InitArgs<Op<P, "post">>) => call<Answer<P, "post">>("POST", path, init[0]),
  put: <P extends PathsWith<"put">>(path: P, ...init: InitArgs<Op<P, "put">>) => call<Answer<P, "put">>("PUT", path, init[0]),
  patch: <P extends PathsWith<"patch">>(path: P, ...init: InitArgs<Op<P, "patch">>) => call<Answer<P, "patch">>("PATCH", path, init[0]),
  delete: <P extends PathsWith<"delete">>(path: P, ...init: InitArgs<Op<P, "delete">>) => call<Answer<P, "delete">>("DELETE", path, init[0]),
};

/** What a call may carry: the address's parameters, a JSON body, or a file (`body`, with its Content-Type in `headers`). */
type RawInit = { path?: Record<string, string>; query?: Record<string, string | number | boolean | undefined>; json?: unknown; body?: BodyInit; headers?: Record<string, string> };

/** The address with its `{name}` parts filled in (encoded) and the query's defined values appended. */
export function address(path: string, init: Pick<RawInit, "path" | "query"> = {}): string {
  let url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = init.path?.[name];
    if (v === undefined) throw new Error(`No value for {${name}} in ${path}`);
    return encodeURIComponent(v);
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  if (qs) url += "?" + qs;
  return url;
}

function call<T>(method: string, path: string, init: RawInit = {}): Promise<T> {
  const url = address(path, init);
  if (method !== "GET" || init.headers !== undefined) return request<T>(method, url, init);
  const pending = inFlight.get(url);
  if (pending) return pending as Promise<T>;
  const p = request<T>(method, url, init).finally(() => inFlight.delete(url));
  inFlight.set(url, p);
  return p;
}

async function request<T>(method: string, url: string, init: RawInit): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  const id = ++waitIds;
  try {
    for (let attempt = 0; ; attempt++) {
      if (method !== "GET" && method !== "HEAD" && session.value) headers["X-CSRF-Token"] = session.value.csrfToken;
      const res = await fetch(url, { method, headers, body, credentials: "same-origin" });
      // A 429 or 503 is refused before anything changes, so asking again is safe for every method.
      // Signing in is the exception: its 429 (too many failed tries) is for the person to read.
      if ((res.status === 429 || res.status === 503) && !(url === "/v1/session" && method === "POST")) {
        await res.arrayBuffer().catch(() => {});
        await waitBusy(id, retryDelaySeconds(attempt, res.headers.get("retry-after")));
        continue;
      }
      showWait(id, null);
      const text = await res.text();
      let data: any = null;
      try {
        data = text ? JSON.parse(text) : null;
      } catch {
        data = text;
      }
      if (!res.ok) {
        // The session ended (signed out elsewhere, expired, or its key was revoked).
        if (res.status === 401 && url !== "/v1/session") session.value = null;
        throw new ApiError(res.status, data?.code ?? "HTTP_" + res.status, data?.message ?? `Request failed (${res.status})`, data);
      }
      return data as T;
    }
  } finally {
    showWait(id, null);
  }
}

/**
 * The filters a list page keeps in its own address (what the person chose, or a link brought),
 * passed on to the API as they are: the API checks each one and refuses a wrong one in plain
 * words, as it does for any client. The one place the dashboard's query is not checked by `tsc`.
 */
export function queryFrom<P extends PathsWith<"get">>(_path: P, q: URLSearchParams): Query<P> {
  return Object.fromEntries(q) as Query<P>;
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The per-field problems of a refused save (the envelope's `errors`), for marking the fields; [] otherwise. */
export const fieldErrorsOf = (err: unknown): Array<{ field: string; message: string }> =>
  err instanceof ApiError && Array.isArray(err.body?.errors) ? (err.body.errors as Array<{ field: string; message: string }>) : [];

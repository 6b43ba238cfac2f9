import { signal } from "@preact/signals";
import type { Session } from "./api-types";
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
  return (await api<{ data: Session }>("/session")).data;
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

/** Calls the /v1 API with the session cookie; state-changing calls carry the CSRF token. */
/**
 * GETs in flight, by path: sections of one page that read the same answer (Settings' business
 * profile and replies, the account's limits) share one request instead of asking twice.
 */
const inFlight = new Map<string, Promise<unknown>>();

export function api<T = any>(path: string, init: { method?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<T> {
  const method = init.method ?? "GET";
  if (method !== "GET" || init.headers !== undefined) return request<T>(path, init);
  const pending = inFlight.get(path);
  if (pending) return pending as Promise<T>;
  const p = request<T>(path, init).finally(() => inFlight.delete(path));
  inFlight.set(path, p);
  return p;
}

async function request<T>(path: string, init: { method?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string> }): Promise<T> {
  const method = init.method ?? "GET";
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
      const res = await fetch(`/v1${path}`, { method, headers, body, credentials: "same-origin" });
      // A 429 or 503 is refused before anything changes, so asking again is safe for every method.
      // Signing in is the exception: its 429 (too many failed tries) is for the person to read.
      if ((res.status === 429 || res.status === 503) && !(path === "/session" && method === "POST")) {
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
        if (res.status === 401 && path !== "/session") session.value = null;
        throw new ApiError(res.status, data?.code ?? "HTTP_" + res.status, data?.message ?? `Request failed (${res.status})`, data);
      }
      return data as T;
    }
  } finally {
    showWait(id, null);
  }
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The per-field problems of a refused save (the envelope's `errors`), for marking the fields; [] otherwise. */
export const fieldErrorsOf = (err: unknown): Array<{ field: string; message: string }> =>
  err instanceof ApiError && Array.isArray(err.body?.errors) ? (err.body.errors as Array<{ field: string; message: string }>) : [];

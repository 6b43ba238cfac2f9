import { signal } from "@preact/signals";
import type { Session } from "./api-types";

export type { Session };
/** The signed-in session as GET/POST /v1/session answer it; null = signed out, undefined = not known yet. */
export const session = signal<Session | null | undefined>(undefined);
export const isAdmin = () => session.value?.permission === "admin_access";
/** People and API keys are an owner's (an admin key's session keeps them, as before people existed). */
export const isOwner = () => (session.value?.user ? session.value.user.role === "owner" : isAdmin());

/** An error answer of the API, in its envelope's words. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly body: any) {
    super(message);
  }
}

/** Calls the /v1 API with the session cookie; state-changing calls carry the CSRF token. */
export async function api<T = any>(path: string, init: { method?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<T> {
  const method = init.method ?? "GET";
  const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  if (method !== "GET" && method !== "HEAD" && session.value) headers["X-CSRF-Token"] = session.value.csrfToken;
  const res = await fetch(`/v1${path}`, { method, headers, body, credentials: "same-origin" });
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

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

import type { AuthKey, Permission } from "../domain/permissions";
import type { LiveSessionRow } from "../db/stores/sessions";
import type { RouteAccess } from "./permissions";
import type { ObservedRequest } from "../lib/request-observer";

/** What the outer fetch handler learns about a request before Elysia routes it. */
export interface RequestState extends ObservedRequest {
  requestId: string;
  startedAt: number;
  /** Scheme + host the client used (honours X-Forwarded-* only with --trust-proxy). */
  origin: string;
  clientIp: string;
  auth?: AuthKey;
  /** The dashboard session the request was authenticated by (none for a key). */
  session?: LiveSessionRow;
  /** Headers added to whatever response the request ends with (rate-limit figures). */
  headers: Record<string, string>;
  /** Path as the client sent it, key redacted: for the access log. */
  logPath: string;
  /** What the matched route declares: the permission it needs and the limiter it counts against. */
  access?: RouteAccess;
  /** Route label for metrics (pattern, not the concrete path). */
  route?: string;
  /** Webhook requests: the form whose limit figures the answer shows when the route set none. */
  limitFormId?: string;
  /**
   * The route built its answer with every header the outer handler would add (these headers, the
   * request id, the API version): one Response construction instead of a set() per header.
   */
  headersDone?: boolean;
  /**
   * --stage-timing only: when the app got the request, when the route began and answered, when the
   * outer handler had the answer back. Only stretches with no await inside are summed: across an
   * await, other requests of the same commit batch run, and their time would count as ours.
   */
  marks?: { handleAt: number; routeAt: number; routeDoneAt: number; resumedAt: number };
}

const states = new WeakMap<Request, RequestState>();

export const setState = (req: Request, s: RequestState) => states.set(req, s);
export function stateOf(req: Request): RequestState {
  const s = states.get(req);
  if (!s) throw new Error("request state missing");
  return s;
}
export const maybeStateOf = (req: Request) => states.get(req);

export function authOf(req: Request): AuthKey {
  const a = stateOf(req).auth;
  if (!a) throw new Error("route reached without authentication");
  return a;
}

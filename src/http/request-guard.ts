import { AppError } from "../errors";
import { BucketRegistry, perMinute } from "../limits/token-bucket";
import { rateLimitHeaders } from "../limits/api-limiter";
import { redactKeys } from "../lib/log";

/**
 * What the outer handler checks before a request reaches authentication or Elysia: a URL that
 * parses, a path that is valid percent-encoding, a route that exists for the method, and a
 * client address that has not failed to sign in too often.
 */

/** The request URL, or null for a target that is not a path (`CONNECT *`, `CONNECT host:port`). */
export function requestUrl(req: Request): URL | null {
  try {
    const url = new URL(req.url);
    return url.pathname.startsWith("/") ? url : null;
  } catch {
    return null;
  }
}

/** The 400 for a request target that is not a path: this server is not a proxy. */
export function badRequestTarget(method: string): AppError {
  return new AppError("VALIDATION_ERROR", {
    message: `${method.slice(0, 20)} needs a path such as /v1/forms; this server is not a proxy`,
    details: { field: "url", requirement: "an origin-form request target (/path?query)", provided: null },
    errors: [{ field: "url", message: "The request target must be a path" }],
  });
}

/** decodeURIComponent that answers null instead of throwing on bad percent-encoding. */
export function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** A 400 for a path that is not valid UTF-8 percent-encoding (it can name no key and no message). */
export function malformedPathError(): AppError {
  return new AppError("VALIDATION_ERROR", {
    message: "The path is not valid percent-encoding (UTF-8)",
    details: { field: "path", requirement: "valid UTF-8 percent-encoding", provided: null },
    errors: [{ field: "path", message: "The path is not valid percent-encoding (UTF-8)" }],
  });
}

/**
 * Elysia reads the path of `request.url` from the first "/" after character 11, so a short Host
 * header ("x") would make it route a different path from the one we checked. Such requests are
 * handed on with a canonical origin (the request's own origin stays in the request state).
 */
export function routedByElysiaAs(req: Request, url: URL): string | null {
  return req.url.indexOf("/", 11) === url.origin.length ? null : `http://textwire.internal${url.pathname}${url.search}`;
}

export interface RouteDef {
  method: string;
  path: string;
  hooks?: Record<string, unknown>;
}

/** `route`: what `declare` made of the matched route (its declared permission and limiter). */
export type RouteMatch<D> = { kind: "ok"; route: D } | { kind: "unknown" } | { kind: "method"; allow: string[] };

interface RoutePattern<D> {
  re: RegExp;
  /** One per segment: 0 static, 1 parameter, 2 wildcard. */
  shape: number[];
  segments: string[];
  methods: Map<string, D>;
}

/**
 * The registered routes as patterns, to answer 404 for a path nothing serves and 405 (with Allow)
 * for a method the path does not take, before authentication, and to hand over the matched
 * route's declaration. Rebuilt when the route count moves.
 */
export class RouteTable<D> {
  private built: { n: number; patterns: Array<RoutePattern<D>> } | undefined;

  /** `declare` reads a route's declaration once, at build; it throws for a route it refuses. */
  constructor(
    private readonly routes: () => RouteDef[],
    private readonly declare: (route: RouteDef) => D,
  ) {}

  /** Builds the table now, so a route `declare` refuses stops the server at start. */
  prepare(): void {
    this.patterns();
  }

  private patterns() {
    const routes = this.routes();
    if (this.built && this.built.n === routes.length) return this.built.patterns;
    const byPath = new Map<string, Map<string, D>>();
    for (const r of routes) {
      const key = r.path.replace(/\/+$/, "") || "/";
      const methods = byPath.get(key) ?? new Map<string, D>();
      methods.set(r.method.toUpperCase(), this.declare(r));
      byPath.set(key, methods);
    }
    const patterns: Array<RoutePattern<D>> = [];
    for (const [p, methods] of byPath) {
      const segments = p.split("/");
      const shape = segments.map((seg) => (seg.startsWith(":") ? 1 : seg === "*" ? 2 : 0));
      const body = segments
        .map((seg, i) => (shape[i] === 1 ? "[^/]+" : shape[i] === 2 ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/");
      const pattern = { re: new RegExp(`^${body}/?$`), shape, segments, methods };
      // Registration order, except that a pattern goes before any it overlaps and is more specific
      // than (as Elysia's router prefers /contacts/export to /contacts/:id): the declaration
      // handed over is then the one of the route Elysia runs, whatever order modules add them in.
      const at = patterns.findIndex((q) => moreSpecific(pattern, q));
      patterns.splice(at === -1 ? patterns.length : at, 0, pattern);
    }
    this.built = { n: routes.length, patterns };
    return patterns;
  }

  match(method: string, path: string): RouteMatch<D> {
    const allow = new Set<string>();
    for (const p of this.patterns()) {
      if (!p.re.test(path)) continue;
      const route = p.methods.get(method);
      if (route !== undefined) return { kind: "ok", route };
      for (const m of p.methods.keys()) allow.add(m);
    }
    if (allow.size === 0) return { kind: "unknown" };
    if (allow.has("GET")) allow.add("HEAD"); // served as GET without the body
    return { kind: "method", allow: [...allow].sort() };
  }
}

/**
 * Whether some path matches both patterns and `a` wins it: at the first segment where they differ
 * in kind, `a` has a static segment against a parameter or wildcard, or a parameter against a
 * wildcard (the order of Elysia's router).
 */
function moreSpecific<D>(a: RoutePattern<D>, b: RoutePattern<D>): boolean {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const sa = a.shape[i];
    const sb = b.shape[i];
    if (sa === undefined || sb === undefined) return false;
    if (sa === 2 || sb === 2) return sa < sb;
    if (sa === 0 && sb === 0 && a.segments[i] !== b.segments[i]) return false; // no path matches both
    if (sa !== sb) return sa < sb;
  }
  return false;
}

export function noRouteError(method: string, path: string): AppError {
  return new AppError("NOT_FOUND", { message: `No route for ${method.slice(0, 20)} ${redactKeys(path).slice(0, 200)}` });
}

export function methodNotAllowedError(method: string, allow: string[]): AppError {
  return new AppError("METHOD_NOT_ALLOWED", {
    message: `This path does not take ${method.slice(0, 20)}; it takes ${allow.join(", ")}`,
    details: { method: method.slice(0, 20), allowed: allow },
    headers: { Allow: allow.join(", ") },
  });
}

/**
 * Failed sign-ins per client IP: a bucket of `perMinute` refilled at `perMinute` per minute. A
 * refused key takes a token; while the bucket is empty every key from that address is refused with
 * 429 unread, so keys cannot be guessed at line speed (a right guess would not be told apart).
 */
export class AuthFailureLimiter {
  private readonly registry: BucketRegistry;

  constructor(private readonly perMinuteLimit: number, clock: () => number, sweepEveryMs?: number) {
    this.registry = new BucketRegistry({ capacity: perMinuteLimit, refillPerMs: perMinute(perMinuteLimit), clock, sweepEveryMs });
  }

  /** Throws 429 when `ip` has used up its failed attempts. */
  check(ip: string): void {
    const r = this.registry.peek(ip);
    if (r.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    throw new AppError("RATE_LIMIT_EXCEEDED", {
      message: `Too many failed sign-ins from this address; retry in ${retryAfter} seconds`,
      details: { limit: this.perMinuteLimit, window: "1 minute", retryAfter },
      extra: { retryAfter },
      headers: rateLimitHeaders({ ...r, burstLimit: r.limit, burstRemaining: r.remaining, retryAfterSeconds: retryAfter }),
    });
  }

  /** Counts one refused key for `ip`. */
  fail(ip: string): void {
    this.registry.take(ip);
  }

  sweep(): number {
    return this.registry.sweep();
  }
}

/**
 * What the outer fetch handler tells observers about each finished request (the metrics). It
 * says nothing of what a request changed: services announce that themselves (src/lib/changes.ts),
 * so no observer guesses it from a path. Services observe requests through this narrow view and so depend on nothing in src/http/ (docs/api-decisions.md, "Layers: dependencies
 * point down").
 */
export interface ObservedRequest {
  /** Path as the client sent it, key redacted. */
  logPath: string;
  /** Route label for metrics (pattern, not the concrete path). */
  route?: string;
  /** The authenticated caller, if any. */
  auth?: { accountId: string };
}

/** Called once per finished request. */
export type Observer = (req: ObservedRequest, method: string, status: number, durationMs: number) => void;

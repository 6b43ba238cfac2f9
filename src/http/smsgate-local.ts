/**
 * The optional listener that speaks the SMSGate app's local-server API (`serve
 * --smsgate-local-port N`), so tools that take only a host and a port — the Home Assistant
 * integrations — work unchanged: the app serves its API at its root (`POST /message`, `GET
 * /messages`, `GET /health`…), Textwire serves the same calls under /3rdparty/v1. Each request is
 * handed to the server's own handler with that prefix added, so the keys, limits, permissions and
 * SMSGate's error body are the ones of /3rdparty/v1 (docs/phones.md, "Home Assistant";
 * docs/api-decisions.md, "The SMSGate ecosystem, every call").
 *
 * `GET /health` with credentials answers /3rdparty/v1/health/phones: the checks the integrations'
 * sensors read (battery:level, messages:failed) for the account whose id and key they send; without
 * credentials, the server's own checks.
 */
import type { Server } from "bun";
import { THIRDPARTY_PREFIX } from "./access";

/** The request the main handler gets for one made to the local listener. */
export function asThirdPartyRequest(req: Request): Request {
  const url = new URL(req.url);
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const inner = path === "/health" && req.headers.has("authorization") ? "/health/phones" : path;
  url.pathname = THIRDPARTY_PREFIX + (inner === "/" ? "" : inner);
  return new Request(url.toString(), req);
}

/** The listener's fetch: every request through the main handler, under /3rdparty/v1. */
export function smsgateLocalFetch(main: (req: Request, server?: Server<unknown>) => Promise<Response>) {
  return (req: Request, server: Server<unknown>) => main(asThirdPartyRequest(req), server);
}

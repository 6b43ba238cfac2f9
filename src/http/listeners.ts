/**
 * The server's sockets (docs/api-decisions.md, "Online on its own"): the one serving the app
 * (HTTPS when a certificate is in use, else plain HTTP) and, with HTTPS, the plain-HTTP port that
 * answers everything with 308 to HTTPS, serves /ca.crt and the ACME HTTP-01 answers.
 *
 * A certificate can arrive while running (the first public certificate, or a renewal): the app's
 * HTTPS listener is then replaced by one with the new certificate on the same port — Bun cannot
 * change a listener's certificate in place; the old one stops accepting and finishes its requests
 * while the new one takes new connections — and a plain listener that served the app becomes the
 * forwarder (`reload` swaps its handler without closing the port).
 */
import type { Server } from "bun";
import { challengeAnswer, CHALLENGE_PREFIX, type ChallengeTokens } from "../tls/acme";

type Fetch = (req: Request, server: Server<unknown>) => Response | Promise<Response>;

export interface ListenerOptions {
  host: string;
  maxRequestBodySize: number;
  /** The app's handler. */
  app: Fetch;
  error: (err: Error) => Response;
  /** The forwarder's extra answers before its 308 (e.g. /ca.crt); null to forward. */
  plainExtra: (req: Request, url: URL) => Response | null;
  /** Called for each request the forwarder answers with 308 (forms posting to the old address). */
  onForward: (method: string, path: string) => void;
  tokens: ChallengeTokens;
}

export interface TlsPem {
  cert: string;
  key: string;
}

/** The 308 to the same path on HTTPS at `httpsPort`, keeping the host name the client used. */
export function forwardToHttps(req: Request, url: URL, httpsPort: number): Response {
  const host = (req.headers.get("host") ?? url.host).replace(/:\d+$/, "");
  const target = `https://${host}${httpsPort === 443 ? "" : ":" + httpsPort}${url.pathname}${url.search}`;
  return new Response(null, { status: 308, headers: { Location: target, "X-API-Version": "v1" } });
}

export class Listeners {
  /** The listener serving the app. */
  app: Server<unknown> | undefined;
  /** The plain-HTTP forwarder (with HTTPS on). */
  plain: Server<unknown> | undefined;
  tls: TlsPem | undefined;
  private draining: Array<Promise<void>> = [];

  constructor(private readonly o: ListenerOptions) {}

  /** The app's handler, with the ACME answers in front (a plain app listener is where the CA looks). */
  private appFetch(): Fetch {
    const { app, tokens } = this.o;
    return (req, server) => {
      // A cheap test first: this runs before every request.
      if (req.url.includes(CHALLENGE_PREFIX)) {
        const answer = challengeAnswer(tokens, req.method, new URL(req.url).pathname);
        if (answer) return answer;
      }
      return app(req, server);
    };
  }

  private forwardFetch(httpsPort: number): Fetch {
    const { tokens, plainExtra, onForward } = this.o;
    return (req) => {
      const url = new URL(req.url);
      const answer = challengeAnswer(tokens, req.method, url.pathname) ?? plainExtra(req, url);
      if (answer) return answer;
      onForward(req.method, url.pathname);
      return forwardToHttps(req, url, httpsPort);
    };
  }

  private serve(port: number, fetch: Fetch, tls?: TlsPem): Server<unknown> {
    return Bun.serve({ port, hostname: this.o.host, maxRequestBodySize: this.o.maxRequestBodySize, idleTimeout: 60, tls, fetch, error: this.o.error });
  }

  /** The app on `port` (HTTPS with `tls`), and with HTTPS the forwarder on `plainPort` when given. */
  start(port: number, tls: TlsPem | undefined, plainPort: number | undefined): void {
    this.tls = tls;
    this.app = this.serve(port, this.appFetch(), tls);
    if (tls && plainPort !== undefined) this.plain = this.serve(plainPort, this.forwardFetch(this.app.port!));
  }

  /**
   * Serves `tls` from now on: on the app's own port when it already speaks HTTPS; otherwise HTTPS
   * starts on `httpsPort` and the plain listener turns into the forwarder.
   */
  useCertificate(tls: TlsPem, httpsPort: number): void {
    const current = this.app;
    if (!current) return;
    if (this.tls) {
      const port = current.port!;
      this.draining.push(current.stop(false));
      this.app = this.serve(port, this.appFetch(), tls);
    } else {
      const fresh = this.serve(httpsPort, this.appFetch(), tls); // throws (port taken, no permission) before anything changes
      current.reload({ fetch: this.forwardFetch(fresh.port!), error: this.o.error });
      this.plain = current;
      this.app = fresh;
    }
    this.tls = tls;
  }

  /** Stops accepting; the app's in-flight requests finish (awaited). */
  async stop(): Promise<void> {
    this.plain?.stop(true);
    const app = this.app;
    await Promise.all([app?.stop(false), ...this.draining]);
  }
}

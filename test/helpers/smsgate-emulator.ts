/**
 * An SMSGate phone, written from the app's protocol (capcom6/android-sms-gateway v1.68.0:
 * GatewayApi.kt, GatewayService.kt, SSEManager/SSEForegroundService.kt, ExternalEventType.kt,
 * webhooks/** and PayloadSingingPlugin.kt). Used by the tests and scripts/bench/devices.ts.
 *
 * - Registration: POST {base}/device, `Authorization: Bearer <token>`, {name, pushToken, simCards}.
 * - Update: PATCH {base}/device {id, pushToken, simCards}; 401 means "register again".
 * - Events: GET {base}/events (SSE); on connect and on MessageEnqueued the app pulls
 *   GET {base}/message?order=lifo and reports PATCH {base}/message [{id, state, recipients, states}].
 * - Dates as yyyy-MM-dd'T'HH:mm:ss.SSSXXX (Gson).
 * - Webhooks: POST to the URLs from GET {base}/webhooks, body {id, webhookId, event, deviceId,
 *   payload}, X-Timestamp (unix seconds) and X-Signature = hex HMAC-SHA256(signing_key, body + timestamp).
 */
import { createHmac } from "node:crypto";

export const APP_USER_AGENT = "me.capcom.smsgateway/1.68.0";

export interface EmulatorOptions {
  base: string; // https://host:port/api/mobile/v1
  ca?: string;
  name?: string;
  /** What the phone does with each message it takes (default: Processed, Sent, Delivered). */
  behaviour?: "deliver" | "hold" | "fail";
  /** Minutes east of UTC the phone's clock reports dates in (exercises zone parsing). */
  offsetMinutes?: number;
  /** false: the event stream only records events (a test that asks for work itself). Default true. */
  pullOnEvents?: boolean;
}

/** Gson's yyyy-MM-dd'T'HH:mm:ss.SSSXXX. */
export function gsonDate(ms: number, offsetMinutes = 0): string {
  const d = new Date(ms + offsetMinutes * 60_000);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const sign = offsetMinutes >= 0 ? "+" : "-";
  const o = Math.abs(offsetMinutes);
  const zone = offsetMinutes === 0 ? "Z" : `${sign}${p(Math.floor(o / 60))}:${p(o % 60)}`;
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}${zone}`;
}

export class SmsGateEmulator {
  id = "";
  token = "";
  signingKey = "";
  webhooks: Array<{ id: string; url: string; event: string }> = [];
  settings: any;
  /** Every event received: name, data, arrival time (performance.now()). */
  events: Array<{ event: string; data: string; at: number }> = [];
  /** Errors of pulls started by a push or on connect (a test that awaits `pull()` gets its own). */
  backgroundErrors: unknown[] = [];
  /** Message ids this phone was handed. */
  taken: string[] = [];
  private abort: AbortController | undefined;
  private pulling: Promise<void> | null = null;
  private pullAgain = false;
  connected: Promise<void> = Promise.resolve();
  onEvent?: (event: string, data: string) => void;

  constructor(private readonly opts: EmulatorOptions) {}

  private fetch(path: string, init: RequestInit & { json?: unknown; auth?: string | null } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("User-Agent", APP_USER_AGENT);
    const auth = init.auth === undefined ? this.token : init.auth;
    if (auth) headers.set("Authorization", `Bearer ${auth}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers.set("Content-Type", "application/json");
    }
    const url = path.startsWith("http") ? path : this.opts.base + path;
    return fetch(url, { ...init, headers, body, tls: this.opts.ca ? { ca: this.opts.ca } : undefined } as RequestInit);
  }

  private async ok(res: Response, expect: number): Promise<any> {
    const text = await res.text();
    if (res.status !== expect) throw new Error(`${res.url}: expected ${expect}, got ${res.status}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : null;
  }

  simCards() {
    return [{ slotIndex: 0, simNumber: 1, phoneNumber: "******4567", carrierName: "****ile", iccid: "****1234" }];
  }

  async register(registrationToken: string): Promise<void> {
    const r = await this.ok(
      await this.fetch("/device", { method: "POST", auth: registrationToken, json: { name: this.opts.name ?? "Google/emulator", pushToken: null, simCards: this.simCards() } }),
      201,
    );
    this.id = r.id;
    this.token = r.token;
  }

  /** The app's updateDevice; returns the HTTP status (401 → register again). */
  async patchDevice(): Promise<number> {
    const res = await this.fetch("/device", { method: "PATCH", json: { id: this.id, pushToken: null, simCards: this.simCards() } });
    await res.text();
    return res.status;
  }

  async loadSettings(): Promise<void> {
    this.settings = await this.ok(await this.fetch("/settings"), 200);
    this.signingKey = this.settings.webhooks.signing_key;
    this.webhooks = await this.ok(await this.fetch("/webhooks"), 200);
  }

  /** Opens the SSE stream; resolves once connected. Pulls messages on connect and on MessageEnqueued. */
  async connect(): Promise<void> {
    this.abort = new AbortController();
    const res = await this.fetch("/events", { signal: this.abort.signal });
    if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = "";
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buf += dec.decode(value, { stream: true });
          let i: number;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let event: string | undefined;
            let data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event:")) event = line.slice(6).trim();
              else if (line.startsWith("data:")) data += line.slice(5).trim();
            }
            if (event === undefined && data === "") continue; // a comment (keepalive)
            const name = event ?? "MessageEnqueued";
            this.events.push({ event: name, data, at: performance.now() });
            this.onEvent?.(name, data);
            if (name === "MessageEnqueued" && this.opts.pullOnEvents !== false) this.pullInBackground();
          }
        }
      } catch {}
    })();
    if (this.opts.pullOnEvents !== false) this.pullInBackground();
  }

  /**
   * A pull the app starts by itself (on connect, on a push): like the app's worker it does not
   * crash when the server is gone (a test that already stopped it); the error is kept, not thrown.
   */
  private pullInBackground(): void {
    this.pull().catch((err) => this.backgroundErrors.push(err));
  }

  /** Closes the stream (the phone goes away). */
  disconnect(): void {
    this.abort?.abort();
  }

  /** PullMessagesWorker: one pull at a time; a request during a pull runs once more after it. */
  pull(): Promise<void> {
    if (this.pulling) {
      this.pullAgain = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.pullAgain = false;
        const msgs = await this.ok(await this.fetch("/message?order=lifo"), 200);
        for (const m of msgs) await this.process(m);
        if (msgs.length > 0) this.pullAgain = true;
      } while (this.pullAgain && !this.abort?.signal.aborted);
    })().finally(() => (this.pulling = null));
    return this.pulling;
  }

  async idle(): Promise<void> {
    while (this.pulling) await this.pulling;
  }

  private async process(m: any): Promise<void> {
    this.taken.push(m.id);
    if (this.opts.behaviour === "hold") return;
    const t0 = Date.now();
    const off = this.opts.offsetMinutes ?? 0;
    const states: Record<string, string> = { Pending: gsonDate(t0, off), Processed: gsonDate(t0, off) };
    await this.ok(await this.fetch("/message", { method: "PATCH", json: [{ id: m.id, state: "Processed", recipients: m.phoneNumbers.map((p: string) => ({ phoneNumber: p, state: "Processed", error: null })), states }] }), 204);
    if (this.opts.behaviour === "fail") {
      states.Failed = gsonDate(Date.now(), off);
      await this.ok(await this.fetch("/message", { method: "PATCH", json: [{ id: m.id, state: "Failed", recipients: m.phoneNumbers.map((p: string) => ({ phoneNumber: p, state: "Failed", error: "RESULT_ERROR_NO_SERVICE" })), states }] }), 204);
      return;
    }
    states.Sent = gsonDate(Date.now(), off);
    await this.ok(await this.fetch("/message", { method: "PATCH", json: [{ id: m.id, state: "Sent", recipients: m.phoneNumbers.map((p: string) => ({ phoneNumber: p, state: "Sent", error: null })), states }] }), 204);
    states.Delivered = gsonDate(Date.now(), off);
    await this.ok(await this.fetch("/message", { method: "PATCH", json: [{ id: m.id, state: "Delivered", recipients: m.phoneNumbers.map((p: string) => ({ phoneNumber: p, state: "Delivered", error: null })), states }] }), 204);
  }

  /** Sends one signed webhook as the app's SendWebhookWorker does; returns the response. */
  async webhook(event: string, payload: unknown, opts: { id?: string; timestamp?: number; key?: string } = {}): Promise<Response> {
    const hook = this.webhooks.find((w) => w.event === event);
    if (!hook) throw new Error(`no webhook for ${event}`);
    const body = JSON.stringify({ id: opts.id ?? crypto.randomUUID().replace(/-/g, "").slice(0, 21), webhookId: hook.id, event, deviceId: this.id, payload });
    const ts = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", opts.key ?? this.signingKey).update(body + ts).digest("hex");
    return this.fetch(hook.url, { method: "POST", auth: null, body, headers: { "Content-Type": "application/json; charset=UTF-8", "X-Timestamp": ts, "X-Signature": sig } });
  }
}

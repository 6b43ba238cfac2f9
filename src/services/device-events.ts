/**
 * Server-Sent Events for SMSGate phones (GET /api/mobile/v1/events). Only event names the app
 * knows (its ExternalEventType): MessageEnqueued (data null), MessageCancelled ({messageId}),
 * SettingsUpdated, WebhooksUpdated, MessagesExportRequested ({since, until, …}: the phone sends
 * its received texts of that time again as sms:received); a `:keepalive` comment every KEEPALIVE_MS.
 *
 * MessageEnqueued is sent when the lease service wakes an account's long-polls
 * (`leases.notify`), coalesced per account within one macrotask, and again when the account's
 * next scheduled message falls due (a timer on the queue's nextDueAt).
 */
import type { MessageQueue } from "../queue/priority-queue";
import type { Clock } from "../lib/clock";

export const KEEPALIVE_MS = 15_000;
export type PhoneEvent = "MessageEnqueued" | "MessageCancelled" | "SettingsUpdated" | "WebhooksUpdated" | "MessagesExportRequested";

interface Subscriber {
  deviceId: string;
  write(chunk: string): boolean;
}

const encoder = new TextEncoder();

export class DeviceEventHub {
  private readonly byAccount = new Map<string, Set<Subscriber>>();
  private readonly pending = new Set<string>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly dueTimers = new Map<string, { at: number; timer: ReturnType<typeof setTimeout> }>();
  private readonly nudges = new Map<string, ReturnType<typeof setTimeout>>();
  /** Ends every open stream (shutdown: the server's drain must not wait for them). */
  private readonly closers = new Set<() => void>();
  /** Events written, for tests and the bench. */
  sent = 0;

  constructor(
    private readonly queue: MessageQueue,
    private readonly clock: Clock,
  ) {}

  /** Devices with an open stream. */
  connected(deviceId: string): boolean {
    for (const set of this.byAccount.values()) for (const s of set) if (s.deviceId === deviceId) return true;
    return false;
  }

  connectedDevices(): Set<string> {
    const out = new Set<string>();
    for (const set of this.byAccount.values()) for (const s of set) out.add(s.deviceId);
    return out;
  }

  /** Opens a stream for the device; `onActivity` runs at every keepalive (the device is present). */
  open(accountId: string, deviceId: string, onActivity: () => void): Response {
    let sub: Subscriber | undefined;
    let keepalive: ReturnType<typeof setInterval> | undefined;
    let end: (() => void) | undefined;
    const close = () => {
      if (end) this.closers.delete(end);
      if (keepalive) clearInterval(keepalive);
      keepalive = undefined;
      if (sub) {
        const set = this.byAccount.get(accountId);
        set?.delete(sub);
        if (set && set.size === 0) this.byAccount.delete(accountId);
        sub = undefined;
      }
    };
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        end = () => {
          close();
          try {
            controller.close();
          } catch {}
        };
        this.closers.add(end);
        sub = {
          deviceId,
          write: (chunk) => {
            try {
              controller.enqueue(encoder.encode(chunk));
              return true;
            } catch {
              close();
              return false;
            }
          },
        };
        let set = this.byAccount.get(accountId);
        if (!set) this.byAccount.set(accountId, (set = new Set()));
        set.add(sub);
        // A comment first, so the client's onOpen fires and proxies pass the headers on.
        sub.write(":connected\n\n");
        keepalive = setInterval(() => {
          if (sub?.write(":keepalive\n\n")) onActivity();
        }, KEEPALIVE_MS);
        this.armDue(accountId);
      },
      cancel: close,
    });
    return new Response(stream, {
      headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "X-Accel-Buffering": "no" },
    });
  }

  /** Called from leases.notify: MessageEnqueued to the account's phones, once per burst. */
  notify(accountId: string): void {
    if (!this.byAccount.has(accountId)) return;
    this.pending.add(accountId);
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), 0);
  }

  private flush(): void {
    this.flushTimer = undefined;
    const accounts = [...this.pending];
    this.pending.clear();
    for (const a of accounts) {
      this.emit(a, "MessageEnqueued", null);
      this.armDue(a);
    }
  }

  /** One event to every stream of the account, or to one device's streams; how many streams took it. */
  emit(accountId: string, event: PhoneEvent, data: unknown, deviceId?: string): number {
    const set = this.byAccount.get(accountId);
    if (!set) return 0;
    const chunk = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    let took = 0;
    for (const s of [...set]) {
      if (deviceId !== undefined && s.deviceId !== deviceId) continue;
      if (s.write(chunk)) took++;
    }
    this.sent += took;
    return took;
  }

  /** A MessageEnqueued to one device after `ms` (its send-rate bucket refills then). */
  nudgeLater(accountId: string, deviceId: string, ms: number): void {
    if (this.nudges.has(deviceId)) return;
    const t = setTimeout(() => {
      this.nudges.delete(deviceId);
      this.emit(accountId, "MessageEnqueued", null, deviceId);
    }, Math.max(5, ms));
    (t as { unref?: () => void }).unref?.();
    this.nudges.set(deviceId, t);
  }

  /** A timer for when the account's next scheduled message falls due (while it has streams). */
  private armDue(accountId: string): void {
    if (!this.byAccount.has(accountId)) return;
    const now = this.clock();
    const due = this.queue.nextDueAt(accountId, now);
    if (due === undefined || due <= now) return;
    const current = this.dueTimers.get(accountId);
    if (current && current.at <= due && current.at > now) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(() => {
      this.dueTimers.delete(accountId);
      this.notify(accountId);
    }, Math.min(due - now, 2_147_000_000));
    (timer as { unref?: () => void }).unref?.();
    this.dueTimers.set(accountId, { at: due, timer });
  }

  closeAll(): void {
    for (const end of [...this.closers]) end();
  }

  stop(): void {
    this.closeAll();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const d of this.dueTimers.values()) clearTimeout(d.timer);
    for (const t of this.nudges.values()) clearTimeout(t);
    this.dueTimers.clear();
    this.nudges.clear();
  }
}

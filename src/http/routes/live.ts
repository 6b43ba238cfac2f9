import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { LiveStream } from "../models/sessions";
import { routeAccess } from "../plugins/route-access";

/** A comment line this often keeps proxies and the server's idle timeout from closing the stream. */
export const LIVE_KEEPALIVE_MS = 15_000;

/**
 * GET /v1/live/messages: Server-Sent Events telling the dashboard that the account's messages
 * changed (`event: message`); the page then reads the list again through the API. Authenticated
 * like any /v1 route (the dashboard's session cookie, or a key).
 */
export function liveRoutes(deps: AppDeps) {
  return new Elysia({ name: "live-routes" }).use(routeAccess).get(
    "/v1/live/messages",
    ({ request }) => {
      const accountId = authOf(request).accountId;
      const enc = new TextEncoder();
      let cleanup = () => {};
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          let open = true;
          const send = (text: string) => {
            if (!open) return;
            try {
              controller.enqueue(enc.encode(text));
            } catch {
              cleanup();
            }
          };
          const keepalive = setInterval(() => send(": keepalive\n\n"), LIVE_KEEPALIVE_MS);
          const unsubscribe = deps.messageFeed.subscribe(
            accountId,
            (c) => send(`event: message\ndata: ${JSON.stringify({ source: c.source, at: new Date(c.at).toISOString() })}\n\n`),
            () => {
              cleanup();
              try {
                controller.close();
              } catch {}
            },
          );
          cleanup = () => {
            if (!open) return;
            open = false;
            clearInterval(keepalive);
            unsubscribe();
          };
          request.signal.addEventListener("abort", () => cleanup());
          send("retry: 3000\n: connected\n\n");
        },
        cancel() {
          cleanup();
        },
      });
      return new Response(stream, {
        headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" },
      });
    },
    { permission: "messages.read", rateLimit: "api-key", response: { 200: LiveStream }, detail: { summary: "Live changes of the account's messages as Server-Sent Events (the dashboard's Messages page)", tags: ["Dashboard"] } },
  );
}

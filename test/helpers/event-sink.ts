/**
 * The outbound events an owner's receiver gets, in the order the server made them: an endpoint
 * subscribed through the API (POST /v1/webhook-endpoints) to a receiver in this process, whose
 * delivery log (GET /v1/webhook-endpoints/:id/deliveries, in delivery-id order) gives the order
 * and whose received bodies give the content. Deliveries run concurrently, so arrival order is
 * not the order; the log is. A test reads events here instead of the events table.
 * The server must allow private webhook URLs (`allowPrivateWebhookUrls: true`).
 */
import { expectStatus, type TestServer } from "./server";

export interface DeliveredEvent {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

export interface EventSink {
  endpointId: string;
  /**
   * Every event delivered so far, oldest first, once each logged delivery has arrived and the log
   * has stayed the same for a moment (the server fans events out to endpoints after the commit);
   * with `until`, waits (up to 10 s) for the events to satisfy it first.
   */
  events(until?: (events: DeliveredEvent[]) => boolean): Promise<DeliveredEvent[]>;
  stop(): void;
}

export async function eventSink(ts: TestServer, types: string[] = ["*"], key = ts.adminKey): Promise<EventSink> {
  const got = new Map<string, DeliveredEvent>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = (await req.json()) as DeliveredEvent;
      got.set(req.headers.get("webhook-id") ?? body.id, body);
      return new Response("ok");
    },
  });
  const endpoint = (await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", key, json: { url: `http://127.0.0.1:${server.port}/`, events: types, allowInsecure: true } }), 201)).data.endpoint;
  const logged = async (): Promise<string[]> => {
    const ids: Array<{ id: number; eventId: string }> = [];
    for (let page = 1; ; page++) {
      const d = (await expectStatus(await ts.api(`/webhook-endpoints/${endpoint.id}/deliveries?limit=100&page=${page}`, { key }), 200)).data;
      ids.push(...d.deliveries);
      if (page >= d.pagination.totalPages) break;
    }
    return ids.sort((a, b) => a.id - b.id).map((d) => d.eventId);
  };
  return {
    endpointId: endpoint.id,
    async events(until) {
      let last = "";
      let steadySince = Date.now();
      for (const deadline = Date.now() + 10_000; ; await Bun.sleep(15)) {
        const ids = await logged();
        const all = ids.every((id) => got.has(id));
        const list = all ? ids.map((id) => got.get(id)!) : [];
        const key = ids.join(",");
        if (key !== last) [last, steadySince] = [key, Date.now()];
        if (all && (!until || until(list)) && Date.now() - steadySince >= 150) return list;
        if (Date.now() > deadline) {
          if (all) return list;
          throw new Error(`events not all delivered within 10 s: ${ids.filter((id) => !got.has(id)).length} of ${ids.length} missing`);
        }
      }
    },
    stop: () => server.stop(true),
  };
}

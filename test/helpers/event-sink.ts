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
  /** How many events of this type the endpoint's delivery log lists, delivered yet or not (one made at a future clock waits for it). */
  logged(type: string): Promise<number>;
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
    async logged(type) {
      const count = async () => (await expectStatus(await ts.api(`/webhook-endpoints/${endpoint.id}/deliveries?eventType=${encodeURIComponent(type)}`, { key }), 200)).data.pagination.total as number;
      // The fan-out to endpoints runs after the commit: wait for the log to list one, then a moment more for any other.
      for (const deadline = Date.now() + 10_000; (await count()) === 0 && Date.now() < deadline; ) await Bun.sleep(15);
      await Bun.sleep(150);
      return count();
    },
    stop: () => server.stop(true),
  };
}

#!/usr/bin/env bun
/**
 * A webhook receiver for the outbound-event tests, run as its own process. Verifies every
 * delivery with the `standardwebhooks` package, the way an owner's receiver would.
 *
 *   bun test/helpers/event-receiver.ts   → prints "READY <port>"
 *   POST /config {secret, failFirst?, mode?: "accept" | "hang"}   set before deliveries start
 *   GET  /state → {tries: {id: n}, accepted: [ids in order], invalid: n, bodies: {id: the accepted body}}
 *
 * failFirst: answer 500 to the first N tries of each webhook-id. mode "hang": never answer
 * (the sender's attempt stays in flight) until the mode goes back to "accept".
 */
import { Webhook } from "standardwebhooks";

let wh: Webhook | null = null;
let failFirst = 0;
let mode: "accept" | "hang" = "accept";
const tries: Record<string, number> = {};
const accepted: string[] = [];
const bodies: Record<string, unknown> = {};
const seen = new Set<string>();
let invalid = 0;
const hung: Array<() => void> = [];

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/config") {
      const c = (await req.json()) as { secret?: string; failFirst?: number; mode?: "accept" | "hang" };
      if (c.secret) wh = new Webhook(c.secret);
      if (c.failFirst !== undefined) failFirst = c.failFirst;
      if (c.mode) mode = c.mode;
      if (mode === "accept") for (const release of hung.splice(0)) release();
      return Response.json({ ok: true });
    }
    if (url.pathname === "/state") return Response.json({ tries, accepted, invalid, bodies });
    const body = await req.text();
    const headers = Object.fromEntries(req.headers);
    try {
      if (!wh) throw new Error("no secret configured");
      wh.verify(body, headers);
    } catch {
      invalid++;
      return new Response("bad signature", { status: 400 });
    }
    const id = headers["webhook-id"];
    if (mode === "hang") {
      await new Promise<void>((r) => hung.push(r));
      return new Response("released", { status: 503 });
    }
    tries[id] = (tries[id] ?? 0) + 1;
    if (tries[id] <= failFirst) return new Response("try again", { status: 500 });
    // Dedupe on webhook-id, as receivers are told to.
    if (!seen.has(id)) {
      seen.add(id);
      accepted.push(id);
      bodies[id] = JSON.parse(body);
    }
    return new Response("ok");
  },
});
console.log(`READY ${server.port}`);

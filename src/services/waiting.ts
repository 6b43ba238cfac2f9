/**
 * Why a queued text is not out yet (GET /v1/messages/{id} `waiting`), in the sending rules' own
 * terms: read from the phones' capacity (services/sending-capacity.ts), never changing it.
 */
import { partsOf, type WaitReason } from "../domain/sending-budget";
import { slotsOf } from "./device-limits";
import type { FleetPhone, SendingCapacity } from "./sending-capacity";

/** Why a queued text is not out yet (GET /v1/messages/{id} `waiting`). */
export interface Waiting {
  reason: "scheduled" | "quiet-hours" | "no-phone" | "phone-paused" | "phone-budget" | "new-recipient-limit" | "in-queue";
  until: string | null;
  words: string;
}

const WAIT_WORDS: Record<Waiting["reason"], string> = {
  scheduled: "Scheduled to go later.",
  "quiet-hours": "Waiting for the end of quiet hours.",
  "no-phone": "Waiting for a phone: none is connected. Open the SMSGate app on your phone and check it is online.",
  "phone-paused": "Its phone is paused after a problem sending; it goes once the phone resumes, or from another phone.",
  "phone-budget": "Waiting so the phone stays within its sending limits (Android's and the carrier's).",
  "new-recipient-limit": "Waiting: the phone has texted as many new numbers as its SIM safely can for now.",
  "in-queue": "Next in line: it goes after the texts ahead of it.",
};

/**
 * Why a queued, unleased text waits, in the rules' own terms (the first that holds): its time has
 * not come, no phone is connected, its phone is paused, or no phone's budget has room for it yet.
 */
export function waitingOf(
  capacity: SendingCapacity,
  fleet: FleetPhone[],
  m: { accountId: string; recipient: string; content: string; scheduledFor: number; quiet: boolean },
  now: number,
  estimate: () => number,
): Waiting {
  const iso = (ms: number) => new Date(ms).toISOString();
  const said = (reason: Waiting["reason"], until: number | null): Waiting => ({ reason, until: until === null ? null : iso(until), words: WAIT_WORDS[reason] });
  if (m.scheduledFor > now) return said(m.quiet ? "quiet-hours" : "scheduled", m.scheduledFor);
  const online = fleet.filter((p) => p.online);
  if (!online.length) return said("no-phone", null);
  const sticky = capacity.senderOf(m.accountId, m.recipient);
  const own = sticky ? online.find((p) => p.device.id === sticky.deviceId) : undefined;
  const candidates = own ? [own] : online;
  if (own && sticky) {
    const p = capacity.blocking(own.device.id, sticky.slot, now);
    if (p) return said("phone-paused", p.until);
  }
  const parts = partsOf(m.content);
  let best: { reason: WaitReason; until: number } | null = null;
  for (const p of candidates) {
    for (const slot of slotsOf(p.device)) {
      if (capacity.blocking(p.device.id, slot, now)) continue;
      const f = capacity.fits(p.device, slot, parts, m.recipient, now);
      if (f.ok) return said("in-queue", estimate());
      if (!best || f.until < best.until) best = f;
    }
  }
  if (!best) return said("phone-paused", null);
  return said(best.reason, best.until);
}

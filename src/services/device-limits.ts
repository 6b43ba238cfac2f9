/**
 * A phone's own sending limits and its SIMs' (PATCH /v1/devices/<id> `{limits, sims}`), and the
 * app's own sending settings kept within the budget (docs/phones.md, "How fast a phone sends").
 * The budget's rules are domain/sending-budget.ts; their state, services/sending-capacity.ts.
 */
import type { FieldError } from "../domain/submission";
import { parseLimits, type SendingLimits } from "../domain/sending-budget";
import type { PhoneSettings } from "../domain/smsgate-settings";
import type { DeviceLimitsDoc, DeviceRow } from "../db/stores/devices";
import type { LimitsOverride } from "../domain/sending-budget";

/** SIM slots a phone may name (SMSGate's simNumber). */
export const SIM_SLOT_MAX = 8;

/** The account's `sending` settings (GET/PUT /v1/account/settings). */
export interface SendingSettings {
  limits: LimitsOverride;
  stickyMoveAfterMinutes: number;
}

export type { DeviceLimitsDoc };

/**
 * The SIM slots a phone sends from: the app's SIM cards when it has two or more (SMSGate's
 * `simNumber`, 1-based), else 0 — the phone's own default SIM, no `simNumber` sent.
 */
export function slotsOf(device: Pick<DeviceRow, "simCards">): number[] {
  const sims = device.simCards;
  if (sims.length < 2) return [0];
  return sims.map((s, i) => {
    const o = typeof s === "object" && s !== null ? (s as Record<string, unknown>) : {};
    // The app's SimCard: simNumber is 1-based, slotIndex 0-based.
    const n = typeof o.simNumber === "number" ? o.simNumber : typeof o.slotIndex === "number" ? o.slotIndex + 1 : NaN;
    return Number.isInteger(n) && n >= 1 && n <= 8 ? n : i + 1;
  });
}

/**
 * Applies PATCH /v1/devices/<id> `limits` and `sims` to the stored document; errors are pushed
 * (field named: `limits.partsPerHour`, `sims[0].slot`), and null is returned when there is one.
 */
export function patchDeviceLimits(doc: DeviceLimitsDoc, limits: unknown, sims: unknown, errs: FieldError[]): DeviceLimitsDoc | null {
  const before = errs.length;
  const next: DeviceLimitsDoc = { limits: { ...doc.limits }, sims: doc.sims.map((s) => ({ ...s })) };
  if (limits !== undefined) {
    const r = parseLimits(limits, "limits");
    if (!r.ok) errs.push(...r.errors);
    else next.limits = limits === null ? {} : { ...next.limits, ...r.limits, ...nullsOf(limits) };
  }
  if (sims !== undefined) {
    if (!Array.isArray(sims) || sims.length > SIM_SLOT_MAX) {
      errs.push({ field: "sims", message: `sims must be a list of at most ${SIM_SLOT_MAX} {slot, limits}`, requirement: "array", provided: Array.isArray(sims) ? `${sims.length} items` : typeof sims });
    } else {
      sims.forEach((item, i) => {
        const f = `sims[${i}]`;
        if (typeof item !== "object" || item === null || Array.isArray(item)) {
          errs.push({ field: f, message: `${f} must be {slot, limits}`, requirement: "object", provided: typeof item });
          return;
        }
        const o = item as Record<string, unknown>;
        const slot = o.slot;
        if (typeof slot !== "number" || !Number.isInteger(slot) || slot < 1 || slot > SIM_SLOT_MAX) {
          errs.push({ field: `${f}.slot`, message: `slot must be the SIM's number, 1 to ${SIM_SLOT_MAX}`, requirement: `integer 1-${SIM_SLOT_MAX}`, provided: slot ?? null });
          return;
        }
        if (!Object.hasOwn(o, "limits")) {
          errs.push({ field: `${f}.limits`, message: "limits is required (null removes the SIM's own limits)", requirement: "object or null", provided: null });
          return;
        }
        const r = parseLimits(o.limits, `${f}.limits`);
        if (!r.ok) return void errs.push(...r.errors);
        const at = next.sims.findIndex((s) => s.slot === slot);
        const merged = o.limits === null ? {} : { ...(at >= 0 ? next.sims[at].limits : {}), ...r.limits, ...nullsOf(o.limits) };
        for (const k of Object.keys(merged)) if ((merged as Record<string, unknown>)[k] === undefined) delete (merged as Record<string, unknown>)[k];
        if (at >= 0) next.sims.splice(at, 1);
        if (Object.keys(merged).length) next.sims.push({ slot, limits: merged });
      });
      next.sims.sort((a, b) => a.slot - b.slot);
    }
  }
  for (const k of Object.keys(next.limits)) if ((next.limits as Record<string, unknown>)[k] === undefined) delete (next.limits as Record<string, unknown>)[k];
  return errs.length > before ? null : next;
}

/** Keys sent as null: back to the level above (undefined, dropped when stored). */
function nullsOf(v: unknown): Record<string, undefined> {
  const out: Record<string, undefined> = {};
  if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) if (x === null) out[k] = undefined;
  return out;
}

/**
 * The app's own sending settings never allow more than the budget (docs/phones.md): its
 * per-period cap at most the budget's for that period, its pause at least the budget's spacing.
 */
export function clampToBudget(m: PhoneSettings["messages"], b: SendingLimits): PhoneSettings["messages"] {
  const out = { ...m } as PhoneSettings["messages"] & Record<string, unknown>;
  const cap: Record<string, number> = { PerMinute: b.partsPerMinute, PerHour: b.partsPerHour, PerDay: b.partsPerDay };
  const period = typeof out.limit_period === "string" ? out.limit_period : "Disabled";
  if (!(period in cap)) {
    out.limit_period = "PerMinute";
    out.limit_value = b.partsPerMinute;
  } else out.limit_value = Math.min(typeof out.limit_value === "number" ? out.limit_value : cap[period], cap[period]);
  const min = Math.max(typeof out.send_interval_min === "number" ? out.send_interval_min : 0, b.spacingSeconds.min);
  out.send_interval_min = min;
  out.send_interval_max = Math.max(typeof out.send_interval_max === "number" ? out.send_interval_max : 0, min);
  return out;
}

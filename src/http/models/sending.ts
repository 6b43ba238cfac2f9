/**
 * Models of the sending budgets (docs/phones.md, "How fast a phone sends"): the limits as
 * shown, and a phone's or SIM's capacity left in each window. Bodies that set limits are
 * checked by domain/sending-budget.ts (parseLimits), which names the exact field at fault.
 */
import { t } from "elysia";
import { NullableTimestamp } from "./common";

const Count = t.Integer({ minimum: 0 });

export const SendingLimits = t.Object({
  partsPerMinute: t.Integer({ minimum: 1, description: "SMS parts a minute (a long text counts each part; Android allows an app 30)" }),
  partsPerHour: t.Integer({ minimum: 1 }),
  partsPerDay: t.Integer({ minimum: 1 }),
  newRecipientsPerDay: t.Integer({ minimum: 1, description: "distinct numbers not texted in the last 24 hours" }),
  newRecipientsPerMonth: t.Integer({ minimum: 1, description: "distinct numbers not texted in the last 30 days" }),
  spacingSeconds: t.Object({ min: Count, max: Count }, { description: "a random pause between two texts of one phone" }),
});

export const SendingLimitsOverride = t.Partial(SendingLimits);

/**
 * A body's limits: an object (or null: back to the level above). Each key's value is checked by
 * the domain (parseLimits), which names the exact field and says why; the document shows the types.
 */
const LimitsShape = t.Object(
  {
    partsPerMinute: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
    partsPerHour: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "at least partsPerMinute" })),
    partsPerDay: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "at least partsPerHour" })),
    newRecipientsPerDay: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
    newRecipientsPerMonth: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "at least newRecipientsPerDay" })),
    spacingSeconds: t.Optional(t.Union([t.Object({ min: t.Integer({ minimum: 0 }), max: t.Integer({ minimum: 0 }) }, { description: "min ≤ max" }), t.Null()])),
  },
  { additionalProperties: false },
);

/**
 * A body's limits: an object (or null: back to the level above). Open at run time and checked by
 * the domain (parseLimits), which names the exact field and says why (a union here would be
 * coerced or reported as a whole); the document shows the shape it accepts.
 */
export const LimitsInput = t.Unknown({
  "x-type": t.Union([LimitsShape, t.Null()]),
  description: "sending limits; a key set to null, or the whole object null, goes back to the level above",
});

export const SimLimitsInput = t.Array(t.Unknown({ description: "{slot: 1-8 (its SMSGate simNumber), limits: {…} or null to remove}" }), {
  description: "a SIM's own limits, on top of the phone's",
});

const WindowCapacity = {
  limits: SendingLimits,
  used: t.Object({ partsLastMinute: Count, partsLastHour: Count, partsLastDay: Count, newRecipientsLastDay: Count, newRecipientsLastMonth: Count }),
  left: t.Object({ partsThisMinute: Count, partsThisHour: Count, partsToday: Count, newRecipientsToday: Count, newRecipientsThisMonth: Count }),
};

export const Capacity = t.Object({
  ...WindowCapacity,
  pausedUntil: NullableTimestamp,
  pauseReason: t.Union([t.String(), t.Null()], { description: "android-limit, no-service, radio-off or repeated-failures" }),
  nextTextAt: NullableTimestamp,
  sims: t.Array(
    t.Object({
      slot: t.Integer({ minimum: 0, description: "the SIM's number (SMSGate simNumber); 0: the phone's only or default SIM" }),
      ...WindowCapacity,
      pausedUntil: NullableTimestamp,
      pauseReason: t.Union([t.String(), t.Null()]),
    }),
  ),
});

export const DeviceLimits = t.Object({
  limits: SendingLimitsOverride,
  sims: t.Array(t.Object({ slot: t.Integer({ minimum: 1 }), limits: SendingLimitsOverride })),
});

/** Why a queued message is not out yet, and until when (null: not known). */
export const Waiting = t.Object({
  reason: t.String({ description: "phone-budget, new-recipient-limit, quiet-hours, scheduled, no-phone, phone-paused or in-queue" }),
  until: NullableTimestamp,
  words: t.String({ description: "the same in plain words" }),
});

export const Estimate = t.Object({
  basis: t.Union([t.Literal("connected-phones"), t.Literal("no-phone-connected")], { description: "no-phone-connected: computed as if the account's phones were connected" }),
});

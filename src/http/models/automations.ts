import { t } from "elysia";
import { boolQuery, checked, Envelope, EnumQuery, PageInfo, PageQuery, Timestamp, NullableTimestamp, NullableString, literals } from "./common";
import { BroadcastSegment } from "./broadcasts";
import { CONTACT_STATUSES } from "../../domain/contact-update";

const HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$";
const Count = t.Integer({ minimum: 0 });

/** A step as posted and as shown; checked by domain/automation-steps.ts (every problem at once, naming the step). */
export const AutomationStep = t.Object(
  {
    template: t.String({ minLength: 1, maxLength: 1600, description: "the text; the form's template rules, {{x | fallback}} included" }),
    delay: t.Optional(t.String({ description: "after the submission (or the start): 30m, 2h, 2d, 1w; days and weeks are calendar days in the form's zone" })),
    relativeTo: t.Optional(t.String({ description: "instead of delay: a date field of the form" })),
    offset: t.Optional(t.String({ description: "with relativeTo: -1d (the day before), 0d (default), 2h…" })),
    sendAt: t.Optional(t.String({ pattern: HHMM, description: "HH:MM in the contact's own time zone when known, else the form's: the step goes at that time of day (date steps default to 09:00)" })),
  },
  { additionalProperties: true },
);

export const AutomationBody = t.Object(
  {
    name: checked(t.String({ minLength: 1, maxLength: 200 }), "what the owner calls it, 1-200 characters"),
    formId: checked(t.String(), "the form whose submissions start a run"),
    isActive: t.Optional(checked(t.Boolean(), "default true; false stops every active run")),
    steps: checked(t.Array(AutomationStep, { minItems: 1, maxItems: 20 }), "1-20 steps: {template, delay | relativeTo + offset, sendAt?}"),
    stopOnReply: t.Optional(checked(t.Boolean(), "a text from the contact stops the run; default true, but false for an automation made only of date-relative steps (a reminder is not cancelled by a thank-you)")),
    stopOnStatus: t.Optional(checked(t.Array(literals(CONTACT_STATUSES)), "contact statuses that stop the run, e.g. [\"converted\"]")),
    restartOnResubmit: t.Optional(checked(t.Boolean(), "default false: a new submission while a run is active is ignored; true: it starts the run again")),
  },
  { "x-required": ["name", "formId", "steps"] },
);

/** PUT: the fields given replace the stored ones. */
export const AutomationUpdateBody = t.Object(
  {
    name: t.Optional(AutomationBody.properties.name),
    formId: t.Optional(AutomationBody.properties.formId),
    isActive: AutomationBody.properties.isActive,
    steps: t.Optional(AutomationBody.properties.steps),
    stopOnReply: AutomationBody.properties.stopOnReply,
    stopOnStatus: AutomationBody.properties.stopOnStatus,
    restartOnResubmit: AutomationBody.properties.restartOnResubmit,
  },
);

export const AutomationListQuery = t.Object(PageQuery);

export const RunListQuery = t.Object({
  ...PageQuery,
  status: EnumQuery(["active", "completed", "stopped"], "only runs in this state"),
  contactId: t.Optional(t.String({ maxLength: 200, description: "only this contact's runs" })),
});

export const StartBody = t.Object(
  {
    segment: t.Optional(checked(BroadcastSegment, "which contacts, as a broadcast's segment: {status?, tags? (all of them), formId?, createdAfter?, createdBefore?, search?}; none = every contact")),
    dryRun: t.Optional(checked(t.Boolean(), "true: count who would start and who is skipped, start nothing")),
  },
);

export const StartQuery = t.Object({ dryRun: t.Optional(boolQuery("true: count who would start and who is skipped, start nothing")) });

// ---------------------------------------------------------------------------------------------
// Answers

export const Automation = t.Object(
  {
    id: t.String(),
    name: t.String(),
    formId: t.String(),
    isActive: t.Boolean(),
    steps: t.Array(AutomationStep),
    stopOnReply: t.Boolean(),
    stopOnStatus: t.Array(literals(CONTACT_STATUSES)),
    restartOnResubmit: t.Boolean(),
    runs: t.Object(
      {
        active: Count,
        completed: Count,
        stopped: Count,
        stoppedBy: t.Object(
          { replied: Count, "opted-out": Count, status: Count, "contact-deleted": Count, "automation-off": Count, restarted: Count, "stopped-by-hand": Count },
          { description: "stopped runs by reason: the contact replied, opted out, reached a stopOnStatus status (e.g. converted), was deleted; the automation was turned off; a new submission restarted it; the owner stopped it", additionalProperties: true },
        ),
      },
      { description: "runs of this automation by state" },
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
);

export const AutomationRun = t.Object(
  {
    id: t.String(),
    automationId: t.String(),
    contactId: t.String(),
    automation: t.Optional(
      t.Object({ name: t.String(), deleted: t.Boolean() }, { description: "in GET /v1/contacts/<id>: the automation's name, and whether it was deleted since (its page is gone)" }),
    ),
    contact: t.Optional(
      t.Union([t.Object({ firstName: NullableString, lastName: NullableString, phoneNumber: t.String() }), t.Null()], {
        description: "in GET /v1/automations/<id>/runs: who the run is for; null once the contact is deleted",
      }),
    ),
    status: literals(["active", "completed", "stopped"]),
    stoppedReason: t.Union([literals(["replied", "opted-out", "status", "contact-deleted", "automation-off", "restarted", "stopped-by-hand"]), t.Null()], {
      description: "why it stopped: the contact replied, opted out, reached a stopOnStatus status, was deleted; the automation was turned off or deleted; a new submission restarted it; the owner stopped it (POST …/runs/<runId>/stop)",
    }),
    startedAt: Timestamp,
    finishedAt: NullableTimestamp,
    steps: t.Array(
      t.Object(
        {
          index: Count,
          scheduledFor: NullableTimestamp,
          messageId: NullableString,
          status: literals(["scheduled", "sent", "failed", "cancelled", "skipped"]),
          skipped: t.Union([literals(["past", "no-date", "recipient-limit", "quota"]), t.Null()], {
            description: "why no message: its time had passed, the contact has no such date, the number's daily limit, the monthly quota",
          }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

export const AutomationAnswer = Envelope(t.Object({ automation: Automation }));
export const AutomationListAnswer = Envelope(t.Object({ automations: t.Array(Automation), pagination: PageInfo }));
export const RunListAnswer = Envelope(t.Object({ runs: t.Array(AutomationRun), pagination: PageInfo }));
export const RunParams = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }), runId: t.String({ minLength: 1, maxLength: 200 }) });
export const RunStopAnswer = Envelope(
  t.Object({ run: AutomationRun, changed: t.Boolean({ description: "false: the run had already finished or stopped (or was being stopped); nothing changed" }) }),
);

const Skipped = t.Object(
  { "opted-out": Count, status: Count, "no-consent": Count, "already-running": Count },
  { description: "contacts of the segment left out, by reason (RUN_SKIP_REASONS: no other key)" },
);

export const StartPreviewAnswer = Envelope(t.Object({ dryRun: t.Literal(true), contacts: Count, starting: Count, skipped: Skipped }), {
  description: "Dry run: how many contacts would start and who is skipped and why; nothing started",
});
export const StartAcceptedAnswer = Envelope(t.Object({ dryRun: t.Literal(false), startId: t.String(), contacts: Count, starting: Count, skipped: Skipped }), {
  description: "Accepted; the runs are being created",
});

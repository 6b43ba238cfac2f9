/**
 * Automations: the list (runs by state, how many replied and converted), the builder (steps with a
 * time line in plain words and a live preview of each text), the runs, "Start for existing
 * contacts" (a dry-run count, then a second click). docs/api-decisions.md, "Dashboard: Automations";
 * the owner's guide is docs/automations.md.
 */
import { Fragment } from "preact";
import { useEffect } from "preact/hooks";
import { useComputed, useSignal } from "@preact/signals";
import { api, can, errorText, fieldErrorsOf } from "../api";
import { useResource } from "../resource";
import { FormSelect, useFormChoices } from "../components/FormPicker";
import { act } from "../act";
import type { Answer, Query } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { navigate, path } from "../router";
import { renderTemplate } from "../../src/domain/template";
import { DEFAULT_DATE_SEND_AT, describeStepTime, parseDuration } from "../../src/domain/automation-time";
import { TextSize } from "../components/TextSize";
import { InsertField } from "../components/InsertField";
import { Confirm } from "../components/Confirm";
import { errAttrs, FieldError, type ApiFieldErrors } from "../components/FieldError";
import { Pager } from "../components/Pager";
import { LiveBadge, useLiveMessages } from "../live";
import { CONTACT_STATUSES, SegmentFields, segmentOf, type SegmentDraft } from "../components/SegmentFields";
import { CardTable } from "../components/CardTable";
import { RUN_STATUS_WORDS, stepLine, stoppedBecause } from "../automation-words";
import { nameOf } from "../contact-names";
import { KeywordRepliesPage } from "./settings-keywords";

type Automation = Answer<"/v1/automations/{id}">["data"]["automation"];
type Step = Automation["steps"][number];
type Run = Answer<"/v1/automations/{id}/runs">["data"]["runs"][number];
type FormInfo = { id: string; name: string; fields: Array<{ name: string; type: string; label?: string }>; settings: { timezone?: string } };

const enc = encodeURIComponent;
const UNITS: Array<[string, string]> = [
  ["m", "minutes"],
  ["h", "hours"],
  ["d", "days"],
  ["w", "weeks"],
];
/** Values the preview fills in: the texts read as a customer called Ann would get them. */
const SAMPLES: Record<string, string> = { firstName: "Ann", lastName: "Lee", fullName: "Ann Lee", email: "ann@example.com", phoneNumber: "+14155550123", source: "website", date: "2026-05-01", time: "10:00" };
const SAMPLE_DATE = "2026-05-01";
/** How much of a step's text the time line shows. */
const EXCERPT_CHARS = 32;


const OFF_WORDS = (going: number) =>
  `${going === 1 ? "The 1 person" : `The ${fmtNum(going)} people`} going through it stop, and their texts not sent yet are cancelled. New submissions do not start it until you turn it on again.`;

interface Question {
  title: string;
  body: string;
  action: string;
  go: () => unknown;
}
const offQuestion = (a: Automation, go: () => unknown): Question => ({ title: `Turn off ${a.name}?`, body: OFF_WORDS(a.runs.active), action: "Turn off", go });
const deleteQuestion = (a: Automation, go: () => unknown): Question => ({
  title: `Delete ${a.name}?`,
  body: "The people going through it stop, and their texts not sent yet are cancelled. Texts already sent stay in Messages.",
  action: "Delete automation",
  go,
});

/** The page's confirmation dialog, asking `question` (null: closed). */
function Ask(props: { question: { value: Question | null } }) {
  const q = props.question.value;
  return (
    <Confirm
      open={q !== null}
      title={q?.title ?? ""}
      body={q?.body ?? ""}
      action={q?.action ?? "OK"}
      onConfirm={() => {
        props.question.value = null;
        q?.go();
      }}
      onCancel={() => (props.question.value = null)}
    />
  );
}

export function Automations() {
  const id = path.value.split("/")[2];
  if (id === "new") return <AutomationEditor />;
  if (id === "keyword-replies") return <KeywordRepliesPage />;
  return id ? <AutomationEditor key={id} id={decodeURIComponent(id)} /> : <AutomationList />;
}

/** "3 replied", or why it is not counted. */
function repliedText(a: Automation): string {
  return a.stopOnReply ? fmtNum(a.runs.stoppedBy.replied) : "not counted (replies do not stop it)";
}
/** Runs stopped because the contact reached a stop status: "converted" when that is the status. */
function convertedText(a: Automation): string {
  if (!a.stopOnStatus.length) return "not counted (no status stops it)";
  const n = fmtNum(a.runs.stoppedBy.status);
  return a.stopOnStatus.length === 1 && a.stopOnStatus[0] === "converted" ? n : `${n} reached ${a.stopOnStatus.join(" or ")}`;
}

function AutomationList() {
  const forms = useFormChoices();
  const notice = useSignal("");
  /** The one question open (the dialog's title id is shared, so one Confirm per page). */
  const asking = useSignal<Question | null>(null);
  const { data: list, error, load } = useResource(() => api.get("/v1/automations", { query: { limit: 100 } }).then((r) => r.data.automations));
  async function setActive(a: Automation, isActive: boolean) {
    list.value = list.value?.map((x) => (x.id === a.id ? { ...x, isActive } : x)) ?? null;
    await act(
      notice,
      () => api.put("/v1/automations/{id}", { path: { id: a.id }, json: { isActive } }),
      () => (isActive ? `${a.name} is on: new submissions start it.` : `${a.name} is off: its runs stopped and their waiting texts were cancelled.`),
      load,
    );
  }
  async function remove(a: Automation) {
    await act(notice, () => api.delete("/v1/automations/{id}", { path: { id: a.id } }), () => `${a.name} deleted; its waiting texts were cancelled.`, load);
  }
  const admin = can("automations.write");
  return (
    <section>
      <div class="page-head">
        <h1>Automations</h1>
        {admin ? (
          <a class="button-link" href="/automations/new">New automation</a>
        ) : null}
      </div>
      <p>Texts that go out by themselves after someone fills in a form — a thank-you, a review request, a reminder before the date they picked — and stop when the person answers.</p>
      {can("settings.read") ? (
        <p>
          <a href="/automations/keyword-replies">Keyword replies</a>: answer a word customers text, such as HOURS, with your own reply.
        </p>
      ) : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {list.value ? (
        list.value.length ? (
          <CardTable columns={["Automation", "Form", "People", "Replied", "Converted", "On", admin && "Actions"]}>
            {list.value.map((a) => (
              <tr key={a.id}>
                <td data-label="Automation">
                  <a href={`/automations/${enc(a.id)}`}>{a.name}</a>
                  <span class="hint"> · {a.steps.length === 1 ? "1 text" : `${a.steps.length} texts`}</span>
                </td>
                <td data-label="Form">{forms.value.find((f) => f.id === a.formId)?.name ?? "—"}</td>
                <td data-label="People">
                  {fmtNum(a.runs.active)} going · {fmtNum(a.runs.completed)} finished · {fmtNum(a.runs.stopped)} stopped
                </td>
                <td data-label="Replied">{repliedText(a)}</td>
                <td data-label="Converted">{convertedText(a)}</td>
                <td data-label="On">
                  {admin ? (
                  <input
                    type="checkbox"
                    aria-label={`${a.name} is on`}
                    checked={a.isActive}
                    onChange={(e) => {
                      const on = (e.target as HTMLInputElement).checked;
                      // Turning off stops everyone going through it: asked first (the box stays as it is until then).
                      if (on) setActive(a, true);
                      else ((e.target as HTMLInputElement).checked = true), (asking.value = offQuestion(a, () => setActive(a, false)));
                    }}
                  />
                  ) : a.isActive ? (
                    "on"
                  ) : (
                    "off"
                  )}
                </td>
                {admin ? (
                  <td class="actions" data-label="Actions">
                    <button type="button" class="secondary" aria-label={`Delete ${a.name}`} onClick={() => (asking.value = deleteQuestion(a, () => remove(a)))}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </CardTable>
        ) : (
          <p>No automations yet.{admin ? " Make one with “New automation”." : ""}</p>
        )
      ) : null}
      <Ask question={asking} />
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// The builder

interface StepDraft {
  template: string;
  when: "delay" | "date";
  /** The number of units (text, so a half-typed value is the API's to name). */
  amount: string;
  unit: string;
  relativeTo: string;
  direction: "before" | "after";
  /** "HH:MM" or "" (none). */
  sendAt: string;
}

/** What each stop rule does, with an example, in the builder's words. */
const STOP_EXAMPLES = {
  reply: 'For example, Ann texts back "Thanks!": the texts not sent yet are cancelled.',
  status: (st: string) =>
    st === "converted"
      ? "For example, you mark Ann converted after she orders: no more follow-ups."
      : st === "responded"
        ? "For example, Ann answers and her status moves to responded: the rest is cancelled."
        : st === "contacted"
          ? "For example, you mark Ann contacted after calling her: the texts not sent yet are cancelled."
          : `For example, you set Ann's status to ${st}: the texts not sent yet are cancelled.`,
};

const newStep = (): StepDraft => ({ template: "", when: "delay", amount: "1", unit: "d", relativeTo: "", direction: "before", sendAt: "10:00" });

function draftOf(s: Step): StepDraft {
  const d = parseDuration(s.delay ?? s.offset ?? "0d", true);
  return {
    template: s.template,
    when: s.relativeTo !== undefined ? "date" : "delay",
    amount: d ? String(d.n) : (s.delay ?? s.offset ?? "").replace(/^-/, ""),
    unit: d?.unit ?? "d",
    relativeTo: s.relativeTo ?? "",
    direction: d?.negative ? "before" : "after",
    sendAt: s.sendAt ?? "",
  };
}

function stepOf(d: StepDraft): Step {
  const amount = d.amount.trim();
  const step: Step = { template: d.template };
  if (d.when === "delay") step.delay = `${amount}${d.unit}`;
  else {
    step.relativeTo = d.relativeTo;
    step.offset = `${d.direction === "before" && Number(amount) !== 0 ? "-" : ""}${amount}${d.unit}`;
  }
  if (d.sendAt) step.sendAt = d.sendAt;
  return step;
}

/** "2 days after the form, at 10:00"; "1 day before appointment, at 09:00". */
export function whenText(step: Step, fields: FormInfo["fields"]): string {
  const valid = step.delay !== undefined ? parseDuration(step.delay, false) : parseDuration(step.offset ?? "0d", true);
  if (!valid || (step.relativeTo !== undefined && !step.relativeTo)) return "(the time is not set yet)";
  if (step.relativeTo === undefined) return describeStepTime(step);
  const f = fields.find((x) => x.name === step.relativeTo);
  return describeStepTime({ ...step, relativeTo: f?.label || step.relativeTo, sendAt: step.sendAt ?? DEFAULT_DATE_SEND_AT });
}

const excerpt = (text: string) => {
  const chars = [...text.trim()];
  if (chars.length <= EXCERPT_CHARS) return chars.join("");
  const cut = chars.slice(0, EXCERPT_CHARS).join("");
  const space = cut.lastIndexOf(" ");
  return (space > EXCERPT_CHARS / 2 ? cut.slice(0, space) : cut) + "…";
};

function previewText(template: string, form: FormInfo | null): string {
  const vars = new Map(Object.entries({ ...SAMPLES, formName: form?.name ?? "Your form" }));
  for (const f of form?.fields ?? []) if (!vars.has(f.name)) vars.set(f.name, f.type === "date" ? SAMPLE_DATE : `(${f.label || f.name})`);
  return renderTemplate(template, vars).content;
}

function AutomationEditor(props: { id?: string }) {
  const automation = useSignal<Automation | null>(null);
  const name = useSignal("");
  const formId = useSignal("");
  const steps = useSignal<StepDraft[]>([{ ...newStep(), template: "Thanks {{firstName}}! How did we do? {{reviewLink | https://g.page/r/yourshop}}", amount: "2" }]);
  const stopOnReply = useSignal(true);
  /** Whether the owner ticked or unticked "they reply" (else it follows the steps: docs/automations.md). */
  const replyTouched = useSignal(false);
  const stopOnStatus = useSignal<Automation["stopOnStatus"]>(["converted"]);
  const restartOnResubmit = useSignal(false);
  const isActive = useSignal(true);
  const error = useSignal("");
  const forms = useFormChoices({
    onLoad: (all) => {
      if (!props.id && !formId.value && all.length) formId.value = all[0].id;
    },
    onError: (message) => (error.value = message),
  });
  const form = useSignal<FormInfo | null>(null);
  const fieldErrors = useSignal<ApiFieldErrors>([]);
  const notice = useSignal("");
  const asking = useSignal<Question | null>(null);
  const admin = can("automations.write");

  useEffect(() => {
    if (props.id)
      api.get("/v1/automations/{id}", { path: { id: props.id } })
        .then((r) => show(r.data.automation))
        .catch((e) => (error.value = errorText(e)));
  }, [props.id]);
  // The chosen form's fields (for "Insert a field", date steps and the preview) and its zone.
  useEffect(() => {
    if (!formId.value) return;
    let gone = false;
    api.get("/v1/forms/{id}", { path: { id: formId.value } })
      .then((r) => !gone && (form.value = r.data.form))
      .catch(() => !gone && (form.value = null));
    return () => void (gone = true);
  }, [formId.value]);

  function show(a: Automation) {
    automation.value = a;
    name.value = a.name;
    formId.value = a.formId;
    steps.value = a.steps.map(draftOf);
    stopOnReply.value = a.stopOnReply;
    stopOnStatus.value = a.stopOnStatus;
    restartOnResubmit.value = a.restartOnResubmit;
    isActive.value = a.isActive;
  }
  const dateFields = useComputed(() => (form.value?.fields ?? []).filter((f) => f.type === "date"));
  // As the API decides when it is not told: only date steps → a reply does not stop it.
  const allDateSteps = steps.value.length > 0 && steps.value.every((st) => st.when === "date");
  useEffect(() => {
    if (!props.id && !replyTouched.value) stopOnReply.value = !allDateSteps;
  }, [allDateSteps]);
  const insertable = useComputed(() => {
    const own = (form.value?.fields ?? []).filter((f) => f.name).map((f) => [f.name, f.label || f.name] as const);
    const builtins = [
      ["firstName", "First name"],
      ["lastName", "Last name"],
      ["fullName", "Full name"],
      ["formName", "The form's name"],
    ] as const;
    return [...own, ...builtins.filter(([n]) => !own.some(([o]) => o === n))];
  });
  function setStep(i: number, patch: Partial<StepDraft>) {
    steps.value = steps.value.map((s, j) => (j === i ? { ...s, ...patch } : s));
  }
  const body = () => ({
    name: name.value.trim(),
    formId: formId.value,
    isActive: isActive.value,
    steps: steps.value.map(stepOf),
    stopOnReply: stopOnReply.value,
    stopOnStatus: stopOnStatus.value,
    restartOnResubmit: restartOnResubmit.value,
  });
  async function save(e: Event) {
    e.preventDefault();
    // Saving with "On" unticked stops everyone going through it: asked first.
    if (automation.value?.isActive && !isActive.value) {
      asking.value = { ...offQuestion(automation.value, saveNow), action: "Turn off and save" };
      return;
    }
    await saveNow();
  }
  async function saveNow() {
    error.value = "";
    notice.value = "";
    fieldErrors.value = [];
    try {
      const r = props.id ? await api.put("/v1/automations/{id}", { path: { id: props.id }, json: body() }) : await api.post("/v1/automations", { json: body() });
      if (!props.id) {
        navigate(`/automations/${enc(r.data.automation.id)}`, true);
        return;
      }
      show(r.data.automation);
      notice.value = "Automation saved. People already going through it keep the texts they were given; new runs follow the new steps.";
    } catch (err) {
      error.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
    }
  }
  async function remove() {
    if (!props.id) return;
    try {
      await api.delete("/v1/automations/{id}", { path: { id: props.id } });
      navigate("/automations");
    } catch (e) {
      error.value = errorText(e);
    }
  }

  const errs = fieldErrors.value;
  const fields = form.value?.fields ?? [];
  const drafts = steps.value;
  const zone = form.value?.settings?.timezone;
  return (
    <section>
      <p>
        <a href="/automations">← All automations</a>
      </p>
      <h1>Automations: {props.id ? automation.value?.name ?? "…" : "new automation"}</h1>
      <form class="editor" onSubmit={save}>
        <fieldset class="editor-main plain" disabled={!admin}>
          {!admin ? <p class="notice">Only an owner or an admin of the account can change an automation.</p> : null}
          <span class="field wide">
            <label for="auto-name">Name (for you)</label>
            <input id="auto-name" required maxLength={200} value={name.value} onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} {...errAttrs(errs, "name", "auto-name-error")} />
            <FieldError errors={errs} name="name" id="auto-name-error" />
          </span>
          <span class="field wide">
            <FormSelect
              id="auto-form"
              label="Starts when someone fills in"
              none="No forms yet"
              value={formId.value}
              forms={forms.value}
              onChange={(v) => (formId.value = v)}
              aria={errAttrs(errs, "formId", "auto-form-error", "auto-form-help")}
            />
            <small id="auto-form-help" class="hint">
              Times are in the form's time zone{zone ? ` (${zone})` : ""}.
            </small>
            <FieldError errors={errs} name="formId" id="auto-form-error" />
          </span>
          {drafts.map((d, i) => {
            const at = `steps[${i}]`;
            const text = previewText(d.template, form.value);
            const own = errs.filter((x) => x.field === at);
            return (
              <fieldset key={i} class="step">
                <legend>Text {i + 1}</legend>
                {own.length ? (
                  <small class="field-error" id={`step-${i}-error`}>
                    {own.map((x) => x.message).join(" ")}
                  </small>
                ) : null}
                <div class="step-when">
                  <span class="field">
                    <label for={`step-when-${i}`}>Text {i + 1} goes</label>
                    <select id={`step-when-${i}`} value={d.when} onChange={(e) => setStep(i, { when: (e.target as HTMLSelectElement).value as StepDraft["when"], relativeTo: d.relativeTo || dateFields.value[0]?.name || "" })}>
                      <option value="delay">after the form is filled in</option>
                      <option value="date" disabled={!dateFields.value.length && d.when !== "date"}>
                        around a date they gave{dateFields.value.length ? "" : " (the form has no date field)"}
                      </option>
                    </select>
                  </span>
                  <span class="field">
                    <label for={`step-amount-${i}`}>Text {i + 1}: how many</label>
                    <input
                      id={`step-amount-${i}`}
                      class="amount"
                      inputMode="numeric"
                      value={d.amount}
                      onInput={(e) => setStep(i, { amount: (e.target as HTMLInputElement).value })}
                      {...errAttrs(errs, d.when === "delay" ? `${at}.delay` : `${at}.offset`, `step-amount-${i}-error`)}
                    />
                    <FieldError errors={errs} name={d.when === "delay" ? `${at}.delay` : `${at}.offset`} id={`step-amount-${i}-error`} />
                  </span>
                  <span class="field">
                    <label for={`step-unit-${i}`}>Text {i + 1}: unit</label>
                    <select id={`step-unit-${i}`} value={d.unit} onChange={(e) => setStep(i, { unit: (e.target as HTMLSelectElement).value })}>
                      {UNITS.map(([v, t]) => (
                        <option key={v} value={v}>{t}</option>
                      ))}
                    </select>
                  </span>
                  {d.when === "date" ? (
                    <>
                      <span class="field">
                        <label for={`step-direction-${i}`}>Text {i + 1}: before or after</label>
                        <select id={`step-direction-${i}`} value={d.direction} onChange={(e) => setStep(i, { direction: (e.target as HTMLSelectElement).value as StepDraft["direction"] })}>
                          <option value="before">before</option>
                          <option value="after">after</option>
                        </select>
                      </span>
                      <span class="field">
                        <label for={`step-date-${i}`}>Text {i + 1}: the date</label>
                        <select id={`step-date-${i}`} value={d.relativeTo} onChange={(e) => setStep(i, { relativeTo: (e.target as HTMLSelectElement).value })} {...errAttrs(errs, `${at}.relativeTo`, `step-date-${i}-error`)}>
                          {dateFields.value.some((f) => f.name === d.relativeTo) ? null : <option value={d.relativeTo}>{d.relativeTo || "Choose…"}</option>}
                          {dateFields.value.map((f) => (
                            <option key={f.name} value={f.name}>{f.label || f.name}</option>
                          ))}
                        </select>
                        <FieldError errors={errs} name={`${at}.relativeTo`} id={`step-date-${i}-error`} />
                      </span>
                    </>
                  ) : null}
                  <span class="field">
                    <label for={`step-at-${i}`}>Text {i + 1}: at (time of day)</label>
                    <input id={`step-at-${i}`} type="time" value={d.sendAt} onInput={(e) => setStep(i, { sendAt: (e.target as HTMLInputElement).value })} {...errAttrs(errs, `${at}.sendAt`, `step-at-${i}-error`, `step-at-${i}-help`)} />
                    <small id={`step-at-${i}-help`} class="hint">
                      {d.when === "date" ? `Empty: ${DEFAULT_DATE_SEND_AT}.` : "Empty: the same time of day as the form."}
                    </small>
                    <FieldError errors={errs} name={`${at}.sendAt`} id={`step-at-${i}-error`} />
                  </span>
                </div>
                <span class="field wide">
                  <label for={`step-text-${i}`}>Text {i + 1}: message</label>
                  <textarea id={`step-text-${i}`} rows={3} maxLength={1600} required value={d.template} onInput={(e) => setStep(i, { template: (e.target as HTMLTextAreaElement).value })} {...errAttrs(errs, `${at}.template`, `step-text-${i}-error`)} />
                  <FieldError errors={errs} name={`${at}.template`} id={`step-text-${i}-error`} />
                </span>
                <InsertField id={`step-insert-${i}`} textareaId={`step-text-${i}`} value={d.template} onChange={(v) => setStep(i, { template: v })} fields={insertable.value} />
                <div class="step-preview">
                  <span class="label-text">Text {i + 1} as Ann gets it</span>
                  <blockquote class="sms" data-testid={`step-preview-${i}`}>{text}</blockquote>
                  <TextSize content={text} />
                </div>
                {drafts.length > 1 ? (
                  <button type="button" class="secondary" aria-label={`Remove text ${i + 1}`} onClick={() => (steps.value = drafts.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                ) : null}
              </fieldset>
            );
          })}
          <FieldError errors={errs.filter((x) => x.field === "steps")} name="steps" id="steps-error" />
          <p>
            <button type="button" class="secondary" disabled={drafts.length >= 20} onClick={() => (steps.value = [...drafts, newStep()])}>
              Add a text
            </button>
          </p>
          <fieldset class="choices">
            <legend>Stops by itself when</legend>
            <label>
              <input
                type="checkbox"
                checked={stopOnReply.value}
                aria-describedby="stop-reply-example"
                onChange={(e) => ((replyTouched.value = true), (stopOnReply.value = (e.target as HTMLInputElement).checked))}
              />{" "}
              they reply
            </label>
            <small class="hint" id="stop-reply-example">
              {STOP_EXAMPLES.reply}
              {allDateSteps ? " Off by default here: these texts are reminders about a date, and a thank-you should not cancel them." : ""}
            </small>
            {CONTACT_STATUSES.map((st) => (
              <Fragment key={st}>
                <label>
                  <input
                    type="checkbox"
                    checked={stopOnStatus.value.includes(st)}
                    aria-describedby={`stop-status-${st}-example`}
                    onChange={(e) => (stopOnStatus.value = (e.target as HTMLInputElement).checked ? [...stopOnStatus.value, st] : stopOnStatus.value.filter((x) => x !== st))}
                  />{" "}
                  their status becomes {st}
                </label>
                <small class="hint" id={`stop-status-${st}-example`}>
                  {STOP_EXAMPLES.status(st)}
                </small>
              </Fragment>
            ))}
            <small class="hint">It always stops when they reply STOP, when the contact is deleted, and when you turn it off.</small>
            <FieldError errors={errs} name="stopOnStatus" id="stop-status-error" />
          </fieldset>
          <label class="check">
            <input type="checkbox" checked={restartOnResubmit.value} onChange={(e) => (restartOnResubmit.value = (e.target as HTMLInputElement).checked)} /> Start over when they fill in the form again
          </label>
          <label class="check">
            <input type="checkbox" checked={isActive.value} onChange={(e) => (isActive.value = (e.target as HTMLInputElement).checked)} /> On: new submissions start it
          </label>
          {errs.length ? (
            <div class="error" role="alert">
              <p>The automation was not saved: {errs.length === 1 ? "one thing needs" : `${errs.length} things need`} a change (marked above).</p>
              <ul>
                {errs.map((x) => (
                  <li key={x.field + x.message}>{x.message}</li>
                ))}
              </ul>
            </div>
          ) : error.value ? (
            <p class="error" role="alert">{error.value}</p>
          ) : null}
          {admin ? (
            <p>
              <button type="submit">{props.id ? "Save automation" : "Create automation"}</button> <span aria-live="polite">{notice.value}</span>
            </p>
          ) : null}
        </fieldset>
        <aside class="preview" aria-labelledby="timeline-title">
          <h2 id="timeline-title">Time line</h2>
          <p class="hint">For someone who fills in {forms.value.find((f) => f.id === formId.value)?.name ?? "the form"}:</p>
          <ol class="time-line" aria-label="Time line">
            {drafts.map((d, i) => (
              <li key={i}>
                <strong>{whenText(stepOf(d), fields)}</strong> — {excerpt(previewText(d.template, form.value)) || "(no text yet)"}
              </li>
            ))}
          </ol>
        </aside>
      </form>
      {props.id && automation.value ? (
        <>
          {admin ? <StartForExisting automation={automation.value} forms={forms.value} /> : null}
          <RunList automation={automation.value} />
          {admin ? (
            <>
              <h2>Delete</h2>
              <p>
                <button type="button" class="secondary" onClick={() => (asking.value = deleteQuestion(automation.value!, remove))}>
                  Delete automation
                </button>
              </p>
            </>
          ) : null}
        </>
      ) : null}
      <Ask question={asking} />
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// Runs

const contactName = (r: Run) => {
  const c = r.contact;
  if (!c) return "Deleted contact";
  return nameOf(c) || c.phoneNumber;
};

function RunList(props: { automation: Automation }) {
  const status = useSignal<NonNullable<Query<"/v1/automations/{id}/runs">["status"]> | "">("");
  const page = useSignal(1);
  const id = props.automation.id;
  const { data, error, load } = useResource(
    () => {
      const query: Query<"/v1/automations/{id}/runs"> = { page: page.value, limit: 20, status: status.value || undefined };
      return Promise.all([api.get("/v1/automations/{id}/runs", { path: { id }, query }), api.get("/v1/automations/{id}", { path: { id } })]);
    },
    [id, props.automation.updatedAt, status.value, page.value],
  );
  const runs = useComputed(() => data.value?.[0].data.runs ?? null);
  const totalPages = useComputed(() => data.value?.[0].data.pagination.totalPages ?? 0);
  const total = useComputed(() => data.value?.[0].data.pagination.total ?? 0);
  /** The counts as of the last read (the builder above keeps what the owner is editing). */
  const counts = useComputed(() => data.value?.[1].data.automation ?? props.automation);
  /** The run whose "Stop" asks (null: none). */
  const stopping = useSignal<Run | null>(null);
  const notice = useSignal("");
  const admin = can("automations.write");
  async function stop(r: Run) {
    stopping.value = null;
    await act(
      notice,
      () => api.post("/v1/automations/{id}/runs/{runId}/stop", { path: { id: props.automation.id, runId: r.id } }),
      (res) => (res.data.changed ? `Stopped for ${contactName(r)}: their texts not sent yet are cancelled.` : `It had already ${res.data.run.status === "completed" ? "finished" : "stopped"} for ${contactName(r)}.`),
      load,
    );
  }
  // A submission, a text sent or a reply changes the runs: read them again.
  const live = useLiveMessages(load);
  const a = counts.value;
  return (
    <>
      <div class="page-head">
        <h2>People going through it</h2>
        <LiveBadge state={live.value} />
      </div>
      <p class="summary">
        {fmtNum(a.runs.active)} going · {fmtNum(a.runs.completed)} finished · {fmtNum(a.runs.stopped)} stopped · replied: {repliedText(a)} · converted: {convertedText(a)}
      </p>
      <div class="filters">
        <span class="field">
          <label for="runs-status">Show</label>
          <select id="runs-status" value={status.value} onChange={(e) => ((status.value = (e.target as HTMLSelectElement).value as typeof status.value), (page.value = 1))}>
            <option value="">everyone</option>
            <option value="active">going</option>
            <option value="completed">finished</option>
            <option value="stopped">stopped</option>
          </select>
        </span>
        <button type="button" class="secondary" onClick={load}>
          Refresh
        </button>
      </div>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {runs.value ? (
        runs.value.length ? (
          <CardTable columns={["Contact", "State", "Started", "Texts", admin && "Actions"]} caption={`People going through ${a.name}`}>
            {runs.value.map((r) => (
              <tr key={r.id}>
                <td data-label="Contact">{r.contact ? <a href={`/contacts/${enc(r.contactId)}`}>{contactName(r)}</a> : contactName(r)}</td>
                <td data-label="State">
                  {RUN_STATUS_WORDS[r.status]}
                  {r.stoppedReason ? <span class="reason-line">{stoppedBecause(r.stoppedReason)}</span> : null}
                </td>
                <td data-label="Started">{fmtDate(r.startedAt)}</td>
                <td data-label="Texts">
                  <ol class="run-steps">
                    {r.steps.map((s) => (
                      <li key={s.index}>{stepLine(s)}</li>
                    ))}
                  </ol>
                  {r.contact && r.steps.some((s) => s.messageId) ? (
                    <a href={`/messages?contactId=${enc(r.contactId)}`} aria-label={`See them in Messages: the texts to ${contactName(r)}`}>
                      See them in Messages
                    </a>
                  ) : null}
                </td>
                {admin ? (
                  <td class="actions" data-label="Actions">
                    {r.status === "active" ? (
                      <button
                        type="button"
                        class={stopping.value?.id === r.id ? "secondary out-of-sight" : "secondary"}
                        aria-label={`Stop for ${contactName(r)}`}
                        onClick={() => (stopping.value = r)}
                      >
                        Stop
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </CardTable>
        ) : (
          <p>{status.value ? "Nobody in this state." : "Nobody yet: a run starts when someone fills in the form."}</p>
        )
      ) : null}
      <Pager page={page.value} totalPages={totalPages.value} label="Pages of people" onPage={(p) => (page.value = p)} />
      <Confirm
        open={stopping.value !== null}
        titleId="stop-run-title"
        title={stopping.value ? `Stop ${a.name} for ${contactName(stopping.value)}?` : ""}
        body="Their texts from it that are not sent yet are cancelled; texts already sent stay in Messages. It starts again only if they fill in the form again."
        action="Stop automation"
        onConfirm={() => stopping.value && stop(stopping.value)}
        onCancel={() => (stopping.value = null)}
      />
      {total.value ? <p class="hint">{fmtNum(total.value)} in all.</p> : null}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Start for existing contacts

type StartCount = Answer<"/v1/automations/{id}/start", "post">["data"];
const LEFT_OUT_WORDS: Record<string, string> = {
  "opted-out": "opted out",
  status: "already in a status that stops it",
  "no-consent": "did not tick the form's consent box",
  "already-running": "already going through it",
};

function StartForExisting(props: { automation: Automation; forms: Array<{ id: string; name: string }> }) {
  const seg = useSignal<SegmentDraft>({ status: "", tags: "", formId: "", search: "" });
  const count = useSignal<StartCount | null>(null);
  const error = useSignal("");
  const fieldErrors = useSignal<ApiFieldErrors>([]);
  const notice = useSignal("");
  const busy = useSignal(false);
  const start = (dryRun: boolean) => api.post("/v1/automations/{id}/start", { path: { id: props.automation.id }, query: dryRun ? { dryRun } : undefined, json: { segment: segmentOf(seg.value) } });
  async function preview(e: Event) {
    e.preventDefault();
    error.value = "";
    notice.value = "";
    fieldErrors.value = [];
    busy.value = true;
    try {
      count.value = (await start(true)).data;
    } catch (err) {
      error.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
    } finally {
      busy.value = false;
    }
  }
  async function startNow() {
    busy.value = true;
    try {
      const r = await start(false);
      notice.value = `Starting for ${fmtNum(r.data.starting)} ${r.data.starting === 1 ? "contact" : "contacts"}; they appear below as their runs are made.`;
      count.value = null;
    } catch (err) {
      error.value = errorText(err);
    } finally {
      busy.value = false;
    }
  }
  const c = count.value;
  const leftOut = c ? Object.entries(c.skipped).filter(([, n]) => n > 0) : [];
  return (
    <details class="compose">
      <summary>Start for existing contacts</summary>
      <form class="start-form" onSubmit={preview}>
        <p class="hint">People already in your contacts go through it as if they had just filled in the form: the delays count from now.</p>
        <SegmentFields idPrefix="start" value={seg.value} forms={props.forms} errors={fieldErrors.value} onChange={(v) => ((seg.value = v), (count.value = null))} />
        {!props.automation.isActive ? <p class="notice">The automation is off: turn it on (and save) before starting it.</p> : null}
        <p>
          <button type="submit" class="secondary" disabled={busy.value}>
            Count who would start
          </button>
        </p>
      </form>
      <div aria-live="polite" data-testid="start-count">
        {c ? (
          <>
            <p>
              <strong>
                {fmtNum(c.starting)} of {fmtNum(c.contacts)} {c.contacts === 1 ? "contact" : "contacts"} would start.
              </strong>
            </p>
            {leftOut.length ? (
              <ul>
                {leftOut.map(([k, n]) => (
                  <li key={k}>
                    {fmtNum(n)} left out: {LEFT_OUT_WORDS[k] ?? k}
                  </li>
                ))}
              </ul>
            ) : null}
            {c.starting > 0 ? (
              <button type="button" disabled={busy.value} onClick={startNow}>
                Start for {fmtNum(c.starting)} {c.starting === 1 ? "contact" : "contacts"}
              </button>
            ) : null}
          </>
        ) : null}
        {notice.value ? <p>{notice.value}</p> : null}
      </div>
      {error.value && !fieldErrors.value.length ? <p class="error" role="alert">{error.value}</p> : null}
    </details>
  );
}

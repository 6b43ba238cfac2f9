import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText, fieldErrorsOf } from "../api";
import { noTextWords, RequestAnswers, type Request } from "./inbox";
import type { Answer, ConsentEntry, Contact } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { navigate } from "../router";
import { Confirm } from "../components/Confirm";
import { ContactForm, nameOf } from "./contact-form";
import { RUN_STATUS_WORDS, stepLine, stoppedBecause } from "../automation-words";
import { fmtPhone } from "../phone-format";

type ContactRun = Answer<"/v1/contacts/{id}">["data"]["automationRuns"][number];

/**
 * A contact's page: what is known, every field editable, opting out or back in by hand with a
 * reason (recorded with who and when), the consent history, deleting with a confirmation that
 * says what goes with it, the automations they are going through (with "Stop" for one), and the
 * timeline (docs/contacts.md).
 */
/** What the contacts list says next (a contact deleted from its page); read once. */
let flash = "";
export function takeFlash(): string {
  const f = flash;
  flash = "";
  return f;
}

/** A detail with no form label, as a person would write its name: "preferredDate" → "Preferred date". */
export function detailName(key: string): string {
  const words = key.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}

export function ContactPage(props: { id: string }) {
  const c = useSignal<Contact | null>(null);
  const history = useSignal<Array<Record<string, any>>>([]);
  const total = useSignal(0);
  const consent = useSignal<ConsentEntry[]>([]);
  const runs = useSignal<ContactRun[]>([]);
  const requests = useSignal<Request[]>([]);
  /** The labels of the fields of the form that made the contact: its details are named by them. */
  const labels = useSignal<Map<string, string>>(new Map());
  const error = useSignal("");
  const notice = useSignal("");
  const editing = useSignal(0);
  const deleting = useSignal(false);
  async function load() {
    try {
      const id = props.id;
      const [r, h, k, q] = await Promise.all([
        api.get("/v1/contacts/{id}", { path: { id } }),
        api.get("/v1/contacts/{id}/messages", { path: { id }, query: { limit: 50 } }),
        api.get("/v1/contacts/{id}/consent-history", { path: { id }, query: { limit: 50 } }),
        api.get("/v1/submissions", { query: { contactId: id, limit: 50 } }),
      ]);
      requests.value = q.data.submissions;
      c.value = r.data.contact;
      runs.value = r.data.automationRuns;
      const formId = r.data.contact.formId;
      if (formId) {
        api.get("/v1/forms/{id}", { path: { id: formId } })
          .then((f) => (labels.value = new Map(f.data.form.fields.filter((x) => x.label).map((x) => [x.name, x.label as string]))))
          .catch(() => {});
      }
      history.value = h.data.messages;
      total.value = h.data.total;
      consent.value = k.data.entries;
      error.value = "";
    } catch (e) {
      error.value = errorText(e);
    }
  }
  useEffect(() => {
    c.value = null;
    load();
  }, [props.id]);

  async function remove() {
    deleting.value = false;
    try {
      await api.delete("/v1/contacts/{id}", { path: { id: props.id } });
      flash = `${who} deleted, with their texts and conversation.`;
      navigate("/contacts");
    } catch (e) {
      notice.value = errorText(e);
    }
  }

  const x = c.value;
  const who = x ? nameOf(x) || fmtPhone(x.phoneNumber) : "";
  const facts: Array<[string, string]> = x
    ? [
        ["Phone", fmtPhone(x.phoneNumber)],
        ["E-mail", x.email ?? "—"],
        ["Status", x.status],
        ["Tags", x.tags.join(", ") || "—"],
        ["Texting", x.optedOut ? `Opted out ${fmtDate(x.optedOutAt as string)}: no texts are sent` : "Allowed"],
        ["Added", describeAdded(x)],
        ["Last texted", fmtDate(x.lastContactedAt)],
        ["Last reply", fmtDate(x.lastResponseAt)],
        ["Time zone", x.timeZone ? `${x.timeZone} (quiet hours and reminders follow it)` : "The form's (or the number's country's)"],
        ...Object.entries(x.customFields ?? {}).map(([k, v]) => [labels.value.get(k) ?? detailName(k), String(v)] as [string, string]),
      ]
    : [];
  const goesWith =
    total.value === 0
      ? "They have no texts yet: only the contact is deleted. This cannot be undone."
      : `Their ${fmtNum(total.value)} text${total.value === 1 ? "" : "s"} (sent and received) and their conversation are deleted with them. This cannot be undone.`;
  return (
    <section>
      <p>
        <a href="/contacts">← All contacts</a>
      </p>
      <h1>Contacts: {x ? who : "…"}</h1>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {x ? (
        <>
          <dl class="facts">
            {facts.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          {x.notes ? <p class="contact-notes">Notes: {x.notes}</p> : null}
          {can("contacts.write") ? (
            <>
              <h2>Change details</h2>
              <ContactForm
                key={`${x.id}-${editing.value}`}
                contact={x}
                submitLabel="Save changes"
                onSaved={(saved) => {
                  c.value = saved;
                  editing.value++;
                  notice.value = `${nameOf(saved) || saved.phoneNumber}: changes saved.`;
                }}
              />
              <OptOutPanel contact={x} onDone={(msg) => ((notice.value = msg), load())} />
            </>
          ) : null}
          <AutomationRuns runs={runs.value} who={who} onDone={(msg) => ((notice.value = msg), load())} />
          <h2>Consent history</h2>
          {consent.value.length ? (
            <ol class="timeline consent-history">
              {consent.value.map((e, i) => (
                <li key={i}>
                  <span class="when">{fmtDate(e.at)}</span> <strong>{e.action === "opted_out" ? "Opted out" : "Opted back in"}</strong> {describeHow(e)}
                  {e.reason ? <>: “{e.reason}”</> : null}
                </li>
              ))}
            </ol>
          ) : (
            <p>No opt-outs or opt-ins yet.</p>
          )}
          <h2>Timeline</h2>
          <p>
            <a href={`/messages?contactId=${encodeURIComponent(x.id)}`}>Texts to {who} on the Messages page</a>
          </p>
          {history.value.length || requests.value.length ? (
            <ol class="timeline" aria-label="Timeline, newest first">
              {timelineOf(history.value, requests.value).map((item) =>
                item.kind === "request" ? (
                  <li key={item.r.id} class="timeline-request">
                    <span class="when">{fmtDate(item.r.createdAt)}</span> <strong>Sent the form {item.r.formName}</strong>
                    {item.r.suppressed ? ` (${noTextWords(item.r.suppressed)})` : ""} · <a href={`/inbox/${encodeURIComponent(item.r.id)}`}>Open request</a>
                    <RequestAnswers request={item.r} />
                  </li>
                ) : (
                  <li key={item.m.id} class={`msg-${item.m.direction}`}>
                    <span class="when">{fmtDate(item.m.direction === "inbound" ? item.m.receivedAt : item.m.createdAt)}</span>{" "}
                    <strong>{item.m.direction === "inbound" ? "They wrote" : `Text ${item.m.status}`}</strong>: {item.m.content}
                  </li>
                ),
              )}
            </ol>
          ) : (
            <p>No messages yet.</p>
          )}
          {can("contacts.delete") ? (
            <>
              <h2>Delete</h2>
              <p class="hint">{goesWith}</p>
              {/* Out of sight while the dialog asks: its own button has the same name. */}
              <button type="button" class={deleting.value ? "danger out-of-sight" : "danger"} onClick={() => (deleting.value = true)}>
                Delete contact
              </button>
              <Confirm open={deleting.value} title={`Delete ${who}?`} body={goesWith} action="Delete contact" onConfirm={remove} onCancel={() => (deleting.value = false)} />
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/**
 * The automations the contact is going through or went through: each one's state and texts in
 * plain words, and "Stop" for a run still going (a customer who phoned to cancel), asked first.
 */
function AutomationRuns(props: { runs: ContactRun[]; who: string; onDone: (msg: string) => void }) {
  const stopping = useSignal<ContactRun | null>(null);
  const error = useSignal("");
  const admin = can("automations.write");
  const nameOfRun = (r: ContactRun) => r.automation?.name || "An automation";
  async function stop(r: ContactRun) {
    stopping.value = null;
    try {
      const a = await api.post("/v1/automations/{id}/runs/{runId}/stop", { path: { id: r.automationId, runId: r.id } });
      error.value = "";
      props.onDone(
        a.data.changed
          ? `${nameOfRun(r)} stopped for ${props.who}: its texts not sent yet are cancelled.`
          : `${nameOfRun(r)} had already ${a.data.run.status === "completed" ? "finished" : "stopped"} for ${props.who}.`,
      );
    } catch (e) {
      error.value = errorText(e);
    }
  }
  const asked = stopping.value;
  return (
    <>
      <h2>Automations</h2>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {props.runs.length ? (
        <ul class="contact-runs">
          {props.runs.map((r) => (
            <li key={r.id} class="contact-run">
              <p>
                {r.automation && !r.automation.deleted ? <a href={`/automations/${encodeURIComponent(r.automationId)}`}>{nameOfRun(r)}</a> : <span>{nameOfRun(r)} (deleted)</span>}
                {": "}
                <strong>{RUN_STATUS_WORDS[r.status] ?? r.status}</strong>
                {r.stoppedReason ? ` ${stoppedBecause(r.stoppedReason)}` : null}
                <span class="hint"> · started {fmtDate(r.startedAt)}</span>
              </p>
              <ol class="run-steps">
                {r.steps.map((s) => (
                  <li key={s.index}>{stepLine(s)}</li>
                ))}
              </ol>
              {admin && r.status === "active" ? (
                // Out of sight while the dialog asks, as "Delete contact" is.
                <button type="button" class={asked?.id === r.id ? "secondary out-of-sight" : "secondary"} aria-label={`Stop ${nameOfRun(r)} for ${props.who}`} onClick={() => (stopping.value = r)}>
                  Stop
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>Not going through any automation.</p>
      )}
      <Confirm
        open={asked !== null}
        titleId="stop-run-title"
        title={asked ? `Stop ${nameOfRun(asked)} for ${props.who}?` : ""}
        body="Their texts from it that are not sent yet are cancelled; texts already sent stay in Messages. It starts again only if they fill in the form again."
        action="Stop automation"
        onConfirm={() => asked && stop(asked)}
        onCancel={() => (stopping.value = null)}
      />
    </>
  );
}

/** Opting out or back in by hand: a reason (required to opt back in), recorded with who and when. */
function OptOutPanel(props: { contact: Contact; onDone: (msg: string) => void }) {
  const reason = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  const out = props.contact.optedOut === true;
  const who = nameOf(props.contact) || fmtPhone(props.contact.phoneNumber);
  async function submit(e: Event) {
    e.preventDefault();
    if (busy.value) return;
    if (out && !reason.value.trim()) {
      error.value = "Please write why this person may be texted again.";
      return;
    }
    busy.value = true;
    error.value = "";
    try {
      const init = { path: { id: props.contact.id }, json: reason.value.trim() ? { reason: reason.value.trim() } : {} };
      await (out ? api.post("/v1/contacts/{id}/opt-in", init) : api.post("/v1/contacts/{id}/opt-out", init));
      reason.value = "";
      props.onDone(out ? `${who} opted back in: texts are allowed again.` : `${who} opted out: no more texts are sent to ${fmtPhone(props.contact.phoneNumber)}.`);
    } catch (err) {
      error.value = fieldErrorsOf(err)[0]?.message ?? errorText(err);
    } finally {
      busy.value = false;
    }
  }
  return (
    <form class="notes opt-out" onSubmit={submit} aria-labelledby="opt-title">
      <h2 id="opt-title">{out ? "Opted out of texts" : "Texting"}</h2>
      <p class="hint">
        {out
          ? "This person asked not to be texted. Opt them back in only if they asked for it; the reason is kept in the consent history."
          : "If they asked you not to text them (on the phone, in the shop), opt them out: nothing more is sent, texts waiting are cancelled, and forms on your website send them nothing."}
      </p>
      <label for="opt-reason">{out ? "Reason (required)" : "Reason (optional)"}</label>
      <textarea
        id="opt-reason"
        rows={2}
        maxLength={500}
        aria-required={out ? "true" : undefined}
        value={reason.value}
        placeholder={out ? "Asked in the shop on 3 May to get reminders again" : "Phoned to say stop texting"}
        onInput={(e) => (reason.value = (e.target as HTMLTextAreaElement).value)}
        aria-describedby={error.value ? "opt-error" : undefined}
      />
      {error.value ? (
        <p id="opt-error" class="error" role="alert">
          {error.value}
        </p>
      ) : null}
      <button type="submit" disabled={busy.value}>{out ? "Opt back in" : "Opt out"}</button>
    </form>
  );
}

function describeWho(by: ConsentEntry["by"] | undefined): string {
  if (!by) return "";
  return by.type === "user" ? `by ${by.name}` : "through the API";
}

function describeHow(e: ConsentEntry): string {
  if (e.source === "keyword") return e.action === "opted_out" ? "— they texted an opt-out word" : "— they texted an opt-in word";
  const how = e.source === "import" ? "by an import" : e.source === "api" ? "through the API" : "by hand";
  return ["—", how, describeWho(e.by)].filter(Boolean).join(" ");
}

function describeAdded(x: Contact): string {
  const k = x.consent;
  const when = fmtDate(x.createdAt);
  if (!k) return when;
  const how: Record<string, string> = { webhook: "from a website form", import: "by an import", manual: "by hand", api: "through the API", inbound: "when they texted you" };
  return [when, how[k.source] ?? k.source, describeWho(k.by)].filter(Boolean).join(", ");
}

/** Texts and form requests in one timeline, newest first. */
function timelineOf(messages: Array<Record<string, any>>, requests: Request[]) {
  const items: Array<{ kind: "message"; at: string; m: Record<string, any> } | { kind: "request"; at: string; r: Request }> = [
    ...messages.map((m) => ({ kind: "message" as const, at: String(m.direction === "inbound" ? m.receivedAt : m.createdAt), m })),
    ...requests.map((r) => ({ kind: "request" as const, at: r.createdAt, r })),
  ];
  return items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

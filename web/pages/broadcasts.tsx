import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText, isPerson } from "../api";
import { useResource } from "../resource";
import { FormSelect, useFormChoices } from "../components/FormPicker";
import { act } from "../act";
import type { Broadcast, BroadcastPreview, RequestBody } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { instantOfLocalTime } from "../../src/domain/quiet-hours";
import { LiveBadge, useLiveMessages } from "../live";
import { PRIORITIES } from "../../src/domain/statuses";
import { TextSize, textCount } from "../components/TextSize";
import { InsertField } from "../components/InsertField";

const BROADCAST_FIELDS = [
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["fullName", "Full name"],
] as const;
import { Confirm } from "../components/Confirm";
import { CardTable } from "../components/CardTable";
import { parseTags } from "./contacts";

const STATUSES = ["new", "contacted", "responded", "converted"];
/** The recipient count is asked again this long after the last change. */
const COUNT_DEBOUNCE_MS = 400;
/** A broadcast's state in the owner's words. */
const STATE_WORDS: Record<Broadcast["status"], string> = {
  scheduled: "Scheduled",
  queuing: "Getting ready",
  queued: "Sending",
  completed: "Done",
  cancelled: "Cancelled",
};
const CANCELLABLE: ReadonlyArray<Broadcast["status"]> = ["scheduled", "queuing", "queued"];

const plural = (n: number, one: string, many: string) => `${fmtNum(n)} ${n === 1 ? one : many}`;

/** "Friday 27 November 2026 at 09:00 (America/New_York)": a date as the owner set it, in the business's zone. */
export function whenInWords(iso: string, timeZone: string): string {
  const d = new Date(iso);
  const day = new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "long", day: "numeric", month: "long", year: "numeric" }).format(d);
  const time = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(d);
  return `${day} at ${time} (${timeZone})`;
}

function minutesInWords(m: number): string {
  if (m <= 1) return "about a minute";
  if (m < 90) return `about ${m} minutes`;
  const h = Math.round(m / 60);
  if (h < 48) return `about ${h} hours`;
  return `about ${Math.round(h / 24)} days`;
}

export function Broadcasts() {
  const notice = useSignal("");
  const cancelling = useSignal<Broadcast | null>(null);
  /** The business's zone (Settings → Business), as the dry run reports it; dates are shown in it. */
  const timeZone = useSignal<string | null>(null);
  const { data: list, error, load } = useResource(() => api.get("/v1/broadcasts", { query: { limit: 50 } }).then((r) => r.data.broadcasts));
  const live = useLiveMessages(() => load());
  async function cancel() {
    const b = cancelling.value;
    cancelling.value = null;
    if (!b) return;
    await act(notice, () => api.post("/v1/broadcasts/{id}/cancel", { path: { id: b.id } }), (r) => r.message ?? "", load);
  }
  const admin = can("broadcasts.write");
  return (
    <section>
      <div class="page-head">
        <h1>Broadcasts</h1>
        <LiveBadge state={live.value} />
      </div>
      <p>One text to a group of contacts. Opted-out contacts are always left out; quiet hours and the phone's send rate are kept.</p>
      {admin ? (
        <NewBroadcast onSent={(m) => ((notice.value = m), load())} onZone={(z) => (timeZone.value = z)} />
      ) : (
        <p class="notice">{isPerson() ? "Only an owner, an admin or staff of the account can send broadcasts." : "Sending a broadcast needs an admin key."}</p>
      )}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <h2>Scheduled, sending and sent</h2>
      {list.value ? (
        list.value.length ? (
          <CardTable columns={["Broadcast", "State", "Progress", "Starts", admin && "Actions"]}>
            {list.value.map((b) => {
              const done = b.messages.sent + b.messages.failed + b.messages.cancelled;
              return (
                <tr key={b.id}>
                  <td data-label="Broadcast">{b.name}</td>
                  <td data-label="State">{STATE_WORDS[b.status] ?? b.status}</td>
                  <td data-label="Progress">
                    <progress max={Math.max(1, b.recipients)} value={done} aria-label={`Progress of ${b.name}`} />{" "}
                    {b.messages.sent} sent · {b.messages.failed} failed · {b.messages.queued} waiting · {b.messages.cancelled} cancelled
                    {b.suppressed ? ` · ${b.suppressed} left out` : ""}
                  </td>
                  <td data-label="Starts">{timeZone.value ? whenInWords(b.scheduledFor, timeZone.value) : fmtDate(b.scheduledFor)}</td>
                  {admin ? (
                    <td data-label="Actions">
                      {CANCELLABLE.includes(b.status) ? (
                        <button type="button" class="secondary" aria-label={`Cancel ${b.name}`} onClick={() => (cancelling.value = b)}>
                          Cancel
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </CardTable>
        ) : (
          <p>No broadcasts yet.</p>
        )
      ) : null}
      <Confirm
        open={cancelling.value !== null}
        title="Cancel this broadcast?"
        body={
          cancelling.value?.status === "scheduled"
            ? "It has not started: none of its texts will be sent."
            : "Texts still waiting are cancelled; texts already sent cannot be taken back."
        }
        action="Cancel broadcast"
        onConfirm={cancel}
        onCancel={() => (cancelling.value = null)}
      />
    </section>
  );
}

type Segment = NonNullable<RequestBody<"/v1/broadcasts", "post">["segment"]>;

function NewBroadcast(props: { onSent: (notice: string) => void; onZone: (timeZone: string) => void }) {
  const name = useSignal("");
  const content = useSignal("Hi {{firstName}}, ");
  const status = useSignal("");
  const tags = useSignal("");
  const formId = useSignal("");
  const search = useSignal("");
  const priority = useSignal<NonNullable<RequestBody<"/v1/broadcasts", "post">["priority"]>>("normal");
  const when = useSignal<"now" | "later">("now");
  const laterDate = useSignal("");
  const laterTime = useSignal("09:00");
  const forms = useFormChoices();
  const count = useSignal<BroadcastPreview | null>(null);
  const countError = useSignal("");
  const error = useSignal("");
  /** The confirmation: the figures for exactly `body` (as sent); any change to the form drops it. */
  const confirming = useSignal<{ body: string; preview: BroadcastPreview } | null>(null);
  const checking = useSignal(false);
  const sending = useSignal(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const asked = useRef(0);
  const confirmRef = useRef<HTMLElement>(null);

  const zone = () => count.value?.accountTimeZone ?? "UTC";
  const segment = () => {
    const s: Segment = {};
    if (status.value) s.status = status.value as Segment["status"];
    const t = parseTags(tags.value);
    if (t.length) s.tags = t;
    if (formId.value) s.formId = formId.value;
    if (search.value.trim()) s.search = search.value.trim();
    return s;
  };
  /** The start the owner chose, in the business's zone; "" when it is not a whole date and time yet. */
  const scheduledFor = (): string | null | "" => {
    if (when.value === "now") return null;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(laterDate.value) || !/^\d{2}:\d{2}$/.test(laterTime.value)) return "";
    const minutes = Number(laterTime.value.slice(0, 2)) * 60 + Number(laterTime.value.slice(3, 5));
    return new Date(instantOfLocalTime(laterDate.value, minutes, zone())).toISOString();
  };
  const body = () => {
    const at = scheduledFor();
    return { name: name.value.trim() || "Draft", content: content.value, segment: segment(), priority: priority.value, ...(at ? { scheduledFor: at } : {}) };
  };
  // The live recipient count: a dry run (nothing queued) shortly after each change.
  function recount() {
    clearTimeout(timer.current);
    timer.current = setTimeout(async () => {
      const n = ++asked.current;
      try {
        const r = await api.post("/v1/broadcasts", { query: { dryRun: true }, json: body() });
        if (n === asked.current) {
          if ("broadcast" in r.data) return; // a dry run never sends
          count.value = r.data;
          countError.value = "";
          props.onZone(r.data.accountTimeZone);
        }
      } catch (e) {
        if (n === asked.current) countError.value = errorText(e);
      }
    }, COUNT_DEBOUNCE_MS);
  }
  useEffect(() => {
    recount();
    return () => clearTimeout(timer.current);
  }, []);
  /** Every change of the form: the confirmation no longer matches what would be sent. */
  const changed = () => {
    confirming.value = null;
    recount();
  };
  const on = (sig: { value: string }) => (e: Event) => {
    sig.value = (e.target as HTMLInputElement).value;
    changed();
  };
  // First click: ask the server for the figures that will apply, and show them. Nothing is queued.
  async function check(e: Event) {
    e.preventDefault();
    error.value = "";
    confirming.value = null;
    if (when.value === "later") {
      const at = scheduledFor();
      if (!at) return void (error.value = "Choose the day and time to send it.");
      if (Date.parse(at) <= Date.now()) return void (error.value = "Choose a time later than now, or send it now.");
    }
    const json = body();
    checking.value = true;
    try {
      const r = await api.post("/v1/broadcasts", { query: { dryRun: true }, json });
      if ("broadcast" in r.data) return; // a dry run never sends
      confirming.value = { body: JSON.stringify(json), preview: r.data };
      count.value = r.data;
      requestAnimationFrame(() => confirmRef.current?.focus());
    } catch (err) {
      error.value = errorText(err);
    } finally {
      checking.value = false;
    }
  }
  // Second click: send exactly what was checked, unless the form changed since.
  async function send() {
    const c = confirming.value;
    if (!c) return;
    if (JSON.stringify(body()) !== c.body) {
      confirming.value = null;
      error.value = "The broadcast changed since it was checked: check it again.";
      return;
    }
    sending.value = true;
    try {
      const r = await api.post("/v1/broadcasts", { json: JSON.parse(c.body) });
      if (!("broadcast" in r.data)) return; // asked without dryRun: always the broadcast
      const b: Broadcast = r.data.broadcast;
      const later = b.status === "scheduled" ? ` It starts ${whenInWords(b.scheduledFor, zone())}.` : "";
      props.onSent(`${b.name}: ${plural(c.preview.sending, "text", "texts")} ${b.status === "scheduled" ? "scheduled" : "being queued"}.${later}`);
      confirming.value = null;
      name.value = "";
    } catch (err) {
      error.value = errorText(err);
    } finally {
      sending.value = false;
    }
  }
  const today = new Date().toISOString().slice(0, 10);
  const c = confirming.value;
  return (
    <details class="compose" open>
      <summary>New broadcast</summary>
      <form onSubmit={check} class="broadcast-form">
        <span class="field wide">
          <label for="bc-name">Name (for you)</label>
          <input id="bc-name" required maxLength={200} value={name.value} onInput={(e) => ((name.value = (e.target as HTMLInputElement).value), (confirming.value = null))} />
        </span>
        <span class="field wide">
          <label for="bc-text">Text</label>
          <textarea id="bc-text" rows={3} maxLength={1600} required value={content.value} onInput={on(content)} aria-describedby="bc-text-help" />
          <small id="bc-text-help">
            Fields are filled in for each contact: {"{{firstName}}"} says “Ada” to Ada. A detail saved with the contact under its own name (say “service”) is
            written {"{{customFields.service}}"}.
          </small>
          <TextSize content={content.value} suffix=" before filling in" />
        </span>
        <InsertField id="bc-insert" textareaId="bc-text" value={content.value} onChange={(v) => ((content.value = v), changed())} fields={BROADCAST_FIELDS} />
        <fieldset>
          <legend>Who receives it</legend>
          <span class="field">
            <label for="bc-status">Contact status</label>
            <select id="bc-status" value={status.value} onChange={on(status)}>
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>{s}</option>
              ))}
            </select>
          </span>
          <span class="field">
            <label for="bc-tags">With all these tags</label>
            <input id="bc-tags" value={tags.value} onInput={on(tags)} placeholder="vip, spring" />
          </span>
          <span class="field">
            <FormSelect id="bc-form" label="From form" any="Any form" value={formId.value} forms={forms.value} onChange={(v) => ((formId.value = v), changed())} />
          </span>
          <span class="field">
            <label for="bc-search">Matching (name, e-mail, phone)</label>
            <input id="bc-search" value={search.value} onInput={on(search)} />
          </span>
        </fieldset>
        <fieldset>
          <legend>When</legend>
          <label class="inline">
            <input type="radio" name="bc-when" value="now" checked={when.value === "now"} onChange={() => ((when.value = "now"), changed())} /> Send now
          </label>
          <label class="inline">
            <input
              type="radio"
              name="bc-when"
              value="later"
              checked={when.value === "later"}
              onChange={() => ((when.value = "later"), laterDate.value || (laterDate.value = today), changed())}
            />{" "}
            Later
          </label>
          {when.value === "later" ? (
            <div class="when-later">
              <span class="field">
                <label for="bc-date">Day</label>
                <input id="bc-date" type="date" value={laterDate.value} onInput={on(laterDate)} />
              </span>
              <span class="field">
                <label for="bc-time">Time ({zone()})</label>
                <input id="bc-time" type="time" value={laterTime.value} onInput={on(laterTime)} />
              </span>
              <p class="summary" aria-live="polite">
                {scheduledFor() ? `Starts ${whenInWords(scheduledFor() as string, zone())}.` : "Choose the day and time."} Until it starts you can cancel it.
              </p>
            </div>
          ) : null}
        </fieldset>
        <span class="field">
          <label for="bc-priority">Broadcast priority</label>
          <select id="bc-priority" value={priority.value} onChange={on(priority)}>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>{p}</option>
            ))}
          </select>
        </span>
        <div class="recipients" aria-live="polite" data-testid="recipient-count">
          {countError.value ? (
            <span class="error">{countError.value}</span>
          ) : count.value ? (
            <>
              <strong>
                {count.value.recipients} {count.value.recipients === 1 ? "recipient" : "recipients"}
              </strong>
              {count.value.suppressed ? ` · ${count.value.suppressed} left out (opted out or over a limit)` : ""}
              {count.value.samples.length ? (
                <ul class="samples" aria-label="Examples of the texts">
                  {count.value.samples.map((x) => (
                    <li key={x.contactId}>
                      {x.phoneNumber}: <span class="sample-text">{x.content}</span> ({textCount(x.content)})
                    </li>
                  ))}
                </ul>
              ) : null}
            </>
          ) : (
            "Counting…"
          )}
        </div>
        {error.value ? <p class="error" role="alert">{error.value}</p> : null}
        <button type="submit" disabled={checking.value || !count.value || count.value.recipients === 0}>
          Send broadcast
        </button>
        {c ? <Confirmation preview={c.preview} zone={zone()} sending={sending.value} sectionRef={confirmRef} onSend={send} onBack={() => (confirming.value = null)} /> : null}
      </form>
    </details>
  );
}

/** What sending will do, from the server's dry run; the second, explicit click names the count. */
function Confirmation(props: {
  preview: BroadcastPreview;
  zone: string;
  sending: boolean;
  sectionRef: { current: HTMLElement | null };
  onSend: () => void;
  onBack: () => void;
}) {
  const p = props.preview;
  const skipped = [
    p.skipped.optedOut ? `${plural(p.skipped.optedOut, "contact has", "contacts have")} opted out` : "",
    p.skipped.recipientLimit ? `${plural(p.skipped.recipientLimit, "contact has", "contacts have")} already had the most texts allowed per person in 24 hours` : "",
    p.skipped.monthlyQuota ? `${plural(p.skipped.monthlyQuota, "contact is", "contacts are")} over what is left of this month's texts` : "",
  ].filter(Boolean);
  const perText = p.segments.min === p.segments.max ? plural(p.segments.max, "text", "texts") : `${fmtNum(p.segments.min)} to ${fmtNum(p.segments.max)} texts`;
  const starts = p.scheduledFor ? `Starts ${whenInWords(p.scheduledFor, props.zone)}` : "Starts now";
  const e = p.estimate;
  // The time comes from the phones' own limits (docs/phones.md): as if connected when none is.
  const phones = e.phones ?? e.phonesConnected;
  const time =
    e.basis === "no-phone-connected" || e.phonesConnected === 0
      ? e.minutes === null
        ? "No phone connected: texts wait until one is."
        : `No phone is connected right now. Once ${phones > 1 ? "they are" : "one is"}, about ${minutesInWords(e.minutes)} with your ${plural(Math.max(1, phones), "phone", "phones")}.`
      : `About ${minutesInWords(e.minutes ?? 0)} with your ${plural(e.phonesConnected, "phone", "phones")}, within their sending limits.`;
  const action = `Send to ${plural(p.sending, "person", "people")}`;
  return (
    <section class="notice confirm-broadcast" aria-labelledby="bc-confirm-title" tabIndex={-1} ref={props.sectionRef as any}>
      <h2 id="bc-confirm-title">Before you send</h2>
      <ul>
        <li>
          <strong>{plural(p.sending, "person gets", "people get")} it</strong>
          {p.sending ? ` — ${perText} each, ${plural(p.segments.total, "text", "texts")} in all.` : "."}
        </li>
        {skipped.length ? (
          <li>
            Skipped:
            <ul>
              {skipped.map((x) => (
                <li key={x}>{x}</li>
              ))}
            </ul>
          </li>
        ) : (
          <li>Nobody in the group is skipped.</li>
        )}
        {p.quietHours.delayed && p.quietHours.hours ? (
          <li>
            {plural(p.quietHours.delayed, "text waits", "texts wait")} for quiet hours ({p.quietHours.hours.start}–{p.quietHours.hours.end}, {p.quietHours.timezone}) to end.
          </li>
        ) : null}
        <li>
          {starts}. {time}
        </li>
      </ul>
      <div class="dialog-actions">
        <button type="button" onClick={props.onSend} disabled={props.sending || p.sending === 0}>
          {action}
        </button>
        <button type="button" class="secondary" onClick={props.onBack}>
          Back to editing
        </button>
      </div>
    </section>
  );
}

import { useEffect, useRef } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import { api, can, errorText, queryFrom } from "../api";
import { useResource } from "../resource";
import { FormSelect, useFormChoices } from "../components/FormPicker";
import { act } from "../act";
import type { Answer, Message, MessageList, RequestBody } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { navigate, path, search } from "../router";
import { LiveBadge, useLiveMessages } from "../live";
import { Pager } from "../components/Pager";
import { Select } from "../components/Select";
import { ReasonText } from "../components/ReasonText";
import { failureSentence } from "../failure-reasons";
import type { TimelineEvent } from "../../src/domain/message-timeline";
import { MESSAGE_STATUSES, PRIORITIES_BY_RANK } from "../../src/domain/statuses";
import { fullName } from "../../src/domain/contact-name";
import { fmtPhone } from "../phone-format";
import { STAGE_WORDS } from "../stage-words";
import { messageStage } from "../../src/domain/message-stage";


const STATUSES: readonly Message["status"][] = MESSAGE_STATUSES;
/** Most urgent first, as the queue serves them. */
const PRIORITIES = PRIORITIES_BY_RANK;
const SORTS: Array<[string, string]> = [
  ["createdAt", "Created"],
  ["scheduledFor", "Scheduled for"],
  ["sentAt", "Sent"],
  ["priority", "Priority"],
];
/** Filters kept in the page's URL (reload and back keep them); `from`/`to` are days in the owner's zone. */
const FILTER_KEYS = ["status", "priority", "formId", "contactId", "sortBy", "order", "page"];
const DAY_MS = 86_400_000;
/** A yyyy-mm-dd day → the instant it starts in the browser's time zone (null when not a day). */
export function dayStart(day: string | null, plusDays = 0): string | null {
  if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const [y, m, d] = day.split("-").map(Number);
  const t = new Date(y, m - 1, d + plusDays);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}

export function Messages() {
  const id = path.value.split("/")[2];
  return id ? <MessageDetail id={decodeURIComponent(id)} /> : <MessageList />;
}

function MessageList() {
  const params = useComputed(() => new URLSearchParams(search.value));
  const notice = useSignal("");
  const selected = useSignal<Set<string>>(new Set());

  const query = () => {
    const q = new URLSearchParams();
    for (const k of FILTER_KEYS) {
      const v = params.value.get(k);
      if (v) q.set(k, v);
    }
    // "To" includes its whole day: the API's createdBefore is the first instant left out.
    const after = dayStart(params.value.get("from"));
    const before = dayStart(params.value.get("to"), 1);
    if (after) q.set("createdAfter", after);
    if (before) q.set("createdBefore", before);
    q.set("limit", "50");
    return q;
  };
  // Only the newest answer is shown (a newer load may be on its way).
  const { data: list, error, load } = useResource(() => api.get("/v1/messages", { query: queryFrom("/v1/messages", query()) }).then((r) => r.data), [search.value]);

  const forms = useFormChoices();

  // New, sent and failed messages appear without a reload: the server pushes each change.
  const live = useLiveMessages(() => load());

  function setParam(k: string, v: string) {
    const q = new URLSearchParams(search.value);
    if (v) q.set(k, v);
    else q.delete(k);
    if (k !== "page") q.delete("page");
    navigate(`/messages${q.size ? "?" + q : ""}`, true);
  }
  function toggle(id: string, on: boolean) {
    const s = new Set(selected.value);
    if (on) s.add(id);
    else s.delete(id);
    selected.value = s;
  }
  async function bulk(status: "queued" | "cancelled") {
    const ids = [...selected.value];
    await act(
      notice,
      () => api.put("/v1/messages/bulk", { json: { messageIds: ids, status } }),
      (r) => {
        selected.value = new Set();
        return `${r.data?.updated ?? ids.length} message(s) ${status === "queued" ? "queued again" : "cancelled"}.`;
      },
      load,
    );
  }
  async function change(m: Message, status: "queued" | "cancelled") {
    await act(
      notice,
      () => api.put("/v1/messages/{id}/status", { path: { id: m.id }, json: { status } }),
      () => (status === "queued" ? `Message to ${m.recipientPhone} queued again.` : `Message to ${m.recipientPhone} cancelled.`),
      load,
    );
  }

  const l = list.value;
  const page = l?.pagination.page ?? 1;
  // Retry and Cancel change a message's status (PUT /v1/messages/:id/status); viewers only read.
  const changes = can("phone.report");
  return (
    <section>
      <div class="page-head">
        <h1>Messages</h1>
        <LiveBadge state={live.value} />
      </div>
      {can("messages.send") ? <Compose onQueued={(msg) => ((notice.value = msg), load())} /> : null}
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter and sort messages">
        <Select label="Status" value={params.value.get("status") ?? ""} options={[["", "Any"], ...STATUSES.map((s) => [s, s] as [string, string])]} onChange={(v) => setParam("status", v)} />
        <Select label="Priority" value={params.value.get("priority") ?? ""} options={[["", "Any"], ...PRIORITIES.map((s) => [s, s] as [string, string])]} onChange={(v) => setParam("priority", v)} />
        <span class="field">
          <FormSelect id="f-form" label="Form" any="Any form" value={params.value.get("formId") ?? ""} forms={forms.value} onChange={(v) => setParam("formId", v)} />
        </span>
        <ContactFilter contactId={params.value.get("contactId") ?? ""} onChange={(v) => setParam("contactId", v)} />
        <span class="field">
          <label for="f-from">Created from</label>
          <input id="f-from" type="date" value={params.value.get("from") ?? ""} max={params.value.get("to") ?? undefined} onChange={(e) => setParam("from", (e.target as HTMLInputElement).value)} />
        </span>
        <span class="field">
          <label for="f-to">Created until</label>
          <input id="f-to" type="date" value={params.value.get("to") ?? ""} min={params.value.get("from") ?? undefined} onChange={(e) => setParam("to", (e.target as HTMLInputElement).value)} />
        </span>
        <Select label="Sort by" value={params.value.get("sortBy") ?? "createdAt"} options={SORTS} onChange={(v) => setParam("sortBy", v)} />
        <Select label="Order" value={params.value.get("order") ?? "desc"} options={[["desc", "Newest first"], ["asc", "Oldest first"]]} onChange={(v) => setParam("order", v)} />
      </form>
      {l ? (
        <p class="summary">
          {STATUSES.map((s) => `${fmtNum(l.summary[s] ?? 0)} ${s}`).join(" · ")}
        </p>
      ) : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {changes && selected.value.size ? (
        <div class="bulk" role="region" aria-label="Selected messages">
          <span>{selected.value.size} selected</span>
          <button type="button" onClick={() => bulk("queued")}>Retry selected</button>
          <button type="button" class="secondary" onClick={() => bulk("cancelled")}>Cancel selected</button>
        </div>
      ) : null}
      {l ? (
        l.messages.length ? (
          <div class="table-wrap">
            <table class="messages cards">
              <thead>
                <tr>
                  {changes ? (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select all messages on this page"
                        checked={l.messages.every((m) => selected.value.has(m.id))}
                        onChange={(e) => (selected.value = (e.target as HTMLInputElement).checked ? new Set(l.messages.map((m) => m.id)) : new Set())}
                      />
                    </th>
                  ) : null}
                  <th scope="col">Recipient</th>
                  <th scope="col">Text</th>
                  <th scope="col">Status</th>
                  <th scope="col">Priority</th>
                  <th scope="col">Created</th>
                  {changes ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {l.messages.map((m) => (
                  <tr key={m.id} data-message-id={m.id}>
                    {changes ? (
                      <td data-label="Select">
                        <input type="checkbox" aria-label={`Select the message to ${m.recipientPhone}`} checked={selected.value.has(m.id)} onChange={(e) => toggle(m.id, (e.target as HTMLInputElement).checked)} />
                      </td>
                    ) : null}
                    <td data-label="Recipient">
                      <a href={`/messages/${encodeURIComponent(m.id)}`}>{m.recipientName ? `${m.recipientName} ` : ""}{fmtPhone(m.recipientPhone)}</a>
                    </td>
                    <td class="content" data-label="Text">{m.content}</td>
                    <td data-label="Status">
                      <span class={`badge status-${m.status}`}>{STAGE_WORDS[m.stage] ?? m.status}</span>
                      {m.status === "failed" && m.failureReason ? <span class="hint reason-line">{failureSentence(String(m.failureReason))}</span> : null}
                    </td>
                    <td data-label="Priority">{m.priority}</td>
                    <td data-label="Created">{fmtDate(m.createdAt)}</td>
                    {changes ? (
                      <td class="actions" data-label="Actions">
                        {m.status === "failed" ? (
                          <button type="button" aria-label={`Retry the message to ${m.recipientPhone}`} onClick={() => change(m, "queued")}>Retry</button>
                        ) : null}
                        {m.status === "queued" ? (
                          <button type="button" class="secondary" aria-label={`Cancel the message to ${m.recipientPhone}`} onClick={() => change(m, "cancelled")}>Cancel</button>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p>{[...FILTER_KEYS, "from", "to"].some((k) => k !== "page" && k !== "sortBy" && k !== "order" && params.value.get(k)) ? "No messages match these filters." : "No messages yet. They appear here as soon as a form is filled in or you write one."}</p>
        )
      ) : !error.value ? (
        <p role="status">Loading…</p>
      ) : null}
      {l ? <Pager page={page} totalPages={l.pagination.totalPages} label="Pages of messages" onPage={(n) => setParam("page", String(n))} /> : null}
    </section>
  );
}

/**
 * The contact filter: type a name or phone digits, pick one of the contacts found; the chosen
 * contact is shown by name with a button to clear it.
 */
function ContactFilter(props: { contactId: string; onChange: (contactId: string) => void }) {
  const chosen = useSignal<{ id: string; label: string } | null>(null);
  const text = useSignal("");
  const found = useSignal<Array<{ id: string; label: string }>>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    if (!props.contactId) return void (chosen.value = null);
    if (chosen.value?.id === props.contactId) return;
    api.get("/v1/contacts/{id}", { path: { id: props.contactId } })
      .then((r) => (chosen.value = { id: props.contactId, label: contactLabel(r.data.contact ?? r.data) }))
      .catch(() => (chosen.value = { id: props.contactId, label: "a contact that no longer exists" }));
  }, [props.contactId]);
  if (props.contactId) {
    return (
      <span class="field">
        <span class="label-text">Contact</span>
        <span class="chip">
          {chosen.value?.label ?? "…"}{" "}
          <button type="button" class="secondary small" aria-label="Show messages to every contact" onClick={() => props.onChange("")}>×</button>
        </span>
      </span>
    );
  }
  function input(v: string) {
    text.value = v;
    const hit = found.value.find((c) => c.label === v);
    if (hit) {
      chosen.value = hit;
      text.value = "";
      props.onChange(hit.id);
      return;
    }
    clearTimeout(timer.current);
    if (v.trim().length < 2) return;
    timer.current = setTimeout(() => {
      api.get("/v1/contacts", { query: { search: v.trim(), limit: SUGGESTIONS } })
        .then((r) => (found.value = r.data.contacts.map((c) => ({ id: c.id, label: contactLabel(c) }))))
        .catch(() => {});
    }, SUGGEST_DEBOUNCE_MS);
  }
  return (
    <span class="field">
      <label for="f-contact">Contact</label>
      <input id="f-contact" type="search" list="f-contact-found" autocomplete="off" placeholder="Name or phone" value={text.value} onInput={(e) => input((e.target as HTMLInputElement).value)} />
      <datalist id="f-contact-found">
        {found.value.map((c) => (
          <option key={c.id} value={c.label} />
        ))}
      </datalist>
    </span>
  );
}
const contactLabel = (c: { firstName?: string | null; lastName?: string | null; phoneNumber: string }) => {
  const name = fullName(c.firstName, c.lastName);
  return name ? `${name} (${c.phoneNumber})` : c.phoneNumber;
};

/** Contacts suggested while typing in "To": asked for after this pause, this many at most. */
const SUGGEST_DEBOUNCE_MS = 250;
const SUGGESTIONS = 8;

function Compose(props: { onQueued: (notice: string) => void }) {
  const phone = useSignal("");
  const suggestions = useSignal<Array<{ id: string; phoneNumber: string; name: string }>>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  function suggest(text: string) {
    clearTimeout(timer.current);
    if (text.trim().length < 2) return;
    timer.current = setTimeout(() => {
      api.get("/v1/contacts", { query: { search: text.trim(), limit: SUGGESTIONS } })
        .then((r) => (suggestions.value = r.data.contacts.map((c) => ({ id: c.id, phoneNumber: c.phoneNumber, name: fullName(c.firstName, c.lastName) }))))
        .catch(() => {});
    }, SUGGEST_DEBOUNCE_MS);
  }
  const content = useSignal("");
  const priority = useSignal<NonNullable<RequestBody<"/v1/messages", "post">["priority"]>>("normal");
  const error = useSignal("");
  async function submit(e: Event) {
    e.preventDefault();
    error.value = "";
    try {
      await api.post("/v1/messages", { json: { phoneNumber: phone.value.trim(), content: content.value, priority: priority.value } });
      props.onQueued(`Message to ${phone.value.trim()} queued.`);
      phone.value = "";
      content.value = "";
    } catch (err) {
      error.value = errorText(err);
    }
  }
  return (
    <details class="compose">
      <summary>Write a message</summary>
      <form onSubmit={submit}>
        <span class="field">
          <label for="compose-phone">To (phone number, or search contacts)</label>
          <input
            id="compose-phone"
            list="compose-contacts"
            autocomplete="off"
            required
            value={phone.value}
            onInput={(e) => {
              phone.value = (e.target as HTMLInputElement).value;
              suggest(phone.value);
            }}
          />
          <datalist id="compose-contacts">
            {suggestions.value.map((c) => (
              <option key={c.id} value={c.phoneNumber}>{c.name || c.phoneNumber}</option>
            ))}
          </datalist>
        </span>
        <span class="field wide">
          <label for="compose-text">Text</label>
          <textarea id="compose-text" required maxLength={1600} rows={3} value={content.value} onInput={(e) => (content.value = (e.target as HTMLTextAreaElement).value)} />
        </span>
        <Select label="Message priority" value={priority.value} options={PRIORITIES.map((p) => [p, p] as [string, string])} onChange={(v) => (priority.value = v as typeof priority.value)} />
        {error.value ? <p class="error" role="alert">{error.value}</p> : null}
        <button type="submit">Queue message</button>
      </form>
    </details>
  );
}

const phoneName = (e: TimelineEvent) => e.deviceName ?? (e.deviceId ? `the phone “${e.deviceId}”` : "a phone");

/** One step of the timeline in an owner's words. */
export function stepText(e: TimelineEvent): string {
  switch (e.kind) {
    case "created":
      return "Created and queued";
    case "scheduled":
      return "Due to go out";
    case "leased":
      return `Handed to ${phoneName(e)}${e.sim ? ` (SIM ${e.sim})` : ""} to send${e.expiresAt ? `, to report back by ${fmtDate(e.expiresAt)}` : ""}${e.moved ? `. It moved from the contact's usual phone: ${e.moved}` : ""}`;
    case "lease_expired":
      return `${phoneName(e)} did not report back in time; the message went back to the queue`;
    case "attempt_failed":
      return `Sending failed${e.reason ? `: ${failureSentence(e.reason)}` : "."} ${e.by === "owner" ? "You sent it again" : "It is tried again automatically"}${e.retryAt ? ` at ${fmtDate(e.retryAt)}` : ""}.`;
    case "sent":
      return `Sent${e.deviceId ? ` by ${phoneName(e)}` : ""}${e.deviceTime ? ` (the phone's clock said ${e.deviceTime})` : ""}`;
    case "delivered":
      return `Delivered to the recipient's phone${e.deviceTime ? ` (the phone's clock said ${e.deviceTime})` : ""}`;
    case "failed":
      return `Failed for good${e.reason ? `: ${failureSentence(e.reason)}` : "."}`;
    case "cancelled":
      return `Cancelled${e.reason ? `: ${failureSentence(e.reason)}` : "."}`;
  }
}

function MessageDetail(props: { id: string }) {
  const { data, error, load } = useResource(() => api.get("/v1/messages/{id}", { path: { id: props.id } }).then((r) => r.data), [props.id]);
  const m = useComputed(() => data.value?.message ?? null);
  const timeline = useComputed<TimelineEvent[]>(() => data.value?.timeline ?? []);
  /** Why a queued text is not out yet, in plain words (docs/phones.md, "How fast a phone sends"). */
  const waiting = useComputed(() => data.value?.waiting ?? null);
  // A phone taking, sending or failing this message shows here without a reload.
  const live = useLiveMessages(() => load());
  async function change(status: "queued" | "cancelled") {
    try {
      await api.put("/v1/messages/{id}/status", { path: { id: props.id }, json: { status } });
    } catch (e) {
      error.value = errorText(e);
    }
    load();
  }
  const x = m.value;
  const lastPhone = [...timeline.value].reverse().find((e) => e.kind === "leased");
  const rows: Array<[string, unknown]> = x
    ? [
        ["Recipient", `${x.recipientName ? x.recipientName + " " : ""}${fmtPhone(x.recipientPhone)}`],
        ["Status", STAGE_WORDS[messageStage(x.status, x.status === "queued" && timeline.value[timeline.value.length - 1]?.kind === "leased", x.metadata?.deliveredAt)]],
        ["Priority", x.priority],
        // A test text the owner sent to their own phone (docs/forms.md, "Testing a form").
        ["Form", x.formName ?? (x.metadata?.source === "test" ? `Test of “${String(x.metadata.formName ?? "a form")}”` : "— (written by hand)")],
        ["Created", fmtDate(x.createdAt)],
        ["Scheduled for", fmtDate(x.scheduledFor)],
        ["Sent", fmtDate(x.sentAt)],
        ["Why it failed", x.failureReason ? <ReasonText code={x.failureReason} /> : "—"],
        ["Times sent again", x.retryCount ?? 0],
        ["Phone", lastPhone ? `${lastPhone.deviceName ?? lastPhone.deviceId ?? "—"}${lastPhone.sim ? `, SIM ${lastPhone.sim}` : ""}` : "— (not handed to a phone yet)"],
        ...(waiting.value ? [["Waiting", `${waiting.value.words}${waiting.value.until ? ` Until about ${fmtDate(waiting.value.until)}.` : ""}`] as [string, unknown]] : []),
      ]
    : [];
  return (
    <section>
      <p>
        <a href="/messages">← All messages</a>
      </p>
      <div class="page-head">
        <h1>Messages: one message</h1>
        <LiveBadge state={live.value} />
      </div>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {x ? (
        <>
          <blockquote class="sms">{x.content}</blockquote>
          <dl class="facts">
            {rows.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{typeof v === "object" && v !== null ? (v as any) : String(v)}</dd>
              </div>
            ))}
          </dl>
          <p class="actions">
            {x.status === "failed" && can("phone.report") ? <button type="button" onClick={() => change("queued")}>Retry</button> : null}
            {x.status === "queued" && can("phone.report") ? <button type="button" class="secondary" onClick={() => change("cancelled")}>Cancel</button> : null}
          </p>
          <h2>Timeline</h2>
          <ol class="timeline" data-testid="message-timeline">
            {timeline.value.map((e, i) => (
              <li key={i} data-kind={e.kind}>
                <span class="when">{fmtDate(e.at)}</span> {stepText(e)}
                {e.reason && (e.kind === "attempt_failed" || e.kind === "failed" || e.kind === "cancelled") ? <span class="code-detail"> Code: {e.reason}</span> : null}
              </li>
            ))}
          </ol>
        </>
      ) : !error.value ? (
        <p role="status">Loading…</p>
      ) : null}
    </section>
  );
}

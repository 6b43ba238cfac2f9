import { useEffect, useRef } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import { api, errorText } from "../api";
import { fmtDate, fmtNum } from "../format";
import { navigate, path, search } from "../router";
import { LiveBadge, useLiveMessages } from "../live";
import { Pager } from "../pager";

interface Message {
  id: string;
  content: string;
  recipientPhone: string;
  recipientName: string | null;
  formId: string | null;
  formName: string | null;
  contactId: string | null;
  status: "queued" | "sent" | "failed" | "cancelled";
  priority: string;
  scheduledFor: string;
  sentAt: string | null;
  createdAt: string;
}
interface ListAnswer {
  data: { messages: Message[]; pagination: { total: number; page: number; limit: number; totalPages: number }; summary: Record<string, number> };
}

const STATUSES = ["queued", "sent", "failed", "cancelled"];
const PRIORITIES = ["urgent", "high", "normal", "low"];
const SORTS: Array<[string, string]> = [
  ["createdAt", "Created"],
  ["scheduledFor", "Scheduled for"],
  ["sentAt", "Sent"],
  ["priority", "Priority"],
];
const FILTER_KEYS = ["status", "priority", "sortBy", "order", "page"];

export function Messages() {
  const id = path.value.split("/")[2];
  return id ? <MessageDetail id={decodeURIComponent(id)} /> : <MessageList />;
}

function MessageList() {
  const params = useComputed(() => new URLSearchParams(search.value));
  const list = useSignal<ListAnswer["data"] | null>(null);
  const error = useSignal("");
  const notice = useSignal("");
  const selected = useSignal<Set<string>>(new Set());
  const reloads = useRef(0);

  const query = () => {
    const q = new URLSearchParams();
    for (const k of FILTER_KEYS) {
      const v = params.value.get(k);
      if (v) q.set(k, v);
    }
    q.set("limit", "50");
    return q.toString();
  };
  async function load() {
    const n = ++reloads.current;
    try {
      const r = await api<ListAnswer>(`/messages?${query()}`);
      if (n !== reloads.current) return; // a newer load is on its way
      list.value = r.data;
      error.value = "";
    } catch (e) {
      error.value = errorText(e);
    }
  }
  useEffect(() => {
    load();
  }, [search.value]);

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
    try {
      const r = await api("/messages/bulk", { method: "PUT", json: { messageIds: ids, status } });
      notice.value = `${r.data?.updated ?? ids.length} message(s) ${status === "queued" ? "queued again" : "cancelled"}.`;
      selected.value = new Set();
    } catch (e) {
      notice.value = errorText(e);
    }
    load();
  }
  async function change(m: Message, status: "queued" | "cancelled") {
    try {
      await api(`/messages/${encodeURIComponent(m.id)}/status`, { method: "PUT", json: { status } });
      notice.value = status === "queued" ? `Message to ${m.recipientPhone} queued again.` : `Message to ${m.recipientPhone} cancelled.`;
    } catch (e) {
      notice.value = errorText(e);
    }
    load();
  }

  const l = list.value;
  const page = l?.pagination.page ?? 1;
  return (
    <section>
      <div class="page-head">
        <h1>Messages</h1>
        <LiveBadge state={live.value} />
      </div>
      <Compose onQueued={(msg) => ((notice.value = msg), load())} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter and sort messages">
        <Select label="Status" value={params.value.get("status") ?? ""} options={[["", "Any"], ...STATUSES.map((s) => [s, s] as [string, string])]} onChange={(v) => setParam("status", v)} />
        <Select label="Priority" value={params.value.get("priority") ?? ""} options={[["", "Any"], ...PRIORITIES.map((s) => [s, s] as [string, string])]} onChange={(v) => setParam("priority", v)} />
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
      {selected.value.size ? (
        <div class="bulk" role="region" aria-label="Selected messages">
          <span>{selected.value.size} selected</span>
          <button type="button" onClick={() => bulk("queued")}>Retry selected</button>
          <button type="button" class="secondary" onClick={() => bulk("cancelled")}>Cancel selected</button>
        </div>
      ) : null}
      {l ? (
        l.messages.length ? (
          <div class="table-wrap">
            <table class="messages">
              <thead>
                <tr>
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label="Select all messages on this page"
                      checked={l.messages.every((m) => selected.value.has(m.id))}
                      onChange={(e) => (selected.value = (e.target as HTMLInputElement).checked ? new Set(l.messages.map((m) => m.id)) : new Set())}
                    />
                  </th>
                  <th scope="col">Recipient</th>
                  <th scope="col">Text</th>
                  <th scope="col">Status</th>
                  <th scope="col">Priority</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {l.messages.map((m) => (
                  <tr key={m.id} data-message-id={m.id}>
                    <td>
                      <input type="checkbox" aria-label={`Select the message to ${m.recipientPhone}`} checked={selected.value.has(m.id)} onChange={(e) => toggle(m.id, (e.target as HTMLInputElement).checked)} />
                    </td>
                    <td>
                      <a href={`/messages/${encodeURIComponent(m.id)}`}>{m.recipientName ? `${m.recipientName} ` : ""}{m.recipientPhone}</a>
                    </td>
                    <td class="content">{m.content}</td>
                    <td>
                      <span class={`badge status-${m.status}`}>{m.status}</span>
                    </td>
                    <td>{m.priority}</td>
                    <td>{fmtDate(m.createdAt)}</td>
                    <td class="actions">
                      {m.status === "failed" ? (
                        <button type="button" aria-label={`Retry the message to ${m.recipientPhone}`} onClick={() => change(m, "queued")}>Retry</button>
                      ) : null}
                      {m.status === "queued" ? (
                        <button type="button" class="secondary" aria-label={`Cancel the message to ${m.recipientPhone}`} onClick={() => change(m, "cancelled")}>Cancel</button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p>No messages match.</p>
        )
      ) : !error.value ? (
        <p role="status">Loading…</p>
      ) : null}
      {l ? <Pager page={page} totalPages={l.pagination.totalPages} label="Pages of messages" onPage={(n) => setParam("page", String(n))} /> : null}
    </section>
  );
}

export function Select(props: { label: string; value: string; options: Array<[string, string]>; onChange: (v: string) => void }) {
  const id = "f-" + props.label.toLowerCase().replace(/\W+/g, "-");
  return (
    <span class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map(([v, t]) => (
          <option key={v} value={v}>{t}</option>
        ))}
      </select>
    </span>
  );
}

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
      api(`/contacts?search=${encodeURIComponent(text.trim())}&limit=${SUGGESTIONS}`)
        .then((r) => (suggestions.value = r.data.contacts.map((c: any) => ({ id: c.id, phoneNumber: c.phoneNumber, name: [c.firstName, c.lastName].filter(Boolean).join(" ") }))))
        .catch(() => {});
    }, SUGGEST_DEBOUNCE_MS);
  }
  const content = useSignal("");
  const priority = useSignal("normal");
  const error = useSignal("");
  async function submit(e: Event) {
    e.preventDefault();
    error.value = "";
    try {
      await api("/messages", { method: "POST", json: { phoneNumber: phone.value.trim(), content: content.value, priority: priority.value } });
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
        <Select label="Message priority" value={priority.value} options={PRIORITIES.map((p) => [p, p] as [string, string])} onChange={(v) => (priority.value = v)} />
        {error.value ? <p class="error" role="alert">{error.value}</p> : null}
        <button type="submit">Queue message</button>
      </form>
    </details>
  );
}

function MessageDetail(props: { id: string }) {
  const m = useSignal<any>(null);
  const error = useSignal("");
  const load = () =>
    api(`/messages/${encodeURIComponent(props.id)}`)
      .then((r) => (m.value = r.data?.message ?? r.data))
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    load();
  }, [props.id]);
  async function change(status: "queued" | "cancelled") {
    try {
      await api(`/messages/${encodeURIComponent(props.id)}/status`, { method: "PUT", json: { status } });
    } catch (e) {
      error.value = errorText(e);
    }
    load();
  }
  const x = m.value;
  const rows: Array<[string, unknown]> = x
    ? [
        ["Recipient", `${x.recipientName ? x.recipientName + " " : ""}${x.recipientPhone}`],
        ["Status", x.status],
        ["Priority", x.priority],
        ["Form", x.formName ?? "—"],
        ["Created", fmtDate(x.createdAt)],
        ["Scheduled for", fmtDate(x.scheduledFor)],
        ["Sent", fmtDate(x.sentAt)],
        ["Failure reason", x.failureReason ?? "—"],
        ["Attempts retried", x.retryCount ?? 0],
        ["Device", x.metadata?.deviceId ?? "—"],
      ]
    : [];
  return (
    <section>
      <p>
        <a href="/messages">← All messages</a>
      </p>
      <h1>Messages: one message</h1>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {x ? (
        <>
          <blockquote class="sms">{x.content}</blockquote>
          <dl class="facts">
            {rows.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </div>
            ))}
          </dl>
          <p class="actions">
            {x.status === "failed" ? <button type="button" onClick={() => change("queued")}>Retry</button> : null}
            {x.status === "queued" ? <button type="button" class="secondary" onClick={() => change("cancelled")}>Cancel</button> : null}
          </p>
        </>
      ) : null}
    </section>
  );
}

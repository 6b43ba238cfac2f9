import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, isAdmin } from "../api";
import { act } from "../act";
import type { Broadcast } from "../api-types";
import { fmtDate } from "../format";
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
import { parseTags } from "./contacts";


const STATUSES = ["new", "contacted", "responded", "converted"];
/** The recipient count is asked again this long after the last change. */
const COUNT_DEBOUNCE_MS = 400;

export function Broadcasts() {
  const list = useSignal<Broadcast[] | null>(null);
  const error = useSignal("");
  const notice = useSignal("");
  const cancelling = useSignal<Broadcast | null>(null);
  const load = () =>
    api("/broadcasts?limit=50")
      .then((r) => ((list.value = r.data.broadcasts), (error.value = "")))
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    load();
  }, []);
  const live = useLiveMessages(() => load());
  async function cancel() {
    const b = cancelling.value;
    cancelling.value = null;
    if (!b) return;
    await act(notice, () => api(`/broadcasts/${encodeURIComponent(b.id)}/cancel`, { method: "POST" }), (r) => r.message, load);
  }
  const admin = isAdmin();
  return (
    <section>
      <div class="page-head">
        <h1>Broadcasts</h1>
        <LiveBadge state={live.value} />
      </div>
      <p>One text to a group of contacts. Opted-out contacts are always left out; quiet hours and the phone's send rate are kept.</p>
      {admin ? <NewBroadcast onSent={(m) => ((notice.value = m), load())} /> : <p class="notice">Sending a broadcast needs an admin key.</p>}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <h2>Sent and sending</h2>
      {list.value ? (
        list.value.length ? (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">Broadcast</th>
                  <th scope="col">State</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Starts</th>
                  {admin ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {list.value.map((b) => {
                  const done = b.messages.sent + b.messages.failed + b.messages.cancelled;
                  return (
                    <tr key={b.id}>
                      <td data-label="Broadcast">{b.name}</td>
                      <td data-label="State">{b.status}</td>
                      <td data-label="Progress">
                        <progress max={Math.max(1, b.recipients)} value={done} aria-label={`Progress of ${b.name}`} />{" "}
                        {b.messages.sent} sent · {b.messages.failed} failed · {b.messages.queued} waiting · {b.messages.cancelled} cancelled
                        {b.suppressed ? ` · ${b.suppressed} left out` : ""}
                      </td>
                      <td data-label="Starts">{fmtDate(b.scheduledFor)}</td>
                      {admin ? (
                        <td data-label="Actions">
                          {b.status === "queued" || b.status === "queuing" ? (
                            <button type="button" class="secondary" aria-label={`Cancel ${b.name}`} onClick={() => (cancelling.value = b)}>
                              Cancel
                            </button>
                          ) : null}
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        ) : (
          <p>No broadcasts yet.</p>
        )
      ) : null}
      <Confirm
        open={cancelling.value !== null}
        title="Cancel this broadcast?"
        body="Texts still waiting are cancelled; texts already sent cannot be taken back."
        action="Cancel broadcast"
        onConfirm={cancel}
        onCancel={() => (cancelling.value = null)}
      />
    </section>
  );
}

function NewBroadcast(props: { onSent: (notice: string) => void }) {
  const name = useSignal("");
  const content = useSignal("Hi {{firstName}}, ");
  const status = useSignal("");
  const tags = useSignal("");
  const formId = useSignal("");
  const search = useSignal("");
  const priority = useSignal("normal");
  const forms = useSignal<Array<{ id: string; name: string }>>([]);
  const count = useSignal<{
    recipients: number;
    suppressed: number;
    samples: Array<{ contactId: string; phoneNumber: string; content: string; encoding: string; segments: number }>;
  } | null>(null);
  const countError = useSignal("");
  const error = useSignal("");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const asked = useRef(0);

  useEffect(() => {
    api("/forms?limit=100")
      .then((r) => (forms.value = r.data.forms.map((f: any) => ({ id: f.id, name: f.name }))))
      .catch(() => {});
  }, []);
  const segment = () => {
    const s: Record<string, unknown> = {};
    if (status.value) s.status = status.value;
    const t = parseTags(tags.value);
    if (t.length) s.tags = t;
    if (formId.value) s.formId = formId.value;
    if (search.value.trim()) s.search = search.value.trim();
    return s;
  };
  const body = () => ({ name: name.value.trim() || "Draft", content: content.value, segment: segment(), priority: priority.value });
  // The live recipient count: a dry run (nothing queued) shortly after each change.
  function recount() {
    clearTimeout(timer.current);
    timer.current = setTimeout(async () => {
      const n = ++asked.current;
      try {
        const r = await api("/broadcasts?dryRun=true", { method: "POST", json: body() });
        if (n === asked.current) ((count.value = r.data), (countError.value = ""));
      } catch (e) {
        if (n === asked.current) countError.value = errorText(e);
      }
    }, COUNT_DEBOUNCE_MS);
  }
  useEffect(() => {
    recount();
    return () => clearTimeout(timer.current);
  }, []);
  const on = (sig: { value: string }) => (e: Event) => {
    sig.value = (e.target as HTMLInputElement).value;
    recount();
  };
  async function send(e: Event) {
    e.preventDefault();
    error.value = "";
    try {
      const r = await api("/broadcasts", { method: "POST", json: body() });
      props.onSent(`${name.value.trim()}: ${r.data.recipients} text(s) being queued${r.data.suppressed ? `, ${r.data.suppressed} contact(s) left out` : ""}.`);
      name.value = "";
    } catch (err) {
      error.value = errorText(err);
    }
  }
  return (
    <details class="compose" open>
      <summary>New broadcast</summary>
      <form onSubmit={send} class="broadcast-form">
        <span class="field wide">
          <label for="bc-name">Name (for you)</label>
          <input id="bc-name" required maxLength={200} value={name.value} onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} />
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
        <InsertField id="bc-insert" textareaId="bc-text" value={content.value} onChange={(v) => (content.value = v)} fields={BROADCAST_FIELDS} />
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
            <label for="bc-form">From form</label>
            <select id="bc-form" value={formId.value} onChange={on(formId)}>
              <option value="">Any form</option>
              {forms.value.map((f) => (
                <option key={f.id} value={f.id}>{f.name}</option>
              ))}
            </select>
          </span>
          <span class="field">
            <label for="bc-search">Matching (name, e-mail, phone)</label>
            <input id="bc-search" value={search.value} onInput={on(search)} />
          </span>
        </fieldset>
        <span class="field">
          <label for="bc-priority">Broadcast priority</label>
          <select id="bc-priority" value={priority.value} onChange={(e) => (priority.value = (e.target as HTMLSelectElement).value)}>
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
        <button type="submit" disabled={!count.value || count.value.recipients === 0}>
          Send broadcast
        </button>
      </form>
    </details>
  );
}

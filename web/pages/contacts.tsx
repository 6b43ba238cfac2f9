import { useEffect, useRef } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import { api, errorText, isAdmin } from "../api";
import { act } from "../act";
import type { Answer, Contact, ContactListItem } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { navigate, path, search } from "../router";
import { Select } from "../components/Select";
import { ContactImport } from "./contact-import";
import { ContactExport, EXPORT_FILTER_KEYS } from "./contact-export";
import { Pager } from "../components/Pager";


const STATUSES: Array<Contact["status"]> = ["new", "contacted", "responded", "converted"];
const SORTS: Array<[string, string]> = [
  ["createdAt", "Created"],
  ["updatedAt", "Updated"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
];
const FILTER_KEYS = ["search", "status", "tags", "formId", "sortBy", "order", "page"];
/** Typing in the search box reads the list again after this pause. */
const SEARCH_DEBOUNCE_MS = 300;

export const nameOf = (c: Pick<Contact, "firstName" | "lastName">) => [c.firstName, c.lastName].filter(Boolean).join(" ");
export const parseTags = (text: string) => [...new Set(text.split(",").map((t) => t.trim()).filter(Boolean))];

export function Contacts() {
  const id = path.value.split("/")[2];
  if (id === "import") return <ContactImport />;
  if (id === "export") return <ContactExport />;
  return id ? <ContactPage id={decodeURIComponent(id)} /> : <ContactList />;
}

function ContactList() {
  const params = useComputed(() => new URLSearchParams(search.value));
  const list = useSignal<Answer<"/v1/contacts">["data"] | null>(null);
  const forms = useSignal<Array<{ id: string; name: string }>>([]);
  const error = useSignal("");
  const notice = useSignal("");
  const searchText = useSignal(params.value.get("search") ?? "");
  const tagText = useSignal(params.value.get("tags") ?? "");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const reloads = useRef(0);

  const query = () => {
    const q = new URLSearchParams();
    for (const k of FILTER_KEYS) {
      const v = params.value.get(k);
      if (v) q.set(k, v);
    }
    return q;
  };
  async function load() {
    const n = ++reloads.current;
    try {
      const q = query();
      q.set("limit", "50");
      const r = await api(`/contacts?${q}`);
      if (n === reloads.current) {
        list.value = r.data;
        error.value = "";
      }
    } catch (e) {
      error.value = errorText(e);
    }
  }
  useEffect(() => {
    load();
  }, [search.value]);
  useEffect(() => {
    api("/forms?limit=100")
      .then((r) => (forms.value = r.data.forms.map((f: any) => ({ id: f.id, name: f.name }))))
      .catch(() => {});
  }, []);

  function setParam(k: string, v: string) {
    const q = new URLSearchParams(search.value);
    if (v) q.set(k, v);
    else q.delete(k);
    if (k !== "page") q.delete("page");
    navigate(`/contacts${q.size ? "?" + q : ""}`, true);
  }
  function debounced(k: string, v: string) {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setParam(k, v.trim()), SEARCH_DEBOUNCE_MS);
  }
  async function update(c: ContactListItem, changes: Partial<Contact>, what: string) {
    await act(notice, () => api(`/contacts/${encodeURIComponent(c.id)}`, { method: "PUT", json: changes }), () => `${nameOf(c) || c.phoneNumber}: ${what} saved.`, load);
  }

  const l = list.value;
  const page = l?.pagination.page ?? 1;
  const exportQuery = new URLSearchParams();
  for (const k of EXPORT_FILTER_KEYS) if (params.value.get(k)) exportQuery.set(k, params.value.get(k)!);
  return (
    <section>
      <div class="page-head">
        <h1>Contacts</h1>
        {isAdmin() ? (
          <span class="head-actions">
            <a class="button-link" href="/contacts/import">
              Import contacts
            </a>
            <a class="button-link" href={`/contacts/export${exportQuery.size ? "?" + exportQuery : ""}`}>
              Export contacts
            </a>
          </span>
        ) : null}
      </div>
      <form class="filters" role="search" aria-label="Find contacts" onSubmit={(e) => e.preventDefault()}>
        <span class="field">
          <label for="contact-search">Search</label>
          <input
            id="contact-search"
            type="search"
            placeholder="Name, e-mail or phone digits"
            value={searchText.value}
            onInput={(e) => {
              searchText.value = (e.target as HTMLInputElement).value;
              debounced("search", searchText.value);
            }}
          />
        </span>
        <Select label="Contact status" value={params.value.get("status") ?? ""} options={[["", "Any"], ...STATUSES.map((s) => [s, s] as [string, string])]} onChange={(v) => setParam("status", v)} />
        <span class="field">
          <label for="contact-tags">Tags (all of)</label>
          <input
            id="contact-tags"
            value={tagText.value}
            placeholder="vip, spring"
            onInput={(e) => {
              tagText.value = (e.target as HTMLInputElement).value;
              debounced("tags", parseTags(tagText.value).join(","));
            }}
          />
        </span>
        <Select label="Form" value={params.value.get("formId") ?? ""} options={[["", "Any form"], ...forms.value.map((f) => [f.id, f.name] as [string, string])]} onChange={(v) => setParam("formId", v)} />
        <Select label="Sort contacts by" value={params.value.get("sortBy") ?? "createdAt"} options={SORTS} onChange={(v) => setParam("sortBy", v)} />
        <Select label="Sort order" value={params.value.get("order") ?? "desc"} options={[["desc", "Descending"], ["asc", "Ascending"]]} onChange={(v) => setParam("order", v)} />
      </form>
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {l ? <p class="summary">{fmtNum(l.pagination.total)} contact(s)</p> : null}
      {l ? (
        l.contacts.length ? (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Status</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {l.contacts.map((c) => (
                  <tr key={c.id} data-contact-id={c.id}>
                    <td data-label="Name">
                      <a href={`/contacts/${encodeURIComponent(c.id)}`}>{nameOf(c) || "(no name)"}</a>
                    </td>
                    <td data-label="Phone">{c.phoneNumber}</td>
                    <td data-label="Status">
                      <select aria-label={`Status of ${nameOf(c) || c.phoneNumber}`} value={c.status} onChange={(e) => update(c, { status: (e.target as HTMLSelectElement).value as Contact["status"] }, "status")}>
                        {STATUSES.map((s) => (
                          <option key={s} value={s}>{s}</option>
                        ))}
                      </select>
                    </td>
                    <td data-label="Tags">
                      <TagEditor contact={c} onSave={(tags) => update(c, { tags }, "tags")} />
                    </td>
                    <td data-label="Created">{fmtDate(c.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p>No contacts match.</p>
        )
      ) : !error.value ? (
        <p role="status">Loading…</p>
      ) : null}
      {l ? <Pager page={page} totalPages={l.pagination.totalPages} label="Pages of contacts" onPage={(n) => setParam("page", String(n))} /> : null}
    </section>
  );
}

/** Tags edited in place: a comma-separated field saved with Enter or when it loses focus. */
function TagEditor(props: { contact: ContactListItem; onSave: (tags: string[]) => void }) {
  const text = useSignal(props.contact.tags.join(", "));
  useEffect(() => {
    text.value = props.contact.tags.join(", ");
  }, [props.contact.tags.join(",")]);
  const save = () => {
    const tags = parseTags(text.value);
    if (tags.join(",") !== props.contact.tags.join(",")) props.onSave(tags);
  };
  return (
    <input
      class="tags"
      aria-label={`Tags of ${nameOf(props.contact) || props.contact.phoneNumber} (comma-separated)`}
      value={text.value}
      onInput={(e) => (text.value = (e.target as HTMLInputElement).value)}
      onBlur={save}
      onKeyDown={(e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          save();
        }
      }}
    />
  );
}

function ContactPage(props: { id: string }) {
  const c = useSignal<Contact | null>(null);
  const history = useSignal<Array<Record<string, any>>>([]);
  const notes = useSignal("");
  const error = useSignal("");
  const notice = useSignal("");
  async function load() {
    try {
      const [r, h] = await Promise.all([api(`/contacts/${encodeURIComponent(props.id)}`), api(`/contacts/${encodeURIComponent(props.id)}/messages?limit=50`)]);
      c.value = r.data.contact;
      notes.value = r.data.contact.notes ?? "";
      history.value = h.data.messages;
    } catch (e) {
      error.value = errorText(e);
    }
  }
  useEffect(() => {
    load();
  }, [props.id]);
  async function saveNotes(e: Event) {
    e.preventDefault();
    await act(notice, () => api(`/contacts/${encodeURIComponent(props.id)}`, { method: "PUT", json: { notes: notes.value } }), () => "Notes saved.");
  }
  const x = c.value;
  const facts: Array<[string, unknown]> = x
    ? [
        ["Phone", x.phoneNumber],
        ["E-mail", x.email ?? "—"],
        ["Status", x.status],
        ["Tags", x.tags.join(", ") || "—"],
        ["Source", x.source ?? "—"],
        ["Created", fmtDate(x.createdAt)],
        ["Last texted", fmtDate(x.lastContactedAt)],
        ["Last reply", fmtDate(x.lastResponseAt)],
        ...(x.optedOut !== undefined ? [["Opted out", x.optedOut ? `yes, ${fmtDate(x.optedOutAt as string)}` : "no"] as [string, unknown]] : []),
        ...(x.consent ? [["Consent", describeConsent(x.consent as Record<string, unknown>)] as [string, unknown]] : []),
        ...Object.entries(x.customFields ?? {}).map(([k, v]) => [k, v] as [string, unknown]),
      ]
    : [];
  return (
    <section>
      <p>
        <a href="/contacts">← All contacts</a>
      </p>
      <h1>Contacts: {x ? nameOf(x) || x.phoneNumber : "…"}</h1>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {x ? (
        <>
          <dl class="facts">
            {facts.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </div>
            ))}
          </dl>
          <form onSubmit={saveNotes} class="notes">
            <label for="contact-notes">Notes</label>
            <textarea id="contact-notes" rows={4} maxLength={5000} value={notes.value} onInput={(e) => (notes.value = (e.target as HTMLTextAreaElement).value)} />
            <button type="submit">Save notes</button>
            <span aria-live="polite">{notice.value}</span>
          </form>
          <h2>Timeline</h2>
          <p>
            <a href={`/messages?contactId=${encodeURIComponent(x.id)}`}>Texts to {nameOf(x) || x.phoneNumber} on the Messages page</a>
          </p>
          {history.value.length ? (
            <ol class="timeline">
              {history.value.map((m) => (
                <li key={m.id} class={`msg-${m.direction}`}>
                  <span class="when">{fmtDate(m.direction === "inbound" ? m.receivedAt : m.createdAt)}</span>{" "}
                  <strong>{m.direction === "inbound" ? "They wrote" : `Text ${m.status}`}</strong>: {m.content}
                </li>
              ))}
            </ol>
          ) : (
            <p>No messages yet.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

function describeConsent(c: Record<string, unknown>): string {
  return [c.source, c.at ? fmtDate(String(c.at)) : null, c.ipAddress].filter(Boolean).join(", ");
}

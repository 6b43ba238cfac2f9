import { useEffect, useRef } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import { api, can, errorText, queryFrom } from "../api";
import { useResource } from "../resource";
import { FormSelect, useFormChoices } from "../components/FormPicker";
import { act } from "../act";
import type { Answer, Contact, ContactListItem, RequestBody } from "../api-types";
import { fmtDate, fmtNum } from "../format";
import { navigate, path, search } from "../router";
import { Select } from "../components/Select";
import { ContactImport } from "./contact-import";
import { ContactExport, EXPORT_FILTER_KEYS } from "./contact-export";
import { Pager } from "../components/Pager";
import { Confirm } from "../components/Confirm";
import { ContactForm, nameOf, parseTags } from "./contact-form";
import { ContactPage, takeFlash } from "./contact-page";
import { fmtPhone } from "../phone-format";


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

export { nameOf, parseTags };

export function Contacts() {
  const id = path.value.split("/")[2];
  if (id === "import") return <ContactImport />;
  if (id === "export") return <ContactExport />;
  if (id === "new") return <ContactNew />;
  return id ? <ContactPage id={decodeURIComponent(id)} /> : <ContactList />;
}

function ContactList() {
  const params = useComputed(() => new URLSearchParams(search.value));
  const forms = useFormChoices();
  const notice = useSignal(takeFlash());
  const selected = useSignal<Set<string>>(new Set());
  const searchText = useSignal(params.value.get("search") ?? "");
  const tagText = useSignal(params.value.get("tags") ?? "");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const query = () => {
    const q = new URLSearchParams();
    for (const k of FILTER_KEYS) {
      const v = params.value.get(k);
      if (v) q.set(k, v);
    }
    return q;
  };
  const {
    data: list,
    error,
    load,
  } = useResource(
    () => {
      const q = query();
      q.set("limit", "50");
      return api.get("/v1/contacts", { query: queryFrom("/v1/contacts", q) }).then((r) => r.data);
    },
    [search.value],
    {
      // The selection keeps only contacts still shown.
      onLoad: (l) => {
        const shown = new Set(l.contacts.map((c) => c.id));
        const kept = [...selected.value].filter((id) => shown.has(id));
        if (kept.length !== selected.value.size) selected.value = new Set(kept);
      },
    },
  );

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
  async function update(c: ContactListItem, changes: RequestBody<"/v1/contacts/{id}", "put">, what: string) {
    await act(notice, () => api.put("/v1/contacts/{id}", { path: { id: c.id }, json: changes }), () => `${nameOf(c) || c.phoneNumber}: ${what} saved.`, load);
  }

  function toggle(id: string, on: boolean) {
    const next = new Set(selected.value);
    if (on) next.add(id);
    else next.delete(id);
    selected.value = next;
  }

  const l = list.value;
  const page = l?.pagination.page ?? 1;
  const allShown = !!l && l.contacts.length > 0 && l.contacts.every((c) => selected.value.has(c.id));
  // Status, tags and the selection change contacts: viewers read them.
  const writable = can("contacts.write");
  const exportQuery = new URLSearchParams();
  for (const k of EXPORT_FILTER_KEYS) if (params.value.get(k)) exportQuery.set(k, params.value.get(k)!);
  return (
    <section>
      <div class="page-head">
        <h1>Contacts</h1>
        <span class="head-actions">
          {/* A button (what an owner looks for to create something); it opens the form's own page, /contacts/new. */}
          {can("contacts.write") ? (
            <button type="button" onClick={() => navigate("/contacts/new")}>
              Add contact
            </button>
          ) : null}
          {can("contacts.import") ? (
            <a class="button-link" href="/contacts/import">
              Import contacts
            </a>
          ) : null}
          {can("contacts.export") ? (
            <a class="button-link" href={`/contacts/export${exportQuery.size ? "?" + exportQuery : ""}`}>
              Export contacts
            </a>
          ) : null}
        </span>
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
        <span class="field">
          <FormSelect id="f-form" label="Form" any="Any form" value={params.value.get("formId") ?? ""} forms={forms.value} onChange={(v) => setParam("formId", v)} />
        </span>
        <Select label="Sort contacts by" value={params.value.get("sortBy") ?? "createdAt"} options={SORTS} onChange={(v) => setParam("sortBy", v)} />
        <Select label="Sort order" value={params.value.get("order") ?? "desc"} options={[["desc", "Descending"], ["asc", "Ascending"]]} onChange={(v) => setParam("order", v)} />
      </form>
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {l ? <p class="summary">{fmtNum(l.pagination.total)} contact(s)</p> : null}
      {selected.value.size ? <BulkBar ids={[...selected.value]} notice={notice} onDone={() => ((selected.value = new Set()), load())} /> : null}
      {l ? (
        l.contacts.length ? (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  {writable ? (
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label="Select all contacts on this page"
                      checked={allShown}
                      onChange={(e) => (selected.value = (e.target as HTMLInputElement).checked ? new Set(l.contacts.map((c) => c.id)) : new Set())}
                    />
                  </th>
                  ) : null}
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
                    {writable ? (
                      <td class="pick">
                        <input type="checkbox" aria-label={`Select ${nameOf(c) || c.phoneNumber}`} checked={selected.value.has(c.id)} onChange={(e) => toggle(c.id, (e.target as HTMLInputElement).checked)} />
                      </td>
                    ) : null}
                    <td data-label="Name">
                      <a href={`/contacts/${encodeURIComponent(c.id)}`}>{nameOf(c) || "(no name)"}</a>
                    </td>
                    <td data-label="Phone">{fmtPhone(c.phoneNumber)}</td>
                    <td data-label="Status">
                      {writable ? (
                      <select aria-label={`Status of ${nameOf(c) || c.phoneNumber}`} value={c.status} onChange={(e) => update(c, { status: (e.target as HTMLSelectElement).value as Contact["status"] }, "status")}>
                        {STATUSES.map((s) => (
                          <option key={s} value={s}>{s}</option>
                        ))}
                      </select>
                      ) : (
                        c.status
                      )}
                    </td>
                    <td data-label="Tags">
                      {writable ? <TagEditor contact={c} onSave={(tags) => update(c, { tags }, "tags")} /> : c.tags.join(", ") || "—"}
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

/** "Add contact": the form, then the new contact's page. */
function ContactNew() {
  return (
    <section>
      <p>
        <a href="/contacts">← All contacts</a>
      </p>
      <h1>Contacts: add a contact</h1>
      <p class="hint">For a customer who gave you their number in person or on the phone. Their consent is recorded as given to you by hand, with your name.</p>
      <ContactForm submitLabel="Add contact" onSaved={(c) => navigate(`/contacts/${encodeURIComponent(c.id)}`)} onCancel={() => navigate("/contacts")} />
    </section>
  );
}

type BulkAction = { kind: "tag"; tag: string } | { kind: "status"; status: Contact["status"] } | { kind: "opt-out"; reason: string } | { kind: "delete" };

/**
 * What can be done to the selected contacts at once; each asks first, naming the count
 * ("Delete 12 contacts?").
 */
function BulkBar(props: { ids: string[]; notice: { value: string }; onDone: () => void }) {
  const tag = useSignal("");
  const status = useSignal<Contact["status"]>("contacted");
  const reason = useSignal("");
  const asking = useSignal<BulkAction | null>(null);
  const n = props.ids.length;
  const count = `${fmtNum(n)} contact${n === 1 ? "" : "s"}`;
  const a = asking.value;
  const ask: Record<BulkAction["kind"], (a: any) => { title: string; body: string; action: string }> = {
    tag: (x) => ({ title: `Add the tag “${x.tag}” to ${count}?`, body: "Their other tags stay.", action: `Tag ${count}` }),
    status: (x) => ({ title: `Set ${count} to ${x.status}?`, body: "Their status changes at once.", action: `Set ${count} to ${x.status}` }),
    "opt-out": () => ({
      title: `Opt out ${count}?`,
      body: "No more texts are sent to them and texts waiting for them are cancelled. Each opt-out is kept in their consent history with your name and the reason.",
      action: `Opt out ${count}`,
    }),
    delete: () => ({ title: `Delete ${count}?`, body: "Their texts and conversations are deleted with them. This cannot be undone.", action: `Delete ${count}` }),
  };
  async function run(x: BulkAction) {
    asking.value = null;
    const ids = props.ids;
    type Out = { data: { updated?: number; optedOut?: number; deleted?: number; errors: Array<{ id: string; message: string }> } };
    const call = (): Promise<Out> =>
      x.kind === "tag"
        ? api.put("/v1/contacts/bulk", { json: { contactIds: ids, updates: { addTags: [x.tag] } } })
        : x.kind === "status"
          ? api.put("/v1/contacts/bulk", { json: { contactIds: ids, updates: { status: x.status } } })
          : x.kind === "opt-out"
            ? api.post("/v1/contacts/bulk/opt-out", { json: { contactIds: ids, ...(x.reason ? { reason: x.reason } : {}) } })
            : api.post("/v1/contacts/bulk/delete", { json: { contactIds: ids } });
    await act(
      props.notice as any,
      call,
      (r) => {
        const done = r.data.updated ?? r.data.optedOut ?? r.data.deleted ?? 0;
        const verb = x.kind === "tag" ? "tagged" : x.kind === "status" ? `set to ${x.status}` : x.kind === "opt-out" ? "opted out" : "deleted";
        const left = r.data.errors.length ? ` ${fmtNum(r.data.errors.length)} could not be changed: ${r.data.errors[0].message}` : "";
        return `${fmtNum(done)} contact${done === 1 ? "" : "s"} ${verb}.${left}`;
      },
      props.onDone,
    );
  }
  const shown = a ? ask[a.kind](a) : null;
  const tags = parseTags(tag.value);
  return (
    // While the dialog asks, the bar's buttons are out of sight: the dialog's own say the same.
    <div class={a ? "bulk-bar asking" : "bulk-bar"} role="group" aria-label={`Change the ${count} selected`}>
      <p class="summary">{count} selected</p>
      <span class="bulk-action">
        <span class="field">
          <label for="bulk-tag">Tag to add</label>
          <input id="bulk-tag" value={tag.value} maxLength={50} placeholder="vip" onInput={(e) => (tag.value = (e.target as HTMLInputElement).value)} />
        </span>
        <button type="button" disabled={tags.length !== 1} onClick={() => (asking.value = { kind: "tag", tag: tags[0] })}>
          Add tag
        </button>
      </span>
      <span class="bulk-action">
        <Select label="New status" value={status.value} options={STATUSES.map((s) => [s, s] as [string, string])} onChange={(v) => (status.value = v as Contact["status"])} />
        <button type="button" onClick={() => (asking.value = { kind: "status", status: status.value })}>
          Set status
        </button>
      </span>
      <span class="bulk-action">
        <span class="field">
          <label for="bulk-reason">Reason for opting out (optional)</label>
          <input id="bulk-reason" value={reason.value} maxLength={500} onInput={(e) => (reason.value = (e.target as HTMLInputElement).value)} />
        </span>
        <button type="button" onClick={() => (asking.value = { kind: "opt-out", reason: reason.value.trim() })}>
          Opt out
        </button>
      </span>
      {can("contacts.delete") ? (
        <span class="bulk-action">
          <button type="button" class="danger" onClick={() => (asking.value = { kind: "delete" })}>
            Delete
          </button>
        </span>
      ) : null}
      <Confirm open={a !== null} title={shown?.title ?? ""} body={shown?.body ?? ""} action={shown?.action ?? ""} onConfirm={() => a && run(a)} onCancel={() => (asking.value = null)} />
    </div>
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

import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText } from "../api";
import { useResource } from "../resource";
import { FormSelect, useFormChoices } from "../components/FormPicker";
import type { Answer, Query, FormSummary } from "../api-types";
import { fmtDate } from "../format";
import { navigate, path, search } from "../router";
import { Pager } from "../components/Pager";
import { LiveBadge, useLiveMessages } from "../live";

/** The inbox's requests: what visitors sent through the forms (GET /v1/submissions). */
export type Request = Answer<"/v1/submissions/{id}">["data"]["submission"];

/** Requests per page of the inbox. */
const PAGE_SIZE = 50;
const CONTACT_FIELDS = new Set(["phoneNumber", "firstName", "lastName", "email", "source"]);

/** Who sent it: the name they gave, else their number. */
export function senderOf(r: Request): string {
  const v = (f: string) => r.values.find((x) => x.field === f)?.value ?? "";
  return [v("firstName"), v("lastName")].filter(Boolean).join(" ") || v("phoneNumber") || "Someone";
}

/** The first thing they wrote that is not a name or number. */
export function previewOf(r: Request): string {
  const x = r.values.find((v) => !CONTACT_FIELDS.has(v.field) && v.value.trim() !== "");
  return x ? x.value.replace(/\s+/g, " ").trim() : "";
}

/** The words for a request that got no text. */
export function noTextWords(suppressed: Request["suppressed"]): string {
  if (suppressed === "opted-out") return "opted out of texts: reply another way";
  if (suppressed === "no-consent") return "did not tick the consent box: no text sent";
  if (suppressed === "recipient-limit") return "no text sent: this number's daily limit was reached";
  return "";
}

export function Inbox() {
  const id = path.value.split("/")[2];
  return id ? <RequestView id={decodeURIComponent(id)} /> : <RequestList />;
}

function RequestList() {
  const params = new URLSearchParams(search.value);
  const formId = params.get("formId") ?? "";
  const unreadOnly = params.get("unread") === "true";
  const page = Math.max(1, Number(params.get("page")) || 1);
  const forms = useFormChoices();
  const setQuery = (changes: Record<string, string>) => {
    const q = new URLSearchParams(search.value);
    for (const [k, v] of Object.entries(changes)) v ? q.set(k, v) : q.delete(k);
    const s = q.toString();
    navigate(`/inbox${s ? `?${s}` : ""}`, true);
  };
  const query: Query<"/v1/submissions"> = { limit: PAGE_SIZE, page, formId: formId || undefined, unread: unreadOnly ? "true" : undefined };
  const { data: list, error, load } = useResource(() => api.get("/v1/submissions", { query }).then((r) => r.data), [formId, unreadOnly, page]);
  const live = useLiveMessages(() => load());
  const l = list.value;
  const exportQuery = new URLSearchParams();
  if (formId) exportQuery.set("formId", formId);
  return (
    <section>
      <div class="page-head">
        <h1>Requests</h1>
        <LiveBadge state={live.value} />
        {l ? <span class="summary">{l.pagination.total} in all</span> : null}
      </div>
      <p class="hint">Everything visitors sent through your forms, newest first. Open one to read it and reply.</p>
      <form class="filters" aria-label="Filter requests" onSubmit={(e) => e.preventDefault()}>
        <span class="field">
          <FormSelect id="inbox-form" label="Form" any="All forms" value={formId} forms={forms.value} onChange={(v) => setQuery({ formId: v, page: "" })} />
        </span>
        <label class="check">
          <input type="checkbox" checked={unreadOnly} onChange={(e) => setQuery({ unread: (e.target as HTMLInputElement).checked ? "true" : "", page: "" })} /> Unread only
        </label>
        {can("contacts.export") ? (
          <a class="button-link secondary" href={`/v1/submissions/export?${exportQuery}`} download>
            Download as CSV
          </a>
        ) : null}
      </form>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {l ? (
        l.submissions.length ? (
          <ul class="conversations requests" aria-label="Requests, newest first">
            {l.submissions.map((r) => (
              <li key={r.id} class={r.readAt ? "" : "unread"}>
                <a href={`/inbox/${encodeURIComponent(r.id)}`}>
                  <strong>{senderOf(r)}</strong>
                  {r.readAt ? null : <span class="badge">new</span>}
                  <span class="request-form">{r.formName}</span>
                  {r.suppressed ? <span class="badge status-failed">{noTextWords(r.suppressed)}</span> : null}
                </a>
                <span class="conv-preview">{previewOf(r)}</span>
                <span class="when">{fmtDate(r.createdAt)}</span>
              </li>
            ))}
          </ul>
        ) : (
          <p>{formId || unreadOnly ? "No requests match these filters." : "No requests yet: they appear here as soon as someone fills in one of your forms."}</p>
        )
      ) : (
        <p role="status">Loading…</p>
      )}
      {l ? <Pager page={l.pagination.page} totalPages={l.pagination.totalPages} label="Pages of requests" onPage={(p) => setQuery({ page: String(p) })} /> : null}
    </section>
  );
}

function RequestView(props: { id: string }) {
  // Opening it marks it read (the first time stays).
  const { data: r, error } = useResource(() => api.post("/v1/submissions/{id}/read", { path: { id: props.id } }).then((a) => a.data.submission), [props.id]);
  const x = r.value;
  return (
    <section>
      <p>
        <a href="/inbox">← All requests</a>
      </p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {x ? (
        <>
          <h1>Request from {senderOf(x)}</h1>
          <p>
            {x.formName} · {fmtDate(x.createdAt)}
          </p>
          {x.suppressed ? <p class="warning">{noTextWords(x.suppressed)[0].toUpperCase() + noTextWords(x.suppressed).slice(1)}.</p> : null}
          <RequestAnswers request={x} />
          <p class="actions">
            <a class="button-link" href={`/conversations/${encodeURIComponent(x.contactId)}`}>
              Conversation
            </a>
            <a class="button-link secondary" href={`/contacts/${encodeURIComponent(x.contactId)}`}>
              Contact page
            </a>
          </p>
        </>
      ) : error.value ? null : (
        <p role="status">Loading…</p>
      )}
    </section>
  );
}

/** A request's answers, label by label (the inbox, the contact's timeline, a conversation). */
export function RequestAnswers(props: { request: Request }) {
  return (
    <dl class="request-answers">
      {props.request.values.map((v) => (
        <div key={v.field}>
          <dt>{v.label}</dt>
          <dd>{v.value}</dd>
        </div>
      ))}
    </dl>
  );
}

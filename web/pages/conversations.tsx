import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import type { Answer, Query, Conversation, ThreadMessage } from "../api-types";
import { failureSentence } from "../failure-reasons";
import { fmtDate } from "../format";
import { path } from "../router";
import { LiveBadge, useLiveMessages } from "../live";
import { nameOf } from "../contact-names";
import { RequestAnswers, noTextWords, type Request } from "./inbox";
import { fmtPhone } from "../phone-format";
import { STAGE_WORDS } from "../stage-words";
import type { MessageStage } from "../../src/domain/message-stage";


const who = (c: Conversation["contact"]) => nameOf(c) || fmtPhone(c.phoneNumber);
/** The newest texts of a thread shown at once. */
const THREAD_PAGE = 100;

export function Conversations() {
  const id = path.value.split("/")[2];
  return id ? <Thread contactId={decodeURIComponent(id)} /> : <ConversationList />;
}

function ConversationList() {
  const searchText = useSignal("");
  const unreadOnly = useSignal(false);
  const { data: list, error, load } = useResource(() => {
    const query: Query<"/v1/conversations"> = { limit: 100, search: searchText.value.trim() || undefined, unread: unreadOnly.value || undefined };
    return api.get("/v1/conversations", { query }).then((r) => r.data);
  });
  const live = useLiveMessages(() => load());
  const l = list.value;
  return (
    <section>
      <div class="page-head">
        <h1>Conversations</h1>
        <LiveBadge state={live.value} />
        {l ? <span class="summary">{l.unreadTotal} unread</span> : null}
      </div>
      <form
        class="filters"
        role="search"
        aria-label="Find conversations"
        onSubmit={(e) => {
          e.preventDefault();
          load();
        }}
      >
        <span class="field">
          <label for="conv-search">Search</label>
          <input id="conv-search" type="search" value={searchText.value} onInput={(e) => (searchText.value = (e.target as HTMLInputElement).value)} />
        </span>
        <label class="check">
          <input type="checkbox" checked={unreadOnly.value} onChange={(e) => ((unreadOnly.value = (e.target as HTMLInputElement).checked), load())} /> Unread only
        </label>
        <button type="submit" class="secondary">Search</button>
      </form>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {l ? (
        l.conversations.length ? (
          <ul class="conversations">
            {l.conversations.map((c) => (
              <li key={c.contactId} class={c.unreadCount ? "unread" : ""}>
                <a href={`/conversations/${encodeURIComponent(c.contactId)}`}>
                  <strong>{who(c.contact)}</strong>
                  {c.unreadCount ? <span class="badge">{c.unreadCount} unread</span> : null}
                  {c.contact.optedOut ? <span class="badge status-failed">opted out</span> : null}
                </a>
                <span class="conv-preview">
                  {c.lastMessage ? `${c.lastMessage.direction === "inbound" ? "They: " : "You: "}${c.lastMessage.preview}` : ""}
                </span>
                <span class="when">{fmtDate(c.lastActivityAt)}</span>
              </li>
            ))}
          </ul>
        ) : (
          <p>No conversations yet: they start when a contact is texted or writes back.</p>
        )
      ) : null}
    </section>
  );
}

function Thread(props: { contactId: string }) {
  const contact = useSignal<Conversation["contact"] | null>(null);
  const messages = useSignal<ThreadMessage[]>([]);
  const requests = useSignal<Request[]>([]);
  const error = useSignal("");
  const reply = useSignal("");
  const notice = useSignal("");
  const end = useRef<HTMLDivElement>(null);
  async function load(markRead: boolean) {
    try {
      const r = await api.get("/v1/conversations/{contactId}", { path: { contactId: props.contactId }, query: { order: "desc", limit: THREAD_PAGE } });
      contact.value = r.data.contact;
      messages.value = [...r.data.messages].reverse();
      // The requests that started it (and any since), shown in the thread at their time.
      const q = await api.get("/v1/submissions", { query: { contactId: props.contactId, limit: 20 } }).catch(() => null);
      requests.value = q ? [...q.data.submissions].reverse() : [];
      if (markRead && r.data.messages.some((m: ThreadMessage) => m.direction === "inbound")) {
        await api.post("/v1/conversations/{contactId}/read", { path: { contactId: props.contactId } });
      }
      queueMicrotask(() => end.current?.scrollIntoView({ block: "nearest" }));
    } catch (e) {
      error.value = errorText(e);
    }
  }
  useEffect(() => {
    load(true);
  }, [props.contactId]);
  const live = useLiveMessages(() => load(true));
  async function send(e: Event) {
    e.preventDefault();
    await act(
      notice,
      () => api.post("/v1/messages", { json: { contactId: props.contactId, content: reply.value } }),
      () => {
        reply.value = "";
        return "Reply queued.";
      },
      () => load(false),
    );
  }
  const c = contact.value;
  return (
    <section>
      <p>
        <a href="/conversations">← All conversations</a>
      </p>
      <div class="page-head">
        <h1>Conversations: {c ? who(c) : "…"}</h1>
        <LiveBadge state={live.value} />
      </div>
      {c ? (
        <p>
          {fmtPhone(c.phoneNumber)} · {c.status}
          {c.optedOut ? " · opted out: replied STOP, so no text can be sent until they reply START" : ""} · <a href={`/contacts/${encodeURIComponent(c.id)}`}>Contact page</a>
        </p>
      ) : null}
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <ol class="thread" aria-label="Messages, oldest first">
        {threadOf(messages.value, requests.value).map((item) =>
          item.kind === "request" ? (
            <li key={item.q.id} class="bubble inbound request">
              <span class="visually-hidden">They sent the form:</span>
              <strong>
                Request through {item.q.formName}
                {item.q.suppressed ? ` (${noTextWords(item.q.suppressed)})` : ""}
              </strong>
              <RequestAnswers request={item.q} />
              <span class="when">
                {fmtDate(item.q.createdAt)} · <a href={`/inbox/${encodeURIComponent(item.q.id)}`}>Open request</a>
              </span>
            </li>
          ) : (
            <li key={item.m.id} class={`bubble ${item.m.direction}`}>
              <span class="visually-hidden">{item.m.direction === "inbound" ? "They wrote:" : "You sent:"}</span>
              <span class="bubble-text">{item.m.content}</span>
              <span class="when">
                {fmtDate(item.m.at)}
                {item.m.direction === "outbound" ? ` · ${STAGE_WORDS[item.m.stage as MessageStage] ?? item.m.status}${item.m.status === "failed" || item.m.status === "cancelled" ? (item.m.failureReason ? `: ${failureSentence(item.m.failureReason)}` : "") : ""}` : item.m.history ? " · an earlier text the phone sent again: nothing was done" : item.m.keyword ? ` · keyword ${item.m.keyword}` : ""}
              </span>
              {item.m.direction === "outbound" && item.m.failureReason && (item.m.status === "failed" || item.m.status === "cancelled") ? <span class="when code-detail">Code: {item.m.failureReason}</span> : null}
            </li>
          ),
        )}
      </ol>
      <div ref={end} />
      {c && !c.optedOut && can("messages.send") ? (
        <form class="reply" onSubmit={send}>
          <label for="reply-text">Reply</label>
          <textarea id="reply-text" rows={3} maxLength={1600} required value={reply.value} onInput={(e) => (reply.value = (e.target as HTMLTextAreaElement).value)} />
          <button type="submit">Send reply</button>
          <span aria-live="polite">{notice.value}</span>
        </form>
      ) : null}
    </section>
  );
}

/** Texts and the form requests in one thread, oldest first (a request comes before the text it queued). */
function threadOf(messages: ThreadMessage[], requests: Request[]) {
  const items: Array<{ kind: "message"; at: string; m: ThreadMessage } | { kind: "request"; at: string; q: Request }> = [
    ...requests.map((q) => ({ kind: "request" as const, at: q.createdAt, q })),
    ...messages.map((m) => ({ kind: "message" as const, at: m.at, m })),
  ];
  // Stable: a request and its text of the same instant keep the request first.
  return items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

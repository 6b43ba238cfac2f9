/**
 * Settings → Automatic replies (the STOP/START/HELP keyword lists and their replies) and Keyword
 * replies (the owner's own answers, such as HOURS). docs/api-decisions.md, "Keyword phrases" and
 * "Keyword replies".
 */
import { splitTags } from "../../src/domain/tags";
import { useEffect } from "preact/hooks";
import { useSignal, type Signal } from "@preact/signals";
import { api, ApiError, can, errorText, fieldErrorsOf } from "../api";
import { useResource } from "../resource";
import type { Answer, KeywordReply, RequestBody } from "../api-types";
import { errAttrs, FieldError } from "../components/FieldError";
import { Confirm } from "../components/Confirm";
import { CardTable } from "../components/CardTable";
import { normalizeKeyword, parseKeyword, type KeywordUse } from "../../src/domain/keywords";
import { keywordExamples, keywordLines } from "../keyword-examples";

type ListKey = "optOutKeywords" | "optInKeywords" | "helpKeywords";
const REPLIES: Array<[key: "optOutReply" | "optInReply" | "helpReply", label: string]> = [
  ["optOutReply", "Reply to STOP (opt-out)"],
  ["optInReply", "Reply to START (opt-in again)"],
  ["helpReply", "Reply to HELP"],
];
const KEYWORDS: Array<[key: ListKey, label: string, use: KeywordUse]> = [
  ["optOutKeywords", "Words that stop all texts", "opt-out"],
  ["optInKeywords", "Words that start texts again", "opt-in"],
  ["helpKeywords", "Words answered with the help reply", "help"],
];
/** What a matching text does, per kind of keyword. */
const DOES: Record<KeywordUse, string> = {
  "opt-out": "stops all texts to that number",
  "opt-in": "starts texts again (for a number that had stopped them)",
  help: "gets the help reply",
  reply: "gets this reply",
};
type Status = NonNullable<KeywordReply["setStatus"]>;
const STATUS_NAMES: Record<Status, string> = { new: "New", contacted: "Contacted", responded: "Responded", converted: "Converted" };
const CONTACT_STATUSES = Object.keys(STATUS_NAMES) as Status[];

function Examples(props: { use: KeywordUse; typed: string; id: string }) {
  const ex = keywordExamples(props.use, props.typed);
  if (ex.yes.length === 0) return <small id={props.id} class="hint">One word or phrase per line.</small>;
  return (
    <small id={props.id} class="hint">
      One word or phrase per line. {ex.yes.map((t) => `"${t}"`).join(", ")} → {DOES[props.use]}; {ex.no ? `"${ex.no}" → nothing: other words make it a sentence.` : ""}
    </small>
  );
}

/** The dashboard's own words for a refusal of everyday keywords (the API's 409 COMMON_WORDS_UNCONFIRMED). */
function commonWordsText(err: ApiError, uses: Record<string, KeywordUse>): string {
  const words: Record<string, string[]> = err.body?.details?.words ?? {};
  const parts = Object.entries(words).map(([field, ws]) => {
    const list = ws.map((w) => `"${w.toLowerCase()}"`).join(", ");
    return `${list}: a customer who texts just that ${DOES[uses[field] ?? "reply"]}`;
  });
  return `These are everyday words customers often text for other reasons. ${parts.join(". ")}. Save anyway?`;
}

const isCommonWords = (e: unknown): e is ApiError => e instanceof ApiError && e.code === "COMMON_WORDS_UNCONFIRMED";

/**
 * The automatic answers to STOP, START and HELP (`part` "replies": Settings → Business) or the
 * words that trigger them ("keywords": Settings → Texting rules), GET/PUT /v1/account/settings;
 * each page saves only its own part.
 */
export function Replies(props: { part: "replies" | "keywords" }) {
  const replies = props.part === "replies" ? REPLIES : [];
  const keywords = props.part === "keywords" ? KEYWORDS : [];
  const values = useSignal<Record<string, string> | null>(null);
  const preview = useSignal<Record<string, string>>({});
  const notice = useSignal("");
  const error = useSignal("");
  const fieldErrors = useSignal<Array<{ field: string; message: string }>>([]);
  const confirming = useSignal<string | null>(null);
  const tryText = useSignal("");
  const show = (settings: Answer<"/v1/account/settings">["data"]["settings"]) => {
    const v: Record<string, string> = {};
    for (const [k] of REPLIES) v[k] = settings[k];
    for (const [k] of KEYWORDS) v[k] = settings[k].join("\n");
    values.value = v;
  };
  useResource(() => api.get("/v1/account/settings").then((r) => r.data), [], { error, onLoad: (d) => (show(d.settings), (preview.value = d.preview)) });
  async function save(confirmCommonWords: boolean) {
    const v = values.value;
    if (!v) return;
    fieldErrors.value = [];
    confirming.value = null;
    try {
      const json: RequestBody<"/v1/account/settings", "put"> = {};
      for (const [k] of replies) json[k] = v[k];
      for (const [k] of keywords) json[k] = keywordLines(v[k]);
      if (confirmCommonWords) json.confirmCommonWords = true;
      const r = await api.put("/v1/account/settings", { json });
      show(r.data.settings);
      preview.value = r.data.preview;
      notice.value = props.part === "replies" ? "Replies saved." : "Words saved.";
    } catch (err) {
      if (isCommonWords(err)) {
        notice.value = "";
        confirming.value = commonWordsText(err, Object.fromEntries(KEYWORDS.map(([k, , use]) => [k, use])));
        return;
      }
      notice.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
    }
  }
  const errs = fieldErrors.value;
  const v = values.value;
  // What a customer's text would do with the lists as typed (before saving).
  const tried = tryText.value.trim() === "" || !v ? null : (() => {
    const k = normalizeKeyword(tryText.value);
    const hit = KEYWORDS.find(([key]) => keywordLines(v[key]).map(parseKeyword).includes(k));
    return hit ? `This text ${DOES[hit[2]]}.` : "This text is not one of these keywords: nothing automatic happens (a keyword reply below may still answer it).";
  })();
  return (
    <>
      {props.part === "replies" ? (
        <>
          <h2>Automatic replies</h2>
          <p>
            Sent once when someone texts a keyword. Texting STOP always stops all texts to that number, whatever the reply says; {"{{accountName}}"} is replaced by
            the business name.
          </p>
        </>
      ) : (
        <>
          <h2>Words that stop and start texts</h2>
          <p>
            A customer who texts one of these words stops (or starts again) every text to their number, or gets the help reply. The replies themselves are on{" "}
            <a href="/settings/business">Business</a>.
          </p>
        </>
      )}
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {v ? (
        <form class="notes" onSubmit={(e) => (e.preventDefault(), save(false))}>
          {replies.map(([k, label]) => (
            <span class="field wide" key={k}>
              <label for={`reply-${k}`}>{label}</label>
              <textarea
                id={`reply-${k}`}
                rows={2}
                maxLength={306}
                value={v[k]}
                {...errAttrs(errs, k, `reply-${k}-error`, `reply-${k}-preview`)}
                onInput={(e) => (values.value = { ...values.value!, [k]: (e.target as HTMLTextAreaElement).value })}
              />
              <small id={`reply-${k}-preview`}>As sent: {preview.value[k]}</small>
              <FieldError errors={errs} name={k} id={`reply-${k}-error`} />
            </span>
          ))}
          {keywords.map(([k, label, use]) => (
            <span class="field wide" key={k}>
              <label for={`keywords-${k}`}>{label}</label>
              <textarea
                id={`keywords-${k}`}
                autocomplete="off"
                rows={Math.min(10, Math.max(3, v[k].split("\n").length))}
                value={v[k]}
                {...errAttrs(errs, k, `keywords-${k}-error`, `keywords-${k}-examples`)}
                onInput={(e) => (values.value = { ...values.value!, [k]: (e.target as HTMLTextAreaElement).value })}
              />
              <Examples use={use} typed={v[k]} id={`keywords-${k}-examples`} />
              <FieldError errors={errs} name={k} id={`keywords-${k}-error`} />
            </span>
          ))}
{props.part === "keywords" ? (
            <>
          <small class="hint">
            A text triggers a keyword only when it is exactly that word or phrase: any case, with punctuation and spaces around it ignored. A text with other words is a
            sentence and never triggers anything.
          </small>
          <span class="field wide">
            <label for="keywords-try">Try a customer's text</label>
            <input id="keywords-try" autocomplete="off" value={tryText.value} aria-describedby="keywords-try-result" onInput={(e) => (tryText.value = (e.target as HTMLInputElement).value)} />
            <small id="keywords-try-result" class="hint" aria-live="polite">{tried ?? ""}</small>
          </span>
            </>
          ) : null}
          <button type="submit">{props.part === "replies" ? "Save replies" : "Save words"}</button>
          <span aria-live="polite">{notice.value}</span>
        </form>
      ) : null}
      <CommonWordsConfirm question={confirming} titleId="common-words-title" onSave={() => save(true)} />
    </>
  );
}

/** Asked before saving everyday words as keywords (`question`: the server's warning; null: closed). */
function CommonWordsConfirm(props: { question: Signal<string | null>; titleId: string; onSave: () => void }) {
  return (
    <Confirm
      open={props.question.value !== null}
      titleId={props.titleId}
      title="Use everyday words as keywords?"
      body={props.question.value ?? ""}
      action="Save anyway"
      cancel="Go back"
      onConfirm={props.onSave}
      onCancel={() => (props.question.value = null)}
    />
  );
}

interface Draft {
  keywords: string;
  reply: string;
  addTags: string;
  setStatus: Status | "";
  isActive: boolean;
}
const EMPTY: Draft = { keywords: "", reply: "", addTags: "", setStatus: "", isActive: true };
const draftOf = (r: KeywordReply): Draft => ({ keywords: r.keywords.join("\n"), reply: r.reply, addTags: r.addTags.join(", "), setStatus: r.setStatus ?? "", isActive: r.isActive });
const nameOf = (r: KeywordReply) => r.keywords.join(", ");

/** The owner's keyword replies (GET/POST /v1/keyword-replies, PUT/DELETE /v1/keyword-replies/<id>). */
export function KeywordReplies() {
  const notice = useSignal("");
  const draft = useSignal<Draft>(EMPTY);
  const editing = useSignal<KeywordReply | null>(null);
  const fieldErrors = useSignal<Array<{ field: string; message: string }>>([]);
  const confirming = useSignal<string | null>(null);
  const deleting = useSignal<KeywordReply | null>(null);
  const { data: rules, error, load } = useResource(() => api.get("/v1/keyword-replies").then((r) => r.data.keywordReplies));
  const set = (patch: Partial<Draft>) => (draft.value = { ...draft.value, ...patch });

  async function save(confirmCommonWords: boolean) {
    const d = draft.value;
    fieldErrors.value = [];
    confirming.value = null;
    const json: RequestBody<"/v1/keyword-replies", "post"> = {
      keywords: keywordLines(d.keywords),
      reply: d.reply,
      addTags: splitTags(d.addTags),
      setStatus: d.setStatus === "" ? null : d.setStatus,
      isActive: d.isActive,
    };
    if (confirmCommonWords) json.confirmCommonWords = true;
    const was = editing.value;
    try {
      const r = was
        ? await api.put("/v1/keyword-replies/{id}", { path: { id: was.id }, json })
        : await api.post("/v1/keyword-replies", { json });
      notice.value = `${was ? "Saved" : "Added"} the reply to ${nameOf(r.data.keywordReply)}.`;
      draft.value = EMPTY;
      editing.value = null;
    } catch (err) {
      if (isCommonWords(err)) {
        notice.value = "";
        confirming.value = commonWordsText(err, { keywords: "reply" });
        return;
      }
      notice.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
      return;
    }
    load();
  }
  async function toggle(r: KeywordReply) {
    try {
      await api.put("/v1/keyword-replies/{id}", { path: { id: r.id }, json: { isActive: !r.isActive } });
      notice.value = r.isActive ? `The reply to ${nameOf(r)} is off: nobody gets it until you switch it on.` : `The reply to ${nameOf(r)} is on again.`;
    } catch (e) {
      notice.value = errorText(e);
    }
    load();
  }
  async function remove() {
    const r = deleting.value;
    deleting.value = null;
    if (!r) return;
    try {
      await api.delete("/v1/keyword-replies/{id}", { path: { id: r.id } });
      notice.value = `Deleted the reply to ${nameOf(r)}.`;
      if (editing.value?.id === r.id) ((editing.value = null), (draft.value = EMPTY));
    } catch (e) {
      notice.value = errorText(e);
    }
    load();
  }
  function edit(r: KeywordReply) {
    editing.value = r;
    draft.value = draftOf(r);
    fieldErrors.value = [];
    notice.value = "";
    document.getElementById("kr-keywords")?.focus();
  }
  const d = draft.value;
  const errs = fieldErrors.value;
  const list = rules.value;
  return (
    <>
      <h2>Keyword replies</h2>
      <p>
        Answer a word your customers text, such as HOURS, with a reply of your own, and tag them. Each customer gets a reply at most once an hour, never after they
        texted STOP; the STOP, START and HELP words (Settings → Texting rules) always come first.
      </p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {list && list.length === 0 ? <p class="hint">No keyword replies yet.</p> : null}
      {list && list.length > 0 ? (
        <CardTable columns={["Keywords", "Reply", "Then", "State", "Actions"]}>
          {list.map((r) => (
            <tr key={r.id}>
              <th scope="row">{nameOf(r)}</th>
              <td data-label="Reply">{r.preview}</td>
              <td data-label="Then">
                {[r.addTags.length ? `tag ${r.addTags.join(", ")}` : "", r.setStatus ? `status ${STATUS_NAMES[r.setStatus]}` : ""].filter(Boolean).join("; ") || "—"}
              </td>
              <td data-label="State">{r.isActive ? "On" : "Off"}</td>
              <td data-label="Actions" class="actions">
                <button type="button" class="secondary" aria-label={`Edit the reply to ${nameOf(r)}`} onClick={() => edit(r)}>
                  Edit
                </button>
                <button type="button" class="secondary" aria-label={`${r.isActive ? "Switch off" : "Switch on"} the reply to ${nameOf(r)}`} onClick={() => toggle(r)}>
                  {r.isActive ? "Switch off" : "Switch on"}
                </button>
                <button type="button" class="secondary" aria-label={`Delete the reply to ${nameOf(r)}`} onClick={() => (deleting.value = r)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </CardTable>
      ) : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      <form class="notes" onSubmit={(e) => (e.preventDefault(), save(false))} aria-labelledby="kr-form-title">
        <h3 id="kr-form-title">{editing.value ? `Change the reply to ${nameOf(editing.value)}` : "Add a keyword reply"}</h3>
        <span class="field wide">
          <label for="kr-keywords">Keywords</label>
          <textarea
            id="kr-keywords"
            rows={3}
            autocomplete="off"
            value={d.keywords}
            {...errAttrs(errs, "keywords", "kr-keywords-error", "kr-keywords-examples")}
            onInput={(e) => set({ keywords: (e.target as HTMLTextAreaElement).value })}
          />
          <Examples use="reply" typed={d.keywords} id="kr-keywords-examples" />
          <FieldError errors={errs} name="keywords" id="kr-keywords-error" />
        </span>
        <span class="field wide">
          <label for="kr-reply">Reply</label>
          <textarea id="kr-reply" rows={2} maxLength={306} value={d.reply} {...errAttrs(errs, "reply", "kr-reply-error")} onInput={(e) => set({ reply: (e.target as HTMLTextAreaElement).value })} />
          <FieldError errors={errs} name="reply" id="kr-reply-error" />
        </span>
        <span class="field wide">
          <label for="kr-tags">Tags to add to the customer (optional)</label>
          <input id="kr-tags" autocomplete="off" value={d.addTags} {...errAttrs(errs, "addTags", "kr-tags-error", "kr-tags-help")} onInput={(e) => set({ addTags: (e.target as HTMLInputElement).value })} />
          <small id="kr-tags-help" class="hint">Separated by commas, e.g. asked-hours.</small>
          <FieldError errors={errs} name="addTags" id="kr-tags-error" />
        </span>
        <span class="field">
          <label for="kr-status">Set the customer's status</label>
          <select id="kr-status" value={d.setStatus} onChange={(e) => set({ setStatus: (e.target as HTMLSelectElement).value as Status | "" })}>
            <option value="">Leave it as it is</option>
            {CONTACT_STATUSES.map((s) => (
              <option key={s} value={s}>{STATUS_NAMES[s]}</option>
            ))}
          </select>
        </span>
        <label class="check">
          <input type="checkbox" checked={d.isActive} onChange={(e) => set({ isActive: (e.target as HTMLInputElement).checked })} /> On (customers get this reply)
        </label>
        <span class="inline-form">
          <button type="submit">{editing.value ? "Save keyword reply" : "Add keyword reply"}</button>
          {editing.value ? (
            <button type="button" class="secondary" onClick={() => ((editing.value = null), (draft.value = EMPTY), (fieldErrors.value = []))}>
              Cancel
            </button>
          ) : null}
        </span>
      </form>
      <CommonWordsConfirm question={confirming} titleId="kr-common-words-title" onSave={() => save(true)} />
      <Confirm
        open={deleting.value !== null}
        titleId="kr-delete-title"
        title={`Delete the reply to ${deleting.value ? nameOf(deleting.value) : ""}?`}
        body={`Customers who text ${deleting.value ? nameOf(deleting.value) : ""} will no longer get "${deleting.value?.preview ?? ""}". Replies already waiting to be sent still go out. To stop it for a while instead, switch it off.`}
        action="Delete reply"
        onConfirm={remove}
        onCancel={() => (deleting.value = null)}
      />
    </>
  );
}

/** Automations → Keyword replies (/automations/keyword-replies): the owner's answers to words such as HOURS. */
export function KeywordRepliesPage() {
  return (
    <section>
      <p>
        <a href="/automations">← All automations</a>
      </p>
      <h1>Automations: keyword replies</h1>
      {can("settings.read") ? <KeywordReplies /> : <p class="notice">Only an owner or an admin of the account can see and change keyword replies.</p>}
    </section>
  );
}

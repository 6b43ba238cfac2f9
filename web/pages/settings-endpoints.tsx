import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText, fieldErrorsOf } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import type { Answer } from "../api-types";
import { Confirm } from "../components/Confirm";
import { CopyButton } from "../components/CopyButton";
import { CardTable } from "../components/CardTable";
import { errAttrs, FieldError } from "../components/FieldError";
import { fmtDate } from "../format";

type Endpoint = Answer<"/v1/webhook-endpoints">["data"]["endpoints"][number];

/** The endpoint's state in words: on, paused, or turned off by Textwire after days of failures. */
function stateOf(e: Endpoint): string {
  if (e.disabledAt) return `turned off ${fmtDate(e.disabledAt)}${e.disabledReason ? `: ${e.disabledReason}` : ""}`;
  return e.isActive ? "on" : "paused";
}

/**
 * Settings → Developers → Event endpoints (admins): the addresses Textwire posts signed events to
 * (docs/events.md). A new endpoint's signing secret, and a new one after "New signing secret", is
 * shown once. Endpoints an SMSGate app registered are listed too.
 */
export function EventEndpoints() {
  const notice = useSignal("");
  const url = useSignal("");
  const description = useSignal("");
  const fieldErrors = useSignal<Array<{ field: string; message: string }>>([]);
  const secret = useSignal<{ url: string; secret: string } | null>(null);
  const removing = useSignal<Endpoint | null>(null);
  const writable = can("event-endpoints.write");
  const { data: list, error, load } = useResource(() => api.get("/v1/webhook-endpoints").then((r) => r.data.endpoints));
  async function add(e: Event) {
    e.preventDefault();
    fieldErrors.value = [];
    try {
      const r = await api.post("/v1/webhook-endpoints", { json: { url: url.value.trim(), events: ["*"], ...(description.value.trim() ? { description: description.value.trim() } : {}) } });
      secret.value = { url: r.data.endpoint.url, secret: r.data.endpoint.secret };
      url.value = "";
      description.value = "";
      notice.value = "Endpoint added: it gets every event from now on.";
      load();
    } catch (err) {
      notice.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
    }
  }
  async function rotate(x: Endpoint) {
    await act(
      notice,
      () => api.post("/v1/webhook-endpoints/{id}/rotate-secret", { path: { id: x.id } }),
      (r) => {
        secret.value = { url: x.url, secret: r.data.endpoint.secret };
        return "New signing secret made: the old one keeps signing for a while, so update your receiver now.";
      },
      load,
    );
  }
  async function remove() {
    const x = removing.value;
    removing.value = null;
    if (!x) return;
    await act(notice, () => api.delete("/v1/webhook-endpoints/{id}", { path: { id: x.id } }), () => `Removed ${x.url}: it gets no more events.`, load);
  }
  const errs = fieldErrors.value;
  return (
    <>
      <h2 id="event-endpoints">Event endpoints</h2>
      <p>Textwire posts each event (a text sent, delivered or failed, a reply, an opt-out…) to these addresses, signed so your receiver can check it came from here.</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {list.value && list.value.length === 0 ? <p class="hint">No event endpoints yet.</p> : null}
      {list.value && list.value.length > 0 ? (
        <CardTable columns={["Address", "Events", "State", "Added", writable && "Actions"]}>
          {list.value.map((x) => (
            <tr key={x.id}>
              <th scope="row">
                <code>{x.url}</code>
                {x.description ? <small class="hint"> {x.description}</small> : null}
                {x.format === "smsgate" ? <small class="hint"> (registered by an SMSGate app)</small> : null}
              </th>
              <td data-label="Events">{x.events.includes("*") ? "all" : x.events.join(", ")}</td>
              <td data-label="State">{stateOf(x)}</td>
              <td data-label="Added">{fmtDate(x.createdAt)}</td>
              {writable ? (
                <td data-label="Actions" class="actions">
                  {x.format === "textwire" ? (
                    <button type="button" class="secondary" aria-label={`New signing secret for ${x.url}`} onClick={() => rotate(x)}>
                      New signing secret
                    </button>
                  ) : null}{" "}
                  <button type="button" class="secondary" aria-label={`Remove ${x.url}`} onClick={() => (removing.value = x)}>
                    Remove
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </CardTable>
      ) : null}
      {secret.value ? (
        <div class="fresh-key" role="status">
          <p>
            <strong>Signing secret of {secret.value.url} — copy it into your receiver now, it is shown only this once:</strong>
          </p>
          <code class="secret" data-testid="endpoint-secret">{secret.value.secret}</code>{" "}
          <CopyButton text={secret.value.secret} onDone={(m) => (notice.value = m)}>
            Copy secret
          </CopyButton>{" "}
          <button type="button" class="secondary" onClick={() => (secret.value = null)}>
            I have stored it
          </button>
        </div>
      ) : null}
      {writable ? (
        <form class="inline-form" onSubmit={add}>
          <span class="field">
            <label for="endpoint-url">Address of your receiver</label>
            <input id="endpoint-url" type="url" required placeholder="https://example.com/textwire-events" value={url.value} {...errAttrs(errs, "url", "endpoint-url-error")} onInput={(e) => (url.value = (e.target as HTMLInputElement).value)} />
            <FieldError errors={errs} name="url" id="endpoint-url-error" />
          </span>
          <span class="field">
            <label for="endpoint-description">What it is (for you)</label>
            <input id="endpoint-description" maxLength={200} value={description.value} {...errAttrs(errs, "description", "endpoint-description-error")} onInput={(e) => (description.value = (e.target as HTMLInputElement).value)} />
            <FieldError errors={errs} name="description" id="endpoint-description-error" />
          </span>
          <button type="submit">Add endpoint</button>
        </form>
      ) : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      <Confirm
        open={removing.value !== null}
        title="Remove this endpoint?"
        body={`${removing.value?.url ?? ""} gets no more events, and its delivery log is deleted.`}
        action="Remove endpoint"
        onConfirm={remove}
        onCancel={() => (removing.value = null)}
      />
    </>
  );
}

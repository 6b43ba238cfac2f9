import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText } from "../api";
import { useResource } from "../resource";
import { useSave } from "../act";
import type { Answer } from "../api-types";
import { errAttrs, FieldError } from "../components/FieldError";
import { CopyButton } from "../components/CopyButton";

type ClientsView = Answer<"/v1/account/smsgate-clients">["data"];


/**
 * Settings → SMSGate clients (admins): what to type into an app or integration made for SMSGate
 * (its server address, login and password), the key that signs its webhooks, and the quiet hours
 * and per-number limit for the texts it sends (docs/phones.md, "Using Textwire as your SMSGate server").
 */
export function SmsgateClients() {
  const view = useSignal<ClientsView | null>(null);
  const quietOn = useSignal(false);
  const start = useSignal("21:00");
  const end = useSignal("08:00");
  const limit = useSignal("");
  const copied = useSignal("");
  const { busy, notice, error, fieldErrors: errs, save: saving } = useSave();
  const show = (v: ClientsView) => {
    view.value = v;
    quietOn.value = v.quietHours !== null;
    if (v.quietHours) {
      start.value = v.quietHours.start;
      end.value = v.quietHours.end;
    }
    limit.value = v.recipientLimitPerDay === null ? "" : String(v.recipientLimitPerDay);
  };
  useResource(() => api.get("/v1/account/smsgate-clients").then((r) => r.data), [], { error, onLoad: show });
  async function save(e: Event) {
    e.preventDefault();
    await saving(async () => {
      const n = limit.value.trim();
      const r = await api.put("/v1/account/smsgate-clients", { json: { quietHours: quietOn.value ? { start: start.value, end: end.value } : null, recipientLimitPerDay: n === "" ? null : Number(n) } });
      show(r.data);
      return "Saved. Texts sent from SMSGate apps follow these rules from now on.";
    });
  }
  const v = view.value;
  const row = (label: string, value: string, what: string) => (
    <p>
      <strong>{label}:</strong> <code>{value}</code>{" "}
      <CopyButton text={value} onDone={(m) => (copied.value = m)} label={`Copy the ${what}`}>
        Copy
      </CopyButton>
    </p>
  );
  return (
    <>
      <h2 id="smsgate-clients">SMSGate clients</h2>
      <p>
        Apps and integrations made for SMSGate (Home Assistant, n8n, scripts using SMSGate's libraries) can send texts through this server. In their settings, give
        the server address below, this login, and an API key of this account as the password. Texts to people who replied STOP are not sent, and the rules below
        apply.
      </p>
      {v ? (
        <>
          {row("Server address", v.baseUrl, "server address")}
          {row("Login", v.login, "login")}
          <p>
            <strong>Password:</strong> {v.passwordHint}.
          </p>
          {row("Webhook signing key", v.signingKey, "webhook signing key")}
          <p class="hint">The app checks that webhooks really come from this server with this key. Keep it private, like a password.</p>
          <p aria-live="polite" class="notice-line">
            {copied.value}
          </p>
          <form onSubmit={save}>
            <span class="field">
              <label>
                <input type="checkbox" checked={quietOn.value} onChange={(e) => (quietOn.value = (e.target as HTMLInputElement).checked)} /> Quiet hours: texts wait
                until they end
              </label>
            </span>
            {quietOn.value ? (
              <>
                <span class="field">
                  <label for="smsgate-quiet-start">Quiet from</label>
                  <input id="smsgate-quiet-start" type="time" value={start.value} {...errAttrs(errs.value, "quietHours", "smsgate-quiet-error")} onInput={(e) => (start.value = (e.target as HTMLInputElement).value)} />
                </span>
                <span class="field">
                  <label for="smsgate-quiet-end">Quiet until</label>
                  <input id="smsgate-quiet-end" type="time" value={end.value} onInput={(e) => (end.value = (e.target as HTMLInputElement).value)} />
                  <FieldError errors={errs.value} name="quietHours" id="smsgate-quiet-error" />
                </span>
              </>
            ) : null}
            <span class="field">
              <label for="smsgate-limit">Most texts to one number per 24 hours</label>
              <input
                id="smsgate-limit"
                type="number"
                inputMode="numeric"
                value={limit.value}
                placeholder="No limit"
                {...errAttrs(errs.value, "recipientLimitPerDay", "smsgate-limit-error", "smsgate-limit-hint")}
                onInput={(e) => (limit.value = (e.target as HTMLInputElement).value)}
              />
              <small class="hint" id="smsgate-limit-hint">
                Empty: no limit. A text over the limit is not sent and the app is told why.
              </small>
              <FieldError errors={errs.value} name="recipientLimitPerDay" id="smsgate-limit-error" />
            </span>
            <button type="submit" disabled={busy.value}>
              Save SMSGate rules
            </button>
          </form>
          <p aria-live="polite" class="notice-line">
            {notice.value}
          </p>
        </>
      ) : null}
      {error.value && !errs.value.length ? (
        <p class="error" role="alert">
          {error.value}
        </p>
      ) : null}
    </>
  );
}

import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText } from "../api";
import { useResource } from "../resource";
import { useSave } from "../act";
import type { Answer, StoredBackups } from "../api-types";
import { errAttrs, FieldError } from "../components/FieldError";
import { fmtDate } from "../format";

type AddressView = Answer<"/v1/admin/server-address">["data"];
type HttpsView = Answer<"/v1/admin/https">["data"];
type PlainHttpForm = Answer<"/v1/forms-over-http">["data"][number];


/**
 * Settings → Server (operators): the address forms and phones are given. Server-wide; a flag
 * given where the server starts wins, and the page says so.
 */
export function ServerAddress() {
  const view = useSignal<AddressView | null>(null);
  const url = useSignal("");
  const { busy, notice, error, fieldErrors: errs, save: saving } = useSave();
  useResource(() => api.get("/v1/admin/settings").then((r) => r.data.serverAddress), [], {
    error,
    onLoad: (a) => ((view.value = a), (url.value = a.savedUrl ?? "")),
  });
  async function save(e: Event) {
    e.preventDefault();
    await saving(async () => {
      const r = await api.put("/v1/admin/server-address", { json: { url: url.value.trim() || null } });
      view.value = r.data;
      url.value = r.data.savedUrl ?? "";
      return r.data.savedUrl ? "Saved. Webhook addresses, embed code and the phone setup now use this address." : "Cleared.";
    });
  }
  const v = view.value;
  const flag = Boolean(v?.flagUrl);
  return (
    <>
      <h2 id="server-address">Server address</h2>
      <p>
        The address your website's forms and your phones use to reach this server. It is in every webhook address, embed code, QR code and phone setup; change it
        only when the server really moves, and update your website then.
      </p>
      {v ? (
        <p role="status" data-testid="server-address-status" class={v.effective.source === "request" ? "notice" : undefined}>
          {v.effective.source === "request"
            ? `No server address is set: pages show the address this browser used (${v.effective.url}). Set the one your customers' browsers and your phones can reach, so forms you publish keep working.`
            : `In use: ${v.effective.url}`}
        </p>
      ) : null}
      {flag ? (
        <p class="notice">
          The server was started with <code>--public-url {v!.flagUrl}</code>, which wins over this page. Change it where the server is started.
        </p>
      ) : null}
      <form onSubmit={save}>
        <span class="field">
          <label for="server-address-url">Server address</label>
          <input
            id="server-address-url"
            type="text"
            inputMode="url"
            autocomplete="off"
            value={url.value}
            disabled={flag}
            placeholder="https://sms.example.com"
            {...errAttrs(errs.value, "url", "server-address-url-error", "server-address-url-hint")}
            onInput={(e) => (url.value = (e.target as HTMLInputElement).value)}
          />
          <small class="hint" id="server-address-url-hint">
            For example <code>https://sms.example.com</code> or <code>https://192.168.1.20:8443</code>. Empty: none.
          </small>
          <FieldError errors={errs.value} name="url" id="server-address-url-error" />
        </span>
        <button type="submit" disabled={busy.value || flag}>
          Save server address
        </button>
      </form>
      <p aria-live="polite" class="notice-line">
        {notice.value}
      </p>
      {error.value && !errs.value.length ? <p class="error" role="alert">{error.value}</p> : null}
    </>
  );
}

/** Settings → Server → HTTPS (operators): its own component, so HTTPS actions can join it. */
export function HttpsStatus() {
  const { data: v, error } = useResource(() => api.get("/v1/admin/settings").then((r) => r.data.https));
  const h = v.value;
  return (
    <>
      <h2 id="https">HTTPS</h2>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {h ? (
        h.on ? (
          <dl class="facts" data-testid="https-status">
            <div>
              <dt>HTTPS</dt>
              <dd>
                On, port {h.port}
                {h.certificate === "local-ca"
                  ? " (this server's own certificate, from textwire tls init: for your phones and your own devices; a public website's forms need a certificate every browser trusts, see Get a certificate)"
                  : h.certificate === "public"
                    ? " (a public certificate every browser trusts, renewed by itself)"
                    : ""}
              </dd>
            </div>
            <div>
              <dt>Certificate valid until</dt>
              <dd class={h.daysLeft !== null && h.daysLeft < 30 ? "error" : undefined}>
                {h.certificateExpiresAt ? fmtDate(h.certificateExpiresAt) : "unknown"}
                {h.daysLeft !== null ? (h.daysLeft < 0 ? (h.certificate === "public" ? " — expired: see Get a certificate above" : " — expired: renew it (textwire tls renew) and restart") : ` (${h.daysLeft} days left)`) : ""}
              </dd>
            </div>
            <div>
              <dt>Old http:// address</dt>
              <dd>{h.redirectPort !== null ? `Port ${h.redirectPort} sends visitors and form posts on to HTTPS, so published forms keep working.` : "Not answered."}</dd>
            </div>
          </dl>
        ) : (
          <p class="notice" data-testid="https-status">
            {h.behindProxy
              ? "This server speaks plain HTTP behind a reverse proxy (--trust-proxy), which does HTTPS."
              : `HTTPS is off. For a public website's forms, use Get a certificate above. For your phones on a local network only, run textwire tls init and restart: HTTPS then answers on port 8443 and this server's plain-HTTP port${h.port !== null ? ` (${h.port})` : ""} keeps working, forwarding to it.`}
          </p>
        )
      ) : null}
    </>
  );
}

/** The backup schedule form (under Settings → Backups, operators): folder, how often, copies kept. */
export function BackupSchedule(props: { list: StoredBackups; onSaved: () => void }) {
  const l = props.list;
  const dir = useSignal(l.source === "setting" ? (l.directory ?? "") : "");
  const every = useSignal(String(l.everyMinutes ?? 1440));
  const keep = useSignal(String(l.keep));
  const { busy, notice, error, fieldErrors: errs, save: saving } = useSave();
  if (l.source === "flag") {
    return (
      <p class="notice" data-testid="backup-flag">
        The server was started with <code>--backup-dir {l.directory}</code>, which wins over this page. Change it where the server is started.
      </p>
    );
  }
  async function save(e: Event, off = false) {
    e.preventDefault();
    await saving(async () => {
      const json = off || !dir.value.trim() ? { directory: null } : { directory: dir.value.trim(), everyMinutes: Number(every.value), keep: Number(keep.value) };
      const r = await api.put("/v1/admin/backups", { json });
      if (!r.data.scheduled) dir.value = "";
      props.onSaved();
      // Saving makes a backup at once (the route waits a few seconds for it).
      return r.data.scheduled ? "Saved. A backup was made now; the next ones follow this schedule." : "Scheduled backups are off.";
    });
  }
  return (
    <form class="notes" onSubmit={(e) => save(e)} data-testid="backup-schedule">
      <span class="field wide">
        <label for="backup-dir">Backup folder</label>
        <input
          id="backup-dir"
          autocomplete="off"
          value={dir.value}
          placeholder="/var/backups/textwire"
          {...errAttrs(errs.value, "directory", "backup-dir-error", "backup-dir-hint")}
          onInput={(e) => (dir.value = (e.target as HTMLInputElement).value)}
        />
        <small class="hint" id="backup-dir-hint">The folder's full path on the server, best on another disk. It is checked at once.</small>
        <FieldError errors={errs.value} name="directory" id="backup-dir-error" />
      </span>
      <span class="field">
        <label for="backup-every">How often</label>
        <select id="backup-every" value={every.value} onChange={(e) => (every.value = (e.target as HTMLSelectElement).value)}>
          <option value="60">Every hour</option>
          <option value="360">Every 6 hours</option>
          <option value="720">Every 12 hours</option>
          <option value="1440">Every day</option>
          <option value="10080">Every week</option>
          {["60", "360", "720", "1440", "10080"].includes(every.value) ? null : <option value={every.value}>Every {every.value} minutes</option>}
        </select>
        <FieldError errors={errs.value} name="everyMinutes" id="backup-every-error" />
      </span>
      <span class="field">
        <label for="backup-keep">Copies kept</label>
        <input id="backup-keep" type="number" min={1} max={1000} value={keep.value} {...errAttrs(errs.value, "keep", "backup-keep-error")} onInput={(e) => (keep.value = (e.target as HTMLInputElement).value)} />
        <FieldError errors={errs.value} name="keep" id="backup-keep-error" />
      </span>
      <button type="submit" disabled={busy.value}>
        Save backup schedule
      </button>
      {l.scheduled ? (
        <button type="button" class="secondary" disabled={busy.value} onClick={(e) => save(e, true)}>
          Turn scheduled backups off
        </button>
      ) : null}
      <span aria-live="polite">{notice.value}</span>
      {error.value && !errs.value.length ? <p class="error" role="alert">{error.value}</p> : null}
    </form>
  );
}

/**
 * Forms whose old http:// address was still posted to in the last 30 days (HTTPS is on and the
 * old port forwards them): the website should be given the new address.
 */
export function FormsOverHttp() {
  const list = useSignal<PlainHttpForm[]>([]);
  useEffect(() => {
    api.get("/v1/forms-over-http")
      .then((r) => (list.value = r.data))
      .catch(() => {});
  }, []);
  if (!list.value.length) return null;
  return (
    <div class="notice" role="status" data-testid="forms-over-http">
      <p>
        These forms were still sent to their old <code>http://</code> address in the last 30 days. They work for now (the server forwards them to HTTPS), but
        paste each form's new webhook address or embed code into your website:
      </p>
      <ul>
        {list.value.map((f) => (
          <li key={f.id}>
            <a href={`/forms/${encodeURIComponent(f.id)}`}>{f.name}</a> — last {fmtDate(f.lastPlainHttpPostAt)}
          </li>
        ))}
      </ul>
    </div>
  );
}

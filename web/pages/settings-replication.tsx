import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, ApiError, errorText } from "../api";
import { fmtAge, fmtDate } from "../format";
import { replicationText, type ReplicationStatus } from "../warnings";
import type { AccountInfo } from "../api-types";

interface ReplicationView {
  savedUrl: string | null;
  savedAt: string | null;
  flagUrl: string | null;
  status: ReplicationStatus & { source: "flag" | "setting" | null; running: boolean; lastError: string | null };
}

/** Settings → Replication (operators): where the database is copied continuously, and how it goes. */
export function Replication(props: { info: AccountInfo | null }) {
  const view = useSignal<ReplicationView | null>(null);
  const url = useSignal("");
  const error = useSignal("");
  const notice = useSignal("");
  const busy = useSignal(false);
  const operator = props.info?.access.operator === true;
  const load = (fillField: boolean, first = false) =>
    (first ? api.get("/v1/admin/settings").then((r) => ({ data: r.data.replication })) : api.get("/v1/admin/replication"))
      .then((r) => {
        view.value = r.data;
        if (fillField) url.value = r.data.savedUrl ?? "";
      })
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    if (!operator) return;
    load(true, true);
    // The status line follows the replica (the field is left as typed).
    const timer = setInterval(() => load(false), 5_000);
    return () => clearInterval(timer);
  }, [operator]);

  async function save(e: Event) {
    e.preventDefault();
    busy.value = true;
    error.value = "";
    notice.value = "";
    try {
      const r = await api.put("/v1/admin/replication", { json: { url: url.value.trim() || null } });
      view.value = r.data;
      url.value = r.data.savedUrl ?? "";
      notice.value = r.data.savedUrl ? "Saved. Replication starts now; the first copy may take a moment." : "Saved. Replication is off.";
    } catch (err) {
      error.value = err instanceof ApiError && err.body?.errors?.[0]?.message ? err.body.errors[0].message : errorText(err);
    } finally {
      busy.value = false;
    }
  }

  if (!props.info || !operator) return null;
  const v = view.value;
  const flag = Boolean(v?.flagUrl);
  return (
    <>
      <h2 id="replication">Replication</h2>
      <p>
        Replication copies every change to a second place — another disk, another computer over SFTP, or S3-compatible storage (Amazon S3, Cloudflare R2, Backblaze
        B2, MinIO) — within about a second. If this server's disk dies, you lose at most the last second of work: see "The disk died" in the operations guide.
      </p>
      {v ? (
        <p role="status" data-testid="replication-status" class={v.status.state === "behind" || v.status.state === "stalled" ? "error" : undefined}>
          {replicationText(v.status, fmtAge)}
          {v.status.lastSyncAt ? ` Last confirmed ${fmtDate(v.status.lastSyncAt)}.` : ""}
          {v.status.lastError && v.status.state !== "ok" ? ` Litestream says: ${v.status.lastError}` : ""}
        </p>
      ) : null}
      {flag ? (
        <p class="notice">
          The server was started with <code>--replicate {v!.flagUrl}</code>, which wins over this page. Change it where the server is started.
        </p>
      ) : null}
      <form onSubmit={save}>
        <span class="field">
          <label for="replica-url">Replica address</label>
          <input
            id="replica-url"
            type="text"
            size={60}
            value={url.value}
            disabled={flag}
            placeholder="file:///mnt/backup/textwire"
            aria-describedby="replica-url-hint"
            onInput={(e) => (url.value = (e.target as HTMLInputElement).value)}
          />
          <span class="hint" id="replica-url-hint">
            A folder on another disk: <code>file:///mnt/backup/textwire</code>. Another computer: <code>sftp://user@host/backups/textwire</code>. Storage:{" "}
            <code>s3://bucket/textwire</code>, with <code>?endpoint=https://…</code> for R2, B2 or MinIO — its access credentials go in the server's environment
            (LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY), never here. Empty turns replication off.
          </span>
        </span>
        <button type="submit" disabled={busy.value || flag}>
          Save
        </button>
      </form>
      <p aria-live="polite" class="notice-line">
        {notice.value}
      </p>
      {error.value ? (
        <p class="error" role="alert">
          {error.value}
        </p>
      ) : null}
    </>
  );
}

import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, session } from "../api";
import { useResource } from "../resource";
import { cliCommand } from "../cli";
import { fmtDate, fmtNum } from "../format";
import type { AccountInfo, StoredBackups } from "../api-types";
import { BackupSchedule } from "./settings-server";

/** GET /v1/account, as Settings shows it. */

const PLAN_NAMES: Record<string, string> = { standard: "Standard", pro: "Pro", enterprise: "Enterprise" };

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** "a day", "12 hours", "an hour", "30 minutes". */
function fmtSpan(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? "a day" : `${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? "an hour" : `${minutes / 60} hours`;
  return `${minutes} minutes`;
}

function fmtEvery(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? "every day" : `every ${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? "every hour" : `every ${minutes / 60} hours`;
  return `every ${minutes} minutes`;
}

/** Loads GET /v1/account once for the page's sections. */
export function useAccount() {
  const { data: info, error } = useResource(() => api.get("/v1/account").then((r) => r.data), [], { onLoad: (a) => (cliCommand.value = a.cliCommand) });
  return { info, error };
}

/** Plan, monthly quota and this month's texts, API limits: read here, changed by the server's operator. */
export function AccountLimits(props: { info: AccountInfo | null; error: string }) {
  const a = props.info;
  return (
    <>
      <h2>Sending limits</h2>
      {props.error ? <p class="error" role="alert">{props.error}</p> : null}
      {a ? (
        <>
          <dl class="facts" data-testid="account-limits">
            <div>
              <dt>Account</dt>
              <dd>
                {a.account.name} ({PLAN_NAMES[a.account.plan] ?? a.account.plan} plan)
              </dd>
            </div>
            <div>
              <dt>Texts this month</dt>
              <dd>
                {a.limits.monthlyQuota === null
                  ? `${fmtNum(a.usage.messages)} (no monthly limit)`
                  : `${fmtNum(a.usage.messages)} of ${fmtNum(a.limits.monthlyQuota)}; counting starts again ${fmtDate(a.usage.resetsAt)}`}
              </dd>
            </div>
            <div>
              <dt>Home country</dt>
              <dd>{a.account.defaultCountry} (what new forms accept numbers from)</dd>
            </div>
          </dl>
          {a.access.operator ? (
            <p class="hint">
              You run this server: change these on it with <code>{a.changeWith}</code>
            </p>
          ) : (
            <p class="hint">These are set by whoever runs the Textwire server: ask them if you need more.</p>
          )}
        </>
      ) : null}
    </>
  );
}

/** Settings → Developers: how many API requests a key may make (set by the server's operator). */
export function ApiLimits(props: { info: AccountInfo | null }) {
  const a = props.info;
  if (!a) return null;
  return (
    <>
      <h2>API requests</h2>
      <p data-testid="api-limits">
        Each API key may make {fmtNum(a.limits.apiRequestsPerHour)} requests an hour, at most {fmtNum(a.limits.apiBurstPerMinute)} in a minute. The dashboard
        does not count against them.
      </p>
    </>
  );
}

/** "Run a backup now and download" and the scheduled backups, for an operator key's session; a plain sentence for others. */
export function Backups(props: { info: AccountInfo | null }) {
  const list = useSignal<StoredBackups | null>(null);
  const notice = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  const operator = props.info?.access.operator === true;
  // First load: the operator's settings in one answer, shared with the other sections.
  const load = (first = false) =>
    (first ? api.get("/v1/admin/settings").then((r) => ({ data: r.data.backups })) : api.get("/v1/admin/backups"))
      .then((r) => (list.value = r.data))
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    if (operator) load(true);
  }, [operator]);

  async function runNow() {
    busy.value = true;
    notice.value = "Making the backup…";
    error.value = "";
    try {
      const res = await fetch("/v1/admin/backup", { method: "POST", headers: { "X-CSRF-Token": session.value?.csrfToken ?? "" }, credentials: "same-origin" });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        throw new Error(body?.message ?? `The backup failed (${res.status})`);
      }
      const name = /filename="?([^";]+)"?/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "textwire-backup.db";
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      notice.value = `Backup ${name} (${fmtBytes(blob.size)}) downloaded. Keep it somewhere other than this server.`;
    } catch (e) {
      notice.value = "";
      error.value = errorText(e);
    } finally {
      busy.value = false;
    }
  }

  if (!props.info) return null;
  if (!operator) {
    return (
      <>
        <h2 id="backups">Backups</h2>
        <p class="notice">
          Backups are made by whoever runs the Textwire server (its operator): they cover every account on it.
        </p>
      </>
    );
  }
  const l = list.value;
  return (
    <>
      <h2 id="backups">Backups</h2>
      <p>A backup is one file with everything on this server: every account, form, contact and message. It is made while the server keeps working.</p>
      <p>
        <button type="button" onClick={runNow} disabled={busy.value}>
          Run a backup now and download
        </button>
      </p>
      <p aria-live="polite" class="notice-line">
        {notice.value}
      </p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <h3>Scheduled backups</h3>
      {l ? (
        !l.scheduled ? (
          <>
            <p>Scheduled backups are off. Choose a folder to keep one every day (or as often as you like):</p>
            <BackupSchedule list={l} onSaved={load} />
          </>
        ) : (
          <>
            <p>
              {l.everyMinutes ? fmtEvery(l.everyMinutes)[0].toUpperCase() + fmtEvery(l.everyMinutes).slice(1) : "Regularly"}, into <code>{l.directory}</code>; the
              newest {l.keep} are kept. To go back to one, stop the server and run <code>{props.info?.cliCommand ?? "textwire"} restore FILE</code>.
            </p>
            <BackupSchedule list={l} onSaved={load} />
            {l.backups.length ? (
              <div class="table-wrap">
                <table data-testid="scheduled-backups" class="cards">
                  <thead>
                    <tr>
                      <th scope="col">File</th>
                      <th scope="col">Made</th>
                      <th scope="col">Size</th>
                    </tr>
                  </thead>
                  <tbody>
                    {l.backups.map((b) => (
                      <tr key={b.name}>
                        <td data-label="File">
                          <code>{b.name}</code>
                        </td>
                        <td data-label="Made">{fmtDate(b.createdAt)}</td>
                        <td class="num" data-label="Size">{fmtBytes(b.bytes)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p>None yet: the first is made {l.everyMinutes ? fmtSpan(l.everyMinutes) : "soon"} after the server started.</p>
            )}
          </>
        )
      ) : null}
    </>
  );
}

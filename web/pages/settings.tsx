import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, isAdmin, isOwner, session } from "../api";
import { act } from "../act";
import type { ApiKey, SignedInBrowser } from "../api-types";
import { Confirm } from "../components/Confirm";
import { fmtDate } from "../format";
import { AccountLimits, Backups, useAccount } from "./settings-account";
import { Replication } from "./settings-replication";
import { BusinessProfile } from "./settings-business";
import { ServerSettings } from "./settings-server";
import { People, YourAccount } from "./settings-people";
import { KeywordReplies, Replies } from "./settings-keywords";

import { SmsgateClients } from "./settings-smsgate";
import { BeingTold } from "./settings-me";


const PERMISSION_NAMES: Record<string, string> = { admin_access: "Admin", standard_access: "Standard" };

export function Settings() {
  const { info, error } = useAccount();
  if (!isAdmin()) {
    return (
      <section>
        <h1>Settings</h1>
        {session.value?.user ? (
          <p class="notice">The account's settings are changed by its owners and admins.</p>
        ) : (
          <p class="notice">
            You are signed in with a standard key. API keys, sessions and the account's settings can only be seen and changed with an admin key: sign out and sign in
            with one.
          </p>
        )}
        <YourAccount />
        <BeingTold />
        <AccountLimits info={info.value} error={error.value} />
        <Backups info={info.value} />
      </section>
    );
  }
  return (
    <section>
      <h1>Settings</h1>
      <BusinessProfile />
      <YourAccount />
      <BeingTold />
      {isOwner() && session.value?.user ? <People /> : null}
      {isOwner() ? <ApiKeys /> : null}
      {isOwner() ? <Sessions /> : null}
      <AccountLimits info={info.value} error={error.value} />
      <Replies />
      <KeywordReplies />

      <SmsgateClients />
      <Backups info={info.value} />
      <ServerSettings info={info.value} />
      <Replication info={info.value} />
    </section>
  );
}

function ApiKeys() {
  const keys = useSignal<ApiKey[] | null>(null);
  const error = useSignal("");
  const notice = useSignal("");
  const permission = useSignal("standard_access");
  const fresh = useSignal<{ apiKey: string; permission: string } | null>(null);
  const revoking = useSignal<ApiKey | null>(null);
  const load = () =>
    api("/api-keys")
      .then((r) => (keys.value = r.data.keys))
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    load();
  }, []);
  async function create(e: Event) {
    e.preventDefault();
    await act(
      notice,
      () => api("/api-keys", { method: "POST", json: { permission: permission.value } }),
      (r) => {
        fresh.value = { apiKey: r.data.apiKey, permission: r.data.permission };
        return "";
      },
      load,
    );
  }
  async function revoke() {
    const k = revoking.value;
    revoking.value = null;
    if (!k) return;
    await act(notice, () => api(`/api-keys/${encodeURIComponent(k.keyId)}`, { method: "DELETE" }), () => `Key ${k.key} revoked. Everything using it, dashboard sessions included, stops working now.`, load);
  }
  return (
    <>
      <h2>API keys</h2>
      <p>
        Each website, phone or tool should have its own key, so one can be revoked without touching the others. A <strong>standard</strong> key can read and send;
        an <strong>admin</strong> key can also change forms, import and export contacts, and manage keys.
      </p>
      <form class="inline-form" onSubmit={create}>
        <span class="field">
          <label for="new-key-permission">Permission of the new key</label>
          <select id="new-key-permission" value={permission.value} onChange={(e) => (permission.value = (e.target as HTMLSelectElement).value)}>
            <option value="standard_access">Standard</option>
            <option value="admin_access">Admin</option>
          </select>
        </span>
        <button type="submit">Create key</button>
      </form>
      {fresh.value ? (
        <div class="fresh-key" role="status">
          <p>
            <strong>New {PERMISSION_NAMES[fresh.value.permission]} key — copy it now, it is shown only this once:</strong>
          </p>
          <code class="secret" data-testid="new-key">{fresh.value.apiKey}</code>{" "}
          <button type="button" class="secondary" onClick={() => navigator.clipboard?.writeText(fresh.value!.apiKey).then(() => (notice.value = "Key copied."))}>
            Copy key
          </button>{" "}
          <button type="button" class="secondary" onClick={() => (fresh.value = null)}>
            I have stored it
          </button>
        </div>
      ) : null}
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {keys.value ? (
        <div class="table-wrap">
          <table class="cards">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Permission</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.value.map((k) => (
                <tr key={k.keyId} data-key-id={k.keyId}>
                  <td data-label="Key"><code>{k.key}</code></td>
                  <td data-label="Permission">{PERMISSION_NAMES[k.permission]}{k.operator ? " (server operator)" : ""}</td>
                  <td data-label="Created">{fmtDate(k.createdAt)}</td>
                  <td data-label="Last used">{fmtDate(k.lastUsedAt)}</td>
                  <td data-label="State">{k.revokedAt ? `revoked ${fmtDate(k.revokedAt)}` : "active"}</td>
                  <td data-label="Actions">
                    {k.revokedAt ? null : (
                      <button type="button" class="secondary" aria-label={`Revoke key ${k.key}`} onClick={() => (revoking.value = k)}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Confirm
        open={revoking.value !== null}
        title="Revoke this key?"
        body={`Key ${revoking.value?.key ?? ""} stops working at once: every website, phone or tool using it, and every dashboard session opened with it.`}
        action="Revoke key"
        onConfirm={revoke}
        onCancel={() => (revoking.value = null)}
      />
    </>
  );
}

function Sessions() {
  const rows = useSignal<SignedInBrowser[] | null>(null);
  const error = useSignal("");
  const load = () =>
    api("/sessions")
      .then((r) => (rows.value = r.data.sessions))
      .catch((e) => (error.value = errorText(e)));
  useEffect(() => {
    load();
  }, []);
  async function end(s: SignedInBrowser) {
    try {
      await api(`/sessions/${encodeURIComponent(s.id)}`, { method: "DELETE" });
      if (s.current) session.value = null;
    } catch (e) {
      error.value = errorText(e);
    }
    load();
  }
  return (
    <>
      <h2>Signed-in browsers</h2>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {rows.value ? (
        <div class="table-wrap">
          <table class="cards">
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Address</th>
                <th scope="col">Key or person</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.value.map((s) => (
                <tr key={s.id}>
                  <td data-label="Browser">{browserName(s.userAgent)}{s.current ? " (this one)" : ""}</td>
                  <td data-label="Address">{s.ipAddress ?? "—"}</td>
                  <td data-label="Key or person">{s.user ? `${s.user.name} (${s.user.email})` : <code>…{s.keyLast4}</code>}</td>
                  <td data-label="Signed in">{fmtDate(s.createdAt)}</td>
                  <td data-label="Last seen">{fmtDate(s.lastSeenAt)}</td>
                  <td data-label="Actions">
                    <button type="button" class="secondary" aria-label={`End the session of ${browserName(s.userAgent)} signed in ${fmtDate(s.createdAt)}`} onClick={() => end(s)}>
                      End
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

function browserName(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const m = /(Edg|Firefox|Chrome|Safari)\/[\d.]+/.exec(ua);
  const os = /(Android|iPhone|iPad|Windows|Mac OS X|Linux)/.exec(ua)?.[1];
  const name = m ? { Edg: "Edge", Firefox: "Firefox", Chrome: "Chrome", Safari: "Safari" }[m[1]] : ua.slice(0, 40);
  return os ? `${name} on ${os.replace("Mac OS X", "Mac")}` : name!;
}

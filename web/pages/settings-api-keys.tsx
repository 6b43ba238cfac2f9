import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import type { ApiKey, RequestBody } from "../api-types";
import { Confirm } from "../components/Confirm";
import { fmtDate } from "../format";

const PERMISSION_NAMES: Record<string, string> = { admin_access: "Admin", standard_access: "Standard" };

/**
 * Settings → Developers: the account's API keys (owners). The only settings page that talks about
 * keys (docs/dashboard.md, "Settings").
 */
export function ApiKeys() {
  const notice = useSignal("");
  const permission = useSignal<NonNullable<RequestBody<"/v1/api-keys", "post">["permission"]>>("standard_access");
  const fresh = useSignal<{ apiKey: string; permission: string } | null>(null);
  const revoking = useSignal<ApiKey | null>(null);
  const { data: keys, error, load } = useResource(() => api.get("/v1/api-keys").then((r) => r.data.keys));
  async function create(e: Event) {
    e.preventDefault();
    await act(
      notice,
      () => api.post("/v1/api-keys", { json: { permission: permission.value } }),
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
    await act(notice, () => api.delete("/v1/api-keys/{id}", { path: { id: k.keyId } }), () => `Key ${k.key} revoked. Everything using it, dashboard sessions included, stops working now.`, load);
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
          <select id="new-key-permission" value={permission.value} onChange={(e) => (permission.value = (e.target as HTMLSelectElement).value as typeof permission.value)}>
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


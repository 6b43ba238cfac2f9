import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, isOperator, session } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import type { Person, SignedInBrowser } from "../api-types";

type Role = Person["role"];
import { Confirm } from "../components/Confirm";
import { navigate } from "../router";
import { fmtDate } from "../format";

const ROLES = [
  { value: "owner", label: "Owner — everything, including people and the developer settings" },
  { value: "admin", label: "Admin — everything but people and access for other tools" },
  { value: "staff", label: "Staff — messages, conversations, contacts, broadcasts" },
  { value: "viewer", label: "Viewer — can look, not change" },
];
const ROLE_NAMES: Record<string, string> = { owner: "Owner", admin: "Admin", staff: "Staff", viewer: "Viewer" };

/** Settings → People (owners): who signs in, their roles, invitations (docs/dashboard.md, "People"). */
export function People() {
  const people = useSignal<Person[] | null>(null);
  const notice = useSignal("");
  const inviteRole = useSignal<Role>("staff");
  const inviteEmail = useSignal("");
  const link = useSignal("");
  const addressSet = useSignal(true);
  const removing = useSignal<Person | null>(null);
  const load = () =>
    api.get("/v1/people")
      .then((r) => (people.value = r.data.people))
      .catch((e) => (notice.value = errorText(e)));
  useEffect(() => {
    load();
  }, []);
  async function invite(e: Event) {
    e.preventDefault();
    link.value = "";
    await act(notice, () => api.post("/v1/invitations", { json: { role: inviteRole.value, email: inviteEmail.value } }), (r) => {
      link.value = r.data.url;
      addressSet.value = r.data.addressSet;
      return `Invitation link for ${r.data.email} ready: give it to the person. It works once, for 72 hours, and they sign in with that e-mail.`;
    });
  }
  const me = session.value?.user?.id;
  return (
    <>
      <h2>People</h2>
      <p>Everyone who signs in to this dashboard, each with their own e-mail and password.</p>
      <p role="status" class="notice-line">{notice.value}</p>
      {people.value ? (
        <ul class="people">
          {people.value.map((p) => (
            <li key={p.id}>
              <span>
                <strong>{p.name}</strong> {p.email} {p.id === me ? "(you)" : ""}
              </span>
              <label>
                <span class="visually-hidden">Role of {p.name}</span>
                <select
                  value={p.role}
                  onChange={(e) =>
                    act(notice, () => api.patch("/v1/people/{id}", { path: { id: p.id }, json: { role: (e.target as HTMLSelectElement).value as Role } }), () => `${p.name} is now ${ROLE_NAMES[(e.target as HTMLSelectElement).value]}`, load)
                  }
                >
                  {ROLES.map((r) => (
                    <option value={r.value}>{ROLE_NAMES[r.value]}</option>
                  ))}
                </select>
              </label>
              <button type="button" class="secondary" onClick={() => (removing.value = p)}>
                Remove {p.name}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p role="status">Loading…</p>
      )}
      <form onSubmit={invite} class="invite">
        <h3>Invite a person</h3>
        <label for="invite-email">Their e-mail</label>
        <input id="invite-email" type="email" autocomplete="off" required value={inviteEmail.value} onInput={(e) => (inviteEmail.value = (e.target as HTMLInputElement).value)} />
        <label for="invite-role">Role</label>
        <select id="invite-role" value={inviteRole.value} onChange={(e) => (inviteRole.value = (e.target as HTMLSelectElement).value as Role)}>
          {ROLES.map((r) => (
            <option value={r.value}>{r.label}</option>
          ))}
        </select>
        <button type="submit">Invite a person</button>
      </form>
      {link.value ? (
        <div class="invite-link">
          <label for="invite-link">Invitation link</label>
          <input id="invite-link" readOnly value={link.value} onFocus={(e) => (e.target as HTMLInputElement).select()} />
          <button type="button" onClick={() => navigator.clipboard?.writeText(link.value).then(() => (notice.value = "Link copied"), () => (notice.value = "Select the link and copy it"))}>
            Copy link
          </button>
          {addressSet.value ? null : (
            <p class="notice" data-testid="invite-address-warning">
              No server address is set, so this link uses the address this browser reached the server by; it may not open on the person's own phone or computer.
              {isOperator() ? (
                <>
                  {" "}
                  <a href="/settings/server">Set the server address</a>, then make a new link.
                </>
              ) : (
                " Ask whoever runs the server to set its address, then make a new link."
              )}
            </p>
          )}
        </div>
      ) : null}
      <Confirm
        open={removing.value !== null}
        title={`Remove ${removing.value?.name ?? ""}?`}
        body="They are signed out at once and can no longer sign in."
        action="Remove"
        onCancel={() => (removing.value = null)}
        onConfirm={() => {
          const p = removing.value!;
          removing.value = null;
          act(notice, () => api.delete("/v1/people/{id}", { path: { id: p.id } }), () => `${p.name} was removed`, load);
        }}
      />
    </>
  );
}

/** Settings → Your account: one's own password, and signing out everywhere. */
export function YourAccount() {
  const current = useSignal("");
  const next = useSignal("");
  const notice = useSignal("");
  const user = session.value?.user;
  if (!user) return null;
  async function change(e: Event) {
    e.preventDefault();
    await act(notice, () => api.put("/v1/session/password", { json: { currentPassword: current.value, newPassword: next.value } }), () => {
      current.value = "";
      next.value = "";
      return "Password changed. Other browsers signed in as you were signed out.";
    });
  }
  async function everywhere() {
    try {
      await api.post("/v1/session/sign-out-everywhere");
    } finally {
      session.value = null;
      navigate("/sign-in", true);
    }
  }
  return (
    <>
      <h2>Your account</h2>
      <p>
        Signed in as {user.name} ({user.email}), {ROLE_NAMES[user.role]}.
      </p>
      <p role="status" class="notice-line">{notice.value}</p>
      <form onSubmit={change}>
        <label for="current-password">Current password</label>
        <input id="current-password" type="password" autocomplete="current-password" required value={current.value} onInput={(e) => (current.value = (e.target as HTMLInputElement).value)} />
        <label for="new-password">New password (at least 10 characters)</label>
        <input id="new-password" type="password" autocomplete="new-password" minLength={10} required value={next.value} onInput={(e) => (next.value = (e.target as HTMLInputElement).value)} />
        <button type="submit">Change password</button>
      </form>
      <button type="button" class="secondary" onClick={everywhere}>
        Sign out everywhere
      </button>
    </>
  );
}

/** The browsers signed in to the account (owners): who, from where, since when; end any of them. */
export function Sessions() {
  const { data: rows, error, load } = useResource(() => api.get("/v1/sessions").then((r) => r.data.sessions));
  async function end(s: SignedInBrowser) {
    try {
      await api.delete("/v1/sessions/{id}", { path: { id: s.id } });
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
                <th scope="col">Who</th>
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
                  <td data-label="Who">{s.user ? `${s.user.name} (${s.user.email})` : <>API key <code>…{s.keyLast4}</code></>}</td>
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

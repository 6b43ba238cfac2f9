import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, fetchSession, session } from "../api";
import type { Answer } from "../api-types";
import { navigate } from "../router";

/** Sign-in with e-mail and password; an API key (for machines, or a headless install) is the advanced way. */
export function SignIn() {
  const withKey = useSignal(false);
  const email = useSignal("");
  const password = useSignal("");
  const key = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  const needsSetup = useSignal(false);
  useEffect(() => {
    api.get("/v1/setup")
      .then((r) => (needsSetup.value = r.data.needed))
      .catch(() => {});
  }, []);
  async function submit(e: Event) {
    e.preventDefault();
    error.value = "";
    busy.value = true;
    try {
      const json = withKey.value ? { apiKey: key.value.trim() } : { email: email.value, password: password.value };
      await api.post("/v1/session", { json });
      session.value = await fetchSession();
      const next = new URLSearchParams(location.search).get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/overview", true);
    } catch (err) {
      error.value = errorText(err);
    } finally {
      busy.value = false;
    }
  }
  const errorProps = { "aria-invalid": error.value ? true : undefined, "aria-describedby": error.value ? "sign-in-error" : undefined } as const;
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>Sign in to Textwire</h1>
        {needsSetup.value ? (
          <p class="notice">
            Nobody can sign in yet: open the setup address the server printed when it started (or run <code>textwire setup-link</code> on the server for a new one).
          </p>
        ) : null}
        {withKey.value ? (
          <>
            <p id="sign-in-help">
              Paste an API key (it starts with <code>txwire_sk_</code>). An admin key can change everything; a standard key can look and send.
            </p>
            <label for="api-key">API key</label>
            <input id="api-key" name="apiKey" type="password" autocomplete="current-password" required value={key.value} onInput={(e) => (key.value = (e.target as HTMLInputElement).value)} {...errorProps} />
          </>
        ) : (
          <>
            <label for="email">E-mail</label>
            <input id="email" name="email" type="email" autocomplete="username" required value={email.value} onInput={(e) => (email.value = (e.target as HTMLInputElement).value)} {...errorProps} />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required value={password.value} onInput={(e) => (password.value = (e.target as HTMLInputElement).value)} {...errorProps} />
          </>
        )}
        {error.value ? (
          <p id="sign-in-error" class="error" role="alert">
            {error.value}
          </p>
        ) : null}
        <button type="submit" disabled={busy.value}>
          Sign in
        </button>
        <p class="advanced">
          <a
            href={withKey.value ? "/sign-in" : "/sign-in?with=key"}
            onClick={(e) => {
              e.preventDefault();
              error.value = "";
              withKey.value = !withKey.value;
            }}
          >
            {withKey.value ? "Sign in with e-mail and password" : "Sign in with an API key"}
          </a>{" "}
          {withKey.value ? null : "(advanced)"}
        </p>
        {withKey.value ? null : <p class="hint">Forgot your password? Ask an owner of the account, or whoever runs the Textwire server, to reset it.</p>}
      </form>
    </main>
  );
}

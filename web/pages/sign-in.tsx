import { useSignal } from "@preact/signals";
import { api, errorText, session } from "../api";
import type { Answer } from "../api-types";
import { navigate } from "../router";

export function SignIn() {
  const key = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  async function submit(e: Event) {
    e.preventDefault();
    error.value = "";
    busy.value = true;
    try {
      const r = await api<Answer<"/v1/session", "post">>("/session", { method: "POST", json: { apiKey: key.value.trim() } });
      session.value = r.data;
      const next = new URLSearchParams(location.search).get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/overview", true);
    } catch (err) {
      error.value = errorText(err);
    } finally {
      busy.value = false;
    }
  }
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} class="card" aria-describedby="sign-in-help">
        <h1>Sign in to Textwire</h1>
        <p id="sign-in-help">
          Paste an API key (it starts with <code>txwire_sk_</code>). An admin key can change everything; a standard key can look and send.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autocomplete="current-password"
          required
          value={key.value}
          onInput={(e) => (key.value = (e.target as HTMLInputElement).value)}
          aria-invalid={error.value ? true : undefined}
          aria-describedby={error.value ? "sign-in-error" : undefined}
        />
        {error.value ? (
          <p id="sign-in-error" class="error" role="alert">
            {error.value}
          </p>
        ) : null}
        <button type="submit" disabled={busy.value}>
          Sign in
        </button>
      </form>
    </main>
  );
}

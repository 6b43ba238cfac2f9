import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, errorText, fetchSession, session } from "../api";
import { useResource } from "../resource";
import type { Answer } from "../api-types";
import { navigate } from "../router";

/** A text field with its label, kept in a signal. */
function Field(props: { id: string; label: string; value: { value: string }; type?: "text" | "email" | "password"; autocomplete?: string; hint?: string; minLength?: number }) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      <input
        id={props.id}
        type={(props.type ?? "text") as "text"}
        autocomplete={props.autocomplete}
        required
        minLength={props.minLength}
        aria-describedby={props.hint ? `${props.id}-hint` : undefined}
        value={props.value.value}
        onInput={(e) => (props.value.value = (e.target as HTMLInputElement).value)}
      />
    </>
  );
}

/** The token after # in a setup or invitation link (never sent to the server in the URL). */
const fragmentToken = () => decodeURIComponent(location.hash.replace(/^#/, ""));

const browserZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
};
const browserCountry = () => (navigator.language.split("-")[1] ?? "US").toUpperCase().slice(0, 2);

/**
 * Posts the form of a one-time link (setup or invitation) with the token from the address's
 * fragment; on success the browser is signed in, the token leaves the address bar, and the page
 * `next` opens. Errors are shown in `error`.
 */
function submitWithLink(
  send: (token: string) => Promise<unknown>,
  next: string,
  state: { error: { value: string }; busy: { value: boolean } },
) {
  return async (e: Event) => {
    e.preventDefault();
    state.error.value = "";
    state.busy.value = true;
    try {
      await send(fragmentToken());
      const signedIn = await fetchSession();
      history.replaceState(null, "", location.pathname);
      session.value = signedIn;
      navigate(next, true);
    } catch (err) {
      state.error.value = errorText(err);
    } finally {
      state.busy.value = false;
    }
  };
}

/** The person's own fields, the same on the setup page and an invitation. */
function PersonFields(props: { name: { value: string }; email?: { value: string }; password: { value: string } }) {
  return (
    <>
      <Field id="your-name" label="Your name" value={props.name} autocomplete="name" />
      {props.email ? <Field id="email" label="E-mail" type="email" value={props.email} autocomplete="username" /> : null}
      <Field id="password" label="Password" type="password" value={props.password} autocomplete="new-password" minLength={10} hint="At least 10 characters; not a common password" />
    </>
  );
}

type LinkState = "ready" | "used" | "expired" | "unknown";
/** What a link that no longer works says, before any form (docs/dashboard.md, "Signing in and the pages"). */
const DEAD_LINK: Record<"setup" | "invitation", Record<Exclude<LinkState, "ready">, string>> = {
  setup: {
    used: "This server is already set up: this setup link has been used. Sign in with your e-mail and password.",
    expired: "This setup link has expired (it works for 24 hours). On the server, run `textwire setup-link` for a new one.",
    unknown: "This setup link does not work: it was mistyped, or a newer one replaced it. On the server, run `textwire setup-link` for a new one.",
  },
  invitation: {
    used: "This invitation has already been used. If it was you, sign in with your e-mail and password; otherwise ask the person who invited you for a new link.",
    expired: "This invitation has expired (it works for 72 hours). Ask the person who invited you for a new link.",
    unknown: "This invitation link does not work: it may be incomplete. Ask the person who invited you for a new link.",
  },
};

/** Reads whether the link in the address still works, without using it; null while asking. */
function useLinkState<T extends { state: LinkState }>(ask: (token: string) => Promise<{ data: T }>, none: T) {
  const { data: state, error } = useResource(() => {
    const token = fragmentToken();
    return token ? ask(token).then((r) => r.data) : Promise.resolve(none);
  });
  return { state, error };
}

/** The page of a link that does not work: what happened and what to do, and no form. */
function DeadLink(props: { title: string; text: string }) {
  return (
    <main id="main" class="sign-in">
      <div class="card">
        <h1>{props.title}</h1>
        <p class="notice" role="status">
          {props.text}
        </p>
        <p>
          <a href="/sign-in">Go to sign in</a>
        </p>
      </div>
    </main>
  );
}

function Checking(props: { error: string }) {
  return (
    <main id="main" class="sign-in">
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : (
        <p class="loading" role="status">
          Checking the link…
        </p>
      )}
    </main>
  );
}

/** First run: the business's name, where it is, and its owner (docs/dashboard.md, "First run"). */
export function Setup() {
  const link = useLinkState((token) => api.post("/v1/setup/state", { json: { token } }), { state: "unknown" });
  const l = link.state.value;
  if (!l) return <Checking error={link.error.value} />;
  if (l.state !== "ready") return <DeadLink title="Set up Textwire" text={DEAD_LINK.setup[l.state]} />;
  return <SetupForm />;
}

function SetupForm() {
  const business = useSignal("");
  const country = useSignal(browserCountry());
  const zone = useSignal(browserZone());
  const name = useSignal("");
  const email = useSignal("");
  const password = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  const submit = submitWithLink(
    (token) => api.post("/v1/setup", { json: { token, businessName: business.value, country: country.value, timeZone: zone.value, name: name.value, email: email.value, password: password.value } }),
    "/welcome",
    { error, busy },
  );
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>Set up Textwire</h1>
        <p>A few words about your business, and the account you will sign in with.</p>
        <Field id="business-name" label="Business name" value={business} autocomplete="organization" hint="What your customers see in replies, e.g. Rosa's Bakery" />
        <Field id="country" label="Country (two letters)" value={country} autocomplete="country" hint="Phone numbers without a country code are read as this country's" />
        <Field id="time-zone" label="Time zone" value={zone} hint="Taken from this browser; e.g. America/Chicago" />
        <PersonFields name={name} email={email} password={password} />
        {error.value ? (
          <p class="error" role="alert">
            {error.value}
          </p>
        ) : null}
        <button type="submit" disabled={busy.value}>
          Create account
        </button>
      </form>
    </main>
  );
}

const ROLE_WORDS: Record<string, string> = {
  owner: "an owner: everything, including people and the account's settings",
  admin: "an admin: everything but people",
  staff: "staff: messages, conversations, contacts and broadcasts",
  viewer: "a viewer: you can look at everything, not change it",
};


/** An invited person joins: the page names the business and the role, then asks their name and a password (the e-mail is the one the invitation was made for). */
export function Invite() {
  const link = useLinkState((token) => api.post("/v1/invitations/state", { json: { token } }), { state: "unknown", businessName: null, role: null, expiresAt: null });
  const l = link.state.value;
  if (!l) return <Checking error={link.error.value} />;
  if (l.state !== "ready") return <DeadLink title="Join Textwire" text={DEAD_LINK.invitation[l.state]} />;
  return <InviteForm business={l.businessName} role={l.role} />;
}

function InviteForm(props: { business: string | null; role: string | null }) {
  const name = useSignal("");
  const password = useSignal("");
  const error = useSignal("");
  const busy = useSignal(false);
  const submit = submitWithLink((token) => api.post("/v1/invitations/accept", { json: { token, name: name.value, password: password.value } }), "/overview", { error, busy });
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>{props.business ? `Join ${props.business} on Textwire` : "Join Textwire"}</h1>
        <p data-testid="invitation-role">
          You were invited to {props.business ?? "this business"}'s dashboard as {ROLE_WORDS[props.role ?? ""] ?? props.role}. You will sign in with the e-mail address the invitation was made for; choose your password.
        </p>
        <PersonFields name={name} password={password} />
        {error.value ? (
          <p class="error" role="alert">
            {error.value}
          </p>
        ) : null}
        <button type="submit" disabled={busy.value}>
          Join
        </button>
      </form>
    </main>
  );
}

/** After setup: the next steps, each a link to the page that does it. */
export function Welcome() {
  return (
    <section>
      <h1>Welcome, {session.value?.user?.name ?? ""}</h1>
      <p>Your account is ready. Next steps:</p>
      <ol class="next-steps">
        <li>
          <a href="/forms">Make your first form</a>: the form on your website whose visitors get a text.
        </li>
        <li>
          <a href="/devices">Connect your first phone</a>: the Android phone that sends the texts.
        </li>
        <li>
          <a href="/settings/server#https">Turn on HTTPS</a> before phones or forms reach this server from outside your network.
        </li>
        <li>
          <a href="/settings/server#backups">Set up backups</a> so a lost disk does not lose your contacts.
        </li>
        <li>
          <a href="/settings/people">Invite your staff</a> (Settings → People).
        </li>
      </ol>
      <p>
        Or go to the <a href="/overview">Overview</a>.
      </p>
    </section>
  );
}

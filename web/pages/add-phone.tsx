import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText, isOperator, isPerson } from "../api";
import { useCliCommand } from "../cli";
import { fmtDate } from "../format";
import { QrCode } from "../components/QrCode";
import { CopyButton } from "../components/CopyButton";
import type { Answer, Device, RegistrationToken } from "../api-types";

/** While the wizard waits for the phone, GET /v1/devices is read this often. */
export const WAIT_POLL_MS = 3_000;
const MOBILE_API_PATH = "/api/mobile/v1";
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/**
 * "Add a phone": a fresh registration token (text and QR code), the address to type into
 * SMSGate, the CA certificate when the server uses its own, the app's steps — then it waits
 * until the phone registers and says "Connected: <name>".
 */
export function AddPhone() {
  if (!can("devices.write")) {
    return (
      <section>
        <h1>Devices: add a phone</h1>
        <p class="notice">{isPerson() ? "Only an owner or an admin of the account can add a phone." : "Adding a phone needs an admin key: sign out and sign in with one."}</p>
        <p>
          <a href="/devices">Back to Devices</a>
        </p>
      </section>
    );
  }
  return <Wizard />;
}

function Wizard() {
  const cli = useCliCommand();
  // Shell commands are for whoever runs the server (docs/dashboard.md, "Roles").
  const operator = isOperator();
  const reg = useSignal<RegistrationToken | null>(null);
  const error = useSignal("");
  const notice = useSignal("");
  const caAvailable = useSignal<boolean | null>(null);
  const connected = useSignal<Device | null>(null);
  const known = useSignal<Set<string> | null>(null);
  const attempt = useSignal(0);
  const connectedHeading = useRef<HTMLHeadingElement>(null);
  // The news is at the top of the page; the owner is likely scrolled down at the last step.
  useEffect(() => {
    if (connected.value) connectedHeading.current?.focus();
  }, [connected.value]);

  // A fresh token each time the wizard opens (and on "Make a new token"); the devices already
  // registered are noted first, so the one that appears afterwards is the new phone.
  useEffect(() => {
    let gone = false;
    reg.value = null;
    error.value = "";
    connected.value = null;
    (async () => {
      try {
        const before = await api.get("/v1/devices");
        const r = await api.post("/v1/devices/registration-tokens", { json: {} });
        if (gone) return;
        known.value = new Set(before.data.devices.map((d) => d.id));
        reg.value = r.data;
      } catch (e) {
        if (!gone) error.value = errorText(e);
      }
    })();
    return () => {
      gone = true;
    };
  }, [attempt.value]);

  useEffect(() => {
    fetch("/ca.crt", { method: "GET", cache: "no-store" })
      .then((r) => (caAvailable.value = r.ok))
      .catch(() => (caAvailable.value = false));
  }, []);

  // Waiting for the phone: a wizard may poll (the live feed is about messages, not phones).
  useEffect(() => {
    if (!reg.value || connected.value || !known.value) return;
    const seen = known.value;
    const timer = setInterval(async () => {
      try {
        const r = await api.get("/v1/devices");
        const fresh = r.data.devices.find((d) => !seen.has(d.id) && d.kind === "smsgate");
        if (fresh) connected.value = fresh;
      } catch {}
    }, WAIT_POLL_MS);
    return () => clearInterval(timer);
  }, [reg.value, connected.value]);

  const r = reg.value;
  const urls = r ? addresses(r.mobileApiUrls) : [];
  const main = urls[0];
  const plainHttp = main !== undefined && main.startsWith("http:");
  return (
    <section class="wizard">
      <h1>Devices: add a phone</h1>
      <p>
        <a href="/devices">Back to Devices</a>
      </p>
      {error.value ? (
        <p class="error" role="alert">
          No registration token could be made: {error.value}
        </p>
      ) : null}
      {!r && !error.value ? <p role="status">Making a registration token…</p> : null}
      {r && main ? (
        <>
          <div class="wait" role="status" aria-live="polite">
            {connected.value ? (
              <div class="connected">
                <h2 tabIndex={-1} ref={connectedHeading}>
                  Connected: {connected.value.name}
                </h2>
                <p>The phone is registered and will take texts from now on.</p>
                <p class="head-actions">
                  <a class="button-link" href="/devices">
                    See your phones
                  </a>
                  <button type="button" class="secondary" onClick={() => attempt.value++}>
                    Add another phone
                  </button>
                </p>
              </div>
            ) : (
              <p>
                <span class="spinner" aria-hidden="true" /> Waiting for the phone to connect… This page notices by itself when it does.
              </p>
            )}
          </div>
          {connected.value ? null : <p>Have the Android phone that holds the SIM card at hand. These steps take about five minutes.</p>}
          <ol class="steps" hidden={connected.value !== null}>
            <li>
              <h2>Install the SMSGate app</h2>
              <p>
                On the phone, install <strong>SMSGate</strong> (free and open source) from F-Droid or the APK on the project's GitHub releases page. Open it and allow it
                to send and read text messages when it asks.
              </p>
            </li>
            {plainHttp ? (
              <li>
                <h2>Turn on HTTPS first</h2>
                <p class="warning">
                  This server answers over plain HTTP, and the SMSGate app only connects over HTTPS.{" "}
                  {operator ? (
                    <>
                      On the server, run <code>{cli} tls init --ip {hostOf(main) ?? "<the server's network address>"}</code> and restart Textwire; then open this page again at its{" "}
                      <code>https://</code> address.
                    </>
                  ) : (
                    "Ask whoever runs the Textwire server to turn on HTTPS, then open this page again at its https:// address."
                  )}
                </p>
              </li>
            ) : null}
            <li>
              <h2>Trust this server's certificate</h2>
              {caAvailable.value ? (
                <>
                  <p>
                    Needed only when the server uses a certificate of its own making (a home or shop network without a public name). On the
                    phone's browser open <a href="/ca.crt">{new URL("/ca.crt", main).href}</a>, accept the warning this one time and save the file. Then in the phone's{" "}
                    <em>Settings → Security → Encryption &amp; credentials → Install a certificate → CA certificate</em> pick it (the wording differs a little between
                    makers).
                  </p>
                </>
              ) : (
                <p>
                  Only needed when the server uses a certificate of its own making. This server has none{operator ? <> (no <code>{cli} tls init</code>)</> : null}, so if its address
                  already opens with a padlock in the phone's browser, skip this step.
                </p>
              )}
            </li>
            <li>
              <h2>Connect the app to this server</h2>
              <p>
                In SMSGate open <em>Settings → Cloud server</em> and enter:
              </p>
              <div class="pairing">
                <div class="pair-item">
                  <h3 id="server-address-label">Server address</h3>
                  <p>
                    <code class="secret">
                      {main}
                    </code>
                  </p>
                  {hostOf(main) === null ? (
                    <p class="warning">
                      This address works only on the server itself. Use the server's address on your network instead (for example{" "}
                      <code>https://192.168.1.50:8080{MOBILE_API_PATH}</code>; the router's list of connected devices shows it).
                    </p>
                  ) : null}
                  <CopyButton text={main} onDone={(m) => (notice.value = m)}>
                    Copy the server address
                  </CopyButton>
                  <QrCode text={main} label="QR code of the server address" />
                  {urls.length > 1 ? (
                    <details class="other-addresses">
                      <summary>Other addresses of this server</summary>
                      <p class="hint">If the phone cannot reach the one above, try one of these (the phone must be on the same network).</p>
                      <ul>
                        {urls.slice(1).map((u) => (
                          <li key={u}>
                            <code>{u}</code>
                          </li>
                        ))}
                      </ul>
                    </details>
                  ) : null}
                </div>
                <div class="pair-item">
                  <h3 id="token-label">Private token</h3>
                  <p>
                    <code class="secret" data-testid="registration-token">
                      {r.token}
                    </code>
                  </p>
                  <CopyButton text={r.token} onDone={(m) => (notice.value = m)}>
                    Copy the token
                  </CopyButton>
                  <QrCode text={r.token} label="QR code of the private token" />
                  <p class="hint">
                    For one phone, valid until {fmtDate(r.expiresAt)}. Shown only here: the server keeps no readable copy.{" "}
                    <button type="button" class="secondary" onClick={() => attempt.value++}>
                      Make a new token
                    </button>
                  </p>
                </div>
              </div>
              <p class="hint">A phone's camera app reads the QR codes and offers to copy the text, which saves typing it.</p>
            </li>
            <li>
              <h2>Choose "SSE Only" and switch on</h2>
              <p>
                Still in the app's settings, set <em>Notification channel</em> to <strong>SSE Only</strong> (the server tells the phone the moment a text is due, with
                no Google service in between). Then on the app's home screen switch <em>Cloud server</em> on.
              </p>
            </li>
            <li>
              <h2>Keep it awake</h2>
              <p>
                In the phone's <em>Settings → Apps → SMSGate → Battery</em> choose <strong>Unrestricted</strong>, or the phone cuts the connection at night and texts
                wait until morning.
              </p>
            </li>
          </ol>
          <p role="status" aria-live="polite" class={notice.value ? "hint" : "visually-hidden"}>
            {notice.value}
          </p>
          {connected.value ? null : (
            <p class="hint">After the last step, the phone appears at the top of this page by itself.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

/** The addresses the server offers, or (when it knows none) the one this browser uses. */
function addresses(fromServer: string[]): string[] {
  if (fromServer.length) return fromServer;
  return [location.origin + MOBILE_API_PATH];
}

/** The address part of a URL, or null for one that only works on the server itself. */
function hostOf(url: string): string | null {
  const h = new URL(url).hostname;
  return LOOPBACK.test(h) ? null : h.replace(/^\[|\]$/g, "");
}

import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText } from "../api";
import { useSave } from "../act";
import type { Answer } from "../api-types";
import { errAttrs, FieldError } from "../components/FieldError";
import { fmtDate } from "../format";

type CertificateView = Answer<"/v1/admin/certificate">["data"];

const STATE_WORDS: Record<CertificateView["state"], string> = {
  off: "No public certificate.",
  waiting: "Waiting to ask the certificate authority…",
  obtaining: "Asking the certificate authority for a certificate…",
  valid: "Certificate in use.",
  failed: "Getting the certificate failed.",
};

/**
 * Settings → Server address → "Get a certificate" (operators): a certificate every browser trusts
 * for the server's public name, from Let's Encrypt, so forms on a public website can post here.
 * Its own component, placed on the server settings page (docs/api-decisions.md, "Online on its own").
 */
export function PublicCertificate() {
  const view = useSignal<CertificateView | null>(null);
  const domains = useSignal("");
  const email = useSignal("");
  const loadError = useSignal("");
  const { busy, notice, error, fieldErrors: errs, save: saving } = useSave();
  const load = () =>
    api.get("/v1/admin/certificate")
      .then((r) => {
        view.value = r.data;
        if (!domains.value) domains.value = r.data.domains.join(", ");
        if (!email.value) email.value = r.data.email ?? "";
        return r.data;
      })
      .catch((e) => ((loadError.value = errorText(e)), null));
  useEffect(() => {
    void load();
  }, []);
  // While the CA is being asked, look again every 2 s (a few seconds to a minute).
  useEffect(() => {
    const s = view.value?.state;
    if (s !== "waiting" && s !== "obtaining") return;
    const t = setTimeout(() => void load(), 2_000);
    return () => clearTimeout(t);
  }, [view.value]);
  async function save(e: Event, off = false) {
    e.preventDefault();
    await saving(async () => {
      const r = await api.put("/v1/admin/certificate", { json: off ? { domains: null } : { domains: domains.value.trim() || null, email: email.value.trim() || null } });
      view.value = r.data;
      if (off) domains.value = "";
      return r.data.source ? "Saved. Asking the certificate authority now; this page shows how it goes." : "Turned off. The certificate in use stays until the server restarts.";
    });
  }
  const v = view.value;
  const flag = v?.source === "flag";
  return (
    <section aria-labelledby="certificate-title" data-testid="public-certificate">
      <h3 id="certificate-title">Get a certificate</h3>
      <p>
        For forms on a public website (Wix, Squarespace, WordPress…), visitors' browsers must trust this server. Give the name that points to it, such as{" "}
        <code>sms.example.com</code>, and Textwire gets a free certificate from Let's Encrypt and renews it by itself.
      </p>
      {v ? (
        <p class="hint">
          Before you save: the name must point to this server's public IP address (an A record at your domain's provider), and your router must send port 80 to
          this server's port {v.plainPort} and port 443 to port {v.httpsPort}.
        </p>
      ) : null}
      {loadError.value ? <p class="error" role="alert">{loadError.value}</p> : null}
      {v && v.source ? (
        <div role="status" data-testid="certificate-status" class={v.state === "failed" ? "error" : undefined}>
          <p>
            {STATE_WORDS[v.state]}
            {v.certificate ? ` For ${v.certificate.domains.join(", ")}, valid until ${fmtDate(v.certificate.notAfter)}; renewed by itself 30 days before.` : ""}
          </p>
          {v.lastError ? <p>{v.lastError}</p> : null}
          {v.state === "failed" && v.nextAttemptAt ? <p>Next try: {fmtDate(v.nextAttemptAt)}.</p> : null}
        </div>
      ) : null}
      {flag ? (
        <p class="notice">
          The server was started with <code>--domain {v!.domains.join(",")}</code>, which wins over this page. Change it where the server is started.
        </p>
      ) : (
        <form onSubmit={(e) => save(e)}>
          <span class="field">
            <label for="certificate-domains">Public name</label>
            <input
              id="certificate-domains"
              type="text"
              inputMode="url"
              autocomplete="off"
              value={domains.value}
              placeholder="sms.example.com"
              {...errAttrs(errs.value, "domains", "certificate-domains-error", "certificate-domains-hint")}
              onInput={(e) => (domains.value = (e.target as HTMLInputElement).value)}
            />
            <small class="hint" id="certificate-domains-hint">
              Several names: separate them with commas.
            </small>
            <FieldError errors={errs.value} name="domains" id="certificate-domains-error" />
          </span>
          <span class="field">
            <label for="certificate-email">E-mail for expiry notices (optional)</label>
            <input
              id="certificate-email"
              type="email"
              autocomplete="email"
              value={email.value}
              {...errAttrs(errs.value, "email", "certificate-email-error")}
              onInput={(e) => (email.value = (e.target as HTMLInputElement).value)}
            />
            <FieldError errors={errs.value} name="email" id="certificate-email-error" />
          </span>
          <button type="submit" disabled={busy.value}>
            Get a certificate
          </button>
          {v?.source === "setting" ? (
            <button type="button" class="secondary" disabled={busy.value} onClick={(e) => save(e, true)}>
              Turn off
            </button>
          ) : null}
        </form>
      )}
      <p aria-live="polite" class="notice-line">
        {notice.value}
      </p>
      {error.value && !errs.value.length ? <p class="error" role="alert">{error.value}</p> : null}
    </section>
  );
}

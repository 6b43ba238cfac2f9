import { useSignal } from "@preact/signals";
import { ApiError, api } from "../api";
import { fmtDate } from "../format";
import { describeTestAnswer, type TestOutcome } from "../form-protection";
import type { Answer, FormField } from "../api-types";


const SAMPLES: Record<string, string> = { text: "Sample", email: "ada@example.com", phone: "+14155550123", number: "42", url: "https://example.com", date: "2026-05-01" };
const BUILTIN_SAMPLES: Record<string, string> = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" };

/**
 * "Send a test submission": posts sample values to the form's own webhook address, as a website
 * would (the documented webhook API, no key), and says what happened in plain words.
 */
export function TestSubmission(props: { webhookUrl: string; fields: FormField[]; settings: Record<string, any> }) {
  const phone = useSignal("+14155550123");
  const values = useSignal<Record<string, string>>(Object.fromEntries(props.fields.map((f) => [f.name, BUILTIN_SAMPLES[f.name] ?? SAMPLES[f.type] ?? "Sample"])));
  const outcome = useSignal<TestOutcome | null>(null);
  const busy = useSignal(false);

  async function send(e: Event) {
    e.preventDefault();
    busy.value = true;
    outcome.value = null;
    // The address may carry the server's public URL; the dashboard posts to the same path here.
    const path = new URL(props.webhookUrl, location.origin).pathname.replace(/^\/v1/, "");
    const body: Record<string, string> = { phoneNumber: phone.value.trim(), source: "dashboard test" };
    for (const f of props.fields) if (values.value[f.name]?.trim()) body[f.name] = values.value[f.name].trim();
    try {
      const [r, phones] = await Promise.all([
        api(path, { method: "POST", json: body }),
        // Whether a phone is connected decides between an estimated time and "texts wait".
        api<Answer<"/v1/devices">>("/devices").then((d) => d.data.devices.some((x) => x.online), () => true),
      ]);
      outcome.value = describeTestAnswer(200, r, fmtDate, phones);
    } catch (err) {
      outcome.value = err instanceof ApiError ? describeTestAnswer(err.status, err.body, fmtDate) : { kind: "refused", messageId: null, text: String(err) };
    } finally {
      busy.value = false;
    }
  }

  const s = props.settings;
  const o = outcome.value;
  return (
    <section aria-labelledby="test-title">
      <h2 id="test-title">Send a test submission</h2>
      <p>Posts these values to the form's webhook address, as your website would. A real text is queued to the phone number, so use your own.</p>
      {s.captcha ? <p class="hint">This form asks for a captcha, which only a visitor on your website can solve: a test from here is refused.</p> : null}
      {Array.isArray(s.allowedOrigins) && !s.allowedOrigins.includes(location.origin) ? <p class="hint">This form only accepts posts from {s.allowedOrigins.join(", ")}: a test from here is refused unless {location.origin} is in that list.</p> : null}
      <form class="inline-form" onSubmit={send}>
        <span class="field">
          <label for="test-phone">Phone number to text</label>
          <input id="test-phone" type="tel" autocomplete="tel" required value={phone.value} onInput={(e) => (phone.value = (e.target as HTMLInputElement).value)} />
        </span>
        {props.fields.map((f, i) => (
          <span class="field" key={f.name}>
            <label for={`test-field-${i}`}>{f.label || f.name}</label>
            <input id={`test-field-${i}`} value={values.value[f.name] ?? ""} onInput={(e) => (values.value = { ...values.value, [f.name]: (e.target as HTMLInputElement).value })} />
          </span>
        ))}
        <button type="submit" disabled={busy.value}>
          Send a test submission
        </button>
      </form>
      <div aria-live="polite" class="test-outcome" data-testid="test-outcome">
        {o ? (
          <div class={o.kind === "refused" ? "notice bad" : "notice"}>
            <p>
              {o.text}{" "}
              {o.messageId ? <a href={`/messages/${encodeURIComponent(o.messageId)}`}>See the message</a> : null}
              {o.waitsForPhone ? <> · <a href="/devices/add">Add a phone</a></> : null}
            </p>
            {o.errors?.length ? (
              <ul>
                {o.errors.map((x) => (
                  <li key={x.field + x.message}>
                    {x.field === "phoneNumber" ? "Phone number" : x.field}: {x.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}

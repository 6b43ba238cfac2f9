import { useSignal } from "@preact/signals";
import { ApiError, api } from "../api";
import { fmtDate } from "../format";
import { describeTestAnswer, type TestOutcome } from "../form-protection";
import type { Answer, FormField } from "../api-types";

const SAMPLES: Record<string, string> = { text: "Sample", email: "ada@example.com", phone: "+14155550123", number: "42", url: "https://example.com", date: "2026-05-01" };
const BUILTIN_SAMPLES: Record<string, string> = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" };
/** The owner's own number, remembered on this browser for the next test. */
const MY_PHONE_KEY = "textwire.testPhone";

function rememberedPhone(): string {
  try {
    return localStorage.getItem(MY_PHONE_KEY) ?? "";
  } catch {
    return "";
  }
}

/**
 * "Send a test submission": the form's own checks and template on sample values (POST
 * /v1/forms/:id/test). Nothing is saved and no contact is made or changed, so a sample number
 * that belongs to a customer never renames them; the text reaches a phone only when the owner
 * ticks "Also send it to my phone" and gives their own number (docs/api-decisions.md, "Test
 * submissions").
 */
export function TestSubmission(props: { formId: string; fields: FormField[] }) {
  const phoneField = props.fields.find((f) => f.name === "phoneNumber");
  const others = props.fields.filter((f) => f.name !== "phoneNumber");
  const phone = useSignal("+14155550123");
  const values = useSignal<Record<string, string>>(Object.fromEntries(others.map((f) => [f.name, BUILTIN_SAMPLES[f.name] ?? SAMPLES[f.type] ?? "Sample"])));
  const sendToMe = useSignal(false);
  const myPhone = useSignal(rememberedPhone());
  const outcome = useSignal<TestOutcome | null>(null);
  const busy = useSignal(false);

  async function send(e: Event) {
    e.preventDefault();
    busy.value = true;
    outcome.value = null;
    const sample: Record<string, string> = { phoneNumber: phone.value.trim() };
    for (const f of others) if (values.value[f.name]?.trim()) sample[f.name] = values.value[f.name].trim();
    const sendTo = sendToMe.value ? myPhone.value.trim() : null;
    try {
      const [r, phones] = await Promise.all([
        api.post("/v1/forms/{id}/test", { path: { id: props.formId }, json: { values: sample, sendTo } }),
        // Whether a phone is connected decides between an estimated time and "texts wait".
        sendTo ? api.get("/v1/devices").then((d) => d.data.devices.some((x) => x.online), () => true) : Promise.resolve(true),
      ]);
      if (sendTo) {
        try {
          localStorage.setItem(MY_PHONE_KEY, sendTo);
        } catch {
          // A browser that keeps nothing just asks again next time.
        }
      }
      outcome.value = describeTestAnswer(200, r, fmtDate, phones);
    } catch (err) {
      outcome.value = err instanceof ApiError ? describeTestAnswer(err.status, err.body, fmtDate) : { kind: "refused", messageId: null, text: String(err) };
    } finally {
      busy.value = false;
    }
  }

  const o = outcome.value;
  return (
    <section aria-labelledby="test-title">
      <h2 id="test-title">Send a test submission</h2>
      <p>
        Try the form with sample values and see the text a visitor would get. Nothing is saved, and no contact is made or changed — even when the sample number
        belongs to one of your customers. To get the text on your own phone, tick “Also send it to my phone”.
      </p>
      <form class="inline-form" onSubmit={send}>
        <span class="field">
          <label for="test-phone">{phoneField?.label || "Mobile phone number"} (sample, never texted)</label>
          <input id="test-phone" type="tel" autocomplete="off" required value={phone.value} onInput={(e) => (phone.value = (e.target as HTMLInputElement).value)} />
        </span>
        {others.map((f, i) => (
          <span class="field" key={f.name}>
            <label for={`test-field-${i}`}>{f.label || f.name}</label>
            {f.type === "longText" ? (
              <textarea id={`test-field-${i}`} rows={3} value={values.value[f.name] ?? ""} onInput={(e) => (values.value = { ...values.value, [f.name]: (e.target as HTMLTextAreaElement).value })} />
            ) : (
              <input id={`test-field-${i}`} value={values.value[f.name] ?? ""} onInput={(e) => (values.value = { ...values.value, [f.name]: (e.target as HTMLInputElement).value })} />
            )}
          </span>
        ))}
        <span class="field">
          <label>
            <input type="checkbox" checked={sendToMe.value} onChange={(e) => (sendToMe.value = (e.target as HTMLInputElement).checked)} /> Also send it to my phone
          </label>
        </span>
        {sendToMe.value ? (
          <span class="field">
            <label for="test-my-phone">Your phone number</label>
            <input id="test-my-phone" type="tel" autocomplete="tel" required value={myPhone.value} onInput={(e) => (myPhone.value = (e.target as HTMLInputElement).value)} />
          </span>
        ) : null}
        <button type="submit" disabled={busy.value}>
          Send a test submission
        </button>
      </form>
      <div aria-live="polite" class="test-outcome" data-testid="test-outcome">
        {o ? (
          <div class={o.kind === "refused" ? "notice bad" : "notice"}>
            <p>
              {o.text}{" "}
              {o.messageId ? <a href={`/messages/${encodeURIComponent(o.messageId)}`}>See the test text</a> : null}
              {o.waitsForPhone ? <> · <a href="/devices/add">Add a phone</a></> : null}
            </p>
            {o.preview ? (
              <figure>
                <figcaption>
                  The text a visitor would get ({o.preview.segments === 1 ? "1 text" : `${o.preview.segments} texts`}):
                </figcaption>
                <blockquote>{o.preview.text}</blockquote>
              </figure>
            ) : null}
            {o.notes?.length ? (
              <ul aria-label="On your website">
                {o.notes.map((n) => (
                  <li key={n}>{n}</li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}

import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, errorText, session } from "../api";
import { useResource } from "../resource";
import { useSave } from "../act";
import type { Answer } from "../api-types";
import { FieldError, errAttrs } from "../components/FieldError";

type Told = Answer<"/v1/people/me">["data"];

/** The night hours suggested when someone first asks not to be texted at night. */
const NIGHT = { start: "21:00", end: "08:00" };

/**
 * "Being told": the signed-in person's mobile number and what they want to hear about (a text
 * through the shop's own phones for each new request or customer reply, or an e-mail when the
 * server has SMTP), and the hours they are not to be texted. Its own section, placed by whichever
 * settings page shows the person's own profile (PATCH /v1/people/me).
 */
export function BeingTold() {
  const user = session.value?.user;
  const told = useSignal<Told | null>(null);
  const phone = useSignal("");
  const requests = useSignal(false);
  const replies = useSignal(false);
  const email = useSignal(false);
  const quiet = useSignal(true);
  const start = useSignal(NIGHT.start);
  const end = useSignal(NIGHT.end);
  const loadError = useSignal("");
  const { busy, notice, error, fieldErrors, save } = useSave();
  const show = (t: Told) => {
    told.value = t;
    phone.value = t.phoneNumber ?? "";
    requests.value = t.notifications.submissions;
    replies.value = t.notifications.replies;
    email.value = t.notifications.email;
    quiet.value = t.quietHours !== null || (!t.notifications.submissions && !t.notifications.replies);
    start.value = t.quietHours?.start ?? NIGHT.start;
    end.value = t.quietHours?.end ?? NIGHT.end;
  };
  // Only a person has their own settings (a key's session shows none of this).
  useResource(() => api.get("/v1/people/me").then((r) => r.data), [user?.id], { error: loadError, onLoad: show, when: Boolean(user) });
  if (!user) return null;
  const t = told.value;
  async function submit(e: Event) {
    e.preventDefault();
    await save(async () => {
      const r = await api.patch("/v1/people/me", { json: {
          phoneNumber: phone.value.trim() === "" ? null : phone.value,
          notifications: { submissions: requests.value, replies: replies.value, ...(t?.emailAvailable ? { email: email.value } : {}) },
          quietHours: quiet.value ? { start: start.value, end: end.value } : null,
        } });
      show(r.data);
      const what = [r.data.notifications.submissions ? "new requests" : "", r.data.notifications.replies ? "customers' replies" : ""].filter(Boolean).join(" and ");
      return what ? `Saved. You will be told about ${what}.` : "Saved. You will not be told about anything.";
    });
  }
  const errs = fieldErrors.value;
  return (
    <>
      <h2>Being told</h2>
      <p class="hint">Get a short text on your own mobile, through the shop's phones, when someone fills in a form or a customer replies. Several at once come as one text.</p>
      {loadError.value ? <p class="error" role="alert">{loadError.value}</p> : null}
      {t ? (
        <form onSubmit={submit} aria-label="Being told" noValidate>
          <label for="me-phone">Your mobile number</label>
          <input id="me-phone" type="tel" autocomplete="tel" value={phone.value} onInput={(e) => (phone.value = (e.target as HTMLInputElement).value)} {...errAttrs(errs, "phoneNumber", "me-phone-error")} />
          <FieldError errors={errs} name="phoneNumber" id="me-phone-error" />
          <fieldset>
            <legend>Tell me about</legend>
            <label class="check">
              <input type="checkbox" checked={requests.value} onChange={(e) => (requests.value = (e.target as HTMLInputElement).checked)} /> New requests from the forms
            </label>
            <label class="check">
              <input type="checkbox" checked={replies.value} onChange={(e) => (replies.value = (e.target as HTMLInputElement).checked)} /> Customers' replies
            </label>
            {t.emailAvailable ? (
              <label class="check">
                <input type="checkbox" checked={email.value} onChange={(e) => (email.value = (e.target as HTMLInputElement).checked)} /> Also by e-mail to {user.email}
              </label>
            ) : null}
            <FieldError errors={errs} name="notifications.email" id="me-email-error" />
          </fieldset>
          <label class="check">
            <input type="checkbox" checked={quiet.value} onChange={(e) => (quiet.value = (e.target as HTMLInputElement).checked)} /> Not at night
          </label>
          {quiet.value ? (
            <div class="inline-form">
              <span class="field">
                <label for="me-quiet-start">From</label>
                <input id="me-quiet-start" type="time" required value={start.value} onInput={(e) => (start.value = (e.target as HTMLInputElement).value)} {...errAttrs(errs, "quietHours", "me-quiet-error")} />
              </span>
              <span class="field">
                <label for="me-quiet-end">Until</label>
                <input id="me-quiet-end" type="time" required value={end.value} onInput={(e) => (end.value = (e.target as HTMLInputElement).value)} {...errAttrs(errs, "quietHours", "me-quiet-error")} />
              </span>
            </div>
          ) : null}
          <FieldError errors={errs} name="quietHours" id="me-quiet-error" />
          <p class="hint">Texts that arrive at night wait until the morning (the business's time zone). Reply STOP from your mobile to stop them; switch them back on here.</p>
          <button type="submit" disabled={busy.value}>
            Save
          </button>
          <p role="status" class="notice-line">{notice.value}</p>
          {error.value && !errs.length ? <p class="error" role="alert">{error.value}</p> : null}
        </form>
      ) : null}
    </>
  );
}

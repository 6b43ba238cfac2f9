import type { ComponentChildren } from "preact";
import { CAPTCHA_NAMES, type ProtectionDraft } from "../form-protection";
import { errAttrs, FieldError, type ApiFieldErrors } from "../components/FieldError";

/**
 * Every protection of a public form (docs/forms.md, "Protecting a public form"): spam trap, links rule,
 * limits, duplicate window, allowed countries and websites, captcha, thank-you and error pages.
 */
export function ProtectionFields(props: { draft: ProtectionDraft; onChange: (d: ProtectionDraft) => void; errors: ApiFieldErrors; onRecommended: () => void }) {
  const d = props.draft;
  const set = (patch: Partial<ProtectionDraft>) => props.onChange({ ...d, ...patch });
  const val = (e: Event) => (e.target as HTMLInputElement).value;
  const errs = props.errors;
  const input = (key: keyof ProtectionDraft, label: ComponentChildren, attrs: Record<string, unknown>, help?: string) => {
    const id = `prot-${key}`;
    const name = `settings.${key}`;
    return (
      <span class="field">
        <label for={id}>{label}</label>
        <input id={id} value={d[key] as string} onInput={(e) => set({ [key]: val(e) })} {...attrs} {...errAttrs(errs, name, `${id}-error`, help ? `${id}-help` : undefined)} />
        {help ? (
          <small id={`${id}-help`} class="hint">
            {help}
          </small>
        ) : null}
        <FieldError errors={errs} name={name} id={`${id}-error`} />
      </span>
    );
  };
  return (
    <fieldset>
      <legend>Protection against spam and abuse</legend>
      <p class="hint">
        Anyone who can see your web page can post to its form. These settings stop strangers from using your phone to text any number.{" "}
        <button type="button" class="secondary" onClick={props.onRecommended}>
          Fill in the recommended protections
        </button>
      </p>
      <div class="prot-grid">
        {input("duplicateWindowMinutes", "Ignore repeats of the same number for (minutes)", { type: "number", min: 0, max: 1440, inputMode: "numeric" }, "Empty or 0: off. A double click then texts once.")}
        {input("ipLimitPerMinute", "Submissions per visitor per minute", { type: "number", min: 1, inputMode: "numeric" }, "Empty: no limit.")}
        {input("recipientLimitPerDay", "Texts per phone number per day", { type: "number", min: 1, inputMode: "numeric" }, "Empty: no limit. Above it the contact is saved but not texted.")}
        {input("allowedCountries", "Phone numbers only from (country codes)", { placeholder: "US, CA", autocomplete: "off" }, "Two-letter codes separated by commas. Empty: any country.")}
      </div>
      <span class="field wide">
        <label for="prot-allowedOrigins">Allowed websites (one a line)</label>
        <textarea
          id="prot-allowedOrigins"
          rows={2}
          placeholder="https://shop.example"
          value={d.allowedOrigins}
          onInput={(e) => set({ allowedOrigins: (e.target as HTMLTextAreaElement).value })}
          {...errAttrs(errs, "settings.allowedOrigins", "prot-allowedOrigins-error", "prot-allowedOrigins-help")}
        />
        <small id="prot-allowedOrigins-help" class="hint">
          Only pages on these addresses may post to the form. Empty: any website (and tools like Zapier).
        </small>
        <FieldError errors={errs} name="settings.allowedOrigins" id="prot-allowedOrigins-error" />
      </span>
      <div class="prot-grid">
        <span class="field">
          <label class="check">
            <input type="checkbox" checked={d.honeypotOn} onChange={(e) => set({ honeypotOn: (e.target as HTMLInputElement).checked })} /> Hidden spam trap field
          </label>
          {d.honeypotOn ? (
            <>
              <label for="prot-honeypotField">Spam trap field name</label>
              <input id="prot-honeypotField" value={d.honeypotField} onInput={(e) => set({ honeypotField: val(e) })} {...errAttrs(errs, "settings.honeypotField", "prot-honeypotField-error")} />
            </>
          ) : null}
          <FieldError errors={errs} name="settings.honeypotField" id="prot-honeypotField-error" />
        </span>
        <span class="field">
          <label class="check">
            <input type="checkbox" checked={d.allowLinksInValues} onChange={(e) => set({ allowLinksInValues: (e.target as HTMLInputElement).checked })} /> Allow links in what
            visitors type
          </label>
          <small class="hint">Off is safer: nobody can make your phone text a link to a fake page.</small>
          <FieldError errors={errs} name="settings.allowLinksInValues" id="prot-allowLinksInValues-error" />
        </span>
      </div>
      <div class="prot-grid">
        <span class="field">
          <label for="prot-captchaProvider">Captcha</label>
          <select id="prot-captchaProvider" value={d.captchaProvider} onChange={(e) => set({ captchaProvider: (e.target as HTMLSelectElement).value as ProtectionDraft["captchaProvider"] })} {...errAttrs(errs, "settings.captcha.provider", "prot-captchaProvider-error")}>
            <option value="">None</option>
            {Object.entries(CAPTCHA_NAMES).map(([k, name]) => (
              <option key={k} value={k}>
                {name}
              </option>
            ))}
          </select>
          <FieldError errors={errs} name="settings.captcha.provider" id="prot-captchaProvider-error" />
        </span>
        {d.captchaProvider ? (
          <>
            {input("captchaSiteKey", "Captcha site key (public)", { autocomplete: "off" })}
            <span class="field">
              <label for="prot-captchaSecret">Captcha secret key</label>
              <input
                id="prot-captchaSecret"
                type="password"
                autocomplete="new-password"
                value={d.captchaSecret}
                placeholder={d.storedCaptchaProvider === d.captchaProvider ? "saved: leave empty to keep" : ""}
                onInput={(e) => set({ captchaSecret: val(e) })}
                {...errAttrs(errs, "settings.captcha.secret", "prot-captchaSecret-error", "prot-captchaSecret-help")}
              />
              <small id="prot-captchaSecret-help" class="hint">
                Kept on the server and never shown again.
              </small>
              <FieldError errors={errs} name="settings.captcha.secret" id="prot-captchaSecret-error" />
            </span>
          </>
        ) : null}
      </div>
      <FieldError errors={errs.filter((e) => e.field === "settings.captcha")} name="settings.captcha" id="prot-captcha-error" />
      <div class="prot-grid">
        {input("successUrl", "Thank-you page (address)", { type: "url", placeholder: "https://shop.example/thanks" }, "Where a visitor lands after sending. Empty: a simple page of ours.")}
        {input("errorUrl", "Error page (address)", { type: "url", placeholder: "https://shop.example/oops" }, "Empty: a simple page of ours that says what went wrong.")}
      </div>
    </fieldset>
  );
}

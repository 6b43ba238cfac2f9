/**
 * Server-side captcha check for a form with `settings.captcha`: the token the widget posted is
 * sent with the form's secret to the provider's siteverify endpoint before anything is written.
 * All three providers take the same form-encoded request and answer JSON with `success`.
 */
import { AppError } from "../errors";
import { CAPTCHA_TOKEN_FIELDS, type CaptchaProvider, type CaptchaSettings } from "../domain/protection";

export const CAPTCHA_VERIFY_URLS: Record<CaptchaProvider, string> = {
  turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
  hcaptcha: "https://api.hcaptcha.com/siteverify",
  recaptcha: "https://www.google.com/recaptcha/api/siteverify",
};

/** How long the provider may take before the submission is answered 503 CAPTCHA_UNAVAILABLE. */
export const CAPTCHA_TIMEOUT_MS = 5_000;
/** Longest token we forward (real tokens are ~2 KB). */
const MAX_TOKEN_LENGTH = 4_096;

export class CaptchaVerifier {
  constructor(
    private readonly urls: Partial<Record<CaptchaProvider, string>> = {},
    private readonly timeoutMs = CAPTCHA_TIMEOUT_MS,
  ) {}

  /** Resolves when the provider accepted the token; throws CAPTCHA_FAILED / CAPTCHA_UNAVAILABLE. */
  async verify(captcha: CaptchaSettings, token: unknown, remoteIp: string): Promise<void> {
    const field = CAPTCHA_TOKEN_FIELDS[captcha.provider];
    if (typeof token !== "string" || token.trim() === "" || token.length > MAX_TOKEN_LENGTH) {
      throw new AppError("CAPTCHA_FAILED", {
        message: "Please complete the captcha check and send the form again",
        details: { field, provider: captcha.provider, reason: "missing" },
      });
    }
    const url = this.urls[captcha.provider] ?? CAPTCHA_VERIFY_URLS[captcha.provider];
    const form = new URLSearchParams({ secret: captcha.secret, response: token });
    if (remoteIp && remoteIp !== "unknown") form.set("remoteip", remoteIp);
    let answer: { success?: unknown; "error-codes"?: unknown };
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
        body: form,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) throw new Error(`siteverify answered ${res.status}`);
      answer = (await res.json()) as typeof answer;
    } catch {
      throw new AppError("CAPTCHA_UNAVAILABLE", {
        message: "The captcha check could not be completed right now; please try again in a minute",
        details: { provider: captcha.provider, retryAfter: 60 },
        extra: { retryAfter: 60 },
        headers: { "Retry-After": "60" },
      });
    }
    if (answer?.success !== true) {
      throw new AppError("CAPTCHA_FAILED", {
        message: "The captcha check failed; please try it again and send the form again",
        details: { field, provider: captcha.provider, reason: "rejected" },
      });
    }
  }
}

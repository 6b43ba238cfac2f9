/**
 * What a browser that posted a plain <form> to the webhook gets back: a 303 to the
 * form's successUrl / errorUrl, or to Textwire's own small thank-you / error page. HTML only, no
 * external assets, in plain words for the visitor, with a link back to the page they came from.
 */
import { escapeHtml } from "../domain/embed";

/** True when the client prefers HTML to JSON (a browser's form post); none or JSON: false. */
export function prefersHtml(accept: string | null): boolean {
  if (!accept) return false;
  let html = -1;
  let json = -1;
  let htmlAt = Infinity;
  let jsonAt = Infinity;
  accept.split(",").forEach((part, i) => {
    const [type, ...params] = part.trim().toLowerCase().split(";");
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    const t = type.trim();
    if ((t === "text/html" || t === "application/xhtml+xml") && q > html) [html, htmlAt] = [q, Math.min(htmlAt, i)];
    if (t === "application/json" && q > json) [json, jsonAt] = [q, Math.min(jsonAt, i)];
  });
  if (html <= 0) return false;
  return html > json || (html === json && htmlAt < jsonAt);
}

/** An http(s) URL to link back to, or null. */
export function safeBackUrl(v: string | null | undefined): string | null {
  if (!v || v.length > 2000) return null;
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:" ? u.toString() : null;
  } catch {
    return null;
  }
}

/** `url` with query parameters added (kept: its own query and fragment). */
export function withQuery(url: string, params: Record<string, string | undefined>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") u.searchParams.set(k, v);
  return u.toString();
}

const STYLE =
  "body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f6f7f9;color:#1d2430;margin:0}" +
  "main{max-width:32rem;margin:12vh auto;background:#fff;padding:2rem 2.25rem;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}" +
  "h1{font-size:1.4rem;margin:0 0 .75rem}p{line-height:1.5}a{color:#1a5fd0}.form{color:#5b6472;font-size:.9rem;margin:0 0 .25rem}";

function page(title: string, formName: string | null, body: string, back: string | null): string {
  const link = back ? `<p><a href="${escapeHtml(back)}">← Back to the form</a></p>` : "";
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>` +
    (formName ? `<p class="form">${escapeHtml(formName)}</p>` : "") +
    `<h1>${escapeHtml(title)}</h1>${body}${link}</main></body></html>`
  );
}

/**
 * `textComing`: false when no text will follow (the number opted out, no consent, the day's
 * limit for the number): the visitor is thanked without being promised one.
 */
export function thankYouPage(formName: string | null, back: string | null, textComing = true): string {
  const words = textComing ? "Your message was received. We will be in touch by text message shortly." : "Your message was received. We will be in touch soon.";
  return page("Thank you!", formName, `<p>${words}</p>`, back);
}

/**
 * `reason`: the refusal in the visitor's words (src/domain/visitor-words.ts) — one sentence per
 * field problem, each its own paragraph.
 */
export function errorPage(formName: string | null, reason: string, back: string | null): string {
  const sentences = reason.split(/(?<=[.!?])\s+(?=[A-Z“'])/);
  return page("Your message was not sent", formName, sentences.map((s) => `<p>${escapeHtml(s)}</p>`).join(""), back);
}

/** Security headers for the built-in pages: nothing external may load, nothing may frame them. */
export const PAGE_HEADERS: Record<string, string> = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

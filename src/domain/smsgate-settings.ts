/**
 * The settings document of SMSGate's third-party API (`/3rdparty/v1/settings`): validation, merging
 * and what the account's phones get from it. Pure. The document is SMSGate's camelCase shape
 * (the npm client's DeviceSettings); client-go's snake_case spellings of the same keys are taken on
 * input and stored camelCase; keys Textwire does not know are kept as the client gave them
 * (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings").
 */
import type { FieldError } from "./submission";

export type SmsgateSettings = Record<string, unknown>;

/** The stored document at most (JSON bytes): unknown keys are kept, but not without end. */
export const SMSGATE_SETTINGS_MAX_BYTES = 16_384;
/** The app reads numbers into Java ints. */
const INT_MAX = 2_147_483_647;

type Rule =
  | { kind: "int" }
  | { kind: "bool" }
  /** A time of day, HH:mm on the 24-hour clock (SMSGate's work hours). */
  | { kind: "hhmm" }
  | { kind: "enum"; values: readonly string[] }
  /** A key SMSGate's clients may send only empty ("isdefault" in client-go): Textwire owns it. */
  | { kind: "refused"; why: string }
  /** The account's SMSGate signing key: not stored in the document (see takeSigningKey). */
  | { kind: "signingKey" };

/** A signing key an SMSGate client sets: long enough to be a secret, short enough to be a key. */
export const SIGNING_KEY_MIN = 8;
export const SIGNING_KEY_MAX = 256;

const int: Rule = { kind: "int" };
const bool: Rule = { kind: "bool" };

/** SMSGate's sections and keys (client-go's domain_settings.go; the npm client's DeviceSettings). */
export const SMSGATE_SETTINGS_RULES: Record<string, Record<string, Rule>> = {
  messages: {
    sendIntervalMin: int,
    sendIntervalMax: int,
    limitPeriod: { kind: "enum", values: ["Disabled", "PerMinute", "PerHour", "PerDay"] },
    limitValue: int,
    simSelectionMode: { kind: "enum", values: ["OSDefault", "RoundRobin", "Random"] },
    logLifetimeDays: int,
    processingOrder: { kind: "enum", values: ["LIFO", "FIFO"] },
    workHoursEnabled: bool,
    workHoursStart: { kind: "hhmm" },
    workHoursEnd: { kind: "hhmm" },
  },
  ping: { intervalSeconds: int },
  logs: { lifetimeDays: int },
  webhooks: {
    internetRequired: bool,
    retryCount: int,
    /**
     * The key that signs SMSGate-format webhooks (the account's, in smsgate_clients): an SMSGate
     * user sets it here as on SMSGate's server (docs/api-decisions.md, "SMSGate: signing key in
     * the settings document, and re-sent history"). The phones keep their own keys.
     */
    signingKey: { kind: "signingKey" },
  },
  gateway: {
    cloudUrl: { kind: "refused", why: "the phone's server address is typed into the SMSGate app when it is registered" },
    privateToken: { kind: "refused", why: "phones sign in with the token they got when they were registered" },
    notificationChannel: { kind: "enum", values: ["AUTO", "SSE_ONLY"] },
  },
  encryption: {
    passphrase: { kind: "refused", why: "Textwire does not send encrypted texts" },
  },
  receiver: { contentProviderEnabled: bool },
};

/** client-go's spelling of a key (send_interval_min) → the document's (sendIntervalMin). */
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The document's spelling of a key (sendIntervalMin) → SMSGate's (send_interval_min). */
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

/**
 * The document as SMSGate's server answers it: its sections' known keys in snake_case, as its API
 * description, client-go and client-py read them (docs/api-decisions.md, "The SMSGate ecosystem,
 * every call"); keys Textwire does not know stay as the client gave them.
 */
export function snakeCaseSettings(doc: SmsgateSettings): SmsgateSettings {
  const out: SmsgateSettings = {};
  for (const [section, value] of Object.entries(doc)) {
    const rules = Object.hasOwn(SMSGATE_SETTINGS_RULES, section) ? SMSGATE_SETTINGS_RULES[section] : undefined;
    if (!rules || !isObject(value)) {
      put(out, section, value);
      continue;
    }
    const keys: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) put(keys, Object.hasOwn(rules, k) ? snake(k) : k, v);
    put(out, section, keys);
  }
  return out;
}

/** Sets an own key, even one named __proto__ (a client's unknown key is data, never a prototype). */
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A PUT or PATCH body, checked and with known keys in their camelCase spelling. `null` (and an
 * empty refused key) is kept as null: for PATCH it removes the key, for PUT it is dropped. Every
 * problem is reported; nothing is applied when there is one.
 */
export function checkSmsgateSettings(body: unknown): { ok: true; value: SmsgateSettings } | { ok: false; errors: FieldError[] } {
  if (!isObject(body)) {
    return { ok: false, errors: [{ field: "body", message: "The settings must be a JSON object, such as {\"messages\": {\"limitValue\": 10}}", requirement: "object", provided: Array.isArray(body) ? "an array" : body }] };
  }
  const errors: FieldError[] = [];
  const out: SmsgateSettings = {};
  for (const [section, given] of Object.entries(body)) {
    const rules = SMSGATE_SETTINGS_RULES[section];
    if (!rules) {
      put(out, section, given); // not SMSGate's: kept as given
      continue;
    }
    if (given === null) {
      out[section] = null;
      continue;
    }
    if (!isObject(given)) {
      errors.push({ field: section, message: `${section} must be an object of settings`, requirement: "object", provided: Array.isArray(given) ? "an array" : given });
      continue;
    }
    const keys: Record<string, unknown> = {};
    const spelled = new Map<string, string>();
    for (const [rawKey, value] of Object.entries(given)) {
      const key = Object.hasOwn(rules, camel(rawKey)) ? camel(rawKey) : rawKey;
      const field = `${section}.${key}`;
      const other = spelled.get(key);
      if (other !== undefined) {
        if (JSON.stringify(keys[key]) !== JSON.stringify(value)) {
          errors.push({ field, message: `${field} is given twice (${other} and ${rawKey}) with different values; send one`, requirement: "one spelling", provided: rawKey });
        }
        continue;
      }
      spelled.set(key, rawKey);
      const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
      if (rule === undefined || value === null) {
        put(keys, key, value);
        continue;
      }
      const problem = checkValue(field, rule, value);
      if (problem) errors.push(problem);
      else put(keys, key, rule.kind === "refused" || value === "" ? null : value);
    }
    put(out, section, keys);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: out };
}

function checkValue(field: string, rule: Rule, value: unknown): FieldError | null {
  switch (rule.kind) {
    case "int":
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= INT_MAX
        ? null
        : { field, message: `${field} must be a whole number of at least 1`, requirement: `1-${INT_MAX}`, provided: value };
    case "hhmm":
      return typeof value === "string" && /^([01]\d|2[0-3]):[0-5]\d$/.test(value)
        ? null
        : { field, message: `${field} must be a time of day such as 09:00 (24-hour clock)`, requirement: "HH:mm", provided: value };
    case "bool":
      return typeof value === "boolean" ? null : { field, message: `${field} must be true or false`, requirement: "true | false", provided: value };
    case "enum":
      return typeof value === "string" && rule.values.includes(value)
        ? null
        : { field, message: `${field} must be one of ${rule.values.join(", ")}`, requirement: rule.values.join(" | "), provided: value };
    case "signingKey":
      return value === "" || (typeof value === "string" && value.trim().length >= SIGNING_KEY_MIN && value.length <= SIGNING_KEY_MAX)
        ? null
        : { field, message: `${field} must be ${SIGNING_KEY_MIN} to ${SIGNING_KEY_MAX} characters`, requirement: `${SIGNING_KEY_MIN}-${SIGNING_KEY_MAX} characters`, provided: typeof value === "string" ? `${value.length} characters` : value };
    case "refused":
      return value === "" ? null : { field, message: `${field} cannot be set on this server: ${rule.why}`, requirement: "empty or left out", provided: typeof value === "string" ? "a value" : value };
  }
}

/** Without the nulls: what PUT stores. */
function withoutNulls(doc: SmsgateSettings): SmsgateSettings {
  const out: SmsgateSettings = {};
  for (const [k, v] of Object.entries(doc)) {
    if (v === null) continue;
    put(out, k, isObject(v) && Object.hasOwn(SMSGATE_SETTINGS_RULES, k) ? withoutNulls(v) : v);
  }
  return out;
}

/** PATCH: a section's keys are merged, null removes a key (or a whole section); other keys replace. */
function merged(stored: SmsgateSettings, patch: SmsgateSettings): SmsgateSettings {
  const out: SmsgateSettings = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (Object.hasOwn(SMSGATE_SETTINGS_RULES, k) && isObject(v)) put(out, k, withoutNulls(merged(isObject(stored[k]) ? stored[k] : {}, v)));
    else put(out, k, v);
  }
  return out;
}

/**
 * The document after a PUT (`replace`) or a PATCH, or the problems: the body's own, then the
 * rules that hold across keys (an interval's max not under its min) and the size cap.
 */
export function applySmsgateSettings(
  stored: SmsgateSettings,
  body: unknown,
  mode: "replace" | "merge",
): { ok: true; value: SmsgateSettings; signingKey: string | null } | { ok: false; errors: FieldError[] } {
  const checked = checkSmsgateSettings(body);
  if (!checked.ok) return checked;
  const signingKey = takeSigningKey(checked.value);
  const next = mode === "replace" ? withoutNulls(checked.value) : merged(stored, checked.value);
  const m = isObject(next.messages) ? next.messages : {};
  if (typeof m.sendIntervalMin === "number" && typeof m.sendIntervalMax === "number" && m.sendIntervalMax < m.sendIntervalMin) {
    return { ok: false, errors: [{ field: "messages.sendIntervalMax", message: `messages.sendIntervalMax (${m.sendIntervalMax}) must be at least messages.sendIntervalMin (${m.sendIntervalMin})`, requirement: ">= sendIntervalMin", provided: m.sendIntervalMax }] };
  }
  const bytes = Buffer.byteLength(JSON.stringify(next));
  if (bytes > SMSGATE_SETTINGS_MAX_BYTES) {
    return { ok: false, errors: [{ field: "body", message: `The settings may be at most ${SMSGATE_SETTINGS_MAX_BYTES} bytes of JSON; these would be ${bytes}`, requirement: `<= ${SMSGATE_SETTINGS_MAX_BYTES} bytes`, provided: bytes }] };
  }
  return { ok: true, value: next, signingKey };
}

/**
 * Takes `webhooks.signingKey` out of a checked body: the key lives with the account's SMSGate
 * clients (it signs every SMSGate-format webhook), never in the stored document. Empty or null
 * leaves the key as it is (there is always one: deliveries are signed); a `webhooks` section that
 * held nothing else goes too, so setting the key adds no empty section.
 */
function takeSigningKey(doc: SmsgateSettings): string | null {
  const w = doc.webhooks;
  if (!isObject(w) || !Object.hasOwn(w, "signingKey")) return null;
  const key = w.signingKey;
  delete w.signingKey;
  if (Object.keys(w).length === 0) delete doc.webhooks;
  return typeof key === "string" && key !== "" ? key : null;
}

/** The document as a caller may read it: with the account's signing key when `signingKey` is given. */
export function smsgateSettingsView(doc: SmsgateSettings, signingKey: string | null): SmsgateSettings {
  if (signingKey === null) return doc;
  const out: SmsgateSettings = { ...doc };
  put(out, "webhooks", { ...(isObject(doc.webhooks) ? doc.webhooks : {}), signingKey });
  return out;
}

export function parseStoredSmsgateSettings(text: string | null | undefined): SmsgateSettings {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** A phone's settings in the app's own snake_case shape (GET /api/mobile/v1/settings). */
export interface PhoneSettings {
  messages: { send_interval_min: number; send_interval_max: number; limit_period: string; limit_value: number; sim_selection_mode?: string; log_lifetime_days?: number; processing_order?: string };
  ping: { interval_seconds: number };
  webhooks: { signing_key: string | null; retry_count?: number; internet_required?: boolean };
  gateway: { notification_channel: string };
  logs?: { lifetime_days: number };
  receiver?: { content_provider_enabled: boolean };
}

/** Minutes in each of SMSGate's limit periods. */
const PERIOD_MINUTES: Record<string, number> = { PerMinute: 1, PerHour: 60, PerDay: 1440 };

/**
 * The send limit the phone is told, or null when the document sets none (then Textwire's own:
 * its send rate per minute). Half of one is completed so the phone and Textwire agree: a value
 * without a period counts per minute (Textwire's period); a period without a value gets the
 * phone's own rate over that period.
 */
export function phoneLimitOf(doc: SmsgateSettings, ownPerMinute: number): { period: string; value: number } | null {
  const m = isObject(doc.messages) ? doc.messages : {};
  const period = typeof m.limitPeriod === "string" ? m.limitPeriod : undefined;
  const value = typeof m.limitValue === "number" ? m.limitValue : undefined;
  if (period === undefined && value === undefined) return null;
  if (period === "Disabled") return { period, value: value ?? ownPerMinute };
  const p = period ?? "PerMinute";
  return { period: p, value: value ?? ownPerMinute * (PERIOD_MINUTES[p] ?? 1) };
}

/**
 * The texts per minute Textwire hands a phone: its own rate, and never more than the document
 * lets it send — its period limit and its shortest interval between texts — so no message waits
 * on the phone until its lease runs out. Rounded down, at least 1.
 */
export function sendRateOf(ownPerMinute: number, doc: SmsgateSettings): number {
  const m = isObject(doc.messages) ? doc.messages : {};
  const caps: number[] = [ownPerMinute];
  const limit = phoneLimitOf(doc, ownPerMinute);
  if (limit && PERIOD_MINUTES[limit.period]) caps.push(limit.value / PERIOD_MINUTES[limit.period]);
  if (typeof m.sendIntervalMin === "number") caps.push(60 / m.sendIntervalMin);
  return Math.max(1, Math.floor(Math.min(...caps)));
}

/**
 * The phone's settings (the app's snake_case shape) with the document's values over Textwire's
 * own: send limits and intervals, SIM selection, message order, log lifetimes, webhook retries,
 * ping interval. Textwire keeps what it owns: the signing key, the notification channel (SSE: no
 * push service), and a ping at least every `pingMaxSeconds` (a quieter phone would count as
 * offline and its messages go back to the queue). `base.messages.limit_value` is the phone's rate
 * per minute.
 */
export function phoneSettingsFrom(base: PhoneSettings, doc: SmsgateSettings, pingMaxSeconds: number): PhoneSettings {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [k, v] of Object.entries(base)) out[k] = { ...(v as Record<string, unknown>) };
  const set = (section: string, key: string, value: unknown) => {
    if (value === undefined || value === null) return;
    out[section] ??= {};
    out[section][key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())] = value;
  };
  const section = (name: string) => (isObject(doc[name]) ? doc[name] : {});
  const messages = section("messages");
  for (const k of ["sendIntervalMin", "sendIntervalMax", "simSelectionMode", "logLifetimeDays", "processingOrder"]) set("messages", k, messages[k]);
  const limit = phoneLimitOf(doc, base.messages.limit_value);
  if (limit) {
    set("messages", "limitPeriod", limit.period);
    set("messages", "limitValue", limit.value);
  }
  const ping = section("ping").intervalSeconds;
  if (typeof ping === "number") set("ping", "intervalSeconds", Math.min(ping, pingMaxSeconds));
  set("logs", "lifetimeDays", section("logs").lifetimeDays);
  const webhooks = section("webhooks");
  set("webhooks", "internetRequired", webhooks.internetRequired);
  set("webhooks", "retryCount", webhooks.retryCount);
  set("receiver", "contentProviderEnabled", section("receiver").contentProviderEnabled);
  return out as unknown as PhoneSettings;
}

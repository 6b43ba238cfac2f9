/**
 * A shop's years of data, written straight into a migrated database file: forms, contacts (tags,
 * custom fields, consent, some opted out), messages from forms, broadcasts and replies typed in
 * the dashboard, submissions, inbound replies (so conversations), broadcasts and two phones.
 *
 * Rows go in with prepared statements in a few big transactions, with the messages' and
 * submissions' indexes dropped during the insert and rebuilt after (several times faster than
 * keeping them up row by row); the derived data (counts, rollups, search index, tag index,
 * conversations) is then rebuilt as `textwire doctor --rebuild` does. Deterministic: the same
 * options give the same rows (ids aside).
 */
import type { Database } from "bun:sqlite";
import { contactSearchText } from "../../../src/domain/contact-search";
import { rebuildDerived } from "../../../src/services/doctor";

export interface ShopDataOptions {
  messages: number;
  contacts: number;
  forms?: number;
  broadcasts?: number;
  /** Where "now" is (ms); the data covers the year before it. */
  now?: number;
  progress?: (line: string) => void;
}

export interface ShopData {
  formIds: string[];
  formNames: string[];
  broadcastNames: string[];
  deviceNames: string[];
  messages: number;
  contacts: number;
  inbound: number;
  seconds: { insert: number; indexes: number; derived: number };
}

const DAY = 86_400_000;
const FIRST = ["Maria", "John", "Aisha", "Chen", "Olga", "Pedro", "Fatima", "Liam", "Noah", "Emma", "Ava", "Mateo", "Yuki", "Ivan", "Sara", "Omar", "Lena", "Tom", "Nina", "Raj", "Grace", "Diego", "Hana", "Kofi"];
const LAST = ["Lopez", "Smith", "Khan", "Wang", "Ivanova", "Silva", "Ali", "Murphy", "Brown", "Garcia", "Rossi", "Novak", "Kim", "Sato", "Meyer", "Dubois", "Jones", "Patel", "Cohen", "Berg", "Okafor", "Nguyen"];
const TAGS = ["vip", "lead", "newsletter", "event", "wholesale", "repeat", "referral", "trial", "spring-sale", "catering"];
const STATUSES = ["new", "contacted", "responded", "converted"] as const;
const FORMS = [
  { name: "Contact us", template: "Hi {{firstName}}, thanks for getting in touch with Rosa's Bakery! We will reply within a day." },
  { name: "Quote request", template: "Hi {{firstName}}, we got your quote request for {{service}}. Expect a price by tomorrow noon." },
  { name: "Booking", template: "Hi {{firstName}}, your booking for {{date}} is confirmed. Reply C to cancel." },
  { name: "Newsletter", template: "Welcome {{firstName}}! You will get one text a month with our offers. Reply STOP to opt out." },
  { name: "Catering order", template: "Hi {{firstName}}, your catering order for {{date}} is in. We will call you to confirm the menu." },
  { name: "Feedback", template: "Thanks {{firstName}} for your feedback! It goes straight to Rosa." },
];
const SERVICES = ["a wedding cake", "birthday cupcakes", "a bread subscription", "an office breakfast", "gluten-free pastries"];
const REPLIES = ["Yes please", "What time can I pick it up?", "Thanks!", "Can we move it to Friday?", "Perfect, see you then", "How much for 40 people?", "Do you deliver?", "ok", "Great, thank you so much", "Is the shop open on Sunday?"];
const REASONS = ["RESULT_ERROR_NO_SERVICE", "RESULT_ERROR_GENERIC_FAILURE", "invalid-phone", "RESULT_ERROR_RADIO_OFF", "lease-expired"];

/** mulberry32: deterministic, and unlike a bare LCG its low bits are not periodic. */
function random(seed: number) {
  return () => {
    let t = (seed = (seed + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const benchPhone = (i: number) => `+1201${String(2_000_000 + i).padStart(7, "0")}`;

/** Seeds `sqlite` (migrated, with the account `accountId`). */
export function seedShop(sqlite: Database, accountId: string, o: ShopDataOptions): ShopData {
  const log = o.progress ?? (() => {});
  const now = o.now ?? Date.now();
  const start = now - 365 * DAY;
  const rnd = random(24);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const iso = (ms: number) => new Date(ms).toISOString();
  const nForms = o.forms ?? FORMS.length;
  const nBroadcasts = o.broadcasts ?? 24;
  const N = o.contacts;
  const t0 = performance.now();
  sqlite.run("PRAGMA cache_size = -1000000");

  // ---- forms, devices, broadcasts
  const formIds: string[] = [];
  const formNames: string[] = [];
  const insForm = sqlite.query(`INSERT INTO forms (id, account_id, name, name_key, message_template, is_active, fields, settings, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 1, ?, '{}', ?, ?)`);
  const fields = JSON.stringify([
    { name: "firstName", type: "text", label: "Your name", required: true },
    { name: "phoneNumber", type: "phone", label: "Mobile number", required: true },
    { name: "service", type: "text", label: "What do you need?" },
    { name: "date", type: "text", label: "Which day?" },
  ]);
  for (let f = 0; f < nForms; f++) {
    const def = FORMS[f % FORMS.length];
    const name = f < FORMS.length ? def.name : `${def.name} ${f}`;
    const id = crypto.randomUUID();
    insForm.run(id, accountId, name, name.toLowerCase(), def.template, fields, iso(start - 30 * DAY), iso(start - 30 * DAY));
    formIds.push(id);
    formNames.push(name);
  }
  const deviceNames = ["Shop phone", "Old phone"];
  const devIds = deviceNames.map(() => crypto.randomUUID());
  const insDevice = sqlite.query(`INSERT INTO devices (id, account_id, kind, external_id, name, token_hash, sim_cards, app_version, last_seen_at, battery, created_at, updated_at)
    VALUES (?, ?, 'smsgate', ?, ?, ?, '[]', '1.40.0', ?, ?, ?, ?)`);
  insDevice.run(devIds[0], accountId, "bench-device-1", deviceNames[0], crypto.randomUUID(), iso(now - 20_000), 84, iso(start), iso(now));
  insDevice.run(devIds[1], accountId, "bench-device-2", deviceNames[1], crypto.randomUUID(), iso(now - 40 * DAY), 12, iso(start), iso(now - 40 * DAY));
  const insDaily = sqlite.query("INSERT INTO device_daily_counts (device_id, day, sent, failed) VALUES (?, ?, ?, ?)");
  for (let d = 0; d < 365; d++) insDaily.run(devIds[d < 325 ? 1 : 0], iso(start + d * DAY).slice(0, 10), 2400 + Math.floor(rnd() * 600), Math.floor(rnd() * 40));

  // Broadcasts: two a month, each a burst of texts to contacts who existed then.
  const broadcastIds: string[] = [];
  const broadcastNames: string[] = [];
  const broadcastAt: number[] = [];
  const perBroadcast = Math.floor((o.messages * 0.1) / Math.max(1, nBroadcasts));
  const insBroadcast = sqlite.query(`INSERT INTO broadcasts (id, account_id, name, content, segment, priority, scheduled_for, timezone, status, recipients, suppressed, queued_count, skipped, cursor, last_contact_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'normal', ?, 'America/New_York', 'queued', ?, ?, ?, 0, '', '', ?, ?)`);
  for (let b = 0; b < nBroadcasts; b++) {
    const at = start + Math.floor(((b + 0.5) / nBroadcasts) * 365 * DAY);
    const id = Bun.randomUUIDv7("hex", at);
    const month = new Date(at).toLocaleString("en-US", { month: "long" });
    const name = `${month} offer ${b % 2 ? "(second half)" : "(first half)"} ${new Date(at).getUTCFullYear()}`;
    broadcastIds.push(id);
    broadcastNames.push(name);
    broadcastAt.push(at);
    insBroadcast.run(id, accountId, name, `Hi {{firstName}}, this ${month}: 20% off every cake ordered before Friday. Reply STOP to opt out.`, JSON.stringify({ tags: ["newsletter"] }), iso(at), perBroadcast, Math.floor(perBroadcast * 0.03), perBroadcast, iso(at), iso(at + 3_600_000));
  }

  // ---- the message plan: when each text was made and by what, oldest first
  const nBroadcastMsgs = perBroadcast * nBroadcasts;
  const nStream = o.messages - nBroadcastMsgs;
  // time * 64 + kind: 0 form, 1 typed in the dashboard, 2+b broadcast b (b < 62).
  const plan = new Float64Array(o.messages);
  for (let i = 0; i < nStream; i++) {
    // More traffic lately (a growing shop), and during the day.
    const f = Math.sqrt((i + rnd()) / nStream);
    const t = start + Math.floor(f * 365 * DAY);
    plan[i] = t * 64 + (rnd() < 0.94 ? 0 : 1);
  }
  for (let b = 0; b < nBroadcasts; b++) {
    for (let k = 0; k < perBroadcast; k++) plan[nStream + b * perBroadcast + k] = (broadcastAt[b] + Math.floor((k / perBroadcast) * 2 * 3_600_000)) * 64 + 2 + b;
  }
  plan.sort();
  // Contacts are made over the year, at the pace of the form texts.
  const contactAt = new Float64Array(N);
  for (let c = 0; c < N; c++) contactAt[c] = start + Math.floor(Math.sqrt((c + 0.5) / N) * 365 * DAY) - 60_000;
  /** The newest contact made before `t` (binary search). */
  const contactsBefore = (t: number) => {
    let lo = 0;
    let hi = N;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (contactAt[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(1, lo);
  };
  const who = new Int32Array(o.messages);
  const msgCount = new Int32Array(N);
  const lastOut = new Float64Array(N);
  for (let i = 0; i < o.messages; i++) {
    const t = Math.floor(plan[i] / 64);
    const kind = plan[i] - t * 64;
    const before = contactsBefore(t);
    // A form's text goes mostly to a contact made just then; a broadcast to anyone made before.
    const c = kind === 0 ? Math.max(0, before - 1 - Math.floor(rnd() ** 4 * before)) : Math.floor(rnd() * before);
    who[i] = c;
    msgCount[c]++;
    if (t > lastOut[c]) lastOut[c] = t;
  }

  // ---- contacts
  const first = (c: number) => FIRST[(c * 7 + (c >> 3)) % FIRST.length];
  const last = (c: number) => LAST[(c * 13 + (c >> 5)) % LAST.length];
  const optedOut = new Uint8Array(N);
  const replies = new Int32Array(N); // how many inbound replies each contact sent
  for (let c = 0; c < N; c++) {
    if (msgCount[c] > 0 && rnd() < 0.22) replies[c] = 1 + Math.floor(rnd() ** 2 * 8);
    if (rnd() < 0.025) optedOut[c] = 1;
  }
  sqlite.transaction(() => {
    const ins = sqlite.query(`INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags,
      last_contacted_at, last_response_at, message_count, source, notes, search_text, created_at, updated_at, opted_out, opted_out_at, consent)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'webhook', ?14, ?15, ?16, ?17, ?18, ?19, ?20)`);
    for (let c = 0; c < N; c++) {
      const created = contactAt[c];
      const fn = first(c);
      const ln = last(c);
      const email = rnd() < 0.7 ? `${fn}.${ln}${c}@example.com`.toLowerCase() : null;
      const phone = benchPhone(c);
      const tags = rnd() < 0.6 ? [...new Set([pick(TAGS), ...(rnd() < 0.4 ? [pick(TAGS)] : [])])] : [];
      const status = replies[c] ? (rnd() < 0.4 ? "converted" : "responded") : msgCount[c] ? "contacted" : STATUSES[0];
      const formIdx = c % nForms;
      const cf = { service: pick(SERVICES), neighbourhood: `District ${1 + Math.floor(rnd() * 30)}`, ...(rnd() < 0.3 ? { allergies: "nuts" } : {}) };
      const out = optedOut[c] ? created + Math.floor(rnd() * (now - created)) : null;
      ins.run(
        Bun.randomUUIDv7("hex", created), accountId, phone, fn, ln, email, status, formIds[formIdx], JSON.stringify(cf), JSON.stringify(tags),
        lastOut[c] ? iso(lastOut[c]) : null, null, msgCount[c], rnd() < 0.05 ? "Prefers a call after 5 pm." : null,
        contactSearchText({ firstName: fn, lastName: ln, email, phoneNumber: phone }), iso(created), iso(Math.max(created, lastOut[c])),
        optedOut[c], out === null ? null : iso(out), JSON.stringify({ source: "webhook", formId: formIds[formIdx], at: iso(created), ipAddress: "203.0.113.7" }),
      );
    }
  })();
  const contactIds = (sqlite.query("SELECT id FROM contacts WHERE account_id = ? ORDER BY created_at, rowid").values(accountId) as string[][]).map((r) => r[0]);
  log(`  ${N.toLocaleString("en-US")} contacts (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

  // ---- messages and submissions, with their indexes off
  const indexSql = (sqlite.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'submissions') AND sql IS NOT NULL").all() as Array<{ name: string; sql: string }>);
  for (const ix of indexSql) sqlite.run(`DROP INDEX "${ix.name}"`);
  const queuedFrom = o.messages - Math.min(800, Math.floor(o.messages * 0.001));
  const inbound: Array<[number, number]> = []; // [contact, time]
  const tm = performance.now();
  sqlite.transaction(() => {
    const m = sqlite.query(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name, status, priority,
         priority_rank, webhook_data, template_used, scheduled_for, sent_at, failure_reason, retry_count, metadata, seq, created_at, updated_at, broadcast_id, created_by)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?14, ?20, ?21, ?22)`,
    );
    const s = sqlite.query("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    const seenContact = new Uint8Array(N);
    for (let i = 0; i < o.messages; i++) {
      const t = Math.floor(plan[i] / 64);
      const kind = plan[i] - t * 64;
      const c = who[i];
      const fn = first(c);
      const r = rnd();
      const status = i >= queuedFrom ? "queued" : r < 0.9 ? "sent" : r < 0.97 ? "failed" : "cancelled";
      const id = Bun.randomUUIDv7("hex", t);
      const sentAt = status === "sent" ? t + 4_000 + Math.floor(rnd() * 90_000) : null;
      let formId: string | null = null;
      let formName: string | null = null;
      let content: string;
      let template: string | null = null;
      let data: string | null = null;
      let broadcastId: string | null = null;
      let prio = "normal";
      let rank = 2;
      if (kind === 0) {
        const f = c % nForms;
        formId = formIds[f];
        formName = formNames[f];
        const service = pick(SERVICES);
        const date = iso(t + 3 * DAY).slice(0, 10);
        template = FORMS[f % FORMS.length].template;
        content = template.replace("{{firstName}}", fn).replace("{{service}}", service).replace("{{date}}", date);
        data = JSON.stringify({ firstName: fn, phoneNumber: benchPhone(c), service, date });
        if (rnd() < 0.1) (prio = "high"), (rank = 1);
      } else if (kind === 1) {
        content = pick(["Hi! Your order is ready for pick-up.", "Sure, Friday at 10 works. See you then!", "Thanks for your patience, the oven is fixed and we are open again.", "Yes, we deliver within 5 miles for $5."]);
        if (rnd() < 0.2) (prio = "urgent"), (rank = 0);
      } else {
        const b = kind - 2;
        broadcastId = broadcastIds[b];
        content = `Hi ${fn}, this month: 20% off every cake ordered before Friday. Reply STOP to opt out.`;
        (prio = "low"), (rank = 3);
      }
      const updated = sentAt ?? t + 1_000;
      m.run(
        id, accountId, formId, formName, contactIds[c], content, benchPhone(c), fn, status, prio, rank, data, template,
        iso(status === "queued" && rnd() < 0.3 ? now + Math.floor(rnd() * 3 * DAY) : t), sentAt === null ? null : iso(sentAt),
        status === "failed" ? pick(REASONS) : null, status === "failed" ? 2 : 0,
        JSON.stringify({ source: kind === 0 ? "webhook" : kind === 1 ? "dashboard" : "broadcast" }), i + 1, iso(updated), broadcastId, kind === 1 ? "key" : null,
      );
      if (kind === 0) {
        s.run(crypto.randomUUID(), accountId, formId, contactIds[c], id, seenContact[c] ? 0 : 1, iso(t));
        seenContact[c] = 1;
      }
      if (status === "sent" && replies[c] > 0 && rnd() < 0.5) {
        replies[c]--;
        inbound.push([c, sentAt! + 60_000 + Math.floor(rnd() ** 2 * 6 * 3_600_000)]);
      }
      if (i % 100_000 === 99_999) log(`  ${(i + 1).toLocaleString("en-US")} messages (${((performance.now() - tm) / 1000).toFixed(1)} s)`);
    }
    // Replies (the trigger keeps conversations); STOP from those who opted out.
    const inb = sqlite.query(`INSERT INTO inbound_messages (id, account_id, contact_id, from_phone, body, received_at, device_id, external_id, created_at, keyword, read_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6, ?9, ?10)`);
    const lastIn = new Float64Array(N);
    for (const [c, at] of inbound) {
      const stop = optedOut[c] === 1 && rnd() < 0.5;
      const when = Math.min(at, now - 60_000);
      inb.run(Bun.randomUUIDv7("hex", when), accountId, contactIds[c], benchPhone(c), stop ? "STOP" : pick(REPLIES), iso(when), devIds[0], crypto.randomUUID(), stop ? "STOP" : null, when > now - 2 * DAY ? null : iso(when + 600_000));
      if (when > lastIn[c]) lastIn[c] = when;
    }
    const upd = sqlite.query("UPDATE contacts SET last_response_at = ? WHERE id = ?");
    for (let c = 0; c < N; c++) if (lastIn[c]) upd.run(iso(lastIn[c]), contactIds[c]);
  })();
  const insertSeconds = (performance.now() - t0) / 1000;
  log(`  ${o.messages.toLocaleString("en-US")} messages, ${inbound.length.toLocaleString("en-US")} replies (${insertSeconds.toFixed(1)} s)`);
  let t = performance.now();
  sqlite.transaction(() => {
    for (const ix of indexSql) sqlite.run(ix.sql);
  })();
  const indexSeconds = (performance.now() - t) / 1000;
  log(`  indexes rebuilt (${indexSeconds.toFixed(1)} s)`);
  t = performance.now();
  rebuildDerived(sqlite);
  sqlite.run("ANALYZE");
  sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const derivedSeconds = (performance.now() - t) / 1000;
  log(`  derived data rebuilt, ANALYZE (${derivedSeconds.toFixed(1)} s)`);
  return {
    formIds,
    formNames,
    broadcastNames,
    deviceNames,
    messages: o.messages,
    contacts: N,
    inbound: inbound.length,
    seconds: { insert: insertSeconds, indexes: indexSeconds, derived: derivedSeconds },
  };
}

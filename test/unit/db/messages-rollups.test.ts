import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../helpers/server";
import { insertForm, insertMessage } from "../../helpers/fixtures";
import { rollupFailureReasons, rollupIntervals, rollupPeriods } from "../../../src/db/stores/messages/rollups";
import { derivedCounts } from "../../../src/db/derived-counts";
import { bucketIndex, dayBoundaries, periodWindow } from "../../../src/domain/time-series";
import { prefixOf } from "../../../src/domain/rollup-buckets";
import { deliveryRate } from "../../../src/services/analytics";
import { checkDerived } from "../../../src/services/doctor";
import { rng } from "../../helpers/rng";

// Analytics from the rollups (migration 0015) must equal a from-scratch computation over the
// messages, in every zone: hour offsets, :30 and :45 offsets, 30-minute DST (Lord Howe), DST at
// midnight, days of 23 and 25 hours.
const NOW = Date.parse("2026-11-20T12:00:00.000Z");
const ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns", "America/Havana", "Pacific/Kiritimati", "Pacific/Pago_Pago"];
const STATUSES = ["queued", "sent", "failed", "cancelled"] as const;
const REASONS = ["invalid-phone", "rate-limit", "network-error", null];

let s: TestServer;
let forms: string[] = [];

interface Msg {
  formId: string | null;
  status: string;
  createdAt: number;
  sentAt: number | null;
  failureReason: string | null;
}

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => NOW });
  const d = s.running.deps;
  forms = [insertForm(d, s.accountId, { name: "One" }), insertForm(d, s.accountId, { name: "Two" }), insertForm(d, s.accountId, { name: "Three" })];
  const r = rng(15);
  // 3,000 messages over ~13 months, many of them within a minute of a quarter hour.
  // One transaction, the derived counts summed and written once (as a group-commit batch does).
  const derived = derivedCounts(d.sqlite);
  d.sqlite.transaction(() => derived.batch(() => {
    for (let i = 0; i < 3_000; i++) {
      let created = NOW - Math.floor(r() * 400 * 86_400_000);
      if (i % 3 === 0) created = created - (created % 900_000) + (r() < 0.5 ? Math.floor(r() * 60_000) : 900_000 - 1 - Math.floor(r() * 60_000));
      const status = STATUSES[Math.floor(r() * 4)];
      const formId = r() < 0.15 ? null : forms[Math.floor(r() * forms.length)];
      insertMessage(d, s.accountId, {
        formId: formId ?? undefined,
        formName: formId ? "F" : undefined,
        status,
        createdAt: new Date(created).toISOString(),
        sentAt: status === "sent" ? new Date(created + 1 + Math.floor(r() * 600_000)).toISOString() : null,
        failureReason: status === "failed" ? REASONS[Math.floor(r() * 4)] : null,
      });
    }
  }))();
  // Status changes and deletes go through the triggers.
  d.sqlite.run("UPDATE messages SET status = 'sent', sent_at = strftime('%Y-%m-%dT%H:%M:%fZ', julianday(created_at) + 0.01) WHERE status = 'queued' AND rowid % 3 = 0");
  d.sqlite.run("UPDATE messages SET status = 'failed', failure_reason = 'no-report' WHERE status = 'queued' AND rowid % 3 = 1");
  d.sqlite.run("UPDATE messages SET failure_reason = 'carrier' WHERE status = 'failed' AND rowid % 5 = 0");
  d.sqlite.run("DELETE FROM messages WHERE rowid % 11 = 0");
});
afterAll(() => s.stop());

function allMessages(formId?: string): Msg[] {
  const rows = s.running.deps.sqlite
    .query("SELECT form_id, status, created_at, sent_at, failure_reason FROM messages WHERE account_id = ?1 AND (?2 IS NULL OR form_id = ?2)")
    .all(s.accountId, formId ?? null) as any[];
  return rows.map((m) => ({ formId: m.form_id, status: m.status, createdAt: Date.parse(m.created_at), sentAt: m.sent_at ? Date.parse(m.sent_at) : null, failureReason: m.failure_reason }));
}

/** The analytics figures computed from the messages one by one. */
function fromScratch(zone: string, period: "7d" | "30d" | "1y", formId?: string) {
  const { days } = periodWindow(period, NOW, zone);
  const b = dayBoundaries(days, zone);
  const daily = days.map((date) => ({ date, sent: 0, failed: 0, queued: 0, cancelled: 0 }));
  const reasons: Record<string, number> = {};
  const perForm = new Map<string, { n: number; sent: number; failed: number }>();
  let ms = 0;
  let timed = 0;
  for (const m of allMessages(formId)) {
    const i = bucketIndex(b, m.createdAt);
    if (i < 0) continue;
    (daily[i] as any)[m.status]++;
    if (m.status === "failed") reasons[m.failureReason ?? "unknown"] = (reasons[m.failureReason ?? "unknown"] ?? 0) + 1;
    if (m.status === "sent" && m.sentAt !== null) {
      ms += m.sentAt - m.createdAt;
      timed++;
    }
    if (m.formId) {
      const f = perForm.get(m.formId) ?? { n: 0, sent: 0, failed: 0 };
      f.n++;
      if (m.status === "sent") f.sent++;
      if (m.status === "failed") f.failed++;
      perForm.set(m.formId, f);
    }
  }
  return { daily, reasons, mean: timed ? Math.round((ms / timed / 1000) * 1000) / 1000 : null, perForm };
}

describe("analytics from rollups equal a from-scratch count", () => {
  for (const zone of ZONES) {
    test(`${zone}: 1y daily volume, breakdown, failure reasons, response time, top forms`, () => {
      const a = s.running.deps.analytics.messages(s.accountId, { period: "1y", timezone: zone }, NOW);
      const e = fromScratch(zone, "1y");
      expect(a.dailyVolume).toEqual(e.daily);
      expect(a.failureReasons).toEqual(e.reasons);
      expect(a.averageResponseTimeSeconds).toBe(e.mean);
      expect(a.totalMessages).toBe(e.daily.reduce((n, d) => n + d.sent + d.failed + d.queued + d.cancelled, 0));
      const top = [...e.perForm].map(([formId, f]) => ({ formId, messageCount: f.n, deliveryRate: deliveryRate(f.sent, f.failed) }));
      expect(a.topForms.map(({ formId, messageCount, deliveryRate }) => ({ formId, messageCount, deliveryRate })).sort((x, y) => (x.formId < y.formId ? -1 : 1))).toEqual(
        top.sort((x, y) => (x.formId < y.formId ? -1 : 1)),
      );
    });
  }

  test("one form, 30 days in Kathmandu (+05:45) and New York; form stats agree", () => {
    for (const zone of ["Asia/Kathmandu", "America/New_York"]) {
      const a = s.running.deps.analytics.messages(s.accountId, { period: "30d", timezone: zone, formId: forms[1] }, NOW);
      const e = fromScratch(zone, "30d", forms[1]);
      expect(a.dailyVolume).toEqual(e.daily);
      expect(a.failureReasons).toEqual(e.reasons);
      expect(a.averageResponseTimeSeconds).toBe(e.mean);
      const st = s.running.deps.analytics.formStats(s.accountId, forms[1], { period: "30d", timezone: zone }, NOW);
      expect(st.dailyBreakdown.map((d) => d.messages)).toEqual(e.daily.map((d) => d.sent + d.failed + d.queued + d.cancelled));
      expect(st.totalMessages).toBe(allMessages(forms[1]).length);
    }
  });

  test("intervals between arbitrary instants (off the quarter hour too) equal a direct count", () => {
    const sqlite = s.running.deps.sqlite;
    const r = rng(7);
    const msgs = allMessages();
    for (let round = 0; round < 20; round++) {
      const b = Array.from({ length: 6 }, () => NOW - Math.floor(r() * 400 * 86_400_000)).sort((x, y) => x - y);
      if (round % 2 === 0) for (let i = 0; i < b.length; i++) b[i] -= b[i] % 900_000; // on quarter hours
      const got = rollupIntervals(sqlite, s.accountId, "*", b);
      for (let i = 0; i + 1 < b.length; i++) {
        const inside = msgs.filter((m) => m.createdAt >= b[i] && m.createdAt < b[i + 1]);
        expect(got[i].values.slice(0, 4)).toEqual(STATUSES.map((st) => inside.filter((m) => m.status === st).length));
        expect(got[i].values[4]).toBe(inside.reduce((n, m) => n + (m.status === "sent" && m.sentAt !== null ? m.sentAt - m.createdAt : 0), 0));
      }
    }
  });

  test("period totals of several scopes in one read (forms, no form, the account) between arbitrary instants, within one UTC day too, equal a direct count", () => {
    const sqlite = s.running.deps.sqlite;
    const r = rng(13);
    const msgs = allMessages();
    const keys = [...forms, "", "*"];
    for (let round = 0; round < 30; round++) {
      let from = NOW - Math.floor(r() * 400 * 86_400_000);
      // A third of the rounds stay within hours of `from` (often the same UTC day).
      let to = round % 3 === 0 ? from + Math.floor(r() * 20 * 3_600_000) : NOW - Math.floor(r() * 400 * 86_400_000);
      [from, to] = [Math.min(from, to), Math.max(from, to)];
      if (round % 2 === 0) [from, to] = [from - (from % 900_000), to - (to % 900_000)];
      const got = rollupPeriods(sqlite, s.accountId, { formKeys: keys, from, to });
      keys.forEach((key, k) => {
        const inside = msgs.filter((m) => m.createdAt >= from && m.createdAt < to && (key === "*" || (m.formId ?? "") === key));
        const want = [...STATUSES.map((st) => inside.filter((m) => m.status === st).length), inside.reduce((n, m) => n + (m.status === "sent" && m.sentAt !== null ? m.sentAt - m.createdAt : 0), 0)];
        expect({ round, key, got: got[k].values.slice(0, 5) }).toEqual({ round, key, got: want });
      });
    }
  });

  test("failure reasons between arbitrary instants (off the quarter hour too), for the account and a form, equal a direct count", () => {
    const sqlite = s.running.deps.sqlite;
    const r = rng(11);
    const msgs = allMessages();
    for (let round = 0; round < 20; round++) {
      let [from, to] = [NOW - Math.floor(r() * 400 * 86_400_000), NOW - Math.floor(r() * 400 * 86_400_000)].sort((x, y) => x - y);
      if (round % 2 === 0) [from, to] = [from - (from % 900_000), to - (to % 900_000)];
      for (const formKey of ["*", forms[round % forms.length]]) {
        const want = new Map<string, number>();
        for (const m of msgs) {
          if (m.status !== "failed" || m.createdAt < from || m.createdAt >= to || (formKey !== "*" && m.formId !== formKey)) continue;
          const reason = m.failureReason ?? "unknown";
          want.set(reason, (want.get(reason) ?? 0) + 1);
        }
        const got = [...rollupFailureReasons(sqlite, s.accountId, { formKey, from, to })].filter(([, n]) => n !== 0).sort();
        expect({ round, formKey, got }).toEqual({ round, formKey, got: [...want].sort() });
      }
    }
  });

  test("the rollups equal a rebuild after inserts, status changes and deletes (doctor --check)", () => {
    expect(checkDerived(s.running.deps.sqlite).differences).toEqual([]);
  });
});

describe("prefixOf", () => {
  test("whole hours before noon, the day minus the hours after in the afternoon; quarters; a residue only off the quarter", () => {
    const p = prefixOf(Date.parse("2026-03-08T02:30:00.000Z"));
    const show = (x: ReturnType<typeof prefixOf>) => x.terms.map((t) => `${t.sign} ${t.level} ${t.from}..${t.to}`);
    expect(show(p)).toEqual(["1 1 2026-03-08T00..2026-03-08T02", "1 2 2026-03-08T02:00..2026-03-08T02:30"]);
    expect(p.residue).toBeNull();
    const q = prefixOf(Date.parse("2026-03-08T22:45:10.000Z"));
    expect(show(q)).toEqual(["1 0 2026-03-08..2026-03-08~", "-1 1 2026-03-08T22..2026-03-08T24", "1 2 2026-03-08T22:00..2026-03-08T22:45"]);
    expect(show(prefixOf(Date.parse("2026-03-08T00:00:00.000Z")))).toEqual([]);
    expect(q.residue).toEqual([Date.parse("2026-03-08T22:45:00.000Z"), Date.parse("2026-03-08T22:45:10.000Z")]);
  });
});

describe("the messages list's summary from the rollups", () => {
  test("form and date filters (any instant, off the quarter hour too) count exactly what a direct count does", () => {
    const d = s.running.deps;
    const direct = (formId: string | null, after?: string, before?: string) => {
      const out: Record<string, number> = { queued: 0, sent: 0, failed: 0, cancelled: 0 };
      const rows = d.sqlite
        .query(
          `SELECT status, COUNT(*) AS n FROM messages WHERE account_id = ?1 AND (?2 IS NULL OR form_id = ?2)
             AND (?3 IS NULL OR created_at >= ?3) AND (?4 IS NULL OR created_at < ?4) GROUP BY status`,
        )
        .all(s.accountId, formId, after ?? null, before ?? null) as Array<{ status: string; n: number }>;
      for (const r of rows) out[r.status] = r.n;
      return out;
    };
    const cases: Array<[string | undefined, string | undefined, string | undefined]> = [
      [forms[0], undefined, undefined],
      [undefined, "2026-03-08T07:13:27.456Z", undefined],
      [undefined, undefined, new Date(NOW - 180 * 86_400_000).toISOString()],
      [forms[2], "2025-12-31T23:45:00.000Z", "2026-06-01T05:30:00.000Z"],
      [undefined, "2026-06-01", "2026-06-01"],
    ];
    for (const [formId, createdAfter, createdBefore] of cases) {
      const page = d.messages.list(s.accountId, { formId, createdAfter, createdBefore });
      expect(page.summary).toEqual(direct(formId ?? null, createdAfter && new Date(createdAfter).toISOString(), createdBefore && new Date(createdBefore).toISOString()) as any);
      expect(page.pagination.total).toBe(Object.values(page.summary).reduce((a, b) => a + b, 0));
    }
  });
});

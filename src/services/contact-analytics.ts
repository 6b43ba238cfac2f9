/**
 * GET /v1/contacts/analytics: contacts created in the period (days in `timezone`, today
 * included), optionally of one form. conversionRate = converted ÷ contacts × 100 (one decimal);
 * averageTimeToResponse = mean of lastResponseAt − createdAt over those with a lastResponseAt;
 * topPerformingForms: the 10 forms with the most converted contacts (then the best rate, then the
 * most contacts).
 */
import type { Database } from "bun:sqlite";
import { iso, type Clock } from "../lib/clock";
import { CONTACT_STATUSES, type ContactStatus } from "../domain/contact-update";
import type { AnalyticsQuery } from "../domain/contact-query";
import { periodWindow } from "../domain/time-series";
import { humanDuration } from "../domain/duration";
import { contactWindowCounts } from "../db/stores/contacts/analytics";
import type { FormService } from "./forms";

export function contactAnalytics(sqlite: Database, clock: Clock, forms: FormService, accountId: string, q: AnalyticsQuery) {
  if (q.formId) forms.get(accountId, q.formId);
  const now = clock();
  const w = periodWindow(q.period, now, q.timezone);
  const counts = contactWindowCounts(sqlite, accountId, iso(w.from), iso(now), q.formId);
  const statusDistribution = Object.fromEntries(CONTACT_STATUSES.map((s) => [s, 0])) as Record<ContactStatus, number>;
  for (const r of counts.byStatus) statusDistribution[r.status] = r.n;
  const total = Object.values(statusDistribution).reduce((a, b) => a + b, 0);
  const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10);
  const seconds = counts.response.s === null ? null : Math.round(counts.response.s);
  const topPerformingForms = counts.byForm
    .map((t) => ({ ...t, conversionRate: rate(t.converted, t.contacts) }))
    .sort((a, b) => b.converted - a.converted || b.conversionRate - a.conversionRate || b.contacts - a.contacts || a.formName.localeCompare(b.formName))
    .slice(0, 10);
  return {
    period: q.period,
    timezone: q.timezone,
    from: iso(w.from),
    to: iso(now),
    totalContacts: total,
    statusDistribution,
    conversionRate: rate(statusDistribution.converted, total),
    averageTimeToResponse: humanDuration(seconds),
    averageTimeToResponseSeconds: seconds,
    respondedContacts: counts.response.n,
    topPerformingForms,
  };
}

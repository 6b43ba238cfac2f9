/**
 * What the dashboard's Overview shows, in one answer (GET /v1/overview): the queue by priority,
 * today's and the week's figures, the phones, and the status facts its warnings are made of. One
 * request instead of a dozen keeps a person's clicks cheap (docs/api-decisions.md, "The dashboard
 * never locks itself out; honest status").
 */
import { PRIORITIES_BY_RANK, type Priority } from "../domain/statuses";
import { classifyAddress } from "../domain/event-url";
import type { AnalyticsService } from "./analytics";
import type { DeviceRegistry } from "./device-registry";
import type { MessageService } from "./messages";
import type { CliCommand } from "../lib/cli-command";

/** How many of the latest-scheduled queued messages are looked at to count the future ones. */
export const SCHEDULED_SCAN = 100;

export interface OverviewFacts {
  /** The request's client address and the origin it reached (http: or https:). */
  clientIp: string;
  origin: string;
  backupsScheduled: boolean;
  replicationOn: boolean;
  cliCommand: CliCommand;
}

export interface DashboardOverview {
  queue: { byPriority: Record<Priority, number>; queued: number; scheduled: number; scheduledCapped: boolean; oldestDueAt: string | null };
  today: { sent: number; failed: number };
  week: Array<{ date: string; sent: number; failed: number }>;
  phones: { online: number; total: number; failedAttemptsToday: number };
  status: { plainHttpFromOutside: boolean; noPhone: boolean; backupsOff: boolean };
  cliCommand: CliCommand;
}

/** Reached over plain HTTP by someone not on this machine: passwords and texts cross the network readable. */
export function plainHttpFromOutside(clientIp: string, origin: string): boolean {
  return origin.startsWith("http:") && classifyAddress(clientIp) !== "loopback";
}

export class DashboardOverviewService {
  constructor(
    private readonly messages: MessageService,
    private readonly analytics: AnalyticsService,
    private readonly devices: DeviceRegistry,
  ) {}

  get(accountId: string, timezone: string | undefined, now: number, facts: OverviewFacts): DashboardOverview {
    const total = (q: Record<string, string | number>) => this.messages.list(accountId, { status: "queued", limit: 1, ...q }).pagination.total;
    const byPriority = Object.fromEntries(PRIORITIES_BY_RANK.map((p) => [p, total({ priority: p })])) as Record<Priority, number>;
    const latest = this.messages.list(accountId, { status: "queued", sortBy: "scheduledFor", order: "desc", limit: SCHEDULED_SCAN });
    const oldest = this.messages.list(accountId, { status: "queued", sortBy: "scheduledFor", order: "asc", limit: 1 }).messages[0];
    const future = latest.messages.filter((m) => Date.parse(m.scheduledFor) > now).length;
    const day = this.analytics.volume(accountId, { period: "1d", timezone }, now);
    const week = this.analytics.volume(accountId, { period: "7d", timezone }, now);
    const devices = this.devices.list(accountId).devices;
    return {
      queue: {
        byPriority,
        queued: latest.pagination.total,
        scheduled: future,
        scheduledCapped: future === SCHEDULED_SCAN,
        oldestDueAt: oldest && Date.parse(oldest.scheduledFor) <= now ? oldest.scheduledFor : null,
      },
      today: { sent: day.statusBreakdown.sent, failed: day.statusBreakdown.failed },
      week: week.dailyVolume.map((d) => ({ date: d.date, sent: d.sent, failed: d.failed })),
      phones: {
        online: devices.filter((d) => d.online).length,
        total: devices.length,
        // The Devices page's own figure, summed: both pages count failed attempts the same way.
        failedAttemptsToday: devices.reduce((n, d) => n + d.failedToday, 0),
      },
      status: {
        plainHttpFromOutside: plainHttpFromOutside(facts.clientIp, facts.origin),
        noPhone: devices.length === 0 || !devices.some((d) => d.online),
        backupsOff: !facts.backupsScheduled && !facts.replicationOn,
      },
      cliCommand: facts.cliCommand,
    };
  }
}

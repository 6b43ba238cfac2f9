/**
 * Replication as the rest of the server sees it: the supervisor's (src/services/replication.ts)
 * health, its thresholds, and its Prometheus lines (GET /metrics).
 */

/** A replica this far behind is a warning on /health and the Overview. */
export const REPLICATION_WARN_AFTER_S = 10;
/** This far behind is a failure: /health says "stalled" and a replication.stalled event goes out. */
export const REPLICATION_FAIL_AFTER_S = 60;

export type ReplicationState = "off" | "starting" | "ok" | "behind" | "stalled";

export interface ReplicationHealth {
  state: ReplicationState;
  /** Seconds the replica may be missing (0: it holds every write Litestream has seen); null when off. */
  lagSeconds: number | null;
  /** The last moment the replica was confirmed to hold every write; null before the first. */
  lastSyncAt: string | null;
  /** Where to, with any password replaced by ***; null when off. */
  target: string | null;
  /** "flag" (--replicate / TEXTWIRE_REPLICATE), "setting" (saved from the dashboard) or null. */
  source: "flag" | "setting" | null;
  /** Whether the Litestream process runs right now. */
  running: boolean;
  /** The last error Litestream reported (or why it cannot run), in its words; null when none since it last caught up. */
  lastError: string | null;
}

export interface StalledNotice {
  target: string;
  lagSeconds: number;
  lastSyncAt: string | null;
  lastError: string | null;
}

/** The health and counters, as Prometheus lines. */
export function replicationMetricsLines(h: ReplicationHealth, counters: { restarts: number; errors: number; syncErrorsSeen: number }): string[] {
  return [
    "# HELP textwire_replication_enabled 1 while the database is replicated (--replicate or the dashboard setting)",
    "# TYPE textwire_replication_enabled gauge",
    `textwire_replication_enabled ${h.state === "off" ? 0 : 1}`,
    "# HELP textwire_replication_lag_seconds How long the replica may be missing writes (0 when it holds all)",
    "# TYPE textwire_replication_lag_seconds gauge",
    `textwire_replication_lag_seconds ${h.lagSeconds ?? 0}`,
    "# HELP textwire_replication_last_sync_timestamp_seconds When the replica was last confirmed to hold every write (Unix time; 0 before the first)",
    "# TYPE textwire_replication_last_sync_timestamp_seconds gauge",
    `textwire_replication_last_sync_timestamp_seconds ${h.lastSyncAt ? Math.floor(Date.parse(h.lastSyncAt) / 1000) : 0}`,
    "# HELP textwire_replication_sync_errors_total Failed Litestream syncs (its own count) plus errors it logged",
    "# TYPE textwire_replication_sync_errors_total counter",
    `textwire_replication_sync_errors_total ${counters.syncErrorsSeen + counters.errors}`,
    "# HELP textwire_replication_restarts_total Times Litestream died and was started again",
    "# TYPE textwire_replication_restarts_total counter",
    `textwire_replication_restarts_total ${counters.restarts}`,
    "# HELP textwire_replication_running 1 while the Litestream process runs",
    "# TYPE textwire_replication_running gauge",
    `textwire_replication_running ${h.running ? 1 : 0}`,
  ];
}

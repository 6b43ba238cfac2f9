/**
 * Where a webhook request's time goes, stage by stage (docs/api-decisions.md, "The webhook path: measurement, SQLite
 * settings, lean request path"). Off unless
 * the server starts with --stage-timing: then `deps.stageTiming` exists and each stage adds its
 * duration here; when off it is null and every hook is one null check. The sums are shown in
 * /metrics so the benchmark can read them before and after a phase and divide by the requests.
 */
export const STAGES = ["outer", "dispatch", "lookup", "validation", "writeJob", "commit", "log"] as const;
export type Stage = (typeof STAGES)[number];

/** What each stage covers, for /metrics and the benchmark's table. */
export const STAGE_LABELS: Record<Stage, string> = {
  outer: "outer handler (URL, request id, headers, limits, answer headers)",
  dispatch: "route dispatch (Elysia, up to the route)",
  lookup: "form + account lookup",
  validation: "validation + phone + template (before the write)",
  writeJob: "write job inside the transaction",
  commit: "commit (+ fsync with --commit-sync inline, + checkpoint with --checkpoint inline)",
  log: "access log line",
};

export class StageTiming {
  /** Microseconds per stage. */
  readonly sums: Record<Stage, number> = { outer: 0, dispatch: 0, lookup: 0, validation: 0, writeJob: 0, commit: 0, log: 0 };
  /** Webhook requests timed (the divisor of the per-request figures). */
  requests = 0;

  add(stage: Stage, ms: number) {
    this.sums[stage] += ms * 1000;
  }

  /** Prometheus lines for /metrics. */
  lines(): string[] {
    return [
      "# HELP textwire_stage_microseconds_total Time spent per stage of the webhook path (--stage-timing)",
      "# TYPE textwire_stage_microseconds_total counter",
      ...STAGES.map((s) => `textwire_stage_microseconds_total{stage="${s}"} ${Math.round(this.sums[s])}`),
      "# HELP textwire_stage_requests_total Webhook requests timed (--stage-timing)",
      "# TYPE textwire_stage_requests_total counter",
      `textwire_stage_requests_total ${this.requests}`,
    ];
  }
}

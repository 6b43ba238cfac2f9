/** Figures on /metrics that the wiring adds: the phones' and the intake applier's. */
import type { DeviceService } from "../services/devices";
import type { SubmissionIntake } from "../services/intake/intake";

/** Phones online and the oldest due text. */
export function deviceGauges(devices: DeviceService): string[] {
  const h = devices.health();
  return [
    "# HELP textwire_devices_online Phones online (open event stream or a request within --device-offline-after)",
    "# TYPE textwire_devices_online gauge",
    `textwire_devices_online ${h.devicesOnline}`,
    "# HELP textwire_oldest_due_seconds Age of the oldest due queued message (0 when none)",
    "# TYPE textwire_oldest_due_seconds gauge",
    `textwire_oldest_due_seconds ${h.oldestDueSeconds ?? 0}`,
  ];
}

/** The intake applier's figures on /metrics. */
export function intakeGauges(intake: SubmissionIntake): string[] {
  const lag = intake.lagPercentiles();
  return [
    "# HELP textwire_intake_pending Webhook submissions acknowledged and not yet applied",
    "# TYPE textwire_intake_pending gauge",
    `textwire_intake_pending ${intake.lag()}`,
    "# HELP textwire_intake_applier_restarts_total Applier threads that died and were started again",
    "# TYPE textwire_intake_applier_restarts_total counter",
    `textwire_intake_applier_restarts_total ${intake.restarts}`,
    "# HELP textwire_intake_applier_batches_total Applier transactions that applied rows",
    "# TYPE textwire_intake_applier_batches_total counter",
    `textwire_intake_applier_batches_total ${intake.stats.batches}`,
    "# HELP textwire_intake_applier_rows_total Intake rows applied by the applier thread",
    "# TYPE textwire_intake_applier_rows_total counter",
    `textwire_intake_applier_rows_total ${intake.stats.rows}`,
    "# HELP textwire_intake_applier_lag_ms Time from a submission's 200 to its apply, over the last 4096 submissions",
    "# TYPE textwire_intake_applier_lag_ms gauge",
    `textwire_intake_applier_lag_ms{quantile="0.5"} ${lag.p50.toFixed(2)}`,
    `textwire_intake_applier_lag_ms{quantile="0.99"} ${lag.p99.toFixed(2)}`,
    `textwire_intake_applier_lag_ms{quantile="1"} ${lag.max.toFixed(2)}`,
  ];
}

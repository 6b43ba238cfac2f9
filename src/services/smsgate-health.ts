/**
 * The checks of the SMSGate app's local server that Home Assistant's sensors read, for one
 * account's phones: `battery:level` (the lowest battery a phone reported) and `messages:failed`
 * (texts of the last 24 hours that failed). Served by /3rdparty/v1/health/phones and the local
 * listener's /health (docs/api-decisions.md, "The SMSGate ecosystem, every call").
 */
import type { Database } from "bun:sqlite";
import { iso, type Clock } from "../lib/clock";
import { listDevices } from "../db/stores/devices";
import { countFailedSince } from "../db/stores/messages";

/** A phone's battery below this is a warning, as the SMSGate app's own battery:level check (never a fail: that would answer 503). */
export const BATTERY_WARN_PERCENT = 25;
/** messages:failed counts the account's texts created in this window that failed. */
export const FAILED_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface HealthCheck {
  description: string;
  observedUnit: string;
  observedValue: number;
  status: "pass" | "warn" | "fail";
}

export function phoneChecks(sqlite: Database, clock: Clock, accountId: string): Record<string, HealthCheck> {
  const batteries = listDevices(sqlite, accountId).map((d) => d.battery).filter((b): b is number => typeof b === "number");
  const lowest = batteries.length ? Math.min(...batteries) : null;
  const failed = countFailedSince(sqlite, accountId, iso(clock() - FAILED_WINDOW_MS));
  return {
    "battery:level": {
      description: lowest === null ? "No phone has reported its battery yet" : "The lowest battery level of your phones",
      observedUnit: "percent",
      observedValue: lowest ?? 0,
      status: lowest === null || lowest >= BATTERY_WARN_PERCENT ? "pass" : "warn",
    },
    "messages:failed": {
      description: "Texts of the last 24 hours that failed",
      observedUnit: "messages",
      observedValue: failed,
      status: failed > 0 ? "warn" : "pass",
    },
  };
}

import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";

// Filled in by its own issue.
export function webhookRoutes(_deps: AppDeps) {
  return new Elysia({ name: "webhook-routes" });
}

import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";

// Filled in by its own issue.
export function opsRoutes(_deps: AppDeps) {
  return new Elysia({ name: "ops-routes" });
}

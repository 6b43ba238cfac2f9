import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";

// Filled in by its own issue.
export function messagesRoutes(_deps: AppDeps) {
  return new Elysia({ name: "messages-routes" });
}

import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";

// Filled in by its own issue.
export function contactsRoutes(_deps: AppDeps) {
  return new Elysia({ name: "contacts-routes" });
}

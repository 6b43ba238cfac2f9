import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { errorsPlugin } from "./http/plugins/errors";
import { formsRoutes } from "./http/routes/forms";

/** Plugins, then routes. Never listens: tests and the server both call `.handle()`. */
export function createApp(deps: AppDeps) {
  return new Elysia({ normalize: true })
    .use(errorsPlugin(deps.logger))
    .use(formsRoutes(deps));
}

export type App = ReturnType<typeof createApp>;

import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { errorsPlugin } from "./http/plugins/errors";
import { formsRoutes } from "./http/routes/forms";
import { webhookRoutes } from "./http/routes/webhook";
import { messagesRoutes } from "./http/routes/messages";
import { contactsRoutes } from "./http/routes/contacts";
import { opsRoutes } from "./http/routes/ops";

/** Plugins, then routes. Never listens: tests and the server both call `.handle()`. */
export function createApp(deps: AppDeps) {
  return new Elysia({ normalize: true })
    .use(errorsPlugin(deps.logger))
    .use(formsRoutes(deps))
    .use(webhookRoutes(deps))
    .use(messagesRoutes(deps))
    .use(contactsRoutes(deps))
    .use(opsRoutes(deps));
}

export type App = ReturnType<typeof createApp>;

import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { errorsPlugin } from "./http/plugins/errors";
import { formsRoutes } from "./http/routes/forms";
import { webhookRoutes } from "./http/routes/webhook";
import { messagesRoutes } from "./http/routes/messages";
import { broadcastsRoutes } from "./http/routes/broadcasts";
import { automationsRoutes } from "./http/routes/automations";
import { contactsRoutes } from "./http/routes/contacts";
import { opsRoutes } from "./http/routes/ops";
import { mobileRoutes } from "./http/routes/mobile";
import { devicesRoutes } from "./http/routes/devices";
import { tlsRoutes } from "./http/routes/tls";
import { submissionsRoutes } from "./http/routes/submissions";
import { peopleMeRoutes } from "./http/routes/people-me";
import { inboundRoutes } from "./http/routes/inbound";
import { sessionsRoutes } from "./http/routes/sessions";
import { peopleRoutes } from "./http/routes/people";
import { linkStateRoutes } from "./http/routes/link-state";
import { liveRoutes } from "./http/routes/live";
import { apiKeysRoutes } from "./http/routes/api-keys";
import { eventsRoutes } from "./http/routes/events";
import { accountSettingsRoutes } from "./http/routes/account-settings";
import { keywordRepliesRoutes } from "./http/routes/keyword-replies";
import { conversationsRoutes } from "./http/routes/conversations";
import { accountRoutes } from "./http/routes/account";
import { replicationRoutes } from "./http/routes/replication";
import { overviewRoutes } from "./http/routes/overview";
import { serverSettingsRoutes } from "./http/routes/server-settings";
import { thirdPartyRoutes } from "./http/routes/thirdparty";
import { smsgateClientsRoutes } from "./http/routes/smsgate-clients";

/** Plugins, then routes. Never listens: tests and the server both call `.handle()`. */
export function createApp(deps: AppDeps) {
  const app = new Elysia({ normalize: true })
    .use(errorsPlugin(deps.logger))
    .use(formsRoutes(deps))
    .use(webhookRoutes(deps))
    .use(inboundRoutes(deps))
    .use(submissionsRoutes(deps))
    .use(accountSettingsRoutes(deps))
    .use(keywordRepliesRoutes(deps))
    .use(accountRoutes(deps))
    .use(overviewRoutes(deps))
    .use(replicationRoutes(deps))
    .use(serverSettingsRoutes(deps))
    .use(conversationsRoutes(deps))
    .use(messagesRoutes(deps))
    .use(contactsRoutes(deps))
    .use(broadcastsRoutes(deps))
    .use(automationsRoutes(deps))
    .use(opsRoutes(deps))
    .use(sessionsRoutes(deps))
    .use(peopleMeRoutes(deps))
    .use(peopleRoutes(deps))
    .use(linkStateRoutes(deps))
    .use(liveRoutes(deps))
    .use(apiKeysRoutes(deps))
    .use(mobileRoutes(deps))
    .use(devicesRoutes(deps))
    .use(eventsRoutes(deps))
    .use(thirdPartyRoutes(deps))
    .use(smsgateClientsRoutes(deps))
    .use(tlsRoutes(deps));
  // The OpenAPI document and the metrics' route labels are generated from what is registered.
  deps.routes = () => app.routes;
  return app;
}

export type App = ReturnType<typeof createApp>;

/**
 * SMSGate's third-party API (docs/architecture.md, "Wiring"): its messages, webhooks, settings
 * document and tokens. Built before the phones, which read the settings document and what a
 * third-party request asked of each text.
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { ThirdPartyMessages } from "../services/thirdparty-messages";
import { ThirdPartyWebhooks } from "../services/thirdparty-webhooks";
import { SmsgateTokens } from "../services/smsgate-tokens";
import { SmsgateSettingsService } from "../services/smsgate-settings";
import { resolveHost, type HostResolver } from "../services/outbound-http";
import type { AccountService } from "../services/accounts";
import type { MessageService } from "../services/messages";
import type { DeviceEventHub } from "../services/device-events";
import type { Core } from "./core";
import type { Stores } from "./stores";

export type Smsgate = ReturnType<typeof buildSmsgate>;

export function buildSmsgate(
  sqlite: Database,
  config: ServeConfig,
  clock: Clock,
  logger: Logger,
  core: Core,
  stores: Stores,
  deps: { messages: MessageService; accounts: AccountService; phoneEvents: DeviceEventHub; resolve: HostResolver | undefined },
) {
  const thirdParty = new ThirdPartyMessages(sqlite, clock, core.sending, core.seq, deps.messages, core.quota, core.changes, logger, stores.messages);
  return {
    thirdParty,
    thirdPartyWebhooks: new ThirdPartyWebhooks(sqlite, clock, core.events, thirdParty, { allowPrivate: config.allowPrivateWebhookUrls, resolve: deps.resolve ?? resolveHost }),
    // The account's SMSGate settings document: over the phones' own settings, and announced to them.
    smsgateSettings: new SmsgateSettingsService(sqlite, clock, (accountId) => deps.phoneEvents.emit(accountId, "SettingsUpdated", null), thirdParty),
    smsgateTokens: new SmsgateTokens(sqlite, clock, deps.accounts, thirdParty),
  };
}

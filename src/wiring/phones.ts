/**
 * The phones (docs/architecture.md, "Wiring"), in two steps. `buildPhoneCapacity`, right after
 * the core: their event streams, who is there, what each phone and SIM may still send, and the
 * delivery estimate that follows — what the message services read to say why a text waits and
 * when it goes. `buildDevices`, once the services a phone's reports reach exist (inbound texts,
 * SMSGate's third-party API and settings, the server address): the SMSGate mobile API and the
 * device registry.
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { DeviceEventHub } from "../services/device-events";
import { PhonePresence } from "../services/phone-presence";
import { SendingCapacity } from "../services/sending-capacity";
import { SendingEstimator } from "../services/sending-estimate";
import { DeviceService, type DeviceLinks } from "../services/devices";
import type { AccountSettingsService } from "../services/account-settings";
import type { MessageService } from "../services/messages";
import type { Core } from "./core";

export type PhoneCapacity = ReturnType<typeof buildPhoneCapacity>;

export function buildPhoneCapacity(sqlite: Database, config: ServeConfig, clock: Clock, core: Core, accountSettings: AccountSettingsService) {
  const events = new DeviceEventHub(core.queue, clock);
  const presence = new PhonePresence(sqlite, clock, events, core.leases, config, core.changes);
  const fleet = (accountId: string) => presence.fleet(accountId);
  const sending = new SendingCapacity(sqlite, clock, fleet, Math.random, (accountId) => accountSettings.resolved(accountId).sending);
  return { events, presence, fleet, sending, estimator: new SendingEstimator(clock, sending, fleet) };
}

export function buildDevices(
  sqlite: Database,
  config: ServeConfig,
  clock: Clock,
  logger: Logger,
  core: Core,
  capacity: PhoneCapacity,
  messages: MessageService,
  links: DeviceLinks,
): DeviceService {
  const { events, presence, sending, estimator } = capacity;
  return new DeviceService(sqlite, clock, core.leases, messages, config, () => core.metrics, logger, core.changes, { events, presence, sending, estimator }, links);
}

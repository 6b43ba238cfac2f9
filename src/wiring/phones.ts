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
import { DeviceRegistry } from "../services/device-registry";
import { SendingFailures } from "../services/sending-failures";
import { PhoneReports } from "../services/phone-reports";
import type { AccountSettingsService } from "../services/account-settings";
import type { MessageService } from "../services/messages";
import type { Core } from "./core";
import type { Stores } from "./stores";

export type PhoneCapacity = ReturnType<typeof buildPhoneCapacity>;

export function buildPhoneCapacity(
  sqlite: Database, config: ServeConfig, clock: Clock, core: Core, stores: Stores, accountSettings: AccountSettingsService,
  /** Which phone or SIM an SMSGate API request named for a text (runs only once the server is up). */
  smsgateRequested: (messageId: string) => { deviceId: string | null; simNumber: number | null } | null,
) {
  const events = new DeviceEventHub(core.queue, clock);
  const presence = new PhonePresence(sqlite, clock, events, core.leases, config, core.changes);
  const fleet = (accountId: string) => presence.fleet(accountId);
  const sending = new SendingCapacity(sqlite, clock, stores.sending, stores.messages, fleet, Math.random, (accountId) => accountSettings.resolved(accountId).sending);
  // The estimate deals the queued texts themselves, in queue order (services/sending-estimate.ts).
  const textsAhead = (accountId: string, n: number) => sending.textsAhead(accountId, core.queue.takeDue(accountId, Number.MAX_SAFE_INTEGER, n), smsgateRequested);
  return { events, presence, fleet, sending, estimator: new SendingEstimator(clock, sending, fleet, textsAhead) };
}

export function buildDevices(
  sqlite: Database,
  config: ServeConfig,
  clock: Clock,
  logger: Logger,
  core: Core,
  capacity: PhoneCapacity,
  stores: Stores,
  messages: MessageService,
  links: DeviceLinks,
) {
  const { events, presence, sending, estimator } = capacity;
  const { leases, changes } = core;
  const deviceRegistry = new DeviceRegistry(sqlite, clock, logger, config, presence, sending, events, leases, changes, links.smsgateSettings);
  // Pauses after failures and failover (services/sending-failures.ts).
  const failures = new SendingFailures(sqlite, clock, logger, sending, leases, {
    view: (d) => deviceRegistry.viewOf(d),
    released: (d, n) => n > 0 && logger.warn("phone paused: its leased texts went back to the queue", { deviceId: d.id, name: d.name, released: n }),
    wake: (accountId) => events.notify(accountId),
    holderOf: (d) => deviceRegistry.holderOf(d),
  });
  // A phone's reports and phone callbacks (services/phone-reports.ts).
  const reports = new PhoneReports(sqlite, clock, logger, () => core.metrics, messages, leases, changes, {
    holderOf: (d) => deviceRegistry.holderOf(d),
    touch: (d, ip) => presence.touch(d, ip),
    inbound: links.inbound,
    sendResult: (d, row, result, reason) => failures.reported(d, row, result, reason),
    textReceived: (d, from, simNumber) => sending.noteReceived(d, from, simNumber, clock()),
  }, stores.messages);
  const devices = new DeviceService(sqlite, clock, leases, config, logger, changes, { events, presence, sending, estimator, registry: deviceRegistry, failures, reports }, links);
  return { devices, deviceRegistry };
}

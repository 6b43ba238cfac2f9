/**
 * The replica address an operator sets from the dashboard (GET/PUT /v1/admin/replication): checked
 * with the same rules as --replicate, stored in server_settings, and handed to the supervisor,
 * which restarts Litestream on it. A --replicate flag (or TEXTWIRE_REPLICATE) wins: saving is then
 * refused, and the dashboard says the flag is in force (docs/api-decisions.md, "Continuous
 * replication with Litestream").
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { parseReplicaUrl, redactReplicaUrl, ReplicaUrlError } from "../domain/replica-url";
import { deleteServerSetting, findServerSetting, listOperatorAccountIds, REPLICATION_STARTED_KEY, REPLICATION_URL_KEY, upsertServerSetting } from "../db/server-settings";
import type { ReplicationSupervisor } from "./replication";
import type { ReplicationHealth, StalledNotice } from "./replication-health";
import { emitEvent } from "./events";

export interface ReplicationSettingsView {
  /** The saved address with any password masked; null when none is saved. */
  savedUrl: string | null;
  savedAt: string | null;
  /** The address given with --replicate (masked), which wins over the saved one; null when none. */
  flagUrl: string | null;
  status: ReplicationHealth;
}

export class ReplicationSettingsService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly flagUrl: string | undefined,
    private readonly supervisor: () => ReplicationSupervisor,
  ) {}

  /** The saved address, unmasked (for Litestream's configuration only). */
  savedUrl(): string | null {
    return findServerSetting(this.sqlite, REPLICATION_URL_KEY)?.value ?? null;
  }

  get(): ReplicationSettingsView {
    const row = findServerSetting(this.sqlite, REPLICATION_URL_KEY);
    return {
      savedUrl: row ? redactReplicaUrl(row.value) : null,
      savedAt: row?.updatedAt ?? null,
      flagUrl: this.flagUrl ? redactReplicaUrl(this.flagUrl) : null,
      status: this.supervisor().health(),
    };
  }

  /** The start-up write of a new Litestream (see ReplicationOptions.heartbeat): when it started, in server_settings. */
  heartbeat(): void {
    const now = iso(this.clock());
    upsertServerSetting(this.sqlite, { key: REPLICATION_STARTED_KEY, value: now, updatedAt: now });
  }

  /** Saves (or with null/"" clears) the address and restarts Litestream on it. */
  async set(url: string | null): Promise<ReplicationSettingsView> {
    if (this.flagUrl) {
      throw new AppError("INVALID_STATE", {
        message: "The server was started with --replicate (or TEXTWIRE_REPLICATE), which wins over this setting: change it where the server is started.",
        details: { flag: "--replicate" },
      });
    }
    const text = url?.trim() ?? "";
    if (text === "") deleteServerSetting(this.sqlite, REPLICATION_URL_KEY);
    else {
      try {
        parseReplicaUrl(text);
      } catch (err) {
        if (err instanceof ReplicaUrlError) throw validationError([{ field: "url", message: err.message, provided: redactReplicaUrl(text) }]);
        throw err;
      }
      upsertServerSetting(this.sqlite, { key: REPLICATION_URL_KEY, value: text, updatedAt: iso(this.clock()) });
    }
    await this.supervisor().reload();
    return this.get();
  }
}

/**
 * replication.stalled: one event per stall, to every account holding an operator key (the people
 * who run the server), written through the outbox in one transaction.
 */
export function emitReplicationStalled(sqlite: Database, now: number, notice: StalledNotice): number {
  let n = 0;
  sqlite.transaction(() => {
    for (const accountId of listOperatorAccountIds(sqlite)) {
      if (emitEvent(sqlite, accountId, "replication.stalled", () => ({ replication: notice }), now)) n++;
    }
  })();
  return n;
}

/**
 * Scheduled backups as an operator sets them from the dashboard (PUT /v1/admin/backups): a folder,
 * an interval and how many copies to keep, stored in server_settings; --backup-dir (with
 * --backup-every, --backup-keep) wins and saving is then refused. The folder is checked for
 * writability when saved, and the scheduler follows a change at once (docs/api-decisions.md, "The
 * business's name, the server address and HTTPS without breaking forms").
 */
import type { Database } from "bun:sqlite";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import type { FieldError } from "../domain/submission";
import { BACKUP_SCHEDULE_KEY, deleteServerSetting, findServerSetting, upsertServerSetting } from "../db/server-settings";
import type { BackupSchedule } from "./backups";
import { listStoredBackups } from "./stored-backups";

export const MIN_BACKUP_EVERY_MINUTES = 5;
export const MAX_BACKUP_EVERY_MINUTES = 30 * 24 * 60;
export const MAX_BACKUP_KEEP = 1000;

export interface BackupScheduleView {
  schedule: BackupSchedule | null;
  /** flag: --backup-dir is in force (the dashboard cannot change it); setting: saved here; null: none. */
  source: "flag" | "setting" | null;
  savedAt: string | null;
}

export class BackupScheduleService {
  private cached: { schedule: BackupSchedule; at: string } | null | undefined;
  /** The first backup of the schedule saved last, while it runs. */
  firstBackup: Promise<void> | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly flag: BackupSchedule | undefined,
    /**
     * Told after a change, so the scheduler re-arms; with `saved` a schedule was saved and the
     * first backup is made at once, not one interval later (its run is returned).
     */
    private readonly onChange: (saved: boolean) => Promise<void> | void = () => {},
  ) {}

  private saved(): { schedule: BackupSchedule; at: string } | null {
    if (this.cached === undefined) {
      const row = findServerSetting(this.sqlite, BACKUP_SCHEDULE_KEY);
      this.cached = null;
      if (row) {
        try {
          const v = JSON.parse(row.value) as BackupSchedule;
          if (typeof v.dir === "string" && Number.isInteger(v.everyMs) && v.everyMs > 0 && Number.isInteger(v.keep) && v.keep > 0) this.cached = { schedule: v, at: row.updatedAt };
        } catch {}
      }
    }
    return this.cached;
  }

  /** The schedule in force: the flags', else the saved one, else none. */
  current(): BackupSchedule | null {
    return this.flag ?? this.saved()?.schedule ?? null;
  }

  get(): BackupScheduleView {
    if (this.flag) return { schedule: this.flag, source: "flag", savedAt: null };
    const s = this.saved();
    return { schedule: s?.schedule ?? null, source: s ? "setting" : null, savedAt: s?.at ?? null };
  }

  /** Saves a schedule (or with `directory: null` turns scheduled backups off). */
  set(body: { directory: string | null; everyMinutes?: unknown; keep?: unknown }): BackupScheduleView {
    if (this.flag) {
      throw new AppError("INVALID_STATE", {
        message: "The server was started with --backup-dir (or TEXTWIRE_BACKUP_DIR), which wins over this setting: change it where the server is started.",
        details: { flag: "--backup-dir" },
      });
    }
    if (body.directory === null || body.directory.trim() === "") {
      deleteServerSetting(this.sqlite, BACKUP_SCHEDULE_KEY);
    } else {
      const errors: FieldError[] = [];
      const dir = body.directory.trim();
      const every = body.everyMinutes ?? 24 * 60;
      const keep = body.keep ?? 7;
      if (!Number.isInteger(every) || (every as number) < MIN_BACKUP_EVERY_MINUTES || (every as number) > MAX_BACKUP_EVERY_MINUTES) {
        errors.push({ field: "everyMinutes", message: `Back up every ${MIN_BACKUP_EVERY_MINUTES} minutes at the most often, every 30 days at the least`, requirement: `whole minutes, ${MIN_BACKUP_EVERY_MINUTES}-${MAX_BACKUP_EVERY_MINUTES}`, provided: every });
      }
      if (!Number.isInteger(keep) || (keep as number) < 1 || (keep as number) > MAX_BACKUP_KEEP) {
        errors.push({ field: "keep", message: `Keep between 1 and ${MAX_BACKUP_KEEP} copies`, requirement: `1-${MAX_BACKUP_KEEP}`, provided: keep });
      }
      if (!isAbsolute(dir) || dir.includes("\0")) {
        errors.push({ field: "directory", message: "Give the folder's full path on the server, e.g. /var/backups/textwire", requirement: "an absolute path", provided: dir.slice(0, 300) });
      } else if (errors.length === 0) {
        const problem = writeProblem(resolve(dir));
        if (problem) errors.push({ field: "directory", message: `Textwire cannot write to this folder (${problem}). Choose a folder the server may write to, or create it and give the server's user access.`, requirement: "a folder the server can write to", provided: dir.slice(0, 300) });
      }
      if (errors.length) throw validationError(errors);
      const schedule: BackupSchedule = { dir: resolve(dir), everyMs: (every as number) * 60_000, keep: keep as number };
      upsertServerSetting(this.sqlite, { key: BACKUP_SCHEDULE_KEY, value: JSON.stringify(schedule), updatedAt: iso(this.clock()) });
    }
    this.cached = undefined;
    const run = this.onChange(body.directory !== null);
    this.firstBackup = run ?? undefined;
    return this.get();
  }
}

/** Why a folder cannot take backups (created when missing; a test file written and removed), or null. */
function writeProblem(dir: string): string | null {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = join(dir, `.textwire-write-test-${process.pid}-${Date.now()}`);
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EACCES" || code === "EPERM") return "permission denied";
    if (code === "ENOTDIR" || code === "EEXIST") return "a file is in the way, not a folder";
    if (code === "EROFS") return "the disk is read-only";
    if (code === "ENOSPC") return "the disk is full";
    return code ?? "it could not be written";
  }
}

/** What `GET /v1/admin/backups` shows: the schedule in force, where it comes from, and the stored copies. */
export function backupsView(schedule: BackupScheduleService, defaultKeep: number) {
  const v = schedule.get();
  const sch = v.schedule;
  return {
    scheduled: sch !== null,
    directory: sch?.dir ?? null,
    everyMinutes: sch ? Math.max(1, Math.round(sch.everyMs / 60_000)) : null,
    keep: sch?.keep ?? defaultKeep,
    source: v.source,
    backups: sch ? listStoredBackups(sch.dir) : [],
  };
}

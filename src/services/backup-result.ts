/** What a backup produces, and the error for a backup or restore that cannot be done (told to the user as it is). */
export interface BackupResult {
  file: string;
  bytes: number;
  integrity: "ok";
  schemaVersion: number;
  rows: Record<string, number>;
  durationMs: number;
}

export class BackupError extends Error {}

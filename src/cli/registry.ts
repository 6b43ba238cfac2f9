import type { ParsedArgs } from "../config";
import type { CliIO } from "./common";

/** Commands beyond the core four (backup, restore): each registers its name, help and runner here. */
export interface ExtraCommand {
  name: string;
  summary: string;
  help: string;
  run(parsed: ParsedArgs, io: CliIO): number | Promise<number>;
}

export const COMMANDS_EXTRA: ExtraCommand[] = [];

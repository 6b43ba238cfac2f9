import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "./api";
import type { AccountInfo } from "./api-types";

/**
 * How commands are run on this server, as GET /v1/account says: `npx textwire` from a project
 * folder, `textwire` for the single executable. Every command a page shows starts with it
 * (docs/api-decisions.md, "The dashboard never locks itself out; honest status").
 */
export const cliCommand = signal<AccountInfo["cliCommand"] | null>(null);
let loading: Promise<unknown> | null = null;

/** The command prefix; asks the server once per page load when no other answer told it yet. */
export function useCliCommand(): string {
  useEffect(() => {
    if (cliCommand.value !== null || loading) return;
    loading = api.get("/v1/account")
      .then((r) => (cliCommand.value = r.data.cliCommand))
      .catch(() => (loading = null));
  }, []);
  return cliCommand.value ?? "textwire";
}

/**
 * The address forms and phones must use (GET/PUT /v1/admin/server-address, operator): saved in
 * server_settings, overridden by --public-url, and only as a last resort the address a request came
 * in on. Every webhook address, embed snippet, QR code and phone wizard takes its origin from
 * `publicAddress()` alone (docs/api-decisions.md, "The business's name, the server address and
 * HTTPS without breaking forms").
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { choosePublicAddress, parsePublicAddress, type PublicAddress } from "../domain/public-address";
import { deleteServerSetting, findServerSetting, PUBLIC_URL_KEY, upsertServerSetting } from "../db/server-settings";

export interface ServerAddressView {
  savedUrl: string | null;
  savedAt: string | null;
  /** --public-url (or TEXTWIRE_PUBLIC_URL), which wins over the saved address; null when none. */
  flagUrl: string | null;
  /** What forms and phones are given when asked through this request. */
  effective: PublicAddress;
}

export class ServerAddressService {
  /** The saved row, read once: webhook addresses are built on every forms listing. */
  private cached: { url: string; at: string } | null | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly flagUrl: string | undefined,
    /** The public certificate's https://name once it is served (docs/api-decisions.md, "Online on its own"). */
    private readonly domainUrl: () => string | undefined = () => undefined,
  ) {}

  private saved(): { url: string; at: string } | null {
    if (this.cached === undefined) {
      const row = findServerSetting(this.sqlite, PUBLIC_URL_KEY);
      this.cached = row ? { url: row.value, at: row.updatedAt } : null;
    }
    return this.cached;
  }

  /** The public address: --public-url, else the saved one, else `origin` (the request's own). */
  publicAddress(origin: string): PublicAddress {
    return choosePublicAddress(this.flagUrl, this.domainUrl() ?? this.saved()?.url, origin);
  }

  get(origin: string): ServerAddressView {
    const s = this.saved();
    return { savedUrl: s?.url ?? null, savedAt: s?.at ?? null, flagUrl: this.flagUrl ?? null, effective: this.publicAddress(origin) };
  }

  /** Saves (or with null/"" clears) the address. Refused while --public-url is in force. */
  set(url: string | null, origin: string): ServerAddressView {
    if (this.flagUrl) {
      throw new AppError("INVALID_STATE", {
        message: "The server was started with --public-url (or TEXTWIRE_PUBLIC_URL), which wins over this setting: change it where the server is started.",
        details: { flag: "--public-url" },
      });
    }
    const text = url?.trim() ?? "";
    if (text === "") deleteServerSetting(this.sqlite, PUBLIC_URL_KEY);
    else {
      const r = parsePublicAddress(text);
      if (!r.ok) throw validationError([{ field: "url", message: r.message, requirement: "https://host[:port]", provided: text.slice(0, 300) }]);
      upsertServerSetting(this.sqlite, { key: PUBLIC_URL_KEY, value: r.url, updatedAt: iso(this.clock()) });
    }
    this.cached = undefined;
    return this.get(origin);
  }
}

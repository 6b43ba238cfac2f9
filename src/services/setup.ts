import type { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";
import { AppError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { deleteServerSetting, findServerSetting, upsertServerSetting } from "../db/server-settings";
import { countUsers, firstAccountId } from "../db/stores/users";
import { isValidTimeZone } from "../domain/time-series";
import { NAME_MAX, type Person } from "../domain/people";
import type { AccountService } from "./accounts";
import { checkNewPerson, hashToken, newLinkToken, type PeopleService } from "./people";

/** The setup link works this long; `textwire setup-link` (or a restart) makes a new one. */
export const SETUP_TTL_MS = 24 * 3600_000;
export const TOKEN_KEY = "setup.token_hash";
export const EXPIRES_KEY = "setup.expires_at";

/**
 * The first run in the browser: a one-time setup link (only its hash stored, in server_settings),
 * and the setup itself — the business's name, country and time zone, and its owner — which
 * creates the first account or adopts one created headless that has nobody yet
 * (docs/api-decisions.md, "People, roles and the first run").
 */
export class SetupService {
  constructor(private readonly sqlite: Database, private readonly clock: Clock, private readonly accounts: AccountService, private readonly people: PeopleService) {}

  /** Setup is done once anyone can sign in with a password. */
  needed(): boolean {
    return countUsers(this.sqlite) === 0;
  }

  /** A new setup link's token (the previous one stops working); null when setup is done. */
  newLink(): { token: string; expiresAt: string } | null {
    if (!this.needed()) return null;
    const token = newLinkToken();
    const now = this.clock();
    const expiresAt = iso(now + SETUP_TTL_MS);
    this.sqlite.transaction(() => {
      upsertServerSetting(this.sqlite, { key: TOKEN_KEY, value: hashToken(token), updatedAt: iso(now) });
      upsertServerSetting(this.sqlite, { key: EXPIRES_KEY, value: expiresAt, updatedAt: iso(now) });
    })();
    return { token, expiresAt };
  }

  private tokenValid(token: unknown): boolean {
    if (typeof token !== "string" || token.length < 20 || token.length > 100) return false;
    const stored = findServerSetting(this.sqlite, TOKEN_KEY)?.value;
    const expires = findServerSetting(this.sqlite, EXPIRES_KEY)?.value;
    if (!stored || !expires || Date.parse(expires) <= this.clock()) return false;
    const a = Buffer.from(hashToken(token), "hex");
    const b = Buffer.from(stored, "hex");
    return a.length === b.length && timingSafeEqual(a, b);
  }

  async complete(input: {
    token?: unknown;
    businessName?: unknown;
    country?: unknown;
    timeZone?: unknown;
    name?: unknown;
    email?: unknown;
    password?: unknown;
  }): Promise<Person & { accountId: string }> {
    if (!this.needed()) throw new AppError("INVALID_STATE", { message: "This server is already set up: sign in instead", details: { reason: "setup-done" } });
    if (!this.tokenValid(input.token)) {
      throw new AppError("AUTHENTICATION_ERROR", {
        message: "This setup link has expired or was already used: run `textwire setup-link` for a new one",
        details: { provided: "a setup link", expected: "the link `textwire serve` or `textwire setup-link` printed, under 24 hours old" },
      });
    }
    const business = typeof input.businessName === "string" ? input.businessName.trim() : "";
    const errors: Array<{ field: string; message: string }> = [];
    if (!business || business.length > NAME_MAX) errors.push({ field: "businessName", message: business ? `Keep the business name under ${NAME_MAX} characters` : "Enter the business name your customers know" });
    const country = typeof input.country === "string" && input.country.trim() ? input.country.trim().toUpperCase() : null;
    if (country !== null && !/^[A-Z]{2}$/.test(country)) errors.push({ field: "country", message: "Choose a country" });
    const timeZone = typeof input.timeZone === "string" && input.timeZone.trim() ? input.timeZone.trim() : null;
    if (timeZone !== null && !isValidTimeZone(timeZone)) errors.push({ field: "timeZone", message: "Choose a time zone" });
    if (errors.length) throw new AppError("VALIDATION_ERROR", { message: errors[0]!.message, details: { field: errors[0]!.field }, errors });
    const person = checkNewPerson(input);
    // The first account (created headless, or by an older start) is adopted; else one is created.
    const accountId = firstAccountId(this.sqlite) ?? this.accounts.createAccountWithoutKey(business).id;
    this.accounts.updateAccount(accountId, { name: business, ...(country ? { defaultCountry: country } : {}), ...(timeZone ? { timeZone } : {}) });
    const owner = await this.people.add(accountId, { ...person, role: "owner" });
    deleteServerSetting(this.sqlite, TOKEN_KEY);
    deleteServerSetting(this.sqlite, EXPIRES_KEY);
    return owner;
  }
}

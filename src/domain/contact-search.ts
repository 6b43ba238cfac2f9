import { phoneDigits } from "./phone";

/**
 * What `GET /contacts?search=` matches: names, e-mail and the phone's digits, lower-cased, in one
 * column so a single LIKE serves every search. Whoever writes a contact's name, e-mail or phone
 * (webhook upsert, contacts API, import) stores this alongside.
 */
export function contactSearchText(c: { firstName?: string | null; lastName?: string | null; email?: string | null; phoneNumber: string }): string {
  return [c.firstName ?? "", c.lastName ?? "", `${c.firstName ?? ""} ${c.lastName ?? ""}`.trim(), c.email ?? "", phoneDigits(c.phoneNumber)]
    .join("\u0001")
    .toLowerCase();
}

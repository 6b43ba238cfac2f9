/**
 * The webhook benches' submission: a realistic 5-field JSON body for the i-th number. Both load
 * generators send exactly these bytes (scripts/bench/lib/load.ts calls it; scripts/bench/lib/wrk.ts
 * builds the same string in Lua from the lists below), so their figures compare.
 */
import { phoneFor } from "./phones";

export const FIRST_NAMES = ["Ann", "Bob", "Chloé", "Dev", "Eve", "Femi", "Gus", "Hana"];
export const LAST_NAMES = ["Lee", "Smith", "Okafor", "García", "Ng", "Brown"];
/** The first name as it appears in the e-mail address: lower case, letters a–z only. */
export const EMAIL_NAMES = FIRST_NAMES.map((f) => f.toLowerCase().replace(/[^a-z]/g, ""));

export function bodyFor(i: number): string {
  return JSON.stringify({
    phoneNumber: phoneFor(i),
    firstName: FIRST_NAMES[i % FIRST_NAMES.length],
    lastName: LAST_NAMES[i % LAST_NAMES.length],
    email: `${EMAIL_NAMES[i % EMAIL_NAMES.length]}.${i}@example.com`,
    company: `Company ${i % 97}`,
  });
}

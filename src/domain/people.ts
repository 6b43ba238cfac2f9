/**
 * People who sign in to the dashboard: their roles, and the rules for e-mails and passwords.
 * Pure: no database (docs/api-decisions.md, "People, roles and the first run").
 */
export const ROLES = ["owner", "admin", "staff", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (r: unknown): r is Role => typeof r === "string" && (ROLES as readonly string[]).includes(r);

/** The signed-in person a request acts for (null/absent for an API key). */
export interface Person {
  id: string;
  name: string;
  email: string;
  role: Role;
}

/** Who did something (audit fields: who sent a manual text, who cancelled a message). */
export type Actor = { type: "user"; id: string; name: string } | { type: "key"; id: string };

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;
export const NAME_MAX = 100;
export const EMAIL_MAX = 254;

/**
 * A short list of the passwords people pick most (lower-cased; from public breach lists). A
 * password on it, or made only of one repeated character, is refused.
 */
const COMMON_PASSWORDS = new Set([
  "1234567890", "12345678910", "123456789a", "0123456789", "0987654321", "9876543210", "1111111111", "0000000000",
  "1234512345", "1122334455", "1234567891", "12345678900", "123123123123", "qwertyuiop", "qwertyuiop1", "qwertyuiop123",
  "1q2w3e4r5t", "1q2w3e4r5t6y", "q1w2e3r4t5", "zaq12wsxcde3", "1qaz2wsx3edc", "qazwsxedcrfv", "asdfghjkl1", "asdfghjkl;",
  "zxcvbnm123", "password12", "password123", "password1234", "password!!", "passw0rd123", "p@ssw0rd123", "password01",
  "iloveyou123", "iloveyou12", "sunshine123", "princess123", "football123", "baseball123", "basketball", "superman123",
  "batman1234", "starwars12", "starwars123", "whatever12", "trustno123", "letmein123", "letmein1234", "welcome123",
  "welcome1234", "welcome2024", "welcome2025", "welcome2026", "changeme123", "administrator", "admin12345", "admin123456",
  "adminadmin", "rootroot12", "qwerty1234", "qwerty12345", "qwerty123456", "abcdefghij", "abcdefg123", "abc1234567",
  "abcd123456", "aa12345678", "a123456789", "1234567890a", "1234qwer", "monkey1234", "dragon1234", "shadow1234",
  "master1234", "michael123", "jennifer12", "computer12", "computer123", "internet12", "chocolate1", "butterfly1",
  "pokemon123", "liverpool1", "chelsea123", "arsenal123", "mustang123", "jordan2323", "harley1234", "samsung123",
  "iphone1234", "google1234", "facebook12", "linkedin12", "myspace123", "secret1234", "mypassword", "mypassword1",
  "nopassword", "passwordpassword", "texting123", "textwire12", "textwire123", "summer2024", "summer2025", "winter2025",
]);

/** What is wrong with a new password, in plain words; null when it is acceptable. */
export function passwordProblem(pw: unknown): string | null {
  if (typeof pw !== "string" || pw.length < PASSWORD_MIN) return `Choose a password of at least ${PASSWORD_MIN} characters`;
  if (pw.length > PASSWORD_MAX) return `Choose a password of at most ${PASSWORD_MAX} characters`;
  const lower = pw.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || /^(.)\1+$/.test(pw)) return "That password is one of the most common ones: choose another";
  return null;
}

/** An e-mail as stored and compared: trimmed, lower-case. */
export const normalizeEmail = (e: string): string => e.trim().toLowerCase();

export function emailProblem(e: unknown): string | null {
  if (typeof e !== "string" || e.trim() === "") return "Enter an e-mail address";
  const n = normalizeEmail(e);
  if (n.length > EMAIL_MAX || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(n)) return "Enter an e-mail address like name@example.com";
  return null;
}

export function nameProblem(n: unknown, what = "your name"): string | null {
  if (typeof n !== "string" || n.trim() === "") return `Enter ${what}`;
  if (n.trim().length > NAME_MAX) return `Keep ${what} under ${NAME_MAX} characters`;
  return null;
}

/** The key permission a person's role is shown with where a session's `permission` is read. */
export const roleKeyPermission = (role: Role): "admin_access" | "standard_access" =>
  role === "owner" || role === "admin" ? "admin_access" : "standard_access";

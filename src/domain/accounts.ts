/** An account and its plan, as the services and the HTTP layer see it. Pure: no database. */
export type Plan = "standard" | "pro" | "enterprise";
export const PLANS: Plan[] = ["standard", "pro", "enterprise"];

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  apiLimitPerHour: number | null;
  apiBurstPerMinute: number | null;
  monthlyQuota: number | null;
  /** ISO 3166 alpha-2; null = US (DEFAULT_PHONE_COUNTRY). */
  defaultCountry: string | null;
  createdAt: string;
}

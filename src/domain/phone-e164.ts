/**
 * A fast path for phone numbers already written in E.164 (`+` and digits): the same answers as
 * libphonenumber-js (`parsePhoneNumberFromString` + `isValid()` + `getType()` with the `max`
 * metadata), an order of magnitude cheaper.
 *
 * Why: the library compiles a `RegExp` from the metadata on every pattern test and allocates a
 * metadata wrapper per helper call; validating one US number costs ~17 µs, most of the webhook's
 * validation stage. Here each country's patterns are compiled once, on first use.
 *
 * It follows the library's own steps for an international number (1.13.16: parse.js,
 * extractCountryCallingCode, extractNationalNumber, getCountryByCallingCode, getNumberType,
 * isValid) and reads the same metadata through the library's `Metadata` class. Whatever it does
 * not reproduce step for step — a national prefix to strip, a non-geographic calling code, an
 * unknown calling code, a national number out of the parser's length bounds — it does not
 * answer: `parseE164` returns undefined and the caller asks the library. test/unit/domain/phone-e164
 * compares both on numbers of every country.
 */
import { Metadata, type CountryCode, type NumberType } from "libphonenumber-js/core";
import metadataJson from "libphonenumber-js/metadata.max.json";

/** What the webhook needs of a parsed number. */
export interface E164Parse {
  /** The number in E.164 (PhoneNumber.number). */
  number: string;
  /** PhoneNumber.country (undefined when the calling code's countries do not claim the number). */
  country: CountryCode | undefined;
  countryCallingCode: string;
  /** PhoneNumber.isValid(). */
  valid: boolean;
  /** PhoneNumber.getType(). */
  type: NumberType;
}

/** `+`, a calling code that cannot start with 0, and digits: the inputs this path considers. */
const E164_RE = /^\+[1-9][0-9]{2,16}$/;
/** The parser's bounds on the national significant number (libphonenumber-js constants.js). */
const MIN_LENGTH_FOR_NSN = 2;
const MAX_LENGTH_FOR_NSN = 17;
const MAX_LENGTH_COUNTRY_CODE = 3;

/** Types other than FIXED_LINE, in the order getNumberType tries them. */
const NON_FIXED_LINE_TYPES = ["MOBILE", "PREMIUM_RATE", "TOLL_FREE", "SHARED_COST", "VOIP", "PERSONAL_NUMBER", "PAGER", "UAN", "VOICEMAIL"] as const;
type TypeName = "FIXED_LINE" | (typeof NON_FIXED_LINE_TYPES)[number];

/** One number type of a plan, as isNumberTypeEqualTo reads it. */
interface TypeDef {
  /** The whole-number pattern; null when the metadata gives an empty one (never matches). */
  re: RegExp | null;
  possibleLengths: number[] | undefined;
}

/** One numbering plan (a country's, or a calling code's main country's), compiled once. */
interface Plan {
  nationalNumber: RegExp;
  hasTypes: boolean;
  /** Present types only (metadata.type(t) defined). */
  types: Map<TypeName, TypeDef>;
  /** MOBILE's pattern is the empty string (getNumberType's special case). */
  mobileEmpty: boolean;
  /** `^(?:national prefix for parsing)`, or null when the plan has none. */
  prefixForParsing: RegExp | null;
  /** `^(?:leading digits)`, or null. */
  leadingDigits: RegExp | null;
}

const metadata = new Metadata(metadataJson as any) as any;
const plansByCountry = new Map<string, Plan>();
const plansByCallingCode = new Map<string, Plan>();

/** The whole-string match matchesEntirely does: `^(?:pattern)$` (the same concatenation). */
const entire = (pattern: unknown) => new RegExp("^(?:" + pattern + ")$");

function compile(selected: any): Plan {
  const plan = selected.numberingPlan;
  const types = new Map<TypeName, TypeDef>();
  for (const name of ["FIXED_LINE", ...NON_FIXED_LINE_TYPES] as TypeName[]) {
    const t = selected.type(name);
    if (!t) continue;
    const pattern: string = t.pattern();
    types.set(name, { re: pattern ? entire(pattern) : null, possibleLengths: t.possibleLengths() });
  }
  const mobile = selected.type("MOBILE");
  const prefix: string | undefined = plan.nationalPrefixForParsing();
  const leading: string | undefined = plan.leadingDigits();
  return {
    nationalNumber: entire(plan.nationalNumberPattern()),
    hasTypes: plan.hasTypes(),
    types,
    mobileEmpty: mobile !== undefined && mobile.pattern() === "",
    prefixForParsing: prefix ? new RegExp("^(?:" + prefix + ")") : null,
    leadingDigits: leading ? new RegExp("^(?:" + leading + ")") : null,
  };
}

function planOfCountry(country: string): Plan {
  let p = plansByCountry.get(country);
  if (p === undefined) {
    p = compile(metadata.selectNumberingPlan(country));
    plansByCountry.set(country, p);
  }
  return p;
}

function planOfCallingCode(code: string): Plan {
  let p = plansByCallingCode.get(code);
  if (p === undefined) {
    p = compile(metadata.selectNumberingPlan(code));
    plansByCallingCode.set(code, p);
  }
  return p;
}

/** isNumberTypeEqualTo. */
function isType(nn: string, plan: Plan, name: TypeName): boolean {
  const t = plan.types.get(name);
  if (t === undefined || t.re === null) return false;
  if (t.possibleLengths && t.possibleLengths.indexOf(nn.length) < 0) return false;
  return t.re.test(nn);
}

/** getNumberType on a selected plan. */
function numberType(nn: string, plan: Plan): NumberType {
  if (!plan.nationalNumber.test(nn)) return undefined;
  if (isType(nn, plan, "FIXED_LINE")) {
    if (plan.mobileEmpty) return "FIXED_LINE_OR_MOBILE";
    if (!plan.types.has("MOBILE")) return "FIXED_LINE_OR_MOBILE";
    if (isType(nn, plan, "MOBILE")) return "FIXED_LINE_OR_MOBILE";
    return "FIXED_LINE";
  }
  for (const name of NON_FIXED_LINE_TYPES) if (isType(nn, plan, name)) return name;
  return undefined;
}

/**
 * getCountryByCallingCode: the one country, or the first whose leading digits / types claim it.
 * When a type claimed it, that type comes along (the number's type in that country's plan).
 */
function countryOf(callingCode: string, nn: string): { country: CountryCode | undefined; type?: NumberType } {
  const countries: CountryCode[] | undefined = metadata.getCountryCodesForCallingCode(callingCode);
  if (!countries) return { country: undefined };
  if (countries.length === 1) return { country: countries[0] };
  for (const c of countries) {
    const plan = planOfCountry(c);
    if (plan.leadingDigits !== null) {
      if (nn && plan.leadingDigits.test(nn)) return { country: c };
    } else {
      const type = numberType(nn, plan);
      if (type !== undefined) return { country: c, type };
    }
  }
  return { country: undefined };
}

/**
 * The library's parse of an E.164 text, or undefined when this path does not answer for it (not
 * `+digits`, or a case it leaves to the library: see the module comment).
 */
export function parseE164(text: string): E164Parse | undefined {
  if (!E164_RE.test(text)) return undefined;
  let callingCode: string | undefined;
  for (let i = 2; i - 1 <= MAX_LENGTH_COUNTRY_CODE && i <= text.length; i++) {
    const code = text.slice(1, i);
    if (metadata.hasCallingCode(code)) {
      callingCode = code;
      break;
    }
  }
  // Unknown, or non-geographic (+800, +882 …: no country lists it): the library's way.
  if (callingCode === undefined || !metadata.getCountryCodesForCallingCode(callingCode)) return undefined;
  const nn = text.slice(1 + callingCode.length);
  const main = planOfCallingCode(callingCode);
  // A national prefix (or carrier code) the library might strip: its way.
  if (main.prefixForParsing !== null && main.prefixForParsing.test(nn)) return undefined;
  if (nn.length < MIN_LENGTH_FOR_NSN || nn.length > MAX_LENGTH_FOR_NSN) return undefined;
  const { country, type: claimed } = countryOf(callingCode, nn);
  const plan = country !== undefined ? planOfCountry(country) : main;
  const type = claimed !== undefined ? claimed : numberType(nn, plan);
  const valid = plan.hasTypes ? type !== undefined : plan.nationalNumber.test(nn);
  return { number: "+" + callingCode + nn, country, countryCallingCode: callingCode, valid, type };
}

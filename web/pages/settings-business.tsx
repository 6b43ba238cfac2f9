import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText } from "../api";
import { useResource } from "../resource";
import { useSave } from "../act";
import type { Answer } from "../api-types";
import { errAttrs, FieldError } from "../components/FieldError";

type Profile = Answer<"/v1/account/profile">["data"];

/** ISO 3166 codes the country list offers (named in the browser's language). */
const COUNTRIES = (
  "AD AE AF AG AI AL AM AO AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
  "DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GT GU GW GY HK HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
  "KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ " +
  "OM PA PE PF PG PH PK PL PM PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
  "UA UG US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW"
).split(" ");

function countryName(code: string): string {
  try {
    return new Intl.DisplayNames([navigator.language || "en"], { type: "region" }).of(code) ?? code;
  } catch {
    return code;
  }
}

function timeZones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

const REPLY_LABELS: Array<[keyof Profile["replies"], string]> = [
  ["optOutReply", "When someone texts STOP"],
  ["optInReply", "When someone texts START"],
  ["helpReply", "When someone texts HELP"],
];

/** "{{accountName}}" filled with the name as typed, or "this number" until there is one. */
const render = (text: string, name: string) => text.split("{{accountName}}").join(name.trim().replace(/\s+/g, " ") || "this number");

/**
 * Settings → Business (owners and admins): the name customers see in replies, the country and
 * the time zone (GET/PUT /v1/account/profile). The replies are shown as they will be sent, live.
 */
export function BusinessProfile() {
  const profile = useSignal<Profile | null>(null);
  const name = useSignal("");
  const country = useSignal("US");
  const zone = useSignal("");
  const { busy, notice, error, fieldErrors, save: saving } = useSave();
  const fill = (p: Profile) => {
    profile.value = p;
    name.value = p.nameSet ? p.name : "";
    country.value = p.country;
    zone.value = p.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
  };
  useResource(() => api.get("/v1/account/profile").then((r) => r.data), [], { error, onLoad: fill });

  async function save(e: Event) {
    e.preventDefault();
    await saving(async () => {
      const r = await api.put("/v1/account/profile", { json: { name: name.value, country: country.value, timeZone: zone.value.trim() } });
      fill(r.data);
      return "Saved. Replies now carry your business name.";
    });
  }

  const p = profile.value;
  const errs = fieldErrors.value;
  const zones = timeZones();
  return (
    <>
      <h2 id="business">Business</h2>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {p && !p.nameSet ? (
        <p class="notice" data-testid="business-name-missing">
          Your business name is not set yet: until it is, replies say "this number" instead.
        </p>
      ) : null}
      {p ? (
        <form class="notes" onSubmit={save}>
          <span class="field wide">
            <label for="business-name">Business name</label>
            <input
              id="business-name"
              autocomplete="organization"
              maxLength={60}
              value={name.value}
              placeholder="e.g. Rosa's Bakery"
              {...errAttrs(errs, "name", "business-name-error", "business-name-hint")}
              onInput={(e) => (name.value = (e.target as HTMLInputElement).value)}
            />
            <small id="business-name-hint" class="hint">What your customers know you as: the replies below carry it.</small>
            <FieldError errors={errs} name="name" id="business-name-error" />
          </span>
          <span class="field">
            <label for="business-country">Country</label>
            <select id="business-country" value={country.value} {...errAttrs(errs, "country", "business-country-error", "business-country-hint")} onChange={(e) => (country.value = (e.target as HTMLSelectElement).value)}>
              {COUNTRIES.map((c) => (
                <option key={c} value={c}>
                  {countryName(c)}
                </option>
              ))}
            </select>
            <small id="business-country-hint" class="hint">Phone numbers typed without a +code are read as this country's.</small>
            <FieldError errors={errs} name="country" id="business-country-error" />
          </span>
          <span class="field">
            <label for="business-zone">Time zone</label>
            <input
              id="business-zone"
              list="business-zones"
              autocomplete="off"
              value={zone.value}
              {...errAttrs(errs, "timeZone", "business-zone-error")}
              onInput={(e) => (zone.value = (e.target as HTMLInputElement).value)}
            />
            <datalist id="business-zones">
              {zones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
            <FieldError errors={errs} name="timeZone" id="business-zone-error" />
          </span>
          <div class="field wide" data-testid="reply-preview">
            <h3>Replies as your customers will get them</h3>
            <dl class="facts">
              {REPLY_LABELS.map(([k, label]) => (
                <div key={k}>
                  <dt>{label}</dt>
                  <dd data-testid={`preview-${k}`}>{render(p.replies[k], name.value)}</dd>
                </div>
              ))}
            </dl>
          </div>
          <button type="submit" disabled={busy.value}>
            Save business details
          </button>
          <span aria-live="polite">{notice.value}</span>
        </form>
      ) : null}
    </>
  );
}

/** On Overview, until the business name is set (owners and admins): customers see it in replies. */
export function BusinessNameAsk() {
  const missing = useSignal(false);
  useEffect(() => {
    if (!can("settings.read")) return;
    api.get("/v1/account/profile")
      .then((r) => (missing.value = !r.data.nameSet))
      .catch(() => {});
  }, []);
  if (!missing.value) return null;
  return (
    <p class="notice" data-testid="business-name-ask">
      <a href="/settings/business">Add your business name</a>: customers see it in replies.
    </p>
  );
}

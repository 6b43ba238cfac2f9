/**
 * Settings as a few short pages, each with its own address (/settings/<page>), shown only to the
 * people whose role may use it (docs/dashboard.md, "Settings"): /settings itself is a small index.
 * A new settings page is one entry in SETTINGS_PAGES.
 */
import type { ComponentType } from "preact";
import { useEffect } from "preact/hooks";
import { can, isOperator, isPerson } from "../api";
import { navigate, path } from "../router";
import { AccountLimits, ApiLimits, Backups, useAccount } from "./settings-account";
import { Replication } from "./settings-replication";
import { BusinessProfile } from "./settings-business";
import { HttpsStatus, ServerAddress } from "./settings-server";
import { PublicCertificate } from "./settings-certificate";
import { People, Sessions, YourAccount } from "./settings-people";
import { Replies } from "./settings-keywords";
import { SmsgateClients } from "./settings-smsgate";
import { BeingTold } from "./settings-me";
import { ApiKeys } from "./settings-api-keys";
import { EventEndpoints } from "./settings-endpoints";

export interface SettingsPage {
  slug: string;
  title: string;
  /** One line on the index: what is on the page. */
  blurb: string;
  /** Whether the signed-in person (or key) may use the page: it is listed and opened only then. */
  shown: () => boolean;
  view: ComponentType;
}

/** Your own profile: password and sign-out; a person's notification choices belong here too. */
function ProfilePage() {
  return (
    <>
      <YourAccount />
      <BeingTold />
    </>
  );
}

function BusinessPage() {
  return (
    <>
      <BusinessProfile />
      <Replies part="replies" />
    </>
  );
}

function PeoplePage() {
  return (
    <>
      {isPerson() && can("people.manage") ? <People /> : null}
      {can("sessions.manage") ? <Sessions /> : null}
    </>
  );
}

function PhonesPage() {
  const { info, error } = useAccount();
  return (
    <>
      <h2>Phones</h2>
      <p>
        The Android phones that send your texts, each with its own send rate and daily limit, are on the <a href="/devices">Devices</a> page
        {can("devices.write") ? (
          <>
            ; <a href="/devices/add">add a phone</a> there too
          </>
        ) : null}
        .
      </p>
      <AccountLimits info={info.value} error={error.value} />
    </>
  );
}

function TextingRulesPage() {
  return (
    <>
      <Replies part="keywords" />
      <h2>Quiet hours</h2>
      <p>
        Quiet hours (when no text goes out, so nobody is woken up) and the most texts one number gets a day are set on each form, beside its text:{" "}
        <a href="/forms">open a form</a>. Texts that fall in quiet hours wait until they end.
      </p>
    </>
  );
}

function DevelopersPage() {
  const { info } = useAccount();
  return (
    <>
      <p>For connecting other tools and apps to Textwire. Nothing here is needed to send texts from your website's forms.</p>
      {can("api-keys.manage") ? <ApiKeys /> : null}
      <ApiLimits info={info.value} />
      {can("event-endpoints.read") ? <EventEndpoints /> : null}
      {can("settings.write") ? <SmsgateClients /> : null}
    </>
  );
}

/** Operators only. The HTTPS section is its own component (HttpsStatus) so it can grow on its own. */
function ServerPage() {
  const { info } = useAccount();
  return (
    <>
      <p>These settings are for the whole server, every account on it.</p>
      <ServerAddress />
      <PublicCertificate />
      <HttpsStatus />
      <Backups info={info.value} />
      <Replication info={info.value} />
    </>
  );
}

export const SETTINGS_PAGES: SettingsPage[] = [
  { slug: "me", title: "Your profile", blurb: "Your password, signing out of every browser, and the texts that tell you of new requests.", shown: isPerson, view: ProfilePage },
  { slug: "business", title: "Business", blurb: "Your business name, country and time zone, and the replies customers get.", shown: () => can("settings.write"), view: BusinessPage },
  { slug: "people", title: "People", blurb: "Who signs in, their roles, invitations and the signed-in browsers.", shown: () => (isPerson() && can("people.manage")) || can("sessions.manage"), view: PeoplePage },
  { slug: "phones", title: "Phones and sending limits", blurb: "Your phones, and how many texts your account may send.", shown: () => can("account.read"), view: PhonesPage },
  { slug: "texting", title: "Texting rules", blurb: "The words that stop and restart texts, and quiet hours.", shown: () => can("settings.write"), view: TextingRulesPage },
  {
    slug: "developers",
    title: "Developers",
    blurb: "API keys, event endpoints and their signing secrets, SMSGate apps.",
    shown: () => can("api-keys.manage") || can("event-endpoints.read") || can("settings.write"),
    view: DevelopersPage,
  },
  { slug: "server", title: "Server", blurb: "The server's address, HTTPS, backups and replication.", shown: isOperator, view: ServerPage },
];

/** Where an old Settings anchor (/settings#backups) lives now. */
const OLD_ANCHORS: Record<string, string> = {
  business: "/settings/business",
  backups: "/settings/server#backups",
  "server-address": "/settings/server#server-address",
  https: "/settings/server#https",
  replication: "/settings/server#replication",
  "smsgate-clients": "/settings/developers#smsgate-clients",
  "keyword-replies": "/automations/keyword-replies",
};

export function Settings() {
  const slug = path.value.split("/")[2];
  // A link to a section (/settings/server#backups): its sections load on their own, so look a moment later.
  useEffect(() => {
    const id = location.hash.slice(1);
    if (!slug || !id) return;
    const t = setTimeout(() => document.getElementById(id)?.scrollIntoView(), 400);
    return () => clearTimeout(t);
  }, [slug]);
  if (!slug) {
    const moved = OLD_ANCHORS[location.hash.slice(1)];
    if (moved) {
      queueMicrotask(() => navigate(moved, true));
      return null;
    }
    return <SettingsIndex />;
  }
  const page = SETTINGS_PAGES.find((p) => p.slug === slug);
  if (!page || !page.shown()) {
    return (
      <section>
        <SettingsNav />
        <h1>Settings</h1>
        <p class="notice">{page ? "This settings page is not part of your role. The pages you can use are listed above." : "There is no such settings page."}</p>
      </section>
    );
  }
  const View = page.view;
  return (
    <section class="settings-page">
      <SettingsNav current={page.slug} />
      <h1>{page.title}</h1>
      <View />
    </section>
  );
}

/** The settings pages this person may use, as a row of links above each page. */
function SettingsNav(props: { current?: string }) {
  return (
    <nav aria-label="Settings" class="settings-nav">
      <ul>
        <li>
          <a href="/settings" aria-current={props.current === undefined ? "page" : undefined}>
            All settings
          </a>
        </li>
        {SETTINGS_PAGES.filter((p) => p.shown()).map((p) => (
          <li key={p.slug}>
            <a href={`/settings/${p.slug}`} aria-current={props.current === p.slug ? "page" : undefined}>
              {p.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function SettingsIndex() {
  const pages = SETTINGS_PAGES.filter((p) => p.shown());
  return (
    <section>
      <h1>Settings</h1>
      <ul class="settings-index">
        {pages.map((p) => (
          <li key={p.slug}>
            <a href={`/settings/${p.slug}`}>{p.title}</a>
            <span class="hint"> — {p.blurb}</span>
          </li>
        ))}
      </ul>
      {isOperator() ? null : <p class="hint">Backups are made by whoever runs the Textwire server, who also looks after its address and HTTPS.</p>}
      {!can("settings.write") ? <p class="hint">The business's settings are changed by its owners and admins.</p> : null}
    </section>
  );
}

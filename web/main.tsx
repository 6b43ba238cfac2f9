import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import "./styles.css";
import { api, busyRetry, session } from "./api";
import type { Answer } from "./api-types";
import { navigate, onLinkClick, path } from "./router";
import { SignIn } from "./pages/sign-in";
import { Overview } from "./pages/overview";
import { Messages } from "./pages/messages";
import { Contacts } from "./pages/contacts";
import { Settings } from "./pages/settings";
import { Forms } from "./pages/forms";
import { Conversations } from "./pages/conversations";
import { Inbox } from "./pages/inbox";
import { Broadcasts } from "./pages/broadcasts";
import { Automations } from "./pages/automations";
import { Devices } from "./pages/devices";
import { Invite, Setup, Welcome } from "./pages/setup";

const PAGES = [
  { href: "/overview", name: "Overview", view: Overview },
  { href: "/inbox", name: "Requests", view: Inbox },
  { href: "/forms", name: "Forms", view: Forms },
  { href: "/messages", name: "Messages", view: Messages },
  { href: "/conversations", name: "Conversations", view: Conversations },
  { href: "/contacts", name: "Contacts", view: Contacts },
  { href: "/broadcasts", name: "Broadcasts", view: Broadcasts },
  { href: "/automations", name: "Automations", view: Automations },
  { href: "/devices", name: "Devices", view: Devices },
  { href: "/settings", name: "Settings", view: Settings },
];

function App() {
  useEffect(() => {
    api.get("/v1/session")
      .then((r) => (session.value = r.data))
      .catch(() => (session.value = null));
  }, []);
  const s = session.value;
  const p = path.value;
  // The first run and invitations come before any session (their token is in the URL's fragment).
  if (p === "/setup" && !s?.user) return <Setup />;
  if (p === "/invite") return <Invite />;
  if (s === undefined) return <p class="loading" role="status">Loading…</p>;
  if (s === null) {
    if (p !== "/sign-in") queueMicrotask(() => navigate("/sign-in?next=" + encodeURIComponent(p === "/" ? "/overview" : p), true));
    return <SignIn />;
  }
  if (p === "/welcome" || p === "/setup") return <Layout>{<Welcome />}</Layout>;
  if (p === "/" || p === "/sign-in") {
    queueMicrotask(() => navigate("/overview", true));
    return null;
  }
  const page = PAGES.find((x) => p === x.href || p.startsWith(x.href + "/"));
  return <Layout current={page?.href}>{page ? <page.view /> : <NotFound />}</Layout>;
}

function Layout(props: { current?: string; children: any }) {
  const menuOpen = useSignal(false);
  const mainRef = useRef<HTMLElement>(null);
  const menuButton = useRef<HTMLButtonElement>(null);
  // A new page: close the menu and move focus to its content, as a page load would.
  useEffect(() => {
    menuOpen.value = false;
    mainRef.current?.focus();
  }, [props.current]);
  async function signOut() {
    try {
      await api.delete("/v1/session");
    } finally {
      session.value = null;
      navigate("/sign-in", true);
    }
  }
  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">Skip to content</a>
      <header
        class="topbar"
        onKeyDown={(e) => {
          // Escape closes the open menu and gives focus back to its button.
          if (e.key === "Escape" && menuOpen.value) {
            menuOpen.value = false;
            menuButton.current?.focus();
          }
        }}
      >
        <span class="brand">Textwire</span>
        <button type="button" ref={menuButton} class="menu-button" aria-expanded={menuOpen.value} aria-controls="nav" onClick={() => (menuOpen.value = !menuOpen.value)}>
          Menu
        </button>
        <nav id="nav" aria-label="Main" class={menuOpen.value ? "open" : ""} onClick={() => (menuOpen.value = false)}>
          <ul>
            {PAGES.map((x) => (
              <li key={x.href}>
                <a href={x.href} aria-current={props.current === x.href ? "page" : undefined}>
                  {x.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        <BusyNotice />
        {props.children}
      </main>
    </div>
  );
}

/** While a request waits for a busy server to answer again: the page keeps what it shows. */
function BusyNotice() {
  const s = busyRetry.value;
  return (
    <p class="busy-notice" role="status" aria-live="polite" hidden={s === null}>
      {s === null ? "" : `The server is busy; trying again in ${s} second${s === 1 ? "" : "s"}…`}
    </p>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no such page. Go to the <a href="/overview">Overview</a>.
      </p>
    </section>
  );
}

render(<App />, document.getElementById("app")!);

import { signal } from "@preact/signals";

/** The current URL path; every page has its own URL, so reload and back work. */
export const path = signal(location.pathname);
export const search = signal(location.search);

export function navigate(to: string, replace = false) {
  const url = new URL(to, location.origin);
  if (url.pathname + url.search === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  path.value = url.pathname;
  search.value = url.search;
}

addEventListener("popstate", () => {
  path.value = location.pathname;
  search.value = location.search;
});

/** A same-origin link click becomes a history push; modified clicks (new tab) stay the browser's. */
export function onLinkClick(e: MouseEvent) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element).closest("a");
  if (!a || a.target || a.origin !== location.origin || a.hasAttribute("download")) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}

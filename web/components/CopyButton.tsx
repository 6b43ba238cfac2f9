import type { ComponentChildren } from "preact";

/** What a page says when the browser refuses the clipboard (plain http, a denied permission). */
const REFUSED = "Copying is not allowed here: select the text and copy it by hand.";

/** Copies `text`; `done` gets what to tell the person: copied, or that they copy it by hand. */
export async function copyText(text: string, done: (message: string) => void, refused = REFUSED): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    done("Copied.");
  } catch {
    done(refused);
  }
}

/**
 * A secondary button that copies `text` and hands what happened to `onDone` (the page's notice
 * line). `label` is the button's accessible name when its visible text alone is not enough
 * ("Copy" beside a value); `refused` replaces the default words when copying is not allowed.
 */
export function CopyButton(props: { text: string; onDone: (message: string) => void; label?: string; refused?: string; children: ComponentChildren }) {
  return (
    <button type="button" class="secondary" aria-label={props.label} onClick={() => copyText(props.text, props.onDone, props.refused)}>
      {props.children}
    </button>
  );
}

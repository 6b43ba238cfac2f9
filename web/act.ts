import type { Signal } from "@preact/signals";
import { errorText } from "./api";

/**
 * A page's action: make the API call, put what happened (`done`'s text, or the API's error
 * message) in the page's notice line, then reload what the page shows (when it shows a list),
 * whether the call worked or not, so the list never shows a state the server does not have.
 */
export async function act<T>(notice: Signal<string>, call: () => Promise<T>, done: (answer: T) => string, reload?: () => unknown): Promise<void> {
  try {
    const answer = await call();
    notice.value = done(answer);
  } catch (e) {
    notice.value = errorText(e);
  }
  reload?.();
}

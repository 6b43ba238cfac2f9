import { useSignal, type Signal } from "@preact/signals";
import { errorText, fieldErrorsOf } from "./api";

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

/**
 * A settings form's save. `save(run)`: the button is busy and the last notice, error and field
 * errors are cleared while `run` works; then `notice` says what `run` returns, or `error` and
 * `fieldErrors` say what the API refused (each field's message beside its input).
 */
export function useSave() {
  const busy = useSignal(false);
  const notice = useSignal("");
  const error = useSignal("");
  const fieldErrors = useSignal<Array<{ field: string; message: string }>>([]);
  async function save(run: () => Promise<string>): Promise<void> {
    busy.value = true;
    notice.value = "";
    error.value = "";
    fieldErrors.value = [];
    try {
      notice.value = await run();
    } catch (err) {
      fieldErrors.value = fieldErrorsOf(err);
      error.value = errorText(err);
    } finally {
      busy.value = false;
    }
  }
  return { busy, notice, error, fieldErrors, save };
}

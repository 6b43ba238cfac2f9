import { useSignal, type Signal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { errorText } from "./api";

/** What `useResource` gives a page: the last answer, the API's words when a read failed, and a way to read again. */
export interface Resource<T> {
  /** The last answer; null until the first one comes. A failed read keeps what is shown. */
  data: Signal<T | null>;
  /** The API's error in plain words (its envelope's message) while the last read failed; "" otherwise. */
  error: Signal<string>;
  /** Reads again (after a change, on a live event, on "Try again"); resolves when the page shows the answer or the error. */
  load: () => Promise<void>;
}

/**
 * A page's read with its load / error / retry: `read` runs when the page opens and whenever one
 * of `deps` changes; its answer goes to `data` (and `onLoad`, for a page that fills a form from
 * it), its error to `error` (or the page's own error signal); `when: false` reads nothing (yet). Only the newest read's answer is
 * shown: an older one that comes late is dropped (docs/api-decisions.md, "The house, round two:
 * a typed dashboard").
 */
export function useResource<T>(read: () => Promise<T>, deps: unknown[] = [], options: { error?: Signal<string>; onLoad?: (value: T) => void; when?: boolean } = {}): Resource<T> {
  const data = useSignal<T | null>(null);
  const ownError = useSignal("");
  const error = options.error ?? ownError;
  const reads = useRef(0);
  // The newest `read` and `onLoad` (they close over the page's current state).
  const latest = useRef({ read, onLoad: options.onLoad });
  latest.current = { read, onLoad: options.onLoad };
  const load = async () => {
    const n = ++reads.current;
    try {
      const value = await latest.current.read();
      if (n !== reads.current) return;
      data.value = value;
      error.value = "";
      latest.current.onLoad?.(value);
    } catch (e) {
      if (n === reads.current) error.value = errorText(e);
    }
  };
  useEffect(() => {
    if (options.when !== false) load();
  }, deps);
  return { data, error, load };
}

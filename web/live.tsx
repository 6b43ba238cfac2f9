import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";

/** Live changes arrive in bursts (a broadcast): the page reads again at most this often. */
const LIVE_REFRESH_MS = 400;

/**
 * Calls `onChange` (debounced) whenever the server says the account's messages changed — new,
 * sent, failed, replies — over Server-Sent Events (GET /v1/live/messages). Answers the stream's
 * state for the page to show.
 */
export function useLiveMessages(onChange: () => void) {
  const state = useSignal<"connecting" | "live" | "off">("connecting");
  useEffect(() => {
    const es = new EventSource("/v1/live/messages");
    let timer: ReturnType<typeof setTimeout> | undefined;
    es.onopen = () => (state.value = "live");
    es.onerror = () => (state.value = es.readyState === EventSource.CLOSED ? "off" : "connecting");
    es.addEventListener("message", () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        onChange();
      }, LIVE_REFRESH_MS);
    });
    return () => {
      clearTimeout(timer);
      es.close();
    };
  }, []);
  return state;
}

export function LiveBadge(props: { state: "connecting" | "live" | "off" }) {
  return (
    <span class={`live live-${props.state}`} role="status">
      {props.state === "live" ? "Live" : props.state === "connecting" ? "Connecting…" : "Not live: reload to reconnect"}
    </span>
  );
}

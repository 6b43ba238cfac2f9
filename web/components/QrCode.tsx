import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";

/**
 * A QR code drawn as SVG from `uqr`'s module matrix (no canvas, no data: URL, so the CSP stays
 * strict). The library is loaded only when a QR code is first shown. Always dark on white, as
 * phone cameras read best, whatever the page's colour scheme.
 */
export function QrCode(props: { text: string; label: string }) {
  const path = useSignal<{ d: string; size: number } | null>(null);
  const failed = useSignal(false);
  useEffect(() => {
    let gone = false;
    import("uqr")
      .then(({ encode }) => {
        if (gone) return;
        const qr = encode(props.text, { ecc: "M", border: 2 });
        let d = "";
        qr.data.forEach((row, y) => row.forEach((dark, x) => dark && (d += `M${x} ${y}h1v1h-1z`)));
        path.value = { d, size: qr.size };
      })
      .catch(() => (failed.value = true));
    return () => {
      gone = true;
    };
  }, [props.text]);
  if (failed.value) return <p class="hint">The QR code could not be drawn: copy the text instead.</p>;
  const p = path.value;
  if (!p) return <div class="qr qr-loading" role="status">Drawing the QR code…</div>;
  return (
    <svg class="qr" viewBox={`0 0 ${p.size} ${p.size}`} role="img" aria-label={props.label} shape-rendering="crispEdges">
      <rect width={p.size} height={p.size} fill="#fff" />
      <path d={p.d} fill="#000" />
    </svg>
  );
}

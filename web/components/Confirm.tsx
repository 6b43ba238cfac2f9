import { useEffect, useRef } from "preact/hooks";

/**
 * A modal confirmation: the browser's <dialog> keeps focus inside it while it is open. A page with
 * two gives each its own `titleId`; `cancel` names the way back ("Keep it" by default).
 */
export function Confirm(props: { open: boolean; title: string; body: string; action: string; onConfirm: () => void; onCancel: () => void; titleId?: string; cancel?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = props.titleId ?? "confirm-title";
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} class="confirm">
      <h2 id={titleId}>{props.title}</h2>
      <p>{props.body}</p>
      <div class="dialog-actions">
        <button type="button" class="danger" onClick={props.onConfirm}>{props.action}</button>
        <button type="button" class="secondary" onClick={props.onCancel}>{props.cancel ?? "Keep it"}</button>
      </div>
    </dialog>
  );
}

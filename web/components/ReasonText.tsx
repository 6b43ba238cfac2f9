import { failureReason } from "../failure-reasons";

/** A failure reason as a sentence, with the stored code kept on a detail line. */
export function ReasonText(props: { code: string | null | undefined }) {
  const r = failureReason(props.code);
  return (
    <span class="reason">
      {r.sentence}
      {r.code ? <span class="code-detail"> Code: {r.code}</span> : null}
    </span>
  );
}

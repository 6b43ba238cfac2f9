import { GSM7_PART, GSM7_SINGLE, UCS2_PART, UCS2_SINGLE, smsInfo } from "../../src/domain/sms-encoding";

/**
 * "1 text (42 characters)" for a message, with the why (alphabets, parts) behind a disclosure
 * rather than the encoding names. docs/api-decisions.md, "The dashboard at phone width, in plain words".
 */
export function textCount(content: string): string {
  const info = smsInfo(content);
  const chars = [...content].length;
  return `${info.segments} ${info.segments === 1 ? "text" : "texts"} (${chars} ${chars === 1 ? "character" : "characters"})`;
}

/** The first character outside the basic SMS alphabet, if any (it makes every part shorter). */
function firstWide(content: string): string | null {
  for (const ch of content) if (smsInfo(ch).encoding === "UCS-2") return ch;
  return null;
}

export function TextSize(props: { content: string; testId?: string; suffix?: string }) {
  const info = smsInfo(props.content);
  const wide = info.encoding === "UCS-2" ? firstWide(props.content) : null;
  const single = wide ? UCS2_SINGLE : GSM7_SINGLE;
  const part = wide ? UCS2_PART : GSM7_PART;
  return (
    <span class="text-size">
      <span data-testid={props.testId}>
        {textCount(props.content)}
        {props.suffix ?? ""}
      </span>{" "}
      <details class="why">
        <summary>why</summary>
        <span class="hint">
          One text holds up to {single} characters{wide ? ` because “${wide}” is outside the basic SMS alphabet (emoji, curly quotes and some accented letters are)` : ""}
          ; a longer message goes as several texts of {part} characters that the customer's phone joins back together, and each one counts toward your plan.
          <span class="code-detail"> Technically: {info.encoding} encoding, {info.segments} {info.segments === 1 ? "segment" : "segments"}.</span>
        </span>
      </details>
    </span>
  );
}

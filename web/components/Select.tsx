/** A labelled drop-down of `[value, text]` options; its id is derived from the label. */
export function Select(props: { label: string; value: string; options: Array<[string, string]>; onChange: (v: string) => void }) {
  const id = "f-" + props.label.toLowerCase().replace(/\W+/g, "-");
  return (
    <span class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map(([v, t]) => (
          <option key={v} value={v}>{t}</option>
        ))}
      </select>
    </span>
  );
}

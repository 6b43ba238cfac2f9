/**
 * "Insert a field": puts `{{name}}` into a template's textarea at the cursor, so the owner
 * picks a field by its label instead of typing the double-brace syntax.
 */
export function InsertField(props: { id: string; textareaId: string; fields: ReadonlyArray<readonly [string, string]>; value: string; onChange: (v: string) => void }) {
  function insert(name: string) {
    if (!name) return;
    const token = `{{${name}}}`;
    const ta = document.getElementById(props.textareaId) as HTMLTextAreaElement | null;
    const at = ta && document.activeElement !== null ? ta.selectionStart ?? props.value.length : props.value.length;
    const end = ta ? ta.selectionEnd ?? at : at;
    props.onChange(props.value.slice(0, at) + token + props.value.slice(end));
    queueMicrotask(() => {
      ta?.focus();
      ta?.setSelectionRange(at + token.length, at + token.length);
    });
  }
  return (
    <span class="field insert-field">
      <label for={props.id}>Insert a field</label>
      <select
        id={props.id}
        value=""
        onChange={(e) => {
          const el = e.target as HTMLSelectElement;
          insert(el.value);
          el.value = "";
        }}
      >
        <option value="">Choose…</option>
        {props.fields.map(([name, label]) => (
          <option key={name} value={name}>
            {label}
          </option>
        ))}
      </select>
    </span>
  );
}

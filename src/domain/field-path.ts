/**
 * The value a field path such as `fields[2].validation.minLength` or `settings.timezone` names in
 * a request body, shown as an error's `provided`: strings cut to 100 characters, a large object
 * or array summarised rather than echoed whole.
 */
export function valueAtPath(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (cur === null || typeof cur !== "object") return null;
    const key = m[1] ?? Number(m[2]);
    if (!Object.hasOwn(cur, key)) return null;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return shown(cur);
}

const MAX_SHOWN = 100;

function shown(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "string") return v.length > MAX_SHOWN ? v.slice(0, MAX_SHOWN) + "…" : v;
  if (v === null || typeof v !== "object") return v;
  const json = JSON.stringify(v);
  if (json.length <= 200) return v;
  return Array.isArray(v) ? `an array of ${v.length}` : "an object";
}

type Json = Record<string, any>;

/**
 * A copy of a JSON Schema where every object that names its properties allows no others, so a
 * validation fails on any field the document does not declare. `additionalProperties: true`
 * beside named properties is closed too (it is how a model let an undeclared field through); a
 * map (additionalProperties: a schema, or no named properties) stays a map; allOf parts are left
 * alone (each sees only its own properties).
 */
export function closed(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((x) => closed(x, inAllOf));
  if (!schema || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = closed(v, k === "allOf");
  const named = Object.keys(out.properties ?? {}).length > 0;
  if (!inAllOf && out.type === "object" && named && (out.additionalProperties === undefined || out.additionalProperties === true) && out.patternProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

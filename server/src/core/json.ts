/** A JSON value as the API server sees it after YAML/JSON decoding. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Equality as structured-merge-diff compares values (value/equals.go): numbers numerically
 * (3 == 3.0), a number never equals a string ("1" != 1), map key order is irrelevant,
 * list order is not.
 */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  if (typeof a === 'object') {
    const bo = b as JsonObject;
    const ak = Object.keys(a);
    if (ak.length !== Object.keys(bo).length) return false;
    return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(a[k], bo[k]));
  }
  return false;
}

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

/**
 * Whether `value` nests deeper than `limit` levels (a scalar is one level). Iterative, so it is
 * safe on any input: a live object may nest 10,000 levels (the API server's JSON limit), deeper
 * than the recursive walks of the analysis can go.
 */
export function jsonDepthExceeds(value: JsonValue | undefined, limit: number): boolean {
  const stack: [JsonValue, number][] = [];
  if (value !== undefined) stack.push([value, 1]);
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(v)) for (const item of v) stack.push([item, depth + 1]);
    else if (isJsonObject(v)) for (const key in v) stack.push([v[key]!, depth + 1]);
  }
  return false;
}

/**
 * A copy of `value` cut at `limit` levels: what lies deeper is replaced by `cut` (iterative, for
 * the same reason as jsonDepthExceeds). Returns `value` itself when nothing is cut.
 */
export function jsonCutAt(value: JsonValue, limit: number, cut: JsonValue): JsonValue {
  if (!jsonDepthExceeds(value, limit)) return value;
  const root: { v: JsonValue } = { v: null };
  const stack: { from: JsonValue; depth: number; put: (v: JsonValue) => void }[] = [{ from: value, depth: 1, put: (v) => (root.v = v) }];
  while (stack.length > 0) {
    const { from, depth, put } = stack.pop()!;
    if (depth > limit) {
      put(cut);
    } else if (Array.isArray(from)) {
      const out: JsonValue[] = new Array<JsonValue>(from.length).fill(null);
      put(out);
      from.forEach((item, i) => stack.push({ from: item, depth: depth + 1, put: (v) => (out[i] = v) }));
    } else if (isJsonObject(from)) {
      const out: JsonObject = {};
      put(out);
      for (const key of Object.keys(from)) {
        // Placeholder first, so the copy keeps the key order.
        Object.defineProperty(out, key, { value: null, enumerable: true, writable: true, configurable: true });
        stack.push({ from: from[key]!, depth: depth + 1, put: (v) => (out[key] = v) });
      }
    } else {
      put(from);
    }
  }
  return root.v;
}

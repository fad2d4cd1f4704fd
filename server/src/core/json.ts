/** A JSON value as the API server sees it after YAML/JSON decoding. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Sets an own key of a plain object. `__proto__` is a legal JSON and YAML key (JSON.parse makes it
 * an own key); plain assignment would set the object's prototype instead and lose the key.
 */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
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
  if (value === undefined) return false;
  if (limit < 1) return true;
  // Only collections are stacked (a value's children sit one level below it, scalars included),
  // in two plain arrays: this runs over every document read, some of them megabytes of schema.
  if (value === null || typeof value !== 'object') return false;
  const values: (JsonValue[] | JsonObject)[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const below = depths.pop()! + 1;
    if (Array.isArray(v)) {
      if (v.length > 0 && below > limit) return true;
      for (const item of v) {
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(below);
        }
      }
    } else {
      for (const key in v) {
        if (below > limit) return true;
        const item = v[key]!;
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(below);
        }
      }
    }
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
  const stack: { from: JsonValue; depth: number; put: (v: JsonValue) => void }[] = [
    { from: value, depth: 1, put: (v) => (root.v = v) },
  ];
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

/** The value at a chain of map keys (strings) and list indexes (numbers); undefined where the value does not have it. */
export function jsonAt(value: JsonValue | undefined, steps: readonly (string | number)[]): JsonValue | undefined {
  let v = value;
  for (const step of steps) {
    if (typeof step === 'number') v = Array.isArray(v) ? v[step] : undefined;
    else v = isJsonObject(v) ? v[step] : undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

/**
 * One text for equal JSON, whatever the order of its maps' keys: for telling whether two values are
 * the same (never what Go would print: see goJsonValue in ssa/field-set.ts). Undefined reads as null.
 */
export function canonicalJson(v: JsonValue | undefined): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isJsonObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

import { isJsonObject, jsonEqual, type JsonValue } from '../json';

/**
 * One step of a field path, as structured-merge-diff's fieldpath.PathElement
 * (fieldpath/element.go): exactly one of a struct field / map key, the key fields of an item of an
 * associative list (x-kubernetes-list-type: map), the value of a set item (list-type: set), or
 * a list index.
 */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: Readonly<Record<string, JsonValue>> }
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'index'; readonly index: number };

export type FieldPath = readonly PathElement[];

export const field = (name: string): PathElement => ({ kind: 'field', name });
export const key = (fields: Record<string, JsonValue>): PathElement => ({ kind: 'key', fields });
export const setValue = (value: JsonValue): PathElement => ({ kind: 'value', value });
export const index = (i: number): PathElement => ({ kind: 'index', index: i });

/**
 * A path as the API server prints it in conflict messages and `details.causes[].field`
 * (fieldpath/element.go PathElement.String, value/value.go ToString):
 * `.spec.template.spec.containers[name="app"].ports[containerPort=8080,protocol="TCP"]`,
 * `.metadata.finalizers[="example.com/protect"]`, `.spec.args[3]`.
 * Field names are printed raw, so a name holding a dot (`app.kubernetes.io/name`) reads ambiguously;
 * see parsePath.
 */
export function formatPath(path: FieldPath): string {
  return path.map(formatElement).join('');
}

export function formatElement(e: PathElement): string {
  switch (e.kind) {
    case 'field':
      return `.${e.name}`;
    case 'key':
      // Key fields are stored sorted by name (value.FieldList.Sort); Go compares bytes, which for
      // the ASCII names Kubernetes uses is the same as comparing UTF-16 units.
      return `[${sortedKeyNames(e.fields)
        .map((name) => `${name}=${formatValue(e.fields[name]!)}`)
        .join(',')}]`;
    case 'value':
      return `[=${formatValue(e.value)}]`;
    case 'index':
      return `[${e.index}]`;
  }
}

function sortedKeyNames(fields: Readonly<Record<string, JsonValue>>): string[] {
  return Object.keys(fields).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** value.ToString: strings Go-quoted (%q), ints bare, floats %v, lists `[a,b]`, maps `k=v` run together. */
export function formatValue(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatNumber(v);
  if (Array.isArray(v)) return `[${v.map(formatValue).join(',')}]`;
  return sortedKeyNames(v)
    .map((k) => `${k}=${formatValue(v[k]!)}`)
    .join('');
}

// The server holds decoded JSON integers as int64 (printed bare) and other numbers as float64,
// printed by %v = strconv 'g' with the shortest digits: exponent form when exp < -4 || exp >= 6
// (strconv/ftoa.go), e.g. 1234567.5 prints as 1.2345675e+06.
function formatNumber(n: number): string {
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${Math.abs(e) < 10 ? '0' : ''}${Math.abs(e)}`;
  return String(n);
}

const GO_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** strconv.Quote: printable runes (unicode.IsPrint) as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const esc = GO_ESCAPES[ch];
    if (esc) out += esc;
    else if (GO_PRINTABLE.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp >= 0xd800 && cp <= 0xdfff)
        out += '\\ufffd'; // a lone surrogate is not valid UTF-8
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return `${out}"`;
}

/** Reads a Go double-quoted string at `text[start]`; returns the value and the index after it. */
function goUnquote(text: string, start: number): { value: string; end: number } | undefined {
  if (text[start] !== '"') return undefined;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return { value: new TextDecoder().decode(Uint8Array.from(bytes)), end: i + 1 };
    if (c !== '\\') {
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...encoder.encode(ch));
      i += ch.length;
      continue;
    }
    const e = text[i + 1];
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
    if (e !== undefined && simple[e] !== undefined) {
      bytes.push(simple[e]!);
      i += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = text.slice(i + 2, i + 2 + len);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) return undefined;
      const n = parseInt(hex, 16);
      if (e === 'x') bytes.push(n);
      else {
        if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
        bytes.push(...encoder.encode(String.fromCodePoint(n)));
      }
      i += 2 + len;
    } else if (e !== undefined && /[0-7]/.test(e)) {
      const oct = text.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return undefined;
      bytes.push(parseInt(oct, 8));
      i += 4;
    } else return undefined;
  }
  return undefined;
}

/**
 * The inverse of formatPath. A field name runs to the next `.` or `[`, unless `fieldNamesAt` knows
 * the names that exist below a path (e.g. the keys of the manifest's map there): then the longest
 * known name that fits wins, so `.metadata.labels.app.kubernetes.io/name` finds the label
 * `app.kubernetes.io/name`. Undefined when the text is not a path.
 */
export function parsePath(
  text: string,
  fieldNamesAt?: (parent: FieldPath) => Iterable<string> | undefined,
): FieldPath | undefined {
  const path: PathElement[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '.') {
      const naiveEnd = findFieldEnd(text, i + 1);
      let name = text.slice(i + 1, naiveEnd);
      for (const known of fieldNamesAt?.(path) ?? []) {
        const after = i + 1 + known.length;
        const fits =
          text.startsWith(known, i + 1) && (after === text.length || text[after] === '.' || text[after] === '[');
        if (fits && known.length > name.length) name = known;
      }
      path.push(field(name));
      i += 1 + name.length;
    } else if (text[i] === '[') {
      const parsed = parseBracket(text, i + 1);
      if (!parsed) return undefined;
      path.push(parsed.element);
      i = parsed.end;
    } else return undefined;
  }
  return path;
}

function findFieldEnd(text: string, from: number): number {
  let j = from;
  while (j < text.length && text[j] !== '.' && text[j] !== '[') j++;
  return j;
}

function parseBracket(text: string, from: number): { element: PathElement; end: number } | undefined {
  if (text[from] === '=') {
    const v = parseValue(text, from + 1);
    if (!v || text[v.end] !== ']') return undefined;
    return { element: setValue(v.value), end: v.end + 1 };
  }
  const indexMatch = /^(0|[1-9][0-9]*)\]/.exec(text.slice(from, from + 24));
  if (indexMatch) return { element: index(Number(indexMatch[1])), end: from + indexMatch[0].length };
  const fields: Record<string, JsonValue> = {};
  let i = from;
  for (;;) {
    const eq = text.indexOf('=', i);
    if (eq < 0) return undefined;
    const name = text.slice(i, eq);
    if (name === '' || /[\],"]/.test(name)) return undefined;
    const v = parseValue(text, eq + 1);
    if (!v) return undefined;
    fields[name] = v.value;
    i = v.end;
    if (text[i] === ']') return { element: key(fields), end: i + 1 };
    if (text[i] !== ',') return undefined;
    i++;
  }
}

/** A scalar as value.ToString prints it: a Go-quoted string, a number, true/false or null. */
function parseValue(text: string, from: number): { value: JsonValue; end: number } | undefined {
  if (text[from] === '"') return goUnquote(text, from);
  const m = /^(?:null|true|false|[-+]?(?:Inf|NaN)|-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?)/.exec(
    text.slice(from, from + 64),
  );
  if (!m) return undefined;
  const word = m[0];
  const value: JsonValue = word === 'null' ? null : word === 'true' ? true : word === 'false' ? false : Number(word);
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  return { value, end: from + word.length };
}

/**
 * The value a path points at, read without a schema: fields, indexes, set values and list keys
 * compared as JSON; undefined where the value does not have it (merge.ts valueAtPath reads it with
 * the schema). `unsetKeysMatch`: a key field an item does not write matches, as in a rendered object
 * that leaves a key to its default (a port without `protocol`).
 */
export function valueAtFieldPath(
  value: JsonValue | undefined,
  path: FieldPath,
  options: { unsetKeysMatch?: boolean } = {},
): JsonValue | undefined {
  let v = value;
  for (const el of path) {
    if (v === undefined) return undefined;
    if (el.kind === 'field') v = isJsonObject(v) ? v[el.name] : undefined;
    else v = Array.isArray(v) ? v[listItemIndex(v, el, options)] : undefined;
  }
  return v;
}

/** The index of the list item a path element names (for an index, the index itself); -1 when no item matches. */
export function listItemIndex(
  list: readonly JsonValue[],
  el: Exclude<PathElement, { kind: 'field' }>,
  options: { unsetKeysMatch?: boolean } = {},
): number {
  if (el.kind === 'index') return el.index;
  if (el.kind === 'value') return list.findIndex((item) => jsonEqual(item, el.value));
  return list.findIndex(
    (item) =>
      isJsonObject(item) &&
      Object.entries(el.fields).every(
        ([k, want]) => (options.unsetKeysMatch && item[k] === undefined) || jsonEqual(item[k], want),
      ),
  );
}

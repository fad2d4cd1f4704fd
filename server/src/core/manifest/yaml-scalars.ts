// How kubectl turns YAML scalars into JSON values.
//
// kubectl reads manifests with sigs.k8s.io/yaml, which decodes with its fork of go-yaml v2
// (sigs.k8s.io/yaml/goyaml.v2/resolve.go, decode.go) into interface{} and then converts to JSON
// (sigs.k8s.io/yaml/yaml.go convertToJSONableObject). These are YAML 1.1 rules with go-yaml's own
// twists, neither the `yaml` package's 1.2 core schema nor its 1.1 schema:
//   - `y`, `yes`, `on`, ... are booleans; `0755` is octal; `0o755`, `0x1F`, `0b101` are ints (Go's
//     strconv.ParseInt with base 0); underscores are dropped before reading a number (`1_000`);
//   - sexagesimal `1:20` stays a string (the yaml package's 1.1 schema reads 80);
//   - timestamps stay strings when decoded into interface{} (decode.go keeps n.value);
//   - `.inf` / `.nan` resolve to floats that encoding/json then refuses ("json: unsupported value").
// The table in test/fixtures/manifest/scalars.yaml is checked against the real kubectl.
import type { JsonValue } from '../json';

/** A resolved scalar: a JSON value, or a number JSON cannot carry (±Inf, NaN), or a decode error. */
export type ScalarResolution =
  | {
      readonly ok: true;
      readonly value: null | boolean | number | string;
      /** Go decoded a float64 (`1e3`, `1.0`): matters only for map keys, which format floats apart. */
      readonly float: boolean;
    }
  | { readonly ok: false; readonly message: string };

const TAG_PREFIX = 'tag:yaml.org,2002:';
const STR = `${TAG_PREFIX}str`;
const BINARY = `${TAG_PREFIX}binary`;
const INT = `${TAG_PREFIX}int`;
const FLOAT = `${TAG_PREFIX}float`;
const BOOL = `${TAG_PREFIX}bool`;
const NULL = `${TAG_PREFIX}null`;
const TIMESTAMP = `${TAG_PREFIX}timestamp`;

type Resolved = { tag: string; value: null | boolean | number | string };

// resolve.go resolveMapList
const RESOLVE_MAP = new Map<string, Resolved>();
for (const [value, tag, words] of [
  [true, BOOL, ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']],
  [false, BOOL, ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']],
  [null, NULL, ['', '~', 'null', 'Null', 'NULL']],
  [Number.NaN, FLOAT, ['.nan', '.NaN', '.NAN']],
  [Number.POSITIVE_INFINITY, FLOAT, ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']],
  [Number.NEGATIVE_INFINITY, FLOAT, ['-.inf', '-.Inf', '-.INF']],
] as const) {
  for (const word of words) RESOLVE_MAP.set(word, { tag, value });
}

// resolve.go resolveTable: the first character decides which readings are tried at all.
function hint(text: string): 'map' | 'float' | 'number' | undefined {
  if (text === '') return 'map';
  const c = text[0]!;
  if (c === '+' || c === '-' || (c >= '0' && c <= '9')) return 'number';
  if ('yYnNtTfFoO~'.includes(c)) return 'map';
  if (c === '.') return 'float';
  return undefined;
}

// resolve.go yamlStyleFloat
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const DIGITS: Record<number, RegExp> = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ };
const PREFIX: Record<number, string> = { 2: '0b', 8: '0o', 16: '0x' };

/** Go's strconv.ParseInt(s, base, 64) / ParseUint (underscores already removed); undefined on error. */
function goParseInt(s: string, base: 0 | 2, unsigned: boolean): bigint | undefined {
  let sign = 1n;
  let body = s;
  if (body.startsWith('+') || body.startsWith('-')) {
    if (unsigned) return undefined;
    if (body[0] === '-') sign = -1n;
    body = body.slice(1);
  }
  let radix = base === 2 ? 2 : 10;
  if (base === 0) {
    const p = body.slice(0, 2).toLowerCase();
    if (p === '0x') [radix, body] = [16, body.slice(2)];
    else if (p === '0b') [radix, body] = [2, body.slice(2)];
    else if (p === '0o') [radix, body] = [8, body.slice(2)];
    else if (body.length > 1 && body[0] === '0') [radix, body] = [8, body.slice(1)];
  }
  if (!DIGITS[radix]!.test(body)) return undefined;
  const magnitude = BigInt(radix === 10 ? body : `${PREFIX[radix]}${body}`);
  const n = sign * magnitude;
  if (unsigned ? n > UINT64_MAX : n < INT64_MIN || n > INT64_MAX) return undefined;
  return n;
}

/** Go's strconv.ParseFloat for the decimal forms that reach it; undefined when out of range. */
function goParseFloat(s: string): number | undefined {
  const f = Number(s);
  return Number.isFinite(f) ? f : undefined;
}

/** resolve.go resolve(tag, in) for the tags it knows; `tag` is '' for a plain untagged scalar. */
function resolve(tag: string, text: string): Resolved {
  const h = hint(text);
  if (h !== undefined && tag !== STR && tag !== BINARY) {
    const known = RESOLVE_MAP.get(text);
    if (known) return known;
    if (h === 'float') {
      // Go's ParseFloat on the raw text: `.5`, `.5e3`; underscores only between digits.
      if (/^\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+)?$/.test(text)) {
        const f = goParseFloat(text.replace(/_/g, ''));
        if (f !== undefined) return { tag: FLOAT, value: f };
      }
    } else if (h === 'number') {
      // Timestamps (2001-12-14, ...) resolve to !!timestamp, but decoding into interface{} keeps
      // the original text, so they end up as the same string this function returns below.
      if ((tag === '' || tag === TIMESTAMP) && /^[0-9]{4}-/.test(text) && looksLikeTimestamp(text)) {
        return { tag: TIMESTAMP, value: text };
      }
      const plain = text.replace(/_/g, '');
      const int = goParseInt(plain, 0, false) ?? goParseInt(plain, 0, true);
      if (int !== undefined) return { tag: INT, value: Number(int) };
      if (YAML_STYLE_FLOAT.test(plain)) {
        const f = goParseFloat(plain);
        if (f !== undefined) return { tag: FLOAT, value: f };
      }
      if (plain.startsWith('0b')) {
        const b = goParseInt(plain.slice(2), 2, false) ?? goParseInt(plain.slice(2), 2, true);
        if (b !== undefined) return { tag: INT, value: Number(b) };
      } else if (plain.startsWith('-0b')) {
        const b = goParseInt(`-${plain.slice(3)}`, 2, false);
        if (b !== undefined) return { tag: INT, value: Number(b) };
      }
    }
  }
  return { tag: STR, value: text };
}

// resolve.go allowedTimestampFormats, read loosely: only used to keep such text a string, which
// every other reading would also do, so precision here does not change a value.
function looksLikeTimestamp(text: string): boolean {
  return /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]*)?(Z|[-+][0-9]{1,2}(:[0-9]{2})?)?)?$/.test(
    text,
  );
}

const RESOLVABLE = new Set(['', STR, BOOL, INT, FLOAT, NULL, TIMESTAMP]);

/**
 * The value kubectl reads for a scalar.
 * @param text the scalar's value as the YAML parser read it (folded, unescaped)
 * @param plain whether it was written without quotes and not as a block scalar (`|`, `>`)
 * @param tag the explicit tag in long form (`tag:yaml.org,2002:int`, `!custom`), or undefined
 */
export function resolveScalar(text: string, plain: boolean, tag: string | undefined): ScalarResolution {
  if (tag === undefined || tag === '') {
    // decode.go scalar(): a quoted or block scalar without a tag is a string.
    if (!plain) return { ok: true, value: text, float: false };
    const r = resolve('', text);
    return { ok: true, value: r.value, float: r.tag === FLOAT };
  }
  if (tag === BINARY) {
    const decoded = decodeBase64(text);
    return decoded === undefined
      ? { ok: false, message: `!!binary value contains invalid base64 data` }
      : { ok: true, value: decoded, float: false };
  }
  // Unknown tags (`!Ref`, `!`) are not resolvable: the text is kept as a string.
  if (!RESOLVABLE.has(tag)) return { ok: true, value: text, float: false };
  const r = resolve(tag, text);
  if (r.tag === tag || tag === STR || tag === TIMESTAMP) return { ok: true, value: r.value, float: r.tag === FLOAT };
  if (tag === FLOAT && r.tag === INT) return { ok: true, value: r.value, float: true };
  return { ok: false, message: `cannot decode ${shortTag(r.tag)} \`${text}\` as a ${shortTag(tag)}` };
}

function shortTag(tag: string): string {
  return tag.startsWith(TAG_PREFIX) ? `!!${tag.slice(TAG_PREFIX.length)}` : tag;
}

function decodeBase64(text: string): string | undefined {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) return undefined;
  const binary = atob(compact);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  // encoding/json writes invalid UTF-8 as U+FFFD, as TextDecoder does.
  return new TextDecoder().decode(bytes);
}

/**
 * The JSON object key kubectl makes of a resolved map key (yaml.go convertToJSONableObject):
 * `on:` becomes "true", `0x10:` "16", `1.5:` "1.5" (float32 'g' formatting); a null key is an error.
 */
export function jsonKeyOf(
  value: JsonValue,
  float: boolean,
): { ok: true; key: string } | { ok: false; message: string } {
  if (typeof value === 'string') return { ok: true, key: value };
  if (typeof value === 'boolean') return { ok: true, key: String(value) };
  if (typeof value === 'number') {
    if (!float && Number.isInteger(value)) return { ok: true, key: BigInt(value).toString() };
    return { ok: true, key: formatFloat32Key(value) };
  }
  return { ok: false, message: `unsupported map key: ${value === null ? 'null' : 'a collection'}` };
}

// strconv.FormatFloat(f, 'g', -1, 32) with go-yaml's spellings of the special values: the shortest
// digits that read back to the same float32, exponent form when exp < -4 || exp >= 6
// (strconv/ftoa.go, %g with shortest precision).
function formatFloat32Key(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Number.POSITIVE_INFINITY) return '.inf';
  if (f === Number.NEGATIVE_INFINITY) return '-.inf';
  const f32 = Math.fround(f);
  let digits = 1;
  while (digits < 9 && Math.fround(Number(f32.toPrecision(digits))) !== f32) digits++;
  const shortest = Number(f32.toPrecision(digits));
  const [mantissa, exp] = shortest.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${Math.abs(e) < 10 ? '0' : ''}${Math.abs(e)}`;
  return shortest.toString();
}

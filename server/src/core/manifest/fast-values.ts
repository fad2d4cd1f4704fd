// The values of a YAML document without a node tree: the cheap way to read the many documents that
// never need a position (nothing is found in them, nobody hovers them). A position is needed only
// for something shown; manifest.ts then parses the document again, fully, with the `yaml` package.
//
// A reader of the block YAML manifests are written in reads the structure line by line (readByLines,
// below), else js-yaml, about ten times faster than the `yaml` package builds its nodes; every plain
// scalar goes through the same kubectl rules as the full parse (yaml-scalars.ts), so the values are
// kubectl's. Where the two parsers could part, this path declines and the full parse
// decides, with the problems it reports: anything js-yaml refuses (duplicate keys, syntax errors),
// and, before reading at all, every construct whose meaning depends on decoder details the full
// parse reproduces and js-yaml does not (anchors, aliases and merge keys with go-yaml's limits, tags,
// directives, complex keys, tabs, a byte order mark, carriage returns, `__proto__`, content on a
// `---` line, and a quoted scalar or flow collection that goes on to the next line, whose
// indentation js-yaml does not check). A plain scalar
// that is not a string is taken only where it would be the same map key both ways (`3`, `true`):
// js-yaml turns keys into strings itself. test/unit/core/manifest/fast-values.test.ts holds both ways equal on
// every manifest fixture, and the fuzz campaign on its generated documents.
import { FAILSAFE_SCHEMA, Type, load } from 'js-yaml';
import { jsonDepthExceeds, type JsonObject, type JsonValue } from '../json';
import { jsonKeyOf, resolveScalar } from './yaml-scalars';

class Declined extends Error {}

/** A plain scalar's value by kubectl's rules, where it is the same map key both ways; else Declined. */
function kubectlPlain(text: string): JsonValue {
  // Text whose first character starts no other reading (yaml-scalars.ts hint) is a string.
  const c = text.charCodeAt(0);
  if (c < 128 && ONLY_TEXT_STARTS[c]) return text;
  const r = resolveScalar(text, true, undefined);
  if (!r.ok || r.float) throw new Declined();
  if (typeof r.value === 'string') return r.value;
  // js-yaml makes a key of String(value); kubectl of jsonKeyOf(value). Taken where both are the text.
  const key = jsonKeyOf(r.value, false);
  if (!key.ok || key.key !== text || String(r.value) !== text) throw new Declined();
  return r.value;
}

/** Letters and other characters a scalar that resolves to anything but a string never starts with. */
const ONLY_TEXT_STARTS = new Uint8Array(128).map((_, c) =>
  c > 32 && !'+-0123456789yYnNtTfFoO~.'.includes(String.fromCharCode(c)) ? 1 : 0,
);

const kubectlPlainScalar = new Type('tag:yaml.org,2002:kch-plain', {
  kind: 'scalar',
  resolve: () => true,
  construct: kubectlPlain,
});

const schema = FAILSAFE_SCHEMA.extend({ implicit: [kubectlPlainScalar] });

// An anchor, alias or tag indicator where a node may start; a merge key; a complex key; a directive.
// Also a node on the line of a `---` marker, and a `...` marker. Three plain expressions, each
// tried over the text, are faster than the one alternation that starts with `(?:^|[\s,[{])`.
const UNSURE_AFTER_SPACE = /[\s,[{](?:[&*!]\S|<<[ \t]*:|\?(?:\s|$))/;
const UNSURE_AT_LINE_START = /^(?:[&*!]\S|<<[ \t]*:|\?(?:\s|$)|%|---[ \t]+[^\s#]|\.\.\.)/m;
const UNSURE_ANYWHERE = /[\t\r\uFEFF]|__proto__/;
const unsure = (source: string): boolean =>
  UNSURE_ANYWHERE.test(source) || UNSURE_AFTER_SPACE.test(source) || UNSURE_AT_LINE_START.test(source);

/**
 * The document's value as kubectl decodes it, or undefined where this path declines (the full
 * parse then reads it). `maxDepth` is the nesting the analysis takes on; deeper is declined too.
 */
export function fastDocumentValue(source: string, maxDepth: number): { value: JsonValue } | undefined {
  if (unsure(source)) return undefined;
  const byLines = readByLines(source, maxDepth);
  if (byLines !== undefined) return { value: byLines };
  if (spansLines(source) || nestingBound(source) > maxDepth) return undefined;
  let value: unknown;
  try {
    value = load(source, { schema, json: false });
  } catch {
    return undefined;
  }
  if (value === undefined) value = null;
  if (jsonDepthExceeds(value as JsonValue, maxDepth)) return undefined;
  return { value: value as JsonValue };
}

/**
 * A bound on how deep the document nests, read before js-yaml, which recurses per level: a
 * recursion run into the stack's end is no way to meet a limit (V8 may even stop the process when
 * it compiles a regular expression there). Per line: two levels per column of indentation (a
 * block sequence may sit at its key's column), one per `- ` entry, one per bracket opened (flow
 * collections close on their line here: spansLines declines the others), and the map an entry
 * may hold. Anything in quotes only raises it; a document over the limit goes to the full parse.
 */
function nestingBound(source: string): number {
  let bound = 0;
  let indent = 0;
  let atStart = true;
  let more = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === NEWLINE) {
      bound = Math.max(bound, 2 * indent + more + 2);
      indent = 0;
      more = 0;
      atStart = true;
    } else if (atStart && c === SPACE) indent++;
    else {
      atStart = false;
      if (c === OPEN_BRACKET || c === OPEN_BRACE) more++;
      else if (c === DASH) {
        const next = source.charCodeAt(i + 1);
        if (next === SPACE || next === NEWLINE || Number.isNaN(next)) more++;
      }
    }
  }
  return Math.max(bound, 2 * indent + more + 2);
}

/**
 * Whether a quoted scalar or a flow collection may go on past the end of a line: a quote that
 * opens where a scalar may start, or a bracket, still open at the line's end (js-yaml does not
 * check how the lines that continue them are indented). A quote inside a plain scalar after a
 * space (`a 'b`) counts too, and so does a JSON document; that only sends them to the full parse.
 * One pass over the character codes: most characters are none of the few that matter.
 */
function spansLines(source: string): boolean {
  const n = source.length;
  let flow = 0;
  let lineStart = true;
  let i = 0;
  while (i < n) {
    const c = source.charCodeAt(i);
    if (c >= 128 || !SPECIAL[c]) {
      lineStart = false;
      i++;
      continue;
    }
    if (c === NEWLINE) {
      if (flow > 0) return true;
      lineStart = true;
      i++;
      continue;
    }
    const before = lineStart ? SPACE : source.charCodeAt(i - 1);
    if (c === HASH) {
      if (before === SPACE) {
        // A comment: to the end of the line.
        const end = source.indexOf('\n', i);
        if (end < 0) break;
        i = end;
        continue;
      }
    } else if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
      if (before < 128 && QUOTE_MAY_FOLLOW[before]) {
        const end = quotedEnd(source, i, c);
        if (end < 0) return true;
        i = end + 1;
        lineStart = false;
        continue;
      }
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) flow++;
    else if (flow > 0) flow--; // ] or }
    lineStart = false;
    i++;
  }
  return flow > 0;
}

/** Where the quoted scalar opened at `start` closes on its own line, or -1 (it goes on, or never closes). */
function quotedEnd(source: string, start: number, quote: number): number {
  for (let j = start + 1; j < source.length; j++) {
    const d = source.charCodeAt(j);
    if (d === NEWLINE) return -1;
    if (quote === DOUBLE_QUOTE) {
      if (d === BACKSLASH) {
        // An escaped line break continues the scalar on the next line.
        if (source.charCodeAt(j + 1) === NEWLINE) return -1;
        j++;
      } else if (d === DOUBLE_QUOTE) return j;
    } else if (d === SINGLE_QUOTE) {
      if (source.charCodeAt(j + 1) !== SINGLE_QUOTE) return j;
      j++;
    }
  }
  return -1;
}

const [NEWLINE, SPACE, HASH, DOUBLE_QUOTE, SINGLE_QUOTE, BACKSLASH, OPEN_BRACKET, OPEN_BRACE, DASH] = [
  '\n',
  ' ',
  '#',
  '"',
  "'",
  '\\',
  '[',
  '{',
  '-',
].map((c) => c.charCodeAt(0)) as [number, number, number, number, number, number, number, number, number];
const codes = (chars: string): Uint8Array => {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
};
/** The characters spansLines looks at; every other one only ends a line's start. */
const SPECIAL = codes('\n"\'#[]{}');
/** What may come right before a quote that opens a quoted scalar. */
const QUOTE_MAY_FOLLOW = codes(' [{,:-?');

// The block YAML that manifests are written in, read line by line: mappings, sequences, plain
// scalars (folded over lines too), block scalars, quoted scalars and flow collections on one line.
// That is all of most documents, and of a CRD's long schema in particular. A cold process reads
// them once, mostly before the optimizing compiler has caught up, and js-yaml's general reader
// (a state object, a snapshot per node, a call per character class) costs it there; this one is a
// few tight loops over each line's characters. It reads as js-yaml does (readPlainScalar,
// readBlockScalar, ...) and gives up on whatever else it meets (an indicator where a scalar would
// start, an escape it does not know, a line it cannot place): js-yaml then reads the document.
// test/unit/core/manifest/fast-values.test.ts holds it equal to the full parse.

/** Where the line reader gives up: js-yaml reads the document instead. */
const NOT_BY_LINES = new Declined();

// What js-yaml refuses as non-printable (its captured text), and any surrogate: left to js-yaml.
const NOT_PLAIN_TEXT = /[\x00-\x08\x0B-\x1F\x7F-\x9F\uD800-\uDFFF\uFFFE\uFFFF]/;

/**
 * The document's value read line by line, or undefined where this reader does not take it (js-yaml
 * then does): also where it nests deeper than `maxDepth` (as jsonDepthExceeds counts). Only for a
 * text `unsure` passed; exported for the tests.
 */
export function readByLines(source: string, maxDepth: number): JsonValue | undefined {
  if (NOT_PLAIN_TEXT.test(source)) return undefined;
  try {
    return new LineReader(source, maxDepth).document();
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

const [PIPE, GREATER, PLUS] = ['|', '>', '+'].map((c) => c.charCodeAt(0)) as [number, number, number];
const [COLON, COMMA, CLOSE_BRACKET, CLOSE_BRACE] = [':', ',', ']', '}'].map((c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
];
/** Characters that may not start a plain scalar (js-yaml readPlainScalar); `-?:` may, before what is not a space. */
const NOT_PLAIN_START = codes(',[]{}#&*!|>\'"%@`');
const BEFORE_NON_SPACE = codes('-?:');
const FLOW_INDICATOR = codes(',[]{}');

class LineReader {
  private readonly lines: string[];
  /** The line to read next. */
  private i = 0;
  /** The level of the collection being read (the document's is 1). */
  private level = 0;
  /** The indentation of the line nextContent found. */
  private at = -1;

  constructor(
    source: string,
    private readonly maxDepth: number,
  ) {
    this.lines = source.split('\n');
    // A last line break ends the last line; it starts none.
    if (this.lines.length > 1 && this.lines[this.lines.length - 1] === '') this.lines.pop();
  }

  /** Into a collection whose entries are one level below it: none deeper than maxDepth. */
  private enter(): void {
    if (++this.level + 1 > this.maxDepth) throw NOT_BY_LINES;
  }

  document(): JsonValue {
    const lines = this.lines;
    // A `---` line carries nothing else here (`unsure` sent the others away).
    if (/^---(?: |$)/.test(lines[0]!)) this.i = 1;
    const first = this.nextContent();
    if (this.at !== 0) throw NOT_BY_LINES;
    this.i = first;
    const value = this.mapping(0);
    if (this.nextContent() < lines.length) throw NOT_BY_LINES;
    return value;
  }

  /** The first line from `i` that is neither blank nor only a comment; its indentation in `at` (-1: none). */
  private nextContent(): number {
    const lines = this.lines;
    for (let j = this.i; j < lines.length; j++) {
      const line = lines[j]!;
      const at = indentOf(line);
      if (at < line.length && line.charCodeAt(at) !== HASH) {
        this.at = at;
        return j;
      }
    }
    this.at = -1;
    return lines.length;
  }

  /** A block mapping whose first key starts at column `m` of line `i`. */
  private mapping(m: number): JsonObject {
    const lines = this.lines;
    const out: JsonObject = {};
    this.enter();
    for (;;) {
      const line = lines[this.i]!;
      const key = keyAt(line, m);
      if (key === undefined || Object.hasOwn(out, key)) throw NOT_BY_LINES;
      out[key] = this.valueAfter(line, keyEnd, m);
      const j = this.nextContent();
      this.i = j;
      const at = this.at;
      if (at < m) {
        this.level--;
        return out;
      }
      if (at > m) throw NOT_BY_LINES;
    }
  }

  /** A block sequence whose first `-` is at column `n` of line `i`. */
  private sequence(n: number): JsonValue[] {
    const lines = this.lines;
    const out: JsonValue[] = [];
    this.enter();
    for (;;) {
      const line = lines[this.i]!;
      const q = skipSpaces(line, n + 1);
      if (q >= line.length || line.charCodeAt(q) === HASH) out.push(this.below(n));
      else if (isEntry(line, q)) throw NOT_BY_LINES;
      else if (keyAt(line, q) !== undefined) out.push(this.mapping(q));
      else out.push(this.inline(line, q, n));
      const j = this.nextContent();
      this.i = j;
      const at = this.at;
      if (at > n) throw NOT_BY_LINES;
      if (at < n || !isEntry(lines[j]!, n)) {
        this.level--;
        return out;
      }
    }
  }

  /** The value of a key at column `m` whose text goes on at `p` (after its colon). */
  private valueAfter(line: string, p: number, m: number): JsonValue {
    const q = skipSpaces(line, p);
    if (q < line.length && line.charCodeAt(q) !== HASH) return this.inline(line, q, m);
    // On the lines below: more indented, or a sequence at the key's own column.
    const lines = this.lines;
    this.i++;
    const j = this.nextContent();
    if (j < lines.length) {
      const at = this.at;
      if (at > m || (at === m && isEntry(lines[j]!, m))) {
        this.i = j;
        return isEntry(lines[j]!, at) ? this.sequence(at) : this.mapping(at);
      }
    }
    return null;
  }

  /** A node on the lines below line `i` (an entry of a collection at column `n` with nothing after its indicator). */
  private below(n: number): JsonValue {
    const lines = this.lines;
    this.i++;
    const j = this.nextContent();
    const at = this.at;
    if (at <= n) return null;
    this.i = j;
    return isEntry(lines[j]!, at) ? this.sequence(at) : this.mapping(at);
  }

  /**
   * A scalar or flow collection that starts at column `q` of line `i`, in a collection at column
   * `n`; a plain scalar goes on over the lines indented more than `n` (js-yaml readPlainScalar).
   */
  private inline(line: string, q: number, n: number): JsonValue {
    const c = line.charCodeAt(q);
    if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE || c === OPEN_BRACKET || c === OPEN_BRACE) {
      const read =
        c === OPEN_BRACKET || c === OPEN_BRACE ? flowAt(line, q, this.maxDepth - this.level - 1) : quotedAt(line, q);
      if (!restIsComment(line, read.end)) throw NOT_BY_LINES;
      this.i++;
      return read.value;
    }
    if (c === PIPE || c === GREATER) return this.blockScalar(line, q, n);
    if (!plainMayStart(line, q)) throw NOT_BY_LINES;
    const lines = this.lines;
    let text = line.slice(q, plainEnd(line, q));
    let next = this.i + 1;
    // Folded on: a line more indented than the collection continues the scalar, one break a space,
    // each blank line between a newline; a comment ends it.
    while (!endedByComment && next < lines.length) {
      let j = next;
      while (j < lines.length && isBlank(lines[j]!)) j++;
      if (j >= lines.length) break;
      const more = lines[j]!;
      const at = indentOf(more);
      if (at <= n || more.charCodeAt(at) === HASH) break;
      if (!plainMayStart(more, at)) throw NOT_BY_LINES;
      text += (j === next ? ' ' : '\n'.repeat(j - next)) + more.slice(at, plainEnd(more, at));
      next = j + 1;
    }
    this.i = next;
    return kubectlPlain(text);
  }

  /**
   * A literal (`|`) or folded (`>`) block scalar whose header is at column `q` of line `i`, in a
   * collection at column `n`, as js-yaml readBlockScalar reads it. Not taken: an indentation
   * indicator, a line of only spaces (where its indentation is guessed), a folded scalar's
   * more-indented line, an empty scalar.
   */
  private blockScalar(line: string, q: number, n: number): string {
    const folded = line.charCodeAt(q) === GREATER;
    let p = q + 1;
    const chomp = line.charCodeAt(p);
    const keep = chomp === PLUS;
    const strip = chomp === DASH;
    if (keep || strip) p++;
    if (!restIsComment(line, p)) throw NOT_BY_LINES;
    const lines = this.lines;
    let indent = -1;
    let text = '';
    let read = false;
    let empty = 0;
    let j = this.i + 1;
    for (; j < lines.length; j++) {
      const body = lines[j]!;
      if (body === '') {
        empty++;
        continue;
      }
      const at = indentOf(body);
      if (at === body.length) throw NOT_BY_LINES;
      if (indent < 0) {
        if (at <= n) break;
        indent = at;
      } else if (at < indent) break;
      if (folded) {
        if (at > indent) throw NOT_BY_LINES;
        text += read && empty === 0 ? ' ' : '\n'.repeat(empty);
      } else text += '\n'.repeat(read ? 1 + empty : empty);
      text += body.slice(indent);
      read = true;
      empty = 0;
    }
    if (!read) throw NOT_BY_LINES;
    if (keep) text += '\n'.repeat(1 + empty);
    else if (!strip) text += '\n';
    this.i = j;
    return text;
  }
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === SPACE) i++;
  return i;
}

const skipSpaces = (line: string, p: number): number => {
  while (line.charCodeAt(p) === SPACE) p++;
  return p;
};

const isBlank = (line: string): boolean => indentOf(line) === line.length;

/** A block sequence entry at column `n`: `-` then a space or the line's end. */
function isEntry(line: string, n: number): boolean {
  if (line.charCodeAt(n) !== DASH) return false;
  const next = line.charCodeAt(n + 1);
  return next === SPACE || Number.isNaN(next);
}

/** After `p`: nothing, or spaces and a comment. */
function restIsComment(line: string, p: number): boolean {
  const q = skipSpaces(line, p);
  return q >= line.length || (q > p && line.charCodeAt(q) === HASH);
}

/** Whether a plain scalar may start at `q` (in a flow collection, `-?:` not before an indicator either). */
function plainMayStart(line: string, q: number, flow = false): boolean {
  const c = line.charCodeAt(q);
  if (c >= 128) return true;
  if (NOT_PLAIN_START[c]) return false;
  if (!BEFORE_NON_SPACE[c]) return true;
  const next = line.charCodeAt(q + 1);
  return !(next === SPACE || Number.isNaN(next) || (flow && next < 128 && FLOW_INDICATOR[next]));
}

/** Whether a comment ended the last plain scalar plainEnd read (kept here, not allocated per line). */
let endedByComment = false;

/**
 * Where the plain scalar from `q` ends on its line (trailing spaces left out; endedByComment says
 * whether a comment follows). A `: ` or a final `:` in it is a key js-yaml would meet: not taken.
 */
function plainEnd(line: string, q: number): number {
  endedByComment = false;
  let end = q;
  for (let k = q; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (c === SPACE) continue;
    if (c === HASH && line.charCodeAt(k - 1) === SPACE) {
      endedByComment = true;
      return end;
    }
    if (c === COLON) {
      const next = line.charCodeAt(k + 1);
      if (next === SPACE || Number.isNaN(next)) throw NOT_BY_LINES;
    }
    end = k + 1;
  }
  return end;
}

/** Where the text after the last key keyAt found starts (a result kept here, not allocated per key). */
let keyEnd = 0;

/**
 * The key of a block mapping entry at column `q` (a plain or quoted scalar, then `:` and a space
 * or the line's end; keyEnd is where its value starts); undefined where the line holds no such key.
 */
function keyAt(line: string, q: number): string | undefined {
  const c = line.charCodeAt(q);
  if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
    const read = quotedAt(line, q);
    const colon = skipSpaces(line, read.end);
    if (line.charCodeAt(colon) !== COLON) return undefined;
    const next = line.charCodeAt(colon + 1);
    if (next !== SPACE && !Number.isNaN(next)) throw NOT_BY_LINES;
    keyEnd = colon + 1;
    return read.value;
  }
  if (c === OPEN_BRACKET || c === OPEN_BRACE) return undefined;
  if (!plainMayStart(line, q)) throw NOT_BY_LINES;
  let end = q;
  for (let k = q; k < line.length; k++) {
    const ch = line.charCodeAt(k);
    if (ch === SPACE) continue;
    if (ch === HASH && line.charCodeAt(k - 1) === SPACE) return undefined;
    if (ch === COLON) {
      const next = line.charCodeAt(k + 1);
      if (next === SPACE || Number.isNaN(next)) {
        // An implicit key is at most 1024 characters (js-yaml refuses longer ones).
        if (end - q > 1000) throw NOT_BY_LINES;
        const text = line.slice(q, end);
        kubectlPlain(text);
        keyEnd = k + 1;
        return text;
      }
    }
    end = k + 1;
  }
  return undefined;
}

/** A quoted scalar that opens at `q` and closes on the same line. */
function quotedAt(line: string, q: number): { value: string; end: number } {
  const quote = line.charCodeAt(q);
  let value = '';
  let from = q + 1;
  for (let k = q + 1; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (quote === SINGLE_QUOTE) {
      if (c !== SINGLE_QUOTE) continue;
      value += line.slice(from, k);
      if (line.charCodeAt(k + 1) !== SINGLE_QUOTE) return { value, end: k + 1 };
      value += "'";
      k++;
      from = k + 1;
    } else if (c === DOUBLE_QUOTE) {
      return { value: value + line.slice(from, k), end: k + 1 };
    } else if (c === BACKSLASH) {
      const escaped = ESCAPES[line[k + 1] ?? ''];
      if (escaped === undefined) throw NOT_BY_LINES;
      value += line.slice(from, k) + escaped;
      k++;
      from = k + 1;
    }
  }
  throw NOT_BY_LINES;
}

/** The escapes of a double-quoted scalar this reader takes (the others are js-yaml's). */
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', '\\': '\\', '"': '"', '/': '/', r: '\r', '0': '\0' };

/**
 * A flow collection that opens at `q` and closes on the same line: `[a, b]`, `{a: b}`, nested;
 * `room` is how many levels may still be below it.
 */
function flowAt(line: string, q: number, room: number): { value: JsonValue; end: number } {
  const isMap = line.charCodeAt(q) === OPEN_BRACE;
  const close = isMap ? CLOSE_BRACE : CLOSE_BRACKET;
  const seq: JsonValue[] = [];
  const map: JsonObject = {};
  let p = skipSpaces(line, q + 1);
  if (line.charCodeAt(p) === close) return { value: isMap ? map : seq, end: p + 1 };
  if (room < 1) throw NOT_BY_LINES;
  for (;;) {
    if (isMap) {
      const key = flowItem(line, p, true, room - 1);
      const colon = key.end;
      if (line.charCodeAt(colon) !== COLON || line.charCodeAt(colon + 1) !== SPACE) throw NOT_BY_LINES;
      if (typeof key.value !== 'string' || Object.hasOwn(map, key.value)) throw NOT_BY_LINES;
      const value = flowItem(line, skipSpaces(line, colon + 1), false, room - 1);
      map[key.value] = value.value;
      p = value.end;
    } else {
      const item = flowItem(line, p, false, room - 1);
      seq.push(item.value);
      p = item.end;
    }
    p = skipSpaces(line, p);
    const c = line.charCodeAt(p);
    if (c === close) return { value: isMap ? map : seq, end: p + 1 };
    if (c !== COMMA) throw NOT_BY_LINES;
    p = skipSpaces(line, p + 1);
    if (line.charCodeAt(p) === close) throw NOT_BY_LINES;
  }
}

/** One entry of a flow collection at `p`; a key's text ends at its `:` (a value has none). */
function flowItem(line: string, p: number, key: boolean, room: number): { value: JsonValue; end: number } {
  const c = line.charCodeAt(p);
  if (c === OPEN_BRACKET || c === OPEN_BRACE) {
    if (key) throw NOT_BY_LINES;
    return flowAt(line, p, room);
  }
  if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) return quotedAt(line, p);
  if (!plainMayStart(line, p, true)) throw NOT_BY_LINES;
  let end = p;
  let k = p;
  for (; k < line.length; k++) {
    const ch = line.charCodeAt(k);
    if (ch === SPACE) continue;
    if (ch < 128 && FLOW_INDICATOR[ch]) break;
    if (ch === HASH && line.charCodeAt(k - 1) === SPACE) throw NOT_BY_LINES;
    if (ch === COLON) {
      if (key && line.charCodeAt(k + 1) === SPACE) break;
      throw NOT_BY_LINES;
    }
    end = k + 1;
  }
  if (k >= line.length) throw NOT_BY_LINES;
  const text = line.slice(p, end);
  const value = kubectlPlain(text);
  return { value: key ? text : value, end: key ? k : end };
}

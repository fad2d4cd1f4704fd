// The values of a YAML document without a node tree: the cheap way to read the many documents that
// never need a position (nothing is found in them, nobody hovers them). A position is needed only
// for something shown; manifest.ts then parses the document again, fully, with the `yaml` package.
//
// js-yaml reads the structure, about ten times faster than the `yaml` package builds its nodes, and
// every plain scalar goes through the same kubectl rules as the full parse (yaml-scalars.ts), so the
// values are kubectl's. Where the two parsers could part, this path declines and the full parse
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
import { jsonDepthExceeds, type JsonValue } from '../json';
import { jsonKeyOf, resolveScalar } from './yaml-scalars';

class Declined extends Error {}

const kubectlPlainScalar = new Type('tag:yaml.org,2002:kch-plain', {
  kind: 'scalar',
  resolve: () => true,
  construct: (text: string) => {
    const r = resolveScalar(text, true, undefined);
    if (!r.ok || r.float) throw new Declined();
    if (typeof r.value === 'string') return r.value;
    // js-yaml makes a key of String(value); kubectl of jsonKeyOf(value). Taken where both are the text.
    const key = jsonKeyOf(r.value, false);
    if (!key.ok || key.key !== text || String(r.value) !== text) throw new Declined();
    return r.value;
  },
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
  if (unsure(source) || spansLines(source) || nestingBound(source) > maxDepth) return undefined;
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

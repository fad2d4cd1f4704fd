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
// js-yaml turns keys into strings itself. test/unit/manifest-fast.test.ts holds both ways equal on
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
// Also a node on the line of a `---` marker, and a `...` marker.
const UNSURE = /(?:^|[\s,[{])[&*!]\S|(?:^|[\s,[{])<<[ \t]*:|(?:^|[\s,[{])\?(?:\s|$)|^%|^---[ \t]+[^\s#]|^\.\.\.|[\t\r\uFEFF]|__proto__/m;

/**
 * The document's value as kubectl decodes it, or undefined where this path declines (the full
 * parse then reads it). `maxDepth` is the nesting the analysis takes on; deeper is declined too.
 */
export function fastDocumentValue(source: string, maxDepth: number): { value: JsonValue } | undefined {
  if (UNSURE.test(source) || spansLines(source)) return undefined;
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
 * Whether a quoted scalar or a flow collection may go on past the end of a line: a quote that
 * opens where a scalar may start, or a bracket, still open at the line's end (js-yaml does not
 * check how the lines that continue them are indented). A quote inside a plain scalar after a
 * space (`a 'b`) counts too, and so does a JSON document; that only sends them to the full parse.
 */
function spansLines(source: string): boolean {
  let open: '"' | "'" | undefined;
  let flow = 0;
  let i = 0;
  const n = source.length;
  let lineStart = true;
  while (i < n) {
    const c = source[i]!;
    if (c === '\n') {
      if (open || flow > 0) return true;
      lineStart = true;
      i++;
      continue;
    }
    if (open === '"') {
      if (c === '\\') i += 2;
      else {
        if (c === '"') open = undefined;
        i++;
      }
      continue;
    }
    if (open === "'") {
      if (c === "'" && source[i + 1] === "'") i += 2;
      else {
        if (c === "'") open = undefined;
        i++;
      }
      continue;
    }
    const before = lineStart ? ' ' : source[i - 1]!;
    if (c === '#' && (before === ' ' || lineStart)) {
      // A comment: to the end of the line.
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if ((c === '"' || c === "'") && ' [{,:-?'.includes(before)) open = c;
    else if (c === '[' || c === '{') flow++;
    else if ((c === ']' || c === '}') && flow > 0) flow--;
    lineStart = false;
    i++;
  }
  return open !== undefined || flow > 0;
}

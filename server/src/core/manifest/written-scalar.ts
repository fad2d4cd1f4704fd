// Where a chain of map keys writes a one-line scalar, read off the lines of a document, with no
// node tree. Most findings sit on such a field (an existing object's `metadata.name`, a conflict's
// `spec.replicas`), and building the node tree only to place them was most of the time a check of
// existing objects took: a CustomResourceDefinition of 90 kB parsed fully to point at its name.
//
// Only for a document the values-first read took (fast-values.ts): it has no tabs, carriage
// returns, anchors, aliases, tags, complex keys, duplicate keys, or quoted scalars and flow
// collections that go on to another line, and every plain key in it is its own JSON key. What is
// left is block structure, and in it a line indented exactly as a map's entries is one of its
// entries (or an item of a block sequence that an entry holds at the entry's own indentation):
// block scalars, continued plain scalars and nested collections are all indented deeper. Anything
// else (a quoted key, a value on the next line, a flow collection, a block scalar) is declined, and
// the full parse answers. test/support/parse-agreement.ts holds every answer equal to the node
// tree's, on every fixture and fuzz input.
/** Where the key and its value are: one line (counted from the document's first), and columns, end excluded. */
export interface WrittenScalar {
  readonly line: number;
  readonly key: readonly [number, number];
  readonly value: readonly [number, number];
}

/** The key and one-line scalar value that `names` leads to in `source`, or undefined where unsure. */
export function writtenScalar(source: string, names: readonly string[]): WrittenScalar | undefined {
  if (names.length === 0 || !names.every((n) => PLAIN_KEY.test(n))) return undefined;
  let depth = 0;
  // The indentation of the map that holds the entry looked for (-1: the document's root, not yet
  // seen), and of the map that holds that map's own entry.
  let entryIndent = -1;
  let parentIndent = -1;
  let line = 0;
  for (let start = 0; start < source.length; line++) {
    let end = source.indexOf('\n', start);
    if (end < 0) end = source.length;
    const lineStart = start;
    start = end + 1;
    let i = lineStart;
    while (i < end && source.charCodeAt(i) === SPACE) i++;
    if (i === end || source.charCodeAt(i) === HASH) continue;
    const indent = i - lineStart;
    if (
      indent === 0 &&
      line === 0 &&
      source.startsWith('---', i) &&
      (i + 3 === end || source.charCodeAt(i + 3) === SPACE)
    )
      continue;
    if (indent <= parentIndent) return undefined; // the map ended without the key
    const item = source.charCodeAt(i) === DASH && (i + 1 === end || source.charCodeAt(i + 1) === SPACE);
    if (entryIndent < 0) {
      if (item) return undefined; // a sequence, not a map
      entryIndent = indent;
    }
    if (indent < entryIndent) return undefined;
    // Deeper: inside an entry's value. An item (`- `) at the entries' indentation is in the value
    // of the entry above it, and never starts with a key looked for.
    if (indent > entryIndent) continue;
    const name = names[depth]!;
    const afterKey = i + name.length;
    if (
      !source.startsWith(name, i) ||
      source.charCodeAt(afterKey) !== COLON ||
      (afterKey + 1 < end && source.charCodeAt(afterKey + 1) !== SPACE)
    )
      continue;
    let v = afterKey + 1;
    while (v < end && source.charCodeAt(v) === SPACE) v++;
    if (depth < names.length - 1) {
      // A map written in block style goes on below its key.
      if (v < end && source.charCodeAt(v) !== HASH) return undefined;
      parentIndent = entryIndent;
      entryIndent = -1;
      depth++;
      continue;
    }
    const valueEnd = scalarEnd(source, v, end);
    if (valueEnd === undefined || continues(source, start, entryIndent)) return undefined;
    return { line, key: [indent, indent + name.length], value: [v - lineStart, valueEnd - lineStart] };
  }
  return undefined;
}

/** Where the one-line scalar at `at` ends, or undefined when it is none (empty, a block scalar, a flow collection). */
function scalarEnd(source: string, at: number, end: number): number | undefined {
  if (at === end) return undefined;
  const c = source.charCodeAt(at);
  if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
    const close = quoteClose(source, at, end, c);
    if (close === undefined) return undefined;
    let rest = close + 1;
    while (rest < end && source.charCodeAt(rest) === SPACE) rest++;
    // Only a comment may follow, after a space.
    if (rest < end && (source.charCodeAt(rest) !== HASH || rest === close + 1)) return undefined;
    return close + 1;
  }
  if (c < 128 && NOT_PLAIN_START[c]) return undefined;
  let last = at;
  for (let j = at; j < end; j++) {
    const d = source.charCodeAt(j);
    if (d === SPACE) {
      if (source.charCodeAt(j + 1) === HASH) break;
      continue;
    }
    // `a: b` in a value is no scalar (the parsers refuse it); a colon at the end neither.
    if (d === COLON && (j + 1 === end || source.charCodeAt(j + 1) === SPACE)) return undefined;
    last = j + 1;
  }
  return last;
}

/** The closing quote of a quoted scalar on this line, or undefined. */
function quoteClose(source: string, at: number, end: number, quote: number): number | undefined {
  for (let j = at + 1; j < end; j++) {
    const d = source.charCodeAt(j);
    if (quote === DOUBLE_QUOTE) {
      if (d === BACKSLASH) j++;
      else if (d === DOUBLE_QUOTE) return j;
    } else if (d === SINGLE_QUOTE) {
      if (source.charCodeAt(j + 1) !== SINGLE_QUOTE) return j;
      j++;
    }
  }
  return undefined;
}

/** Whether the next line with content is indented deeper than the entry: a plain scalar continued there. */
function continues(source: string, from: number, entryIndent: number): boolean {
  for (let start = from; start < source.length;) {
    let end = source.indexOf('\n', start);
    if (end < 0) end = source.length;
    let i = start;
    while (i < end && source.charCodeAt(i) === SPACE) i++;
    if (i < end && source.charCodeAt(i) !== HASH) return i - start > entryIndent;
    start = end + 1;
  }
  return false;
}

/** The keys looked for: written plain, each is its own JSON key, and its text cannot be read two ways. */
const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

const [SPACE, HASH, COLON, DASH, DOUBLE_QUOTE, SINGLE_QUOTE, BACKSLASH] = [' ', '#', ':', '-', '"', "'", '\\'].map(
  (c) => c.charCodeAt(0),
) as [number, number, number, number, number, number, number];

/** What a plain scalar cannot start with (indicators), or what this reader leaves to the full parse. */
const NOT_PLAIN_START = (() => {
  const table = new Uint8Array(128);
  for (const c of '|>{}[],#&*!%@`?-:') table[c.charCodeAt(0)] = 1;
  return table;
})();

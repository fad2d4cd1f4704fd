// Where a path of map keys and list items writes a one-line scalar, read off the lines of a
// document, with no node tree. Most findings sit on such a field (an existing object's
// `metadata.name`, a conflict's `spec.replicas` or `containers[name="app"].image`), and building
// the node tree only to place them was most of the time a check of existing objects took: a
// CustomResourceDefinition of 90 kB parsed fully to point at its name.
//
// Only for a document the values-first read took (fast-values.ts): it has no tabs, carriage
// returns, anchors, aliases, tags, complex keys, duplicate keys, or quoted scalars and flow
// collections that go on to another line, and every plain key in it is its own JSON key. What is
// left is block structure, and in it a line indented exactly as a map's entries is one of its
// entries (or an item of a block sequence that an entry holds at the entry's own indentation), and
// a line indented exactly as a sequence's `-` is its next item: block scalars, continued plain
// scalars and nested collections are all indented deeper. A map may start on its item's `- ` line
// (`- name: app`), and the last map of the path may be a flow map on one line of plain keys and
// simple scalars (`labels: {app: web, tier: front}`). Anything else (a quoted key, a value on the
// next line, a flow sequence, a block scalar) is declined, and the full parse answers. Which item a
// list step means is the caller's to say (by its index, found in the document's JSON value).
// test/support/parse-agreement.ts holds every answer equal to the node tree's, on every fixture
// and fuzz input.
/** Where the key (or an item's `-`) and its value are: one line (counted from the document's first), and columns, end excluded. */
export interface WrittenScalar {
  readonly line: number;
  readonly key: readonly [number, number];
  readonly value: readonly [number, number];
}

/** A map's key, or the index of a block sequence's item. */
export type WrittenStep = string | number;

/** The key and one-line scalar value that `steps` lead to in `source`, or undefined where unsure. */
export function writtenScalar(source: string, steps: readonly WrittenStep[]): WrittenScalar | undefined {
  if (
    steps.length === 0 ||
    !steps.every((s) => (typeof s === 'number' ? Number.isInteger(s) && s >= 0 : PLAIN_KEY.test(s)))
  )
    return undefined;
  const lines = new Lines(source);
  // The node the next step looks into starts after `lines.at` (after its key's colon, its item's
  // dash, or the document's start marker), and is indented deeper than `owner`, the column of its
  // key or dash (-1: the document's root).
  let owner = -1;
  let fromItem = false;
  let key: readonly [number, number] = [0, 0];
  // The root starts on the first line, or on the line after a start marker (`---`, perhaps with a comment).
  let rootStart = true;
  if (source.startsWith('---') && (source.length === 3 || [SPACE, NEWLINE].includes(source.charCodeAt(3)))) {
    lines.at = 3;
    rootStart = false;
  }
  for (let depth = 0; depth < steps.length; depth++) {
    const step = steps[depth]!;
    const last = depth === steps.length - 1;
    // The node's first token: on this line (after a dash only: `- name: app`, `- - a`), or below.
    let first = rootStart ? undefined : lines.content();
    if (first !== undefined && source.charCodeAt(first) === OPEN_BRACE)
      return typeof step === 'string' && last ? flowEntry(source, lines, first, step, owner) : undefined;
    if (first !== undefined && !fromItem) return undefined; // a scalar after its key
    if (first === undefined) {
      first = rootStart ? lines.firstContent() : lines.nextContent();
      rootStart = false;
      if (first === undefined) return undefined;
      const indent = first - lines.start;
      // A sequence may sit at its key's column; a map, and anything in an item, sits deeper.
      if (indent < owner || (indent === owner && (fromItem || typeof step === 'string'))) return undefined;
    }
    const col = first - lines.start;
    const c = source.charCodeAt(first);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return undefined;
    const found =
      typeof step === 'string' ? entry(source, lines, first, col, step) : item(source, lines, first, col, step);
    if (found === undefined) return undefined;
    lines.at = found;
    owner = col;
    fromItem = typeof step === 'number';
    key = [col, typeof step === 'string' ? col + step.length : col + 1];
  }
  let v = lines.at;
  while (v < lines.end && source.charCodeAt(v) === SPACE) v++;
  const valueEnd = scalarEnd(source, v, lines.end);
  if (valueEnd === undefined || continues(source, lines.end + 1, owner)) return undefined;
  return { line: lines.line, key, value: [v - lines.start, valueEnd - lines.start] };
}

/** The lines of a document, read forward once: the current line and a position in it. */
class Lines {
  line = 0;
  start = 0;
  end: number;
  at = 0;
  constructor(readonly source: string) {
    this.end = lineEnd(source, 0);
  }
  /** Where content (not a comment) goes on after `at` on this line, or undefined. */
  content(): number | undefined {
    let i = this.at;
    while (i < this.end && this.source.charCodeAt(i) === SPACE) i++;
    return i === this.end || this.source.charCodeAt(i) === HASH ? undefined : i;
  }
  /** The first token of the next line with content, or undefined at the end. */
  nextContent(): number | undefined {
    while (this.end < this.source.length) {
      this.line++;
      this.start = this.end + 1;
      this.end = lineEnd(this.source, this.start);
      this.at = this.start;
      const found = this.content();
      if (found !== undefined) return found;
    }
    return undefined;
  }
  /** The first token of this line or of the next with content. */
  firstContent(): number | undefined {
    return this.content() ?? this.nextContent();
  }
}

function lineEnd(source: string, from: number): number {
  const end = source.indexOf('\n', from);
  return end < 0 ? source.length : end;
}

const isItemAt = (source: string, i: number, end: number): boolean =>
  source.charCodeAt(i) === DASH && (i + 1 === end || source.charCodeAt(i + 1) === SPACE);

/** Where `name: ` of the block map whose entries sit at `col` (the first at `first`) goes on, after its colon. */
function entry(source: string, lines: Lines, first: number, col: number, name: string): number | undefined {
  if (isItemAt(source, first, lines.end)) return undefined; // a sequence, not a map
  for (let i: number | undefined = first; i !== undefined; i = lines.nextContent()) {
    const indent = i === first ? col : i - lines.start;
    if (indent < col) return undefined; // the map ended without the key
    // Deeper: inside an entry's value. An item (`- `) at the entries' column is in the value of
    // the entry above it, and never starts with a key looked for.
    if (indent > col) continue;
    const afterKey = i + name.length;
    if (
      source.startsWith(name, i) &&
      source.charCodeAt(afterKey) === COLON &&
      (afterKey + 1 === lines.end || source.charCodeAt(afterKey + 1) === SPACE)
    )
      return afterKey + 1;
  }
  return undefined;
}

/** Where the item `index` of the block sequence whose dashes sit at `col` (the first at `first`) goes on, after its dash. */
function item(source: string, lines: Lines, first: number, col: number, index: number): number | undefined {
  let seen = 0;
  for (let i: number | undefined = first; i !== undefined; i = lines.nextContent()) {
    const indent = i === first ? col : i - lines.start;
    if (indent < col) return undefined;
    if (indent > col) continue; // inside an item
    if (!isItemAt(source, i, lines.end)) return undefined; // the map's next entry: the sequence ended
    if (seen++ === index) return i + 1;
  }
  return undefined;
}

/**
 * `name: value` in a flow map written on one line (`{app: web, tier: front}`) whose keys are all
 * plain and whose values are all quoted or simple plain scalars; undefined for anything else.
 */
function flowEntry(source: string, lines: Lines, open: number, name: string, owner: number): WrittenScalar | undefined {
  const end = lines.end;
  const skip = (j: number) => {
    while (j < end && source.charCodeAt(j) === SPACE) j++;
    return j;
  };
  let found: WrittenScalar | undefined;
  let i = skip(open + 1);
  if (source.charCodeAt(i) === CLOSE_BRACE) return undefined;
  for (;;) {
    const keyStart = i;
    while (i < end && FLOW_PLAIN.test(source[i]!)) i++;
    const key = source.slice(keyStart, i);
    if (!PLAIN_KEY.test(key) || source.charCodeAt(i) !== COLON || source.charCodeAt(i + 1) !== SPACE) return undefined;
    const valueStart = skip(i + 1);
    let valueEnd: number | undefined;
    const c = source.charCodeAt(valueStart);
    if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
      const close = quoteClose(source, valueStart, end, c);
      valueEnd = close === undefined ? undefined : close + 1;
    } else if (valueStart < end && FLOW_PLAIN_START.test(source[valueStart]!)) {
      // Words of plain characters, one space apart.
      valueEnd = valueStart;
      for (let j = valueStart; j < end; j++) {
        if (FLOW_PLAIN.test(source[j]!)) valueEnd = j + 1;
        else if (source.charCodeAt(j) !== SPACE || !FLOW_PLAIN.test(source[j + 1] ?? '')) break;
      }
    }
    if (valueEnd === undefined) return undefined;
    if (key === name)
      found = {
        line: lines.line,
        key: [keyStart - lines.start, i - lines.start],
        value: [valueStart - lines.start, valueEnd - lines.start],
      };
    i = skip(valueEnd);
    if (source.charCodeAt(i) === COMMA) {
      i = skip(i + 1);
      continue;
    }
    if (source.charCodeAt(i) !== CLOSE_BRACE) return undefined;
    const rest = skip(i + 1);
    if (rest < end && (source.charCodeAt(rest) !== HASH || rest === i + 1)) return undefined;
    break;
  }
  return found && !continues(source, end + 1, owner) ? found : undefined;
}

/** The characters of a plain key or a simple plain scalar in a flow map. */
const FLOW_PLAIN = /[A-Za-z0-9_./-]/;
const FLOW_PLAIN_START = /[A-Za-z0-9_/]/;

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
  // A plain scalar may start with `-` followed by a character other than a space (`--port`, `-1`).
  if (c < 128 && NOT_PLAIN_START[c] && (c !== DASH || at + 1 === end || source.charCodeAt(at + 1) === SPACE))
    return undefined;
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

const [SPACE, NEWLINE, HASH, COLON, COMMA, DASH, DOUBLE_QUOTE, SINGLE_QUOTE, BACKSLASH] = [
  ' ',
  '\n',
  '#',
  ':',
  ',',
  '-',
  '"',
  "'",
  '\\',
].map((c) => c.charCodeAt(0)) as [number, number, number, number, number, number, number, number, number];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET] = ['{', '}', '['].map((c) => c.charCodeAt(0)) as [number, number, number];

/** What a plain scalar cannot start with (indicators), or what this reader leaves to the full parse. */
const NOT_PLAIN_START = (() => {
  const table = new Uint8Array(128);
  for (const c of '|>{}[],#&*!%@`?-:') table[c.charCodeAt(0)] = 1;
  return table;
})();

// A stream of JSON values, read the way kubectl reads `-f` input that starts with `{`
// (k8s.io/apimachinery/pkg/util/yaml YAMLOrJSONDecoder): such a text is not YAML at all but a
// sequence of JSON values, one after another, with or without whitespace between them — what
// `jq '.items[]'` prints, and `kubectl get -o json` of several objects. kubectl decodes them with
// Go's encoding/json until the first error, so a `---` after a JSON object, a comma between two
// objects, or a value that is not an object stops it there; the objects before still count.
//
// This module only finds where each value starts and ends (and where the stream goes wrong); the
// manifest model parses each value as a document of its own, so that every range stays a range in
// the whole text.

/** A position as the editor counts it: zero-based line, UTF-16 column. */
export interface StreamPosition {
  readonly offset: number;
  readonly line: number;
  readonly character: number;
}

export interface JsonStreamValue {
  /** Where the value's first character (`{`) is. */
  readonly start: StreamPosition;
  /** Offset just after the value's last character. */
  readonly end: number;
  readonly text: string;
}

export interface JsonStreamError {
  readonly at: StreamPosition;
  /** In Go's words where they help (`invalid character '-' looking for beginning of value`). */
  readonly message: string;
}

export interface JsonStream {
  /** The values up to the first error, in order. */
  readonly values: readonly JsonStreamValue[];
  readonly error?: JsonStreamError;
}

// Go's words alone ("invalid character '-' in numeric literal" for a `---`) do not say why.
const STOPS =
  ': the text starts with `{`, so kubectl reads it as JSON objects one after another, and stops reading here';

/** How far kubectl looks for the `{` that makes a stream JSON (its decoder's buffer size). */
const GUESS_WINDOW = 4096;

// Go's unicode.IsSpace, which kubectl's guess trims (encoding/json itself skips only the four JSON
// whitespace characters, so a form feed before a value is a guess for JSON and then an error).
const GO_SPACE = /^[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]*/;

/**
 * Whether kubectl reads the text as a JSON stream: after a byte order mark (which kubectl's reader
 * drops) and whitespace, within its first 4,096 characters, comes `{`.
 */
export function isJsonStream(text: string): boolean {
  const head = text.slice(text.startsWith('\uFEFF') ? 1 : 0, GUESS_WINDOW);
  return head.charAt(GO_SPACE.exec(head)![0].length) === '{';
}

/** The values of a JSON stream (see isJsonStream), each with its position, up to the first error. */
export function splitJsonStream(text: string): JsonStream {
  const scanner = new Scanner(text);
  const values: JsonStreamValue[] = [];
  if (text.startsWith('\uFEFF')) scanner.pos = 1;
  try {
    for (;;) {
      scanner.skipWhitespace();
      if (scanner.pos >= text.length) return { values };
      const start = scanner.pos;
      const first = text[start]!;
      scanner.value();
      // kubectl decodes each value into an object; a list, a string or a number stops it.
      if (first !== '{') {
        return {
          values,
          error: { at: scanner.position(start), message: `a JSON ${describeValue(first)}, not an object${STOPS}` },
        };
      }
      values.push({ start: scanner.position(start), end: scanner.pos, text: text.slice(start, scanner.pos) });
    }
  } catch (e) {
    if (!(e instanceof SyntaxFailure)) throw e;
    return { values, error: { at: scanner.position(e.offset), message: `${e.message}${STOPS}` } };
  }
}

function describeValue(first: string): string {
  if (first === '[') return 'list';
  if (first === '"') return 'string';
  if (first === 't' || first === 'f') return 'boolean';
  if (first === 'n') return 'null';
  return 'number';
}

class SyntaxFailure extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** A strict JSON scanner (RFC 8259, as encoding/json checks it) that only moves, building nothing. */
class Scanner {
  pos = 0;
  private line = 0;
  private lineStart = 0;
  private countedTo = 0;

  constructor(private readonly text: string) {}

  /** Line and column of an offset at or after the last one asked for (offsets only grow). */
  position(offset: number): StreamPosition {
    for (let i = this.text.indexOf('\n', this.countedTo); i >= 0 && i < offset; i = this.text.indexOf('\n', i + 1)) {
      this.line++;
      this.lineStart = i + 1;
    }
    this.countedTo = Math.max(this.countedTo, offset);
    return { offset, line: this.line, character: offset - this.lineStart };
  }

  skipWhitespace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.pos++;
    }
  }

  private fail(context: string): never {
    if (this.pos >= this.text.length) throw new SyntaxFailure('unexpected end of JSON input', this.pos);
    throw new SyntaxFailure(`invalid character ${quoteChar(this.text.codePointAt(this.pos)!)} ${context}`, this.pos);
  }

  /**
   * Moves past one value. Iterative, with a stack of the collections still open: a hostile text may
   * nest thousands of levels (kubectl's decoder takes 10,000), deeper than a recursive scan can go.
   */
  value(): void {
    const open: ('object' | 'array')[] = [];
    for (;;) {
      // At the start of a value.
      const c = this.text[this.pos];
      if (c === '{' || c === '[') {
        this.pos++;
        this.skipWhitespace();
        if (this.text[this.pos] !== (c === '{' ? '}' : ']')) {
          open.push(c === '{' ? 'object' : 'array');
          if (c === '{') this.key();
          continue;
        }
        this.pos++;
      } else if (c === '"') this.string();
      else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) this.number();
      else if (c === 't') this.literal('true');
      else if (c === 'f') this.literal('false');
      else if (c === 'n') this.literal('null');
      else this.fail('looking for beginning of value');
      // After a whole value: close what it ends, or go on to the next element.
      for (;;) {
        const inside = open.at(-1);
        if (inside === undefined) return;
        this.skipWhitespace();
        const next = this.text[this.pos];
        if (next === (inside === 'object' ? '}' : ']')) {
          this.pos++;
          open.pop();
          continue;
        }
        if (next !== ',') this.fail(inside === 'object' ? 'after object key:value pair' : 'after array element');
        this.pos++;
        this.skipWhitespace();
        if (inside === 'object') this.key();
        break;
      }
    }
  }

  /** An object's key and its colon, up to where its value starts. */
  private key(): void {
    if (this.text[this.pos] !== '"') this.fail('looking for beginning of object key string');
    this.string();
    this.skipWhitespace();
    if (this.text[this.pos] !== ':') this.fail('after object key');
    this.pos++;
    this.skipWhitespace();
  }

  private string(): void {
    const t = this.text;
    this.pos++; // "
    for (;;) {
      if (this.pos >= t.length) this.fail('in string literal');
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        return;
      }
      if (c < 0x20) this.fail('in string literal');
      if (c === 0x5c) {
        const e = t[this.pos + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) this.pos += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(t.slice(this.pos + 2, this.pos + 6))) this.pos += 6;
        else {
          this.pos++;
          this.fail('in string escape code');
        }
        continue;
      }
      this.pos++;
    }
  }

  private number(): void {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!m) {
      // `-` alone (the first of a `---`): Go complains about the character after it.
      if (this.text[this.pos] === '-') this.pos++;
      this.fail('in numeric literal');
    }
    this.pos += m[0].length;
    // A number runs on into letters or a second `-` only by mistake (`1-`, `2x`): Go stops there too.
    const next = this.text[this.pos];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) this.fail('in numeric literal');
  }

  private literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.text[this.pos] !== word[i]) this.fail(`in literal ${word} (expecting '${word[i]}')`);
      this.pos++;
    }
  }
}

function quoteChar(code: number): string {
  const escapes: Record<number, string> = {
    0x09: "'\\t'",
    0x0a: "'\\n'",
    0x0b: "'\\v'",
    0x0c: "'\\f'",
    0x0d: "'\\r'",
    0x27: "'\\''",
  };
  if (escapes[code]) return escapes[code];
  if (code < 0x20 || code === 0x7f) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCodePoint(code)}'`;
}

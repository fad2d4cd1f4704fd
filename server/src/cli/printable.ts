// Text the command line prints that comes from the repository it checks — file names, object
// names, messages that quote them — is data, never markup. A line break in a file name must not
// start a line of its own (a CI runner reads `::error ...` at the start of any line of a step's
// output, stdout or stderr, as a workflow command), and an escape sequence in an object name must
// not recolour, move or erase what a terminal shows. So every control character is shown as an
// escape (`\n`, `\x1b`, `\u202e`): C0 and C1 controls, DEL, the line and paragraph separators and
// the bidirectional overrides that reorder what a reader sees.

const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, line breaks aside: for formats whose own escaping carries a line break (GitHub's %0A). */
const UNPRINTABLE_BUT_BREAKS =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const named: Record<string, string> = {
  '\n': '\\n',
  '\r': '\\r',
  '\u000b': '\\v',
  '\f': '\\f',
  '\b': '\\b',
  '\u0000': '\\0',
};

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return (
    named[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}

/** One line for a terminal or a log: every control character (line breaks too) shown as an escape. */
export function printableLine(text: string): string {
  return text.replace(UNPRINTABLE, escapeOne);
}

/** As printableLine, keeping CR and LF for a format that escapes them its own way. */
export function printableKeepingBreaks(text: string): string {
  return text.replace(UNPRINTABLE_BUT_BREAKS, escapeOne);
}

/**
 * JSON text of a value for a file or a terminal. JSON.stringify escapes C0 controls in strings but
 * writes DEL, C1 controls, U+2028/2029 and bidirectional overrides as they are; these can only
 * stand inside strings, where `\uXXXX` is the same string to any JSON reader.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

// Line arithmetic on the original text for the quick-fix edits: offsets and LSP positions, and
// the questions the edit planner asks about a line (blank? only a comment? where does it start?).
// Lines end at \n or \r\n; characters are UTF-16 code units, as JavaScript strings and LSP count.
import type { Position, Range } from './manifest';

export interface TextLines {
  readonly text: string;
  /** Offset of the first character of each line. */
  readonly starts: readonly number[];
  /** The line break the text mostly uses, for the lines an edit writes. */
  readonly eol: '\n' | '\r\n';
}

export function textLines(text: string): TextLines {
  const starts = [0];
  let crlf = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    starts.push(i + 1);
    if (text[i - 1] === '\r') crlf++;
  }
  const breaks = starts.length - 1;
  return { text, starts, eol: breaks > 0 && crlf * 2 > breaks ? '\r\n' : '\n' };
}

export function offsetAt(lines: TextLines, p: Position): number {
  const start = lines.starts[p.line];
  if (start === undefined) return lines.text.length;
  return Math.min(start + p.character, lines.text.length);
}

export function positionAt(lines: TextLines, offset: number): Position {
  let lo = 0;
  let hi = lines.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines.starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - lines.starts[lo]! };
}

export function rangeAt(lines: TextLines, start: number, end: number): Range {
  return { start: positionAt(lines, start), end: positionAt(lines, end) };
}

export function lineCount(lines: TextLines): number {
  return lines.starts.length;
}

export function lineOf(lines: TextLines, offset: number): number {
  return positionAt(lines, offset).line;
}

export function lineStart(lines: TextLines, line: number): number {
  return lines.starts[line] ?? lines.text.length;
}

/** Offset after the line's break (the next line's start), or the end of the text. */
export function nextLineStart(lines: TextLines, line: number): number {
  return lines.starts[line + 1] ?? lines.text.length;
}

/** Offset of the line's end, before its \n or \r\n. */
export function lineContentEnd(lines: TextLines, line: number): number {
  let end = nextLineStart(lines, line);
  if (end > lineStart(lines, line) && lines.text[end - 1] === '\n') end--;
  if (end > lineStart(lines, line) && lines.text[end - 1] === '\r') end--;
  return end;
}

export function lineText(lines: TextLines, line: number): string {
  return lines.text.slice(lineStart(lines, line), lineContentEnd(lines, line));
}

export function isBlankLine(lines: TextLines, line: number): boolean {
  return /^[ \t]*$/.test(lineText(lines, line));
}

/** The column of the `#` when the line holds nothing but a comment, else undefined. */
export function commentOnlyColumn(lines: TextLines, line: number): number | undefined {
  const m = /^([ \t]*)#/.exec(lineText(lines, line));
  return m ? m[1]!.length : undefined;
}

/** Whether only spaces and tabs stand between the line's start and `offset`. */
export function firstOnLine(lines: TextLines, offset: number): boolean {
  const start = lineStart(lines, lineOf(lines, offset));
  return /^[ \t]*$/.test(lines.text.slice(start, offset));
}

/** The first offset at or after `offset` that is neither a space, a tab nor a line break. */
export function skipWhitespace(text: string, offset: number): number {
  let i = offset;
  while (i < text.length && /[ \t\r\n]/.test(text[i]!)) i++;
  return i;
}

/** The text from `offset` to the line's end, when it is only spaces and perhaps a comment. */
export function restOfLineComment(lines: TextLines, offset: number): string | undefined {
  const rest = lines.text.slice(offset, lineContentEnd(lines, lineOf(lines, offset)));
  return /^[ \t]*(#.*)?$/.test(rest) ? rest.trim() : undefined;
}

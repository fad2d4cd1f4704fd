// Golden files: a test that compares what the code gives with what a file of test/fixtures/ holds
// checks it here. A difference fails with the file's name and the way to accept it; with
// UPDATE_EXPECT=1 in the environment the test writes what the code gives into the file instead of
// failing (then read the diff: what it shows is what the change did).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument, isMap, isScalar, isSeq, Scalar } from 'yaml';

/** UPDATE_EXPECT=1: golden files are rewritten, not compared. */
export const updatingExpected = process.env.UPDATE_EXPECT === '1';

export interface Golden<T> {
  /** The golden file. */
  readonly file: string;
  /** The expectation the file's text holds. */
  readonly read: (text: string) => T;
  /** The file's text with `actual` as its expectation, the rest of it as it was. */
  readonly write: (actual: T, text: string) => string;
}

/**
 * `actual` must deep-equal what the golden file holds; under UPDATE_EXPECT=1 the file is rewritten
 * to hold `actual` instead (only when it differs, so an unchanged file keeps its bytes).
 */
export function assertExpected<T>(actual: T, golden: Golden<T>, what = 'the expectation'): void {
  const text = fs.readFileSync(golden.file, 'utf8');
  if (updatingExpected) {
    const written = golden.write(actual, text);
    assert.deepEqual(
      golden.read(written),
      actual,
      `${golden.file}: the rewritten file must read back as the code's answer`,
    );
    if (written !== text) {
      fs.writeFileSync(golden.file, written);
      process.stderr.write(`UPDATE_EXPECT: rewrote ${path.relative(process.cwd(), golden.file)} (${what})\n`);
    }
    return;
  }
  const file = path.relative(process.cwd(), golden.file);
  assert.deepEqual(
    actual,
    golden.read(text),
    `${file}: ${what}, not what the file holds; if the change is meant, run the test again with UPDATE_EXPECT=1 to rewrite the file, then review its diff`,
  );
}

/**
 * A YAML text with one string value replaced by `value`, written as a literal block scalar (`|`)
 * where the old one was: the comments, the order and the style of everything else stay as they are.
 * `at` walks from the document's root: a number for a list item, a string for a key.
 */
export function withBlockString(text: string, at: readonly (string | number)[], value: string): string {
  const doc = parseDocument(text);
  const parentPath = at.slice(0, -1);
  const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
  const key = at[at.length - 1]!;
  if (!isMap(parent) && !isSeq(parent)) throw new Error(`${at.join('.')}: no such place`);
  const pair = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
  const node = isMap(parent) ? pair?.value : parent.items[Number(key)];
  if (!isScalar(node) || node.type !== Scalar.BLOCK_LITERAL || !node.range) {
    throw new Error(`${at.join('.')}: not a literal block scalar (\`|\`); write this expectation by hand`);
  }
  // The content's indentation: the key's column (or the item's, for a list item) plus two.
  const anchor = isScalar(pair?.key) && pair.key.range ? pair.key.range[0] : node.range[0];
  const column = anchor - (text.lastIndexOf('\n', anchor - 1) + 1);
  const indent = ' '.repeat(column + 2);
  const lines = value.split('\n');
  const trailing = value.length - value.replace(/\n+$/, '').length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const body = trailing === 0 ? lines : lines.slice(0, -1);
  if (/^[ \t]/.test(body[0] ?? '') || value === '')
    throw new Error(
      `${at.join('.')}: a value that starts with a blank needs an indentation indicator; write this expectation by hand`,
    );
  const block = `|${chomp}\n${body.map((l) => (l === '' ? '' : indent + l)).join('\n')}\n`;
  return text.slice(0, node.range[0]) + block + text.slice(node.range[1]);
}

// The README's table of findings (under "In VS Code") against the rule catalogue: every code the
// product can give has a row, and no row names a code the catalogue does not have. A code added to
// core/findings/catalogue.ts without a word to the user, or renamed on one side, fails here.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { findingCodes } from '../../server/src/core/findings/catalogue';

const root = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n');

/** The codes a row of the findings table names: the backquoted codes its first cell starts with. */
function tableCodes(): string[] {
  const header = readme.findIndex((line) => line.startsWith('| diagnostic (`code`) |'));
  assert.ok(header >= 0, 'README.md has the findings table (its header is "| diagnostic (`code`) | ...")');
  const codes: string[] = [];
  for (const line of readme.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const lead = /^\| (`[a-z][a-z-]*`(?:,\s*`[a-z][a-z-]*`)*)/.exec(line);
    assert.ok(lead, `a row of the findings table that names no code: ${line.slice(0, 80)}`);
    codes.push(...[...lead[1]!.matchAll(/`([a-z][a-z-]*)`/g)].map((m) => m[1]!));
  }
  return codes;
}

test('every finding code of the catalogue has a row in the README\'s findings table', () => {
  const listed = new Set(tableCodes());
  assert.deepEqual(findingCodes.filter((code) => !listed.has(code)), []);
});

test('the README\'s findings table names no code the catalogue lacks, and each once', () => {
  const codes = tableCodes();
  const known = new Set<string>(findingCodes);
  assert.deepEqual(codes.filter((code) => !known.has(code)), []);
  assert.deepEqual(codes.filter((code, i) => codes.indexOf(code) !== i), []);
});

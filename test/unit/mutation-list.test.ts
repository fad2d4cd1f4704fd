// The mutation run's list (scripts/mutation-list.mjs) against today's code: each planted fault's
// text occurs exactly once in its file, so `npm run test:mutations` plants every fault it lists.
// Nothing else runs the list between mutation runs; without this, a refactor that moves a planted
// text breaks the run unnoticed until the next time someone starts it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { mutations } from '../../scripts/mutation-list.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');

for (const m of mutations) {
  test(`mutation ${m.id} applies exactly once to ${m.file}`, () => {
    const text = fs.readFileSync(path.join(root, m.file), 'utf8');
    const count = text.split(m.from).length - 1;
    assert.equal(
      count,
      1,
      `${m.id}: the text to replace occurs ${count} times in ${m.file}; bring the mutation back to today's code (the same fault, in the text it now has)`,
    );
    assert.notEqual(m.to, m.from, `${m.id}: plants nothing`);
    for (const t of m.tests) assert.ok(fs.existsSync(path.join(root, t)), `${m.id}: no test file ${t}`);
  });
}

test('mutation ids are unique', () => {
  const ids = mutations.map((m) => m.id);
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
  );
  assert.ok(mutations.length > 0);
});

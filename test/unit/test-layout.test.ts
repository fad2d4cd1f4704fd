// The tests of a module sit where its source sits (test/README.md): every folder under test/unit/ is
// a folder of server/src/, so a test of cluster/ cannot start a third home for the cluster layer's
// tests beside test/unit/cluster/, and a folder that server/src no longer has is noticed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const unit = path.join(root, 'test', 'unit');
const source = path.join(root, 'server', 'src');

function folders(dir: string, under = ''): string[] {
  return fs
    .readdirSync(path.join(dir, under), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [path.join(under, e.name), ...folders(dir, path.join(under, e.name))]);
}

test('every folder of test/unit/ is a folder of server/src/', () => {
  const strays = folders(unit).filter(
    (f) => !fs.existsSync(path.join(source, f)) || !fs.statSync(path.join(source, f)).isDirectory(),
  );
  assert.deepEqual(strays, [], 'a test of a module goes to test/unit/<its folder under server/src>/ (test/README.md)');
  assert.ok(folders(unit).includes('cluster'), "the cluster layer's tests are in test/unit/cluster/");
});

test('no test of the cluster layer lives beside test/unit/cluster/ under a name of its own', () => {
  assert.deepEqual(
    fs.readdirSync(unit).filter((f) => /^cluster-.*\.test\.ts$/.test(f)),
    [],
  );
});

// The code as the formatter writes it and as the linter accepts it (Prettier and typescript-eslint,
// configured once: .prettierrc.json, .prettierignore, eslint.config.mjs). `npm run format` rewrites
// what differs; this test names the files that do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

test('every source file is formatted as Prettier writes it (npm run format fixes it)', () => {
  const run = spawnSync(bin('prettier'), ['--check', '--log-level', 'warn', '.'], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `not formatted:\n${run.stdout}${run.stderr}`);
});

test('the linter finds nothing (npm run lint)', () => {
  const run = spawnSync(bin('eslint'), ['server/src', 'client/src', 'test', 'scripts', 'eslint.config.mjs'], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `lint problems:\n${run.stdout}${run.stderr}`);
});

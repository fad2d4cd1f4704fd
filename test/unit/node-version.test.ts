// One Node.js version, the one package.json's `engines` states: every "Node.js N" the README and
// docs/ tell a user says the same minimum, so a user is never told 20 in one place and 20.18 in another.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const engines = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

test("the README and docs/ name the Node.js version package.json's engines requires", () => {
  const minimum = /^>=(\d+(?:\.\d+){0,2})$/.exec(engines)?.[1];
  assert.ok(minimum, `engines.node is a minimum (>=X.Y): ${engines}`);
  const pages = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join('docs', f)),
  ];
  const said: string[] = [];
  for (const page of pages) {
    const text = fs.readFileSync(path.join(root, page), 'utf8');
    for (const m of text.matchAll(/Node\.js (\d+(?:\.\d+)*)( or later)?/g)) said.push(`${page}: ${m[0]}`);
  }
  assert.ok(said.length > 0, 'the pages name a Node.js version');
  assert.deepEqual(
    said.filter((s) => !s.endsWith(`Node.js ${minimum} or later`)),
    [],
  );
});

// The command as npm links it: `bin` names dist/cli.js, and npm runs it through a link in
// node_modules/.bin (or, for `npx kube-conflict-hints` in a checkout, as it is), never through
// `node`. So the built file must be a program: executable, with its own interpreter line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };

test('the built bin runs as npm links it: a link in node_modules/.bin to dist/cli.js, run as a program', (t) => {
  // The test command builds dist/ before any test (scripts/test.mjs), as `npm run build` does.
  const target = path.join(root, manifest.bin['kube-conflict-hints']!);
  assert.ok(fs.existsSync(target), `${target} is built`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-bin-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const binDir = path.join(scratch, 'node_modules', '.bin');
  fs.mkdirSync(binDir, { recursive: true });
  const link = path.join(binDir, 'kube-conflict-hints');
  fs.symlinkSync(path.relative(binDir, target), link);

  const version = spawnSync(link, ['--version'], { cwd: scratch, encoding: 'utf8', env: { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, HOME: scratch } });
  assert.equal(version.error, undefined, `running ${link}: ${String(version.error)}`);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim().split(/\s/)[0]?.replace(/^v/, ''), manifest.version, version.stdout);

  // By name on PATH, as an npm script or a shell finds it.
  const byName = spawnSync('kube-conflict-hints', ['--help'], { cwd: scratch, encoding: 'utf8', env: { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, HOME: scratch } });
  assert.equal(byName.error, undefined, String(byName.error));
  assert.equal(byName.status, 0, byName.stderr);
  assert.match(byName.stdout, /^Usage:\n {2}kube-conflict-hints check/);
});

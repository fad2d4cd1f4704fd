// The command as npm links it: `bin` names dist/cli.js, and npm runs it through a link in
// node_modules/.bin (or, for `npx kube-conflict-hints` in a checkout, as it is), never through
// `node`. So the built file must be a program: executable, with its own interpreter line. And the
// README's ways to get it from a checkout work as written: `npx kube-conflict-hints` in the
// checkout, `npm install -g .`, with no registry to reach.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
};

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

  const version = spawnSync(link, ['--version'], {
    cwd: scratch,
    encoding: 'utf8',
    env: { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, HOME: scratch },
  });
  assert.equal(version.error, undefined, `running ${link}: ${String(version.error)}`);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim().split(/\s/)[0]?.replace(/^v/, ''), manifest.version, version.stdout);

  // By name on PATH, as an npm script or a shell finds it.
  const byName = spawnSync('kube-conflict-hints', ['--help'], {
    cwd: scratch,
    encoding: 'utf8',
    env: { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, HOME: scratch },
  });
  assert.equal(byName.error, undefined, String(byName.error));
  assert.equal(byName.status, 0, byName.stderr);
  assert.match(byName.stdout, /^Usage:\n {2}kube-conflict-hints check/);
});

/** npm with no registry to reach and an empty cache of the test's own: anything it had to download fails. */
function offlineNpm(scratch: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_cache: path.join(scratch, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

test("in a checkout after the build, `npx kube-conflict-hints --version` runs the checkout's own command, nothing downloaded", (t) => {
  // A fresh clone after `npm run build` holds no link to the command (no node_modules/.bin entry, no
  // global install): npx finds the bin of the package in the folder it runs in.
  assert.ok(
    !fs.existsSync(path.join(root, 'node_modules', '.bin', 'kube-conflict-hints')),
    'nothing links the command into node_modules/.bin',
  );
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-npx-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const run = spawnSync('npx', ['--no-install', 'kube-conflict-hints', '--version'], {
    cwd: root,
    env: offlineNpm(scratch),
    encoding: 'utf8',
  });
  assert.equal(run.error, undefined, String(run.error));
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.equal(run.stdout.trim(), manifest.version);
});

test('`npm install -g .` in a checkout after the build gives the command, linked to the checkout', (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-global-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const prefix = path.join(scratch, 'global'); // a global folder of the test's own, as `npm install -g` fills one
  const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '.'], {
    cwd: root,
    env: offlineNpm(scratch),
    encoding: 'utf8',
  });
  assert.equal(install.status, 0, `${install.stdout}\n${install.stderr}`);
  const run = spawnSync(path.join(prefix, 'bin', 'kube-conflict-hints'), ['--version'], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '', HOME: scratch },
    encoding: 'utf8',
  });
  assert.equal(run.error, undefined, String(run.error));
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), manifest.version);
});

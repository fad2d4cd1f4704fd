// `npm run package` must produce a .vsix holding only what runs: the bundles, the manifest, the
// README, the licence, the grammars and the JSON schema of the check's output. No sources, no
// node_modules, no source maps, no tests. (package.json's `files` is the one allow-list of both
// the .vsix and the npm package.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '../..');
const vsix = path.join(root, 'dist/kube-conflict-hints.vsix');

const allowed: RegExp[] = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/package\.json$/,
  /^extension\/readme\.md$/i,
  /^extension\/changelog\.md$/i,
  /^extension\/LICENSE(\.txt)?$/,
  /^extension\/dist\/(client|server|server-bundle|cli|cli-bundle)\.js$/,
  /^extension\/syntaxes\/[\w.-]+\.json$/,
  /^extension\/schemas\/[\w.-]+\.json$/,
  /^extension\/images\/icon\.png$/,
  /^extension\/docs\/conflict-hover\.png$/,
];

test('the .vsix contains only the allow-listed files, and everything the extension needs to run', { timeout: 180_000 }, () => {
  fs.rmSync(vsix, { force: true });
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  // Listing the archive with Python's zipfile module: no unzip dependency, and the same on every machine.
  const listing = execFileSync('python3', ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', vsix], { encoding: 'utf8' });
  const entries = listing.split('\n').filter(Boolean);
  const unexpected = entries.filter((e) => !allowed.some((re) => re.test(e)));
  assert.deepEqual(unexpected, [], `files outside the allow-list: ${unexpected.join(', ')}`);
  for (const needed of ['extension/package.json', 'extension/dist/client.js', 'extension/dist/server.js', 'extension/dist/server-bundle.js', 'extension/dist/cli.js', 'extension/dist/cli-bundle.js']) {
    assert.ok(entries.includes(needed), `${needed} missing from the .vsix`);
  }
  const manifest = JSON.parse(execFileSync('python3', ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension/package.json").decode())', vsix], { encoding: 'utf8' }));
  assert.equal(manifest.main, './dist/client.js');
  assert.match(manifest.engines.vscode, /^\^1\.(\d+)/);
  assert.ok(Number(/^\^1\.(\d+)/.exec(manifest.engines.vscode)![1]) <= 100, 'engines.vscode must let VS Code 1.100 load the extension');
});

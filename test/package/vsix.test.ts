// `npm run package` must produce a .vsix holding only what runs: the bundles, the manifest, the
// README and what it shows, the licence, the grammars and the JSON schema of the check's output. No
// sources, no node_modules, no source maps, no tests. The top-level .vscodeignore is the .vsix's
// allow-list (package.json's `files` is the npm package's): every file of the .vsix is one it lets
// in, and each of its entries lets in a file, so a stale line fails too.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '../..');
const vsix = path.join(root, 'dist/kube-conflict-hints.vsix');

/** What vsce writes of its own into every .vsix, whatever .vscodeignore says. */
const vsceOwn = ['[Content_Types].xml', 'extension.vsixmanifest', 'extension/package.json', 'extension/readme.md'];

/** The .vscodeignore's allow-list: `**` first (leave everything out), then one `!pattern` per line let in. */
function allowList(): { pattern: string; re: RegExp }[] {
  const lines = fs
    .readFileSync(path.join(root, '.vscodeignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.equal(lines[0], '**', '.vscodeignore starts by leaving everything out');
  return lines.slice(1).map((line) => {
    assert.ok(line.startsWith('!'), `.vscodeignore lets files in, one per line: ${line}`);
    const pattern = line.slice(1);
    const source = pattern
      .split(/(\*\*|\*|\?)/)
      .map((part) =>
        part === '**'
          ? '.*'
          : part === '*'
            ? '[^/]*'
            : part === '?'
              ? '[^/]'
              : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
      )
      .join('');
    return { pattern, re: new RegExp(`^${source}$`) };
  });
}

/** A .vsix entry as the file it was packed from: vsce puts files under extension/ and names the licence LICENSE.txt. */
function packedFrom(entry: string): string {
  const file = entry.replace(/^extension\//, '');
  return file === 'LICENSE.txt' && fs.existsSync(path.join(root, 'LICENSE')) ? 'LICENSE' : file;
}

test(
  'the .vsix contains only the allow-listed files, and everything the extension needs to run',
  { timeout: 180_000 },
  () => {
    fs.rmSync(vsix, { force: true });
    execFileSync('npm', ['run', '--silent', 'package'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    // Listing the archive with Python's zipfile module: no unzip dependency, and the same on every machine.
    const listing = execFileSync(
      'python3',
      ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', vsix],
      { encoding: 'utf8' },
    );
    const entries = listing.split('\n').filter(Boolean);
    const allowed = allowList();
    const packed = entries.filter((e) => !vsceOwn.includes(e)).map(packedFrom);
    const unexpected = packed.filter((f) => !allowed.some(({ re }) => re.test(f)));
    assert.deepEqual(unexpected, [], `files .vscodeignore does not let in: ${unexpected.join(', ')}`);
    const stale = allowed.filter(({ re }) => !packed.some((f) => re.test(f))).map(({ pattern }) => pattern);
    assert.deepEqual(stale, [], `.vscodeignore lines that let no file in: ${stale.join(', ')}`);
    // The Marketplace shows the README from the package: every image it shows by a relative link ships.
    const images = [...fs.readFileSync(path.join(root, 'README.md'), 'utf8').matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map(
      (m) => m[1]!,
    );
    assert.ok(images.length > 0, 'the README shows a screenshot');
    const missing = images.filter((image) => !/^https:\/\//.test(image) && !entries.includes(`extension/${image}`));
    assert.deepEqual(missing, [], `images the README shows that the .vsix lacks: ${missing.join(', ')}`);
    for (const needed of [
      'extension/package.json',
      'extension/dist/client.js',
      'extension/dist/server.js',
      'extension/dist/server-bundle.js',
      'extension/dist/cli.js',
      'extension/dist/cli-bundle.js',
    ]) {
      assert.ok(entries.includes(needed), `${needed} missing from the .vsix`);
    }
    const manifest = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension/package.json").decode())',
          vsix,
        ],
        { encoding: 'utf8' },
      ),
    );
    assert.equal(manifest.main, './dist/client.js');
    assert.match(manifest.engines.vscode, /^\^1\.(\d+)/);
    assert.ok(
      Number(/^\^1\.(\d+)/.exec(manifest.engines.vscode)![1]) <= 100,
      'engines.vscode must let VS Code 1.100 load the extension',
    );
  },
);

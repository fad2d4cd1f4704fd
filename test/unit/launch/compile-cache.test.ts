// How dist/cli.js and dist/server.js start their bundle (server/src/launch/compile-cache.ts): the
// compiled code a run leaves is used by the next, a cache that is odd in any way is never trusted,
// and no state of the cache place stops the program. Each case starts a real process on a small
// bundle; whether V8 took the cache shows in the file: it is rewritten only when it was not used.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

const launcher = path.resolve(import.meta.dirname, '../../../server/src/launch/compile-cache.ts');
const builtIn = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

interface Place {
  root: string;
  bundle: string;
  /** XDG_CACHE_HOME of the runs. */
  cacheHome: string;
  cacheDir: string;
}

const roots: string[] = [];
after(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function place(): Place {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-compile-cache-'));
  roots.push(root);
  const bundle = path.join(root, 'demo-bundle.js');
  writeBundle(bundle, 'first');
  const cacheHome = path.join(root, 'cache-home');
  return { root, bundle, cacheHome, cacheDir: path.join(cacheHome, 'kube-conflict-hints', 'compile-cache') };
}

/** A CommonJS bundle that reports what it was started with, and has functions to compile. */
function writeBundle(file: string, tag: string): void {
  fs.writeFileSync(
    file,
    `'use strict';
const path = require('node:path');
const sameExports = exports === module.exports && this === exports;
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
module.exports = { work };
process.stdout.write(JSON.stringify({ tag: ${JSON.stringify(tag)}, filename: __filename, dirname: __dirname, sameExports, join: path.join('a', 'b'), args: process.argv.slice(2), work: work(100) }));
`,
  );
}

function run(
  p: Place,
  env: NodeJS.ProcessEnv = {},
): {
  tag: string;
  filename: string;
  dirname: string;
  sameExports: boolean;
  join: string;
  args: string[];
  work: number;
} {
  const runner = path.join(p.root, 'start.cjs');
  fs.writeFileSync(runner, `require(${JSON.stringify(launcher)}).startBundle(${JSON.stringify(p.bundle)}, 'test');\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', runner, 'one', 'two'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: p.root, XDG_CACHE_HOME: p.cacheHome, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const cacheFiles = (p: Place): string[] =>
  fs.existsSync(p.cacheDir) ? fs.readdirSync(p.cacheDir).filter((f) => f.endsWith('.v8')) : [];
const onlyCache = (p: Place): string => {
  const files = cacheFiles(p);
  assert.equal(files.length, 1, `cache files: ${files.join(', ')}`);
  return path.join(p.cacheDir, files[0]!);
};

test(
  'the bundle runs as require would run it, and a second start uses the code the first left',
  { skip: builtIn && 'Node keeps this cache itself here (module.enableCompileCache)' },
  () => {
    const p = place();
    const first = run(p);
    assert.deepEqual(first, {
      tag: 'first',
      filename: p.bundle,
      dirname: p.root,
      sameExports: true,
      join: path.join('a', 'b'),
      args: ['one', 'two'],
      work: 295,
    });
    const file = onlyCache(p);
    assert.match(path.basename(file), /^demo-bundle-test-[0-9a-f]{8}-[0-9a-f]{88}\.v8$/);
    if (process.platform !== 'win32') {
      assert.equal(fs.statSync(p.cacheDir).mode & 0o777, 0o700);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    }
    const made = fs.readFileSync(file);
    const madeAt = fs.statSync(file).mtimeMs;
    assert.deepEqual(run(p), first);
    // Taken as it was: V8 accepted it, so nothing was written again.
    assert.equal(fs.statSync(file).mtimeMs, madeAt);
    assert.ok(fs.readFileSync(file).equals(made));
  },
);

test(
  'a cache V8 refuses (not its code) is replaced by a good one, and the run is as without it',
  { skip: builtIn && 'Node keeps this cache itself here' },
  () => {
    const p = place();
    const first = run(p);
    const file = onlyCache(p);
    fs.writeFileSync(file, Buffer.alloc(4096, 7), { mode: 0o600 });
    assert.deepEqual(run(p), first);
    const replaced = fs.readFileSync(file);
    assert.ok(!replaced.equals(Buffer.alloc(4096, 7)), 'the refused cache was replaced');
    const at = fs.statSync(file).mtimeMs;
    run(p);
    assert.equal(fs.statSync(file).mtimeMs, at, 'the replacement is used');
  },
);

test(
  "a cache file others could have written is not read: it is replaced by one of this user's",
  { skip: (builtIn && 'Node keeps this cache itself here') || (process.platform === 'win32' && 'no modes on Windows') },
  () => {
    const p = place();
    run(p);
    const file = onlyCache(p);
    fs.chmodSync(file, 0o666);
    run(p);
    // A good cache that was read would have been used and left alone; this one was rewritten.
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  },
);

test(
  'a cache directory others could write is not used at all',
  { skip: (builtIn && 'Node keeps this cache itself here') || (process.platform === 'win32' && 'no modes on Windows') },
  () => {
    const p = place();
    fs.mkdirSync(p.cacheDir, { recursive: true });
    fs.chmodSync(p.cacheDir, 0o777);
    assert.equal(run(p).tag, 'first');
    assert.deepEqual(cacheFiles(p), []);
  },
);

test(
  'a changed bundle gets its own cache, and the one of the old text is removed',
  { skip: builtIn && 'Node keeps this cache itself here' },
  () => {
    const p = place();
    run(p);
    const old = onlyCache(p);
    writeBundle(p.bundle, 'second');
    assert.equal(run(p).tag, 'second');
    const current = onlyCache(p);
    assert.notEqual(current, old);
  },
);

test(
  'a bundle rewritten in place to another text of the same length gets its own cache, never the old one',
  { skip: builtIn && 'Node keeps this cache itself here' },
  () => {
    // V8 checks a cache against the length of the text alone: the old code would run the new text.
    const p = place();
    run(p);
    const old = onlyCache(p);
    const inode = fs.statSync(p.bundle).ino;
    writeBundle(p.bundle, 'fir5t');
    assert.equal(fs.statSync(p.bundle).ino, inode, 'the same file, written again');
    assert.equal(run(p).tag, 'fir5t');
    assert.notEqual(onlyCache(p), old);
  },
);

const noCache: { name: string; env: (p: Place) => NodeJS.ProcessEnv }[] = [
  { name: 'KCH_COMPILE_CACHE=off', env: () => ({ KCH_COMPILE_CACHE: 'off' }) },
  { name: 'NODE_DISABLE_COMPILE_CACHE=1', env: () => ({ NODE_DISABLE_COMPILE_CACHE: '1' }) },
  {
    name: 'a cache place that is a file, not a directory',
    env: (p) => {
      fs.writeFileSync(path.join(p.root, 'not-a-dir'), '');
      return { XDG_CACHE_HOME: path.join(p.root, 'not-a-dir') };
    },
  },
  {
    name: 'a relative XDG_CACHE_HOME, and a home where no directory can be made',
    env: (p) => {
      fs.writeFileSync(path.join(p.root, 'home-file'), '');
      return { XDG_CACHE_HOME: 'relative/place', HOME: path.join(p.root, 'home-file') };
    },
  },
];
for (const c of noCache) {
  test(`no cache, and the same run: ${c.name}`, () => {
    const p = place();
    const env = c.env(p);
    const r = run(p, env);
    assert.equal(r.tag, 'first');
    assert.equal(r.work, 295);
    assert.deepEqual(cacheFiles(p), []);
  });
}

test('the bundles the entries start are ASCII: each read as a one-byte string, not twice its size', () => {
  // scripts/bundle.mjs escapes what esbuild leaves (comments, a regular expression); dist/ as the test run built it.
  const dist = path.resolve(import.meta.dirname, '../../../dist');
  for (const name of ['cli-bundle.js', 'server-bundle.js']) {
    const text = fs.readFileSync(path.join(dist, name), 'latin1');
    assert.equal(/[^\x00-\x7f]/.exec(text)?.index, undefined, name);
  }
});

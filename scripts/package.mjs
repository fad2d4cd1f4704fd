// Builds the .vsix: production bundles (unless --no-bundle: package what dist/ holds), then vsce on a
// folder of its own. The top-level .vscodeignore is the .vsix's allow-list and package.json's `files`
// the npm package's; vsce refuses a manifest with `files` beside a .vscodeignore, so the files the
// .vscodeignore lets in (as vsce itself lists them) are copied into a scratch folder with the manifest
// less its `files`, and packed there. The README's screenshot ships inside the package, so its
// relative link is kept as it is (there is no public repository URL to rewrite it against).
//
//   node scripts/package.mjs [--no-bundle] [--out=dist/kube-conflict-hints.vsix]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const out = path.resolve(
  root,
  process.argv.find((a) => a.startsWith('--out='))?.slice(6) ?? path.join('dist', 'kube-conflict-hints.vsix'),
);
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})`);
  return r.stdout;
}

function main() {
  if (!process.argv.includes('--no-bundle'))
    run(process.execPath, [path.join(root, 'scripts', 'bundle.mjs'), '--production']);

  const files = run(
    process.execPath,
    [vsce, 'ls', '--no-dependencies', '--ignoreFile', path.join(root, '.vscodeignore')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
    .split('\n')
    .filter(Boolean);
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-vsix-'));
  try {
    for (const file of files) {
      if (file === 'package.json') continue;
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
      fs.copyFileSync(path.join(root, file), path.join(stage, file));
    }
    const { files: _npmFiles, ...manifest } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.copyFileSync(path.join(root, '.vscodeignore'), path.join(stage, '.vscodeignore'));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    run(
      process.execPath,
      [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', out],
      { cwd: stage },
    );
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

try {
  main();
} catch (e) {
  console.error(`package: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}

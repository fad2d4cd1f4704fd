// Builds the .vsix: production bundles (unless --no-bundle: package what dist/ holds), then vsce
// with the allow-list in package.json's `files`, the same list `npm pack` uses for the npm package
// (vsce refuses a .vscodeignore beside it). The README's screenshot ships inside the package, so its
// relative link is kept as it is (there is no public repository URL to rewrite it against).
//
//   node scripts/package.mjs [--no-bundle] [--out=dist/kube-conflict-hints.vsix]
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const out = process.argv.find((a) => a.startsWith('--out='))?.slice(6) ?? path.join(root, 'dist', 'kube-conflict-hints.vsix');

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    console.error(`package: \`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
}

if (!process.argv.includes('--no-bundle')) run(process.execPath, [path.join(root, 'scripts', 'bundle.mjs'), '--production']);
run('npx', ['vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', out]);

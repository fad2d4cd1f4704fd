#!/usr/bin/env node
// The one test command (`npm test`): type-check, bundle, start the local kube-apiserver, prepare the
// real editor, run every suite in one node:test run, stop the server. Under CI=true nothing may be
// skipped for lack of a prerequisite: a missing Go toolchain or editor is a failure.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);
const onlyArgs = process.argv.slice(2); // optional: test files or folders to run

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`test: \`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
}

function findTests(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  const st = fs.statSync(dir);
  if (st.isFile()) return dir.endsWith('.test.ts') ? [...out, dir] : out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (['node_modules', 'out', 'vscode', 'apiserver'].includes(entry.name)) continue;
      findTests(p, out);
    } else if (entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

run('npx', ['tsc', '-b']);
run('node', ['scripts/bundle.mjs']);

const env = { ...process.env };

// Real Helm 4, Helm 3 and kustomize for the tests (test/tools/): built once from pinned Go modules,
// then only when a module changes; their paths reach the tests as KCH_HELM4, KCH_HELM3, KCH_KUSTOMIZE.
const toolsCli = 'test/tools/build.ts';
if (fs.existsSync(toolsCli)) {
  const built = spawnSync('node', ['--import', 'tsx', toolsCli], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (built.status !== 0) process.exit(built.status || 1);
  for (const [, name, value] of built.stdout.matchAll(/^(KCH_[A-Z0-9_]+)=(.+)$/gm)) env[name] = value;
}

let clusterStarted = false;
const clusterCli = 'test/support/cluster-cli.ts';
if (fs.existsSync(clusterCli)) {
  // A cluster someone else started (another run, a developer's `npm run cluster:up`) is theirs to stop.
  const running = spawnSync('node', ['--import', 'tsx', clusterCli, 'status'], { stdio: 'ignore' }).status === 0;
  run('node', ['--import', 'tsx', clusterCli, 'up']);
  // Where `up` left it: the state directory may be shared with another checkout (KCH_CLUSTER_STATE_DIR).
  const info = JSON.parse(
    fs.readFileSync(path.join(process.env.KCH_CLUSTER_STATE_DIR ?? '.cache/cluster', 'env.json'), 'utf8'),
  );
  env.KCH_KUBECONFIG = info.kubeconfig;
  env.KCH_AUDIT_LOG = info.auditLog;
  env.KCH_SERVER = info.server;
  clusterStarted = !running;
}

const files = (onlyArgs.length ? onlyArgs : ['test']).flatMap((p) => findTests(p)).sort();
if (files.length === 0) {
  console.error('test: no test files found');
  process.exit(1);
}

// The end-to-end tests drive the packaged extension in code-server: prepare the editor (cached, seconds
// when warm) and package the bundle just built. Outside CI a machine that cannot set it up skips them.
if (files.some((f) => f.split(path.sep).includes('e2e'))) {
  const setup = spawnSync('node', ['scripts/setup-editor.mjs'], { stdio: 'inherit' });
  if (setup.status !== 0 && process.env.CI === 'true') {
    if (clusterStarted && !process.env.KCH_KEEP_CLUSTER)
      spawnSync('node', ['--import', 'tsx', clusterCli, 'down'], { stdio: 'inherit' });
    process.exit(setup.status || 1);
  }
  // A package of this run's own: others sharing the checkout rebuild dist/ while the tests run.
  env.KCH_VSIX = path.join(root, '.cache', 'editor', `kube-conflict-hints.${process.pid}.vsix`);
  fs.mkdirSync(path.dirname(env.KCH_VSIX), { recursive: true });
  run('node', ['scripts/package.mjs', '--no-bundle', `--out=${env.KCH_VSIX}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
// The editor tests drive Debian's Neovim and Emacs (with eglot and yaml-mode): install what is missing
// (CI runs as root on a clean machine).
if (files.some((f) => f.split(path.sep).includes('editors'))) {
  const missing = [];
  if (spawnSync('nvim', ['--version'], { stdio: 'ignore' }).status !== 0) missing.push('neovim');
  const emacsLoads = (feature) =>
    spawnSync('emacs', ['--batch', '--eval', `(require '${feature})`], { stdio: 'ignore' }).status === 0;
  if (!emacsLoads('eglot') || !emacsLoads('yaml-mode')) missing.push('emacs-nox', 'elpa-eglot', 'elpa-yaml-mode');
  if (missing.length && process.getuid?.() === 0) {
    console.log(`test: installing ${missing.join(' ')} (apt-get) for test/editors`);
    const apt = (args) =>
      spawnSync('apt-get', args, {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).status === 0;
    if (!apt(['update']) || !apt(['install', '-y', '--no-install-recommends', ...missing]))
      console.error(`test: apt-get install ${missing.join(' ')} failed`);
  } else if (missing.length) {
    console.error(
      `test: ${missing.join(' ')} missing and only root can install them: apt-get install -y ${missing.join(' ')}`,
    );
  }
}
// The spec reporter for the details; then the counts of product tests apart from harness checks.
const reporters = [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/test-summary.mjs',
  '--test-reporter-destination=stdout',
];
// Test files run side by side (node's default: one fewer than the cores). KCH_TEST_CONCURRENCY sets
// the number, to run here as a machine with more cores would.
const concurrency = /^[1-9][0-9]?$/.test(process.env.KCH_TEST_CONCURRENCY ?? '')
  ? [`--test-concurrency=${process.env.KCH_TEST_CONCURRENCY}`]
  : [];
const result = spawnSync('node', ['--import', 'tsx', '--test', ...concurrency, ...reporters, ...files], {
  stdio: 'inherit',
  env,
});

if (env.KCH_VSIX) fs.rmSync(env.KCH_VSIX, { force: true });
if (clusterStarted && !process.env.KCH_KEEP_CLUSTER) {
  spawnSync('node', ['--import', 'tsx', clusterCli, 'down'], { stdio: 'inherit' });
  // The extra clusters the fleet tests started (test/support/fleet.ts), each in its own state folder.
  const fleet = path.join(root, '.cache', 'fleet');
  for (const name of fs.existsSync(fleet) ? fs.readdirSync(fleet) : [])
    if (fs.existsSync(path.join(fleet, name, 'state.json')))
      spawnSync('node', ['--import', 'tsx', clusterCli, 'down'], {
        stdio: 'inherit',
        env: { ...process.env, KCH_CLUSTER_STATE_DIR: path.join(fleet, name) },
      });
}
process.exit(result.status ?? 1);

#!/usr/bin/env node
// `npm run test:mutations`: plants each fault of a fixed list in a scratch copy of the project and
// runs the tests that must notice it. A fault in server/src/core/ must be caught by the unit tests
// alone (no cluster); a fault in server/src/cluster/ by its tests (test/unit/cluster/) against the
// local kube-apiserver (started here when it is not running, and stopped again unless
// KCH_KEEP_CLUSTER is set); so is a fault in server/src/cli/ by the command line's tests. The working tree is never touched. Exit code 1 when any fault survives,
// or when the tests fail without any fault.
//   node scripts/mutations.mjs                 every mutation
//   node scripts/mutations.mjs --only=a,b      some of them (by id)
//   node scripts/mutations.mjs --list          the list
// The list itself is scripts/mutation-list.mjs.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { mutations } from './mutation-list.mjs';

const root = path.resolve(import.meta.dirname, '..');

const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const m of mutations) console.log(`${m.id.padEnd(36)} ${m.file}  ${m.rule}`);
  process.exit(0);
}
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const selected = only ? mutations.filter((m) => only.includes(m.id)) : mutations;
if (only && selected.length !== only.length) {
  console.error(`mutations: unknown id(s): ${only.filter((id) => !mutations.some((m) => m.id === id)).join(', ')}`);
  process.exit(2);
}

// Every mutation must still apply: a text that moved is a broken list, not a caught fault.
for (const m of selected) {
  const text = fs.readFileSync(path.join(root, m.file), 'utf8');
  const count = text.split(m.from).length - 1;
  if (count !== 1) {
    console.error(`mutations: ${m.id}: the text to replace occurs ${count} times in ${m.file}; update the list`);
    process.exit(2);
  }
}

// The scratch copy: every file git knows (tracked or new, not ignored), node_modules linked.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-mutations-'));
const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
});
if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
for (const rel of listed.stdout.split('\0').filter(Boolean)) {
  const from = path.join(root, rel);
  if (
    !fs.existsSync(from) ||
    fs.lstatSync(from).isDirectory() ||
    rel === 'node_modules' ||
    rel.startsWith('node_modules/')
  )
    continue;
  fs.mkdirSync(path.dirname(path.join(scratch, rel)), { recursive: true });
  fs.copyFileSync(from, path.join(scratch, rel));
}
fs.symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));

// The cluster, only when a cluster mutation is selected: where scripts/test.mjs finds it (a state
// directory shared with another checkout, KCH_CLUSTER_STATE_DIR), stopped again only when this run
// started it and KCH_KEEP_CLUSTER does not say to keep it.
const env = { ...process.env };
delete env.CI; // a skipped test must not pass for a failure: the baseline below runs the same way
let startedCluster = false;
// Only the core is judged by unit tests alone; a fault anywhere else (cluster/, cli/) by tests that may need the cluster.
const judgedAlone = (m) => m.file.startsWith('server/src/core/');
const needsCluster = selected.some((m) => !judgedAlone(m));
const clusterCli = ['--import', 'tsx', 'test/support/cluster-cli.ts'];
const clusterState = path.resolve(root, process.env.KCH_CLUSTER_STATE_DIR ?? '.cache/cluster');
function clusterEnv() {
  const info = JSON.parse(fs.readFileSync(path.join(clusterState, 'env.json'), 'utf8'));
  return { KCH_KUBECONFIG: info.kubeconfig, KCH_AUDIT_LOG: info.auditLog, KCH_SERVER: info.server };
}
// The real Helm and kustomize some of the tests run, as scripts/test.mjs finds them (test/tools/:
// built once from pinned Go modules; their paths reach the tests as KCH_HELM4, KCH_HELM3, KCH_KUSTOMIZE).
const tools = spawnSync('node', ['--import', 'tsx', 'test/tools/build.ts'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
if (tools.status !== 0) {
  console.error('mutations: the test tools (test/tools/build.ts) did not build');
  fs.rmSync(scratch, { recursive: true, force: true });
  process.exit(2);
}
for (const [, name, value] of tools.stdout.matchAll(/^(KCH_[A-Z0-9_]+)=(.+)$/gm)) env[name] = value;
// A cluster the scratch copy's tests start (the fleet's extra API servers) runs the binaries built here.
env.KCH_APISERVER_BIN_DIR ??= path.join(root, '.cache', 'apiserver', 'bin');
const coreEnv = { ...env };
for (const k of ['KCH_KUBECONFIG', 'KCH_AUDIT_LOG', 'KCH_SERVER']) delete coreEnv[k];
let withCluster;

function runTests(files, testEnv) {
  const started = Date.now();
  const r = spawnSync('node', ['--import', 'tsx', '--test', '--test-reporter=dot', ...files], {
    cwd: scratch,
    env: testEnv,
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const skipped = Number(/# skipped (\d+)/.exec(out)?.[1] ?? /ℹ skipped (\d+)/.exec(out)?.[1] ?? 0);
  return {
    ok: r.status === 0,
    timedOut: r.error?.code === 'ETIMEDOUT',
    seconds: (Date.now() - started) / 1000,
    out,
    skipped,
  };
}

const results = [];
let exitCode = 0;
try {
  if (needsCluster) {
    const wasRunning = fs.existsSync(path.join(clusterState, 'env.json'));
    const up = spawnSync('node', [...clusterCli, 'up'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    if (up.status !== 0) throw new Error('the local kube-apiserver did not start');
    startedCluster = !wasRunning && !process.env.KCH_KEEP_CLUSTER;
    withCluster = { ...env, ...clusterEnv(), CI: 'true' }; // with a cluster, nothing may skip
  }
  const envFor = (m) => (judgedAlone(m) ? coreEnv : withCluster);

  // Baseline: the same tests on the unmutated copy must pass, else a "caught" means nothing.
  const baselines = new Map();
  for (const m of selected) baselines.set(`${judgedAlone(m)}|${m.tests.join(' ')}`, m);
  for (const m of baselines.values()) {
    const base = runTests(m.tests, envFor(m));
    if (!base.ok) {
      console.error(base.out.split('\n').slice(-40).join('\n'));
      throw new Error(`the tests fail without any mutation: ${m.tests.join(' ')}`);
    }
    console.log(`baseline passes (${base.seconds.toFixed(0)} s): ${m.tests.join(' ')}`);
  }

  for (const m of selected) {
    const file = path.join(scratch, m.file);
    const original = fs.readFileSync(file, 'utf8');
    let r;
    try {
      fs.writeFileSync(
        file,
        original.replace(m.from, () => m.to),
      );
      r = runTests(m.tests, envFor(m));
    } finally {
      fs.writeFileSync(file, original);
    }
    const caught = !r.ok;
    results.push({ ...m, caught, seconds: r.seconds, timedOut: r.timedOut });
    console.log(
      `${caught ? 'caught  ' : 'SURVIVED'} ${m.id.padEnd(36)} ${r.seconds.toFixed(0).padStart(4)} s  ${m.file}: ${m.rule}${r.timedOut ? ' (timed out)' : ''}`,
    );
  }
  const survivors = results.filter((r) => !r.caught);
  console.log(
    `\nmutations: ${results.length - survivors.length}/${results.length} caught${survivors.length ? `; survived: ${survivors.map((s) => s.id).join(', ')}` : ''}`,
  );
  if (survivors.length > 0) exitCode = 1;
} catch (e) {
  console.error(`mutations: ${e instanceof Error ? e.message : String(e)}`);
  exitCode = 2;
} finally {
  // The extra API servers the fleet tests started in the scratch copy (test/support/fleet.ts) are its own.
  const fleet = path.join(scratch, '.cache', 'fleet');
  for (const name of fs.existsSync(fleet) ? fs.readdirSync(fleet) : [])
    spawnSync('node', [...clusterCli, 'down'], {
      cwd: root,
      env: { ...process.env, KCH_CLUSTER_STATE_DIR: path.join(fleet, name) },
      stdio: 'ignore',
    });
  fs.rmSync(scratch, { recursive: true, force: true });
  if (startedCluster) spawnSync('node', [...clusterCli, 'down'], { cwd: root, stdio: 'inherit' });
}
process.exit(exitCode);

// `npm run cluster:down` must stop the cluster `npm run cluster:up` started, whatever binaries it was
// started from: a cluster started with KCH_APISERVER_BIN_DIR and stopped by a plain `down` used to be
// forgotten (state.json deleted) while etcd and kube-apiserver kept running.
//
// Each case starts a second, private cluster (its own state directory, so the run's own cluster is
// untouched) from a bin directory that is a symlink to the built binaries, then stops it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { binariesAreCurrent, repoRoot } from '../support/cluster';

const cli = path.join(repoRoot, 'test', 'support', 'cluster-cli.ts');
// Where binariesAreCurrent() looked: the run's own KCH_APISERVER_BIN_DIR, or the checkout's build.
const builtBinDir = path.resolve(
  process.env.KCH_APISERVER_BIN_DIR ?? path.join(repoRoot, '.cache', 'apiserver', 'bin'),
);

function clusterCli(
  command: string,
  env: Record<string, string | undefined>,
): { status: number | null; output: string } {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  delete merged.KCH_APISERVER_BIN_DIR;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, command], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: merged,
    timeout: 240_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The program a process runs (argv[0]), or undefined when it is gone (a zombie counts as gone). */
function programOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return undefined;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] || undefined;
  } catch {
    return undefined;
  }
}

function requireBinaries(t: TestContext): boolean {
  if (binariesAreCurrent()) return true;
  const why = 'kube-apiserver and etcd are not built: run through `npm test` (it builds them) or `npm run cluster:up`';
  if (process.env.CI === 'true') throw new Error(why);
  t.skip(why);
  return false;
}

const cases: { name: string; downBinDir: 'same' | 'none' }[] = [
  { name: 'a plain `down` (no KCH_APISERVER_BIN_DIR)', downBinDir: 'none' },
  { name: 'a `down` with the same KCH_APISERVER_BIN_DIR', downBinDir: 'same' },
];

for (const c of cases) {
  test(
    `cluster up with KCH_APISERVER_BIN_DIR, then ${c.name}: etcd and kube-apiserver stop`,
    { timeout: 300_000 },
    (t) => {
      if (!requireBinaries(t)) return;
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-bindir-'));
      const binDir = path.join(tmp, 'bin');
      fs.symlinkSync(fs.realpathSync(builtBinDir), binDir);
      const stateDir = path.join(tmp, 'state');
      const pids: number[] = [];
      t.after(() => {
        // Whatever the outcome, nothing of this case keeps running.
        for (const pid of pids) {
          if (programOf(pid)?.startsWith(binDir)) process.kill(pid, 'SIGKILL');
        }
        fs.rmSync(tmp, { recursive: true, force: true });
      });

      const upped = clusterCli('up', { KCH_APISERVER_BIN_DIR: binDir, KCH_CLUSTER_STATE_DIR: stateDir });
      assert.equal(upped.status, 0, upped.output);
      const state = JSON.parse(fs.readFileSync(path.join(stateDir, 'state.json'), 'utf8')) as {
        pids: { etcd: number; apiserver: number };
      };
      pids.push(state.pids.etcd, state.pids.apiserver);
      // The positive state first: both run, from the separate bin directory.
      assert.equal(programOf(state.pids.etcd), path.join(binDir, 'etcd'));
      assert.equal(programOf(state.pids.apiserver), path.join(binDir, 'kube-apiserver'));
      assert.equal(
        clusterCli('status', { KCH_CLUSTER_STATE_DIR: stateDir }).status,
        0,
        'status sees the cluster running',
      );

      const downed = clusterCli('down', {
        KCH_CLUSTER_STATE_DIR: stateDir,
        KCH_APISERVER_BIN_DIR: c.downBinDir === 'same' ? binDir : undefined,
      });
      assert.equal(downed.status, 0, downed.output);
      assert.equal(programOf(state.pids.etcd), undefined, `etcd (pid ${state.pids.etcd}) still runs after down`);
      assert.equal(
        programOf(state.pids.apiserver),
        undefined,
        `kube-apiserver (pid ${state.pids.apiserver}) still runs after down`,
      );
      assert.ok(!fs.existsSync(path.join(stateDir, 'state.json')), 'state.json is removed once both are stopped');
      assert.equal(clusterCli('status', { KCH_CLUSTER_STATE_DIR: stateDir }).status, 3, 'status says not running');
    },
  );
}

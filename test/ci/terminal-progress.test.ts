// The check's progress line: on a terminal (a pseudo-terminal made by util-linux `script`) stderr
// shows how far the check is and clears it before the results; in CI logs and pipes (not a
// terminal) nothing extra is written at all. Against the local kube-apiserver.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot, runCli, scratchDir, writeFiles } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { configMap, connect, freshNamespace } from '../support/seed';

let prepared: Promise<{ dir: string; kubeconfig: string }> | undefined;
function manifests(t: TestContext) {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  prepared ??= (async () => {
    const namespace = await freshNamespace(connect('admin', cluster.kubeconfig), 'progress');
    const dir = scratchDir('progress');
    const files: Record<string, string> = {};
    for (let i = 0; i < 3; i++)
      files[`k8s/cm-${i}.yaml`] = `${JSON.stringify(configMap(namespace, `cm-${i}`, { n: String(i) }), null, 2)}\n`;
    writeFiles(dir, files);
    return { dir, kubeconfig: cluster.kubeconfig };
  })();
  return prepared;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

test(
  'not a terminal (CI logs, pipes): stderr stays empty, stdout is the results alone',
  { timeout: 120_000 },
  async (t) => {
    const ready = await manifests(t);
    if (!ready) return;
    const run = await runCli(['check', '--kubeconfig', ready.kubeconfig, 'k8s'], { cwd: ready.dir });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.doesNotMatch(run.stdout, /checked \d+ object|\r|\x1b/);
    assert.match(run.stdout, /0 errors, 0 warnings, 0 information — 3 objects judged in 3 files/);
  },
);

test('a terminal: a progress line on stderr, cleared before the results', { timeout: 120_000 }, async (t) => {
  const ready = await manifests(t);
  if (!ready) return;
  const probe = spawnSync('script', ['--version'], { encoding: 'utf8' });
  assert.equal(probe.status, 0, 'util-linux script is needed to make a pseudo-terminal');
  // The bundle runCli built (test/out/cli/cli.js), on a pseudo-terminal.
  await runCli(['--version']);
  const cli = path.join(repoRoot, 'test', 'out', 'cli', 'cli.js');
  const command = [process.execPath, cli, 'check', '--kubeconfig', ready.kubeconfig, 'k8s'].map(quote).join(' ');
  const run = spawnSync('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    cwd: ready.dir,
    env: { PATH: process.env.PATH ?? '', HOME: ready.dir, TERM: 'xterm' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.equal(run.status, 0, run.stderr);
  const screen = run.stdout;
  assert.match(screen, /\r\x1b\[2Kkube-conflict-hints: checked 1 object \(file 1 of 3\)/);
  // Cleared, then the results on a clean line.
  const cleared = screen.lastIndexOf('\r\x1b[2K');
  const results = screen.indexOf('0 errors, 0 warnings');
  assert.ok(cleared >= 0 && results > cleared, JSON.stringify(screen));
  assert.doesNotMatch(screen.slice(cleared + 5), /checked \d+ object/);
});

// Without Go or without the module proxy, starting the test cluster must fail with one clear line
// (npm test then stops; under CI=true that is a failure, never a skip). These run without a cluster.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/cluster';

const cli = path.join(repoRoot, 'test', 'support', 'cluster-cli.ts');

function buildInto(binDir: string, env: Record<string, string>): { status: number | null; stderrLines: string[] } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'build'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, KCH_APISERVER_BIN_DIR: binDir, ...env },
    timeout: 60_000,
  });
  return { status: r.status, stderrLines: r.stderr.split('\n').filter((l) => l.trim()) };
}

const cases: { name: string; env: (tmp: string) => Record<string, string>; line: RegExp }[] = [
  {
    name: 'no Go on PATH',
    env: () => ({ PATH: '/nonexistent' }),
    line: /^cluster: Go is not installed \(no `go` on PATH\)/,
  },
  {
    name: 'no module proxy and an empty module cache',
    env: (tmp) => ({ GOPROXY: 'off', GOMODCACHE: path.join(tmp, 'modcache'), GOFLAGS: '-mod=mod' }),
    line: /^cluster: cannot download the Go modules for kube-apiserver \(is the Go module proxy reachable\? GOPROXY=off\)/,
  },
];

for (const c of cases) {
  test(`cluster build with ${c.name} fails with one clear line`, (t) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-build-'));
    t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const result = buildInto(path.join(tmp, 'bin'), c.env(tmp));
    assert.equal(result.status, 1);
    // A progress line may precede the failure (the download starts before it can fail).
    const failures = result.stderrLines.filter((l) => !l.startsWith('cluster: building '));
    assert.equal(failures.length, 1, result.stderrLines.join('\n'));
    assert.match(failures[0]!, c.line);
  });
}

// Files that are not manifests and would make a reader hang or read without end: a device that
// never ends (/dev/zero), a FIFO nobody writes to, a file far larger than any manifest. kubectl
// reads /dev/zero until it runs out of memory and waits on a FIFO forever; the check refuses each
// with one line and exit 2, before it reads a byte — named directly, found in a folder, or reached
// through a link. No cluster is needed: the files are refused before one is asked.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { maxFileBytes } from '../../server/src/cli/files';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';

const dir = scratchDir('special');
const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\ndata:\n  k: v\n';
writeFiles(dir, { 'ok/a.yaml': manifest, 'snap/empty.yaml': '' });
execFileSync('mkfifo', [path.join(dir, 'pipe.yaml')]);
// A sparse file: larger than the limit on paper, no disk used.
fs.writeFileSync(path.join(dir, 'huge.yaml'), '');
fs.truncateSync(path.join(dir, 'huge.yaml'), maxFileBytes + 1);
for (const [name, target] of [
  ['zero-link/zero.yaml', '/dev/zero'],
  ['pipe-link/pipe.yaml', path.join(dir, 'pipe.yaml')],
  ['huge-link/huge.yaml', path.join(dir, 'huge.yaml')],
] as const) {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  fs.symlinkSync(target, path.join(dir, name));
}
fs.mkdirSync(path.join(dir, 'fifo-dir'));
execFileSync('mkfifo', [path.join(dir, 'fifo-dir', 'in-a-folder.yaml')]);

const cases: { name: string; args: string[]; says: RegExp }[] = [
  {
    name: '/dev/zero named directly',
    args: ['/dev/zero'],
    says: /\/dev\/zero is a character device, not a regular file: not read/,
  },
  {
    name: 'a FIFO named directly',
    args: ['pipe.yaml'],
    says: /pipe\.yaml is a FIFO \(named pipe\), not a regular file: not read/,
  },
  {
    name: 'a FIFO in a folder',
    args: ['fifo-dir'],
    says: /in-a-folder\.yaml is a FIFO \(named pipe\), not a regular file: not read/,
  },
  {
    name: 'a link to /dev/zero in a folder',
    args: ['zero-link'],
    says: /zero\.yaml is a character device, not a regular file: not read/,
  },
  {
    name: 'a link to a FIFO in a folder',
    args: ['pipe-link'],
    says: /pipe\.yaml is a FIFO \(named pipe\), not a regular file: not read/,
  },
  {
    name: 'a file over the limit',
    args: ['huge.yaml'],
    says: new RegExp(
      `huge\\.yaml is larger than ${maxFileBytes / 1024 / 1024} MiB \\(${maxFileBytes + 1} bytes\\): not read`,
    ),
  },
  { name: 'a link to a file over the limit', args: ['huge-link'], says: /huge\.yaml is larger than \d+ MiB/ },
  // Beside a good manifest: the refusal is not lost among findings.
  { name: 'a FIFO beside a manifest', args: ['ok', 'pipe.yaml'], says: /pipe\.yaml is a FIFO/ },
];

for (const c of cases) {
  test(`check refuses ${c.name}: one line, exit 2`, async () => {
    // An empty snapshot: no cluster is contacted, so only the file decides the outcome.
    const run = await runCli(['check', '--snapshot', 'snap', ...c.args], { cwd: dir });
    assert.equal(run.status, 2, `exit ${run.status}\n${run.stdout}${run.stderr}`);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^kube-conflict-hints: [^\n]*\n$/, 'one line');
    assert.match(run.stderr, c.says);
  });
}

test('the same files make snapshot stop with one line, exit 2, before it asks a cluster', async () => {
  for (const target of ['/dev/zero', 'pipe.yaml', 'huge.yaml', 'zero-link']) {
    // No kubeconfig at all: the files are read before any cluster is looked for.
    const run = await runCli(['snapshot', '--out', path.join(dir, 'out'), target], {
      cwd: dir,
      env: { KUBECONFIG: path.join(dir, 'none') },
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      /^kube-conflict-hints: [^\n]*(not a regular file|larger than \d+ MiB)[^\n]*\n$/,
      run.stderr,
    );
  }
});

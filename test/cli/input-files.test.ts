// Which files `check` reads, and what it says about files it cannot read, next to the real kubectl
// on the same directories (`kubectl create --dry-run=client -o name -R -f DIR`, which prints the
// objects it read): the same objects from the same tree — extensions compared exactly, hidden
// files, links to files followed, links to directories not — and a refusal wherever kubectl
// refuses, as one line and exit 2. docs/cli-input.md has the table.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { runCli, scratchDir, unprivilegedUser, writeFiles, type CliRun } from './cli-process';

const cm = (name: string, eol = '\n') =>
  [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    'data:',
    '  k: v',
    '',
  ].join(eol);
const cmJson = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { k: 'v' } });

interface Run {
  status: number | null;
  names: string[];
  stderr: string;
}

/** What kubectl reads of `targets`: the objects it names, its exit code and its errors. */
function kubectl(cluster: TestClusterInfo, cwd: string, targets: string[], user?: { uid: number; gid: number }): Run {
  const args = [
    '--kubeconfig',
    cluster.kubeconfig,
    '--context',
    'admin',
    'create',
    '--dry-run=client',
    '-o',
    'name',
    '-R',
    ...targets.flatMap((t) => ['-f', t]),
  ];
  const r = spawnSync('kubectl', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd },
    ...(user ?? {}),
  });
  return {
    status: r.status,
    names: r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/^configmap\//, ''))
      .sort(),
    stderr: r.stderr,
  };
}

/** What check reads of `targets`: the objects of its JSON report. */
async function check(
  cluster: TestClusterInfo,
  cwd: string,
  targets: string[],
  user?: { uid: number; gid: number },
): Promise<Run & { run: CliRun }> {
  const run = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--mode',
      'create',
      '--format',
      'json',
      ...targets,
    ],
    { cwd, ...(user ? { user } : {}) },
  );
  const names =
    run.status === 0
      ? (JSON.parse(run.stdout) as { objects: { object?: { name: string } }[] }).objects
          .map((o) => o.object?.name ?? '')
          .sort()
      : [];
  return { status: run.status, names, stderr: run.stderr, run };
}

function tree(): string {
  const dir = scratchDir('input');
  writeFiles(dir, {
    'real/target.yaml': cm('linked-file'),
    'real/inside-linked-dir.yaml': cm('inside-linked-dir'),
    'tree/plain.yaml': cm('plain'),
    'tree/short.yml': cm('short'),
    'tree/data.json': cmJson('json'),
    'tree/notes.txt': cm('txt'),
    'tree/SHOUT.YAML': cm('upper-case-extension'),
    'tree/.hidden.yaml': cm('hidden-file'),
    'tree/sub/deeper/nested.yaml': cm('nested'),
    'tree/two.yaml': `${cm('two-a')}---\n${cm('two-b')}`,
    'tree/crlf.yaml': cm('crlf', '\r\n'),
    'tree/bom.yaml': `\uFEFF${cm('bom')}`,
    // DEL is a control character to YAML but not to JSON: kubectl reads this JSON file.
    'tree/del.json': JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'del', namespace: 'default' },
      data: { k: 'a\u007Fb' },
    }),
  });
  fs.symlinkSync(path.join('..', 'real', 'target.yaml'), path.join(dir, 'tree', 'link.yaml'));
  fs.symlinkSync(path.join('..', 'real'), path.join(dir, 'tree', 'linked-dir'));
  return dir;
}

test('check reads the same objects as kubectl -R from a tree of manifests, links and odd names', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const dir = tree();
  const theirs = kubectl(cluster, dir, ['tree']);
  assert.equal(theirs.status, 0, theirs.stderr);
  const ours = await check(cluster, dir, ['tree']);
  assert.equal(ours.status, 0, ours.stderr);
  assert.deepEqual(ours.names, theirs.names);
  // What both read, spelled out: *.txt, *.YAML and the linked directory are not read.
  assert.deepEqual(ours.names, [
    'bom',
    'crlf',
    'del',
    'hidden-file',
    'json',
    'linked-file',
    'nested',
    'plain',
    'short',
    'two-a',
    'two-b',
  ]);
});

test('a file named on the command line is read whatever its name, as kubectl reads it', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const dir = tree();
  const targets = ['tree/notes.txt', 'tree/SHOUT.YAML', 'tree/link.yaml'];
  const theirs = kubectl(cluster, dir, targets);
  assert.equal(theirs.status, 0, theirs.stderr);
  const ours = await check(cluster, dir, targets);
  assert.deepEqual(ours.names, theirs.names);
  assert.deepEqual(ours.names, ['linked-file', 'txt', 'upper-case-extension']);
});

test('hidden folders and node_modules are skipped (where kubectl -R reads them)', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const dir = scratchDir('input');
  writeFiles(dir, {
    'repo/app.yaml': cm('app'),
    'repo/.git/ORIG.yaml': cm('in-git'),
    'repo/node_modules/pkg/chart.yaml': cm('in-node-modules'),
  });
  assert.deepEqual(kubectl(cluster, dir, ['repo']).names, ['app', 'in-git', 'in-node-modules']);
  assert.deepEqual((await check(cluster, dir, ['repo'])).names, ['app']);
});

interface Refusal {
  name: string;
  /** Builds the directory `case` under `dir`. */
  make: (dir: string) => void;
  /** kubectl's words for it. */
  kubectlSays: RegExp;
  /** check's one line. */
  says: RegExp;
  /** Needs permissions to hold (see unprivilegedUser). */
  permissions?: boolean;
}

const refusals: Refusal[] = [
  {
    name: 'a binary file named .yaml',
    make: (dir) =>
      writeFiles(dir, {
        'case/ok.yaml': cm('ok'),
        'case/program.yaml': '\u007FELF\u0002\u0001\u0001\u0000\u0000\u0000',
      }),
    kubectlSays: /error parsing case\/program\.yaml: .*yaml: control characters are not allowed/,
    says: /^kube-conflict-hints: case\/program\.yaml:1:1: control character U\+007F: not a text manifest/,
  },
  {
    name: 'a control character in a value',
    make: (dir) => writeFiles(dir, { 'case/escape.yaml': cm('escape').replace('k: v', 'k: "a\u001B[31mb"') }),
    kubectlSays: /yaml: control characters are not allowed/,
    says: /^kube-conflict-hints: case\/escape\.yaml:7:8: control character U\+001B: not a text manifest/,
  },
  {
    name: 'a control character in JSON',
    make: (dir) => writeFiles(dir, { 'case/data.json': cmJson('j').replace('"kind"', '\u0001"kind"') }),
    kubectlSays: /invalid character '\\x01'/,
    says: /^kube-conflict-hints: case\/data\.json:1:20: control character U\+0001/,
  },
  {
    name: 'a link to a missing file',
    make: (dir) => {
      writeFiles(dir, { 'case/ok.yaml': cm('ok') });
      fs.symlinkSync('gone.yaml', path.join(dir, 'case', 'dangling.yaml'));
    },
    kubectlSays: /open case\/dangling\.yaml: no such file or directory/,
    says: /^kube-conflict-hints: cannot read case\/dangling\.yaml: a link to a file that cannot be opened \(no such file or directory\)$/m,
  },
  {
    name: 'a link named like a manifest to a directory',
    make: (dir) => {
      writeFiles(dir, { 'case/ok.yaml': cm('ok'), 'elsewhere/x.yaml': cm('x') });
      fs.symlinkSync(path.join('..', 'elsewhere'), path.join(dir, 'case', 'folder.yaml'));
    },
    kubectlSays: /read case\/folder\.yaml: is a directory/,
    says: /^kube-conflict-hints: cannot read case\/folder\.yaml: a link to a directory, named like a manifest/,
  },
  {
    name: 'an unreadable subdirectory',
    make: (dir) => {
      writeFiles(dir, { 'case/ok.yaml': cm('ok'), 'case/locked/x.yaml': cm('x') });
      fs.chmodSync(path.join(dir, 'case', 'locked'), 0o000);
    },
    kubectlSays: /error reading "case": open case\/locked: permission denied/,
    says: /^kube-conflict-hints: cannot read the directory case\/locked: permission denied$/m,
    permissions: true,
  },
  {
    name: 'an unreadable file',
    make: (dir) => {
      writeFiles(dir, { 'case/ok.yaml': cm('ok'), 'case/secret.yaml': cm('secret') });
      fs.chmodSync(path.join(dir, 'case', 'secret.yaml'), 0o000);
    },
    kubectlSays: /open case\/secret\.yaml: permission denied/,
    says: /^kube-conflict-hints: cannot read case\/secret\.yaml: permission denied$/m,
    permissions: true,
  },
];

for (const r of refusals) {
  test(`${r.name}: kubectl refuses it, and check says so in one line, exit 2`, async (t: TestContext) => {
    let cluster = requireCluster(t);
    if (!cluster) return;
    const dir = scratchDir('input');
    r.make(dir);
    let user: { uid: number; gid: number } | undefined;
    if (r.permissions) {
      user = unprivilegedUser();
      // The other user must reach the directory and the kubeconfig (mkdtemp made them private).
      fs.chmodSync(dir, 0o755);
      if (user) {
        const copy = path.join(dir, 'kubeconfig');
        fs.copyFileSync(cluster.kubeconfig, copy);
        fs.chownSync(copy, user.uid, user.gid);
        cluster = { ...cluster, kubeconfig: copy };
      }
    }
    // Permissions back when done, so the scratch directory can be removed by a user who is not root.
    t.after(() => unlock(dir));
    const theirs = kubectl(cluster, dir, ['case'], user);
    assert.notEqual(theirs.status, 0, theirs.stderr);
    assert.match(theirs.stderr, r.kubectlSays);
    const ours = await check(cluster, dir, ['case'], user);
    assert.equal(ours.status, 2, `exit ${ours.status}\n${ours.run.stdout}${ours.stderr}`);
    assert.equal(ours.run.stdout, '');
    assert.match(ours.stderr, /^kube-conflict-hints: [^\n]*\n$/, `one line:\n${ours.stderr}`);
    assert.match(ours.stderr, r.says);
    assert.doesNotMatch(ours.stderr, /internal error|\n\s+at /);
  });
}

function unlock(p: string): void {
  const stat = fs.lstatSync(p);
  if (stat.isSymbolicLink()) return;
  fs.chmodSync(p, stat.isDirectory() ? 0o755 : 0o644);
  if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) unlock(path.join(p, entry));
}

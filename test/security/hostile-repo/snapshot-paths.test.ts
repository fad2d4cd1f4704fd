// A snapshot directory can come from someone else (a CI artifact, a pull request). Whatever its
// snapshot.json lists and whatever links it holds, `snapshot --out DIR` removes and writes nothing
// outside DIR, and `check --snapshot DIR` reads nothing outside DIR and quotes no file's text in an
// error. Each case plants a file outside the snapshot (a victim to keep, a secret not to print).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { apply, configMap, connect, freshNamespace, objectOf } from '../../support/seed';
import { runCli, scratchDir, writeFiles, type CliRun } from '../../cli/cli-process';

const secret = 'TOKEN-7f3a9c-do-not-print';
const precious = 'precious: keep me\n';

/** A snapshot.json as the tool writes it, for a cluster serving ConfigMaps; `over` makes it hostile. */
function index(over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    format: 'kube-conflict-hints/snapshot@1',
    createdAt: '2025-01-01T00:00:00.000Z',
    context: 'admin',
    server: 'https://127.0.0.1:6443',
    defaultNamespace: 'default',
    discovery: {
      groups: [{ name: '', versions: ['v1'] }],
      resources: [
        {
          group: '',
          version: 'v1',
          apiVersion: 'v1',
          kind: 'ConfigMap',
          resource: 'configmaps',
          singular: 'configmap',
          namespaced: true,
          verbs: ['get', 'list'],
          subresources: [],
          shortNames: ['cm'],
        },
      ],
    },
    openapi: {},
    objects: [],
    absent: [],
    ...over,
  });
}

function oneLine(run: CliRun): void {
  assert.equal(run.status, 2, `exit ${run.status}\n${run.stdout}${run.stderr}`);
  assert.match(run.stderr, /^kube-conflict-hints: [^\n]*\n$/, `one line:\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /internal error/);
}

// ---------------------------------------------------------------------------------------------
// check --snapshot: nothing outside DIR is read, nothing of a file's text is quoted

interface ReadCase {
  name: string;
  /** Plants the snapshot in `snap`; `outside` is a directory beside it holding secret.txt. */
  plant: (snap: string, outside: string) => void;
  says: RegExp;
}

const appManifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  k: v\n';
const outsideObject = `# ${secret}\n${appManifest}`;

const readCases: ReadCase[] = [
  {
    name: 'an OpenAPI document "../outside/secret.txt"',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ openapi: { v1: '../outside/secret.txt' } }) }),
    says: /snapshot\.json is not a snapshot .*: openapi\["v1"\] is "\.\.\/outside\/secret\.txt", not a file this tool writes \(openapi\/NAME\.json\)/,
  },
  {
    name: 'an OpenAPI document at an absolute path',
    plant: (snap, outside) =>
      writeFiles(snap, { 'snapshot.json': index({ openapi: { v1: path.join(outside, 'secret.txt') } }) }),
    says: /openapi\["v1"\] is ".*secret\.txt", not a file this tool writes/,
  },
  {
    name: 'an OpenAPI document that is a link to a file outside',
    plant: (snap, outside) => {
      writeFiles(snap, { 'snapshot.json': index({ openapi: { v1: 'openapi/api__v1.json' } }) });
      fs.mkdirSync(path.join(snap, 'openapi'));
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(snap, 'openapi', 'api__v1.json'));
    },
    says: /openapi\/api__v1\.json is a link to a file outside the snapshot directory: not read/,
  },
  {
    name: 'an OpenAPI document that is not JSON',
    plant: (snap) =>
      writeFiles(snap, {
        'snapshot.json': index({ openapi: { v1: 'openapi/api__v1.json' } }),
        'openapi/api__v1.json': `{"a": ${secret}}`,
      }),
    says: /openapi\/api__v1\.json is not JSON( \(line \d+, column \d+\))?$/m,
  },
  {
    name: 'an object file that is a link to a manifest outside',
    plant: (snap, outside) => {
      writeFiles(snap, { 'snapshot.json': index(), 'objects/.keep': '' });
      fs.writeFileSync(path.join(outside, 'object.yaml'), outsideObject);
      fs.symlinkSync(path.join(outside, 'object.yaml'), path.join(snap, 'objects', 'default__configmaps__app.yaml'));
    },
    says: /objects\/default__configmaps__app\.yaml is a link to a file outside the snapshot directory: not read/,
  },
  {
    name: 'a snapshot.json that is not JSON',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': `${secret}\n` }),
    says: /snapshot\.json is not JSON( \(line \d+, column \d+\))?$/m,
  },
  {
    name: 'a snapshot.json that is a link to a file outside',
    plant: (snap, outside) => {
      fs.mkdirSync(snap);
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(snap, 'snapshot.json'));
    },
    says: /snapshot\.json is a symbolic link/,
  },
  {
    name: 'a snapshot.json that is a FIFO',
    plant: (snap) => {
      fs.mkdirSync(snap);
      execFileSync('mkfifo', [path.join(snap, 'snapshot.json')]);
    },
    says: /snapshot\.json is a FIFO \(named pipe\), not a regular file: not read/,
  },
  {
    name: 'a discovery index of the wrong shape',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ discovery: {} }) }),
    says: /: discovery is not a discovery index/,
  },
  {
    name: 'an absent object of the wrong shape',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ absent: [{ apiVersion: 1 }] }) }),
    says: /: absent\[0\] is not an object reference/,
  },
  {
    name: 'an object path with a NUL',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ objects: ['objects/app.json\u0000'] }) }),
    says: /objects\[0\] is "objects\/app\.json\\u0000", not a file this tool writes/,
  },
];

for (const c of readCases) {
  test(`held: check --snapshot: ${c.name} is refused without reading or quoting anything outside`, async () => {
    const base = scratchDir('snap-read');
    const outside = path.join(base, 'outside');
    writeFiles(base, { 'outside/secret.txt': `${secret}\n`, 'app.yaml': appManifest });
    c.plant(path.join(base, 'snap'), outside);
    const run = await runCli(['check', '--snapshot', 'snap', 'app.yaml'], { cwd: base });
    oneLine(run);
    assert.match(run.stderr, c.says);
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(secret));
  });
}

test('held: check --snapshot: a folder that is a link to a folder outside is not followed', async () => {
  const base = scratchDir('snap-read');
  writeFiles(base, { 'outside/app.yaml': outsideObject, 'app.yaml': appManifest, 'snap/snapshot.json': index() });
  fs.symlinkSync(path.join(base, 'outside'), path.join(base, 'snap', 'objects'));
  const run = await runCli(['check', '--snapshot', 'snap', '--format', 'json', 'app.yaml'], { cwd: base });
  // Had the link been followed, the object would exist; the snapshot holds nothing of it, so it is
  // listed as not judged (exit 1), never counted clean.
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as { objects: { notes: string[] }[]; notJudged: { reason: string }[] };
  assert.match(report.objects[0]!.notes.join('\n'), /not in the snapshot snap/);
  assert.equal(report.notJudged.length, 1, JSON.stringify(report.notJudged));
});

// ---------------------------------------------------------------------------------------------
// snapshot --out: nothing outside DIR is removed or written

interface WriteSetup {
  cluster: TestClusterInfo;
  namespace: string;
  /** The file the live ConfigMap `app` is saved to. */
  objectFile: string;
}

let writeSetup: Promise<WriteSetup> | undefined;

async function live(t: TestContext): Promise<WriteSetup | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  writeSetup ??= (async () => {
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'snap-paths');
    objectOf(await apply(conn, 'kubectl', configMap(namespace, 'app', { k: 'v' })), 'apply app');
    return { cluster, namespace, objectFile: `objects/${namespace}__configmaps__app.json` };
  })();
  return writeSetup;
}

interface WriteCase {
  name: string;
  /** Plants the earlier snapshot in `snap`; the victims live in `base`. */
  plant: (snap: string, base: string, s: WriteSetup) => void;
  /** What the command says when it refuses; undefined when the snapshot is taken (exit 0). */
  says?: RegExp;
}

const writeCases: WriteCase[] = [
  {
    name: 'lists "../victim.txt" among its objects',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ objects: ['../victim.txt'] }) }),
    says: /objects\[0\] is "\.\.\/victim\.txt", not a file this tool writes \(objects\/NAME\.json\): nothing was removed/,
  },
  {
    name: 'lists an absolute path among its objects',
    plant: (snap, base) => writeFiles(snap, { 'snapshot.json': index({ objects: [path.join(base, 'victim.txt')] }) }),
    says: /objects\[0\] is ".*victim\.txt", not a file this tool writes/,
  },
  {
    name: 'lists "openapi/../../victim.txt" as an OpenAPI document',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ openapi: { v1: 'openapi/../../victim.txt' } }) }),
    says: /openapi\["v1"\] is "openapi\/\.\.\/\.\.\/victim\.txt", not a file this tool writes/,
  },
  {
    name: 'lists a path with backslashes',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ objects: ['objects\\..\\..\\victim.txt'] }) }),
    says: /objects\[0\] is "objects\\\\\.\.\\\\\.\.\\\\victim\.txt", not a file this tool writes/,
  },
  {
    name: 'lists a path with a NUL',
    plant: (snap) => writeFiles(snap, { 'snapshot.json': index({ objects: ['objects/a.json\u0000'] }) }),
    says: /objects\[0\] is "objects\/a\.json\\u0000", not a file this tool writes/,
  },
  {
    name: 'has objects/ as a link to a folder outside',
    plant: (snap, base) => {
      writeFiles(base, { 'elsewhere/app.json': precious });
      writeFiles(snap, { 'snapshot.json': index({ objects: ['objects/app.json'] }) });
      fs.symlinkSync(path.join(base, 'elsewhere'), path.join(snap, 'objects'));
    },
    says: /snap\/objects is a symbolic link: a snapshot writes only into directories of its own: nothing was removed/,
  },
  {
    name: 'has snapshot.json as a link to a file outside',
    plant: (snap, base) => {
      writeFiles(base, { 'victim.json': index() });
      fs.mkdirSync(snap);
      fs.symlinkSync(path.join(base, 'victim.json'), path.join(snap, 'snapshot.json'));
    },
    says: /snapshot\.json is a symbolic link/,
  },
  {
    name: 'lists a directory among its objects',
    plant: (snap) =>
      writeFiles(snap, {
        'snapshot.json': index({ objects: ['objects/dir.json'] }),
        'objects/dir.json/keep.txt': precious,
      }),
    says: /objects\/dir\.json, listed in snapshot\.json, is a directory: nothing was removed/,
  },
  {
    name: 'holds, where the object will be saved, a link to a file outside',
    plant: (snap, base, s) => {
      writeFiles(snap, { 'snapshot.json': index(), 'objects/.keep': '' });
      fs.symlinkSync(path.join(base, 'victim.txt'), path.join(snap, s.objectFile));
    },
  },
  {
    name: 'holds, where the object will be saved, a second hard link of a file outside',
    plant: (snap, base, s) => {
      writeFiles(snap, { 'snapshot.json': index(), 'objects/.keep': '' });
      fs.linkSync(path.join(base, 'victim.txt'), path.join(snap, s.objectFile));
    },
  },
];

for (const c of writeCases) {
  test(`held: snapshot --out over an earlier snapshot that ${c.name}: nothing outside is removed or written`, async (t) => {
    const s = await live(t);
    if (!s) return;
    const base = scratchDir('snap-write');
    writeFiles(base, { 'victim.txt': precious, 'app.yaml': toYaml(configMap(s.namespace, 'app', { k: 'v' })) });
    const snap = path.join(base, 'snap');
    c.plant(snap, base, s);
    const before = listTree(base, snap);
    const run = await runCli(
      ['snapshot', '--kubeconfig', s.cluster.kubeconfig, '--context', 'viewer', '--out', 'snap', 'app.yaml'],
      { cwd: base },
    );
    if (c.says) {
      oneLine(run);
      assert.match(run.stderr, c.says);
    } else {
      assert.equal(run.status, 0, run.stderr);
      const saved = JSON.parse(fs.readFileSync(path.join(snap, s.objectFile), 'utf8')) as {
        metadata: { name: string };
      };
      assert.equal(saved.metadata.name, 'app');
      assert.ok(!fs.lstatSync(path.join(snap, s.objectFile)).isSymbolicLink());
    }
    assert.deepEqual(listTree(base, snap), before, 'every file outside the snapshot is as it was');
    assert.equal(fs.readFileSync(path.join(base, 'victim.txt'), 'utf8'), precious);
  });
}

/** Every file under `dir` but `skip`, with its content: what a run may not change. */
function listTree(dir: string, skip: string, out: Record<string, string> = {}): Record<string, string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (p === skip) continue;
    if (entry.isDirectory()) listTree(p, skip, out);
    else if (entry.isFile()) out[path.relative(skip, p)] = fs.readFileSync(p, 'utf8');
  }
  return out;
}

// `kube-conflict-hints check` on objects bound for a namespace that does not exist, against the real
// kube-apiserver, whose own answer is asked first: a server-side apply, a create and their dry runs
// of such an object get 404 NotFound `namespaces "x" not found`, while a LIST in that namespace
// answers an empty list (so the object looked new and clean). The check says the server's words on
// the `namespace:` line, on the name when the namespace is the default one (`-n`), on an overlay's
// `namespace:` entry; a Namespace among the files checked together turns it into information on
// the order of the apply.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { requireCluster } from '../support/env';
import { connect, request, type Connection } from '../support/seed';
import { requireTool } from '../tools/tools';
import { runCli, scratchDir, writeFiles } from './cli-process';

interface JsonFinding {
  file: string;
  code: string;
  severity: string;
  message: string;
  range: { start: { line: number; character: number } };
  path?: string;
  serverMessage?: string;
  docs?: string;
}

const configMap = (namespace: string | undefined) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n${namespace !== undefined ? `  namespace: ${namespace}\n` : ''}data:\n  mode: fast\n`;

/** The server's answer to every way of sending an object into `namespace`: status, reason, message. */
async function serverAnswers(conn: Connection, namespace: string) {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app-config', namespace },
    data: { mode: 'fast' },
  };
  const collection = `/api/v1/namespaces/${namespace}/configmaps`;
  const sent = [
    await request(conn, 'PATCH', `${collection}/app-config`, {
      query: { fieldManager: 'kubectl', dryRun: 'All' },
      body: object,
      contentType: 'application/apply-patch+yaml',
    }),
    await request(conn, 'POST', collection, {
      query: { fieldManager: 'kubectl-client-side-apply', dryRun: 'All' },
      body: object,
    }),
  ];
  const list = await request(conn, 'GET', collection);
  return {
    answers: sent.map((r) => {
      const b = r.body as { reason?: string; message?: string };
      return [r.status, b.reason, b.message];
    }),
    list,
  };
}

async function prepared(t: TestContext) {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  const conn = connect('admin', cluster.kubeconfig);
  const missing = `kch-missing-${crypto.randomBytes(4).toString('hex')}`;
  // The truth: 404 NotFound with the namespace named, for an apply and a create alike; the list is empty.
  const truth = await serverAnswers(conn, missing);
  const serverMessage = `namespaces "${missing}" not found`;
  assert.deepEqual(truth.answers, [
    [404, 'NotFound', serverMessage],
    [404, 'NotFound', serverMessage],
  ]);
  assert.equal(truth.list.status, 200);
  assert.deepEqual((truth.list.body as { items: unknown[] }).items, []);
  const dir = scratchDir('namespace-not-found');
  writeFiles(dir, {
    'typo/configmap.yaml': configMap(missing),
    'defaulted/configmap.yaml': configMap(undefined),
    'together/a-configmap.yaml': configMap(missing),
    'together/namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${missing}\n`,
    'base/kustomization.yaml': 'resources:\n- configmap.yaml\n',
    'base/configmap.yaml': configMap(undefined),
    'overlays/production/kustomization.yaml': `resources:\n- ../../base\nnamespace: ${missing}\n`,
  });
  const check = (args: string[], stdin?: string) =>
    runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', ...args], {
      cwd: dir,
      ...(stdin !== undefined ? { stdin } : {}),
    });
  return { missing, serverMessage, check };
}

const findingsOf = (stdout: string) => (JSON.parse(stdout) as { findings: JsonFinding[] }).findings;
const namespaceFindings = (stdout: string) => findingsOf(stdout).filter((f) => f.code.startsWith('namespace-'));

test("a namespace that does not exist: the server's 404 in its words, on the namespace line, for every mode", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  for (const mode of ['serverSide', 'clientSide', 'create']) {
    const run = await s.check(['--format', 'json', '--mode', mode, 'typo']);
    assert.equal(run.status, 1, `${mode}: ${run.stdout}${run.stderr}`);
    const found = namespaceFindings(run.stdout);
    assert.deepEqual(
      found.map((f) => [f.file, f.code, f.severity, f.range.start, f.path, f.serverMessage, f.docs]),
      [
        [
          'typo/configmap.yaml',
          'namespace-not-found',
          'error',
          { line: 4, character: 13 },
          '.metadata.namespace',
          s.serverMessage,
          docsLinks.namespaces,
        ],
      ],
      mode,
    );
    assert.match(
      found[0]!.message,
      new RegExp(`^namespaces "${s.missing}" not found: the namespace "${s.missing}" does not exist in the cluster`),
    );
  }
  // The terminal's line, once.
  const text = await s.check(['typo']);
  assert.equal(text.status, 1);
  assert.equal(
    text.stdout.split('\n').filter((l) => l.startsWith('typo/configmap.yaml:5:14 error namespace-not-found ')).length,
    1,
    text.stdout,
  );
});

test('the default namespace (-n) does not exist: said on the name', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await s.check(['--format', 'json', '-n', s.missing, 'defaulted']);
  assert.equal(run.status, 1, run.stdout + run.stderr);
  assert.deepEqual(
    namespaceFindings(run.stdout).map((f) => [f.code, f.range.start, f.path, f.serverMessage]),
    [['namespace-not-found', { line: 3, character: 8 }, undefined, s.serverMessage]],
  );
});

test('the Namespace among the files checked together (a folder, a stream): information on the order, no error', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const folder = await s.check(['--format', 'json', 'together']);
  assert.equal(folder.status, 0, folder.stdout + folder.stderr);
  const found = namespaceFindings(folder.stdout);
  assert.deepEqual(
    found.map((f) => [f.file, f.code, f.severity]),
    [['together/a-configmap.yaml', 'namespace-from-files', 'information']],
  );
  assert.match(
    found[0]!.message,
    /the Namespace in together\/namespace\.yaml creates it\. Apply it before this object/,
  );
  const stream = await s.check(
    ['--format', 'json', '-'],
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${s.missing}\n---\n${configMap(s.missing)}`,
  );
  assert.equal(stream.status, 0, stream.stdout + stream.stderr);
  assert.deepEqual(
    namespaceFindings(stream.stdout).map((f) => [f.file, f.code]),
    [['<stdin>', 'namespace-from-files']],
  );
});

test('an overlay whose namespace entry names a namespace that does not exist: the finding on that entry', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const kustomize = requireTool(t, 'kustomize');
  if (!kustomize) return;
  const run = await s.check(['--format', 'json', '--kustomize-binary', kustomize, '-k', 'overlays/production']);
  assert.equal(run.status, 1, run.stdout + run.stderr);
  assert.deepEqual(
    namespaceFindings(run.stdout).map((f) => [f.file, f.code, f.range.start.line, f.serverMessage]),
    [['overlays/production/kustomization.yaml', 'namespace-not-found', 2, s.serverMessage]],
  );
});

// `kube-conflict-hints check` on kinds the real kube-apiserver does not serve, each first asked of
// the server itself (its 404 is the truth): a custom resource whose CRD is not installed is told so,
// with the CRD documentation; the same resource checked with its CustomResourceDefinition (one
// folder, one stream) is no error, only the order of the apply; a built-in kind at a removed version
// keeps the deprecation guide and what is served instead.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { requireCluster } from '../support/env';
import { certificateWithCrd, connect, freshNamespace, request } from '../support/seed';
import { runCli, scratchDir, writeFiles } from './cli-process';

// A group no test installs: the cluster serves nothing of it.
const group = 'certs.kind-not-served.example.com';

const certificate = (namespace: string) => certificateWithCrd(group, namespace).certificate;
const crd = certificateWithCrd(group, '').crd;

interface JsonFinding {
  file: string;
  code: string;
  severity: string;
  message: string;
  docs?: string;
}

async function prepared(t: TestContext) {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'kind-not-served');
  // The server's own answer: neither the group nor the object's path exists (a dry-run apply gets 404).
  assert.equal((await request(conn, 'GET', `/apis/${group}/v1`)).status, 404);
  const dryRun = await request(conn, 'PATCH', `/apis/${group}/v1/namespaces/${namespace}/certificates/web-tls`, {
    query: { fieldManager: 'kubectl', dryRun: 'All' },
    body: { apiVersion: `${group}/v1`, kind: 'Certificate', metadata: { name: 'web-tls', namespace } },
    contentType: 'application/apply-patch+yaml',
  });
  assert.equal(dryRun.status, 404, JSON.stringify(dryRun.body));
  // A built-in kind at a removed version: 404 for policy/v1beta1, while policy/v1 serves it.
  assert.equal((await request(conn, 'GET', '/apis/policy/v1beta1')).status, 404);
  assert.equal(
    (await request(conn, 'GET', `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`)).status,
    200,
  );
  const dir = scratchDir('kind-not-served');
  writeFiles(dir, {
    'alone/certificate.yaml': certificate(namespace),
    'together/crds/certificates.yaml': crd,
    'together/certificate.yaml': certificate(namespace),
    'old/pdb.yaml': `apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: ${namespace}\nspec:\n  minAvailable: 1\n  selector: { matchLabels: { app: web } }\n`,
  });
  const check = (args: string[], stdin?: string) =>
    runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', ...args], {
      cwd: dir,
      ...(stdin !== undefined ? { stdin } : {}),
    });
  return { namespace, check };
}

function findingsOf(stdout: string): JsonFinding[] {
  return (JSON.parse(stdout) as { findings: JsonFinding[] }).findings;
}

test('a custom resource whose CRD is not installed: the error says so and links the CRD documentation', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await s.check(['--format', 'json', 'alone']);
  assert.equal(run.status, 1, run.stderr);
  const found = findingsOf(run.stdout);
  assert.deepEqual(
    found.map((f) => [f.file, f.code, f.severity, f.message, f.docs]),
    [
      [
        'alone/certificate.yaml',
        'kind-not-served',
        'error',
        `The cluster serves no API group ${group}: Certificate is a custom resource whose CustomResourceDefinition is not installed. Install the CRD before this object; kubectl apply fails on it (no matches for kind "Certificate" in version "${group}/v1").`,
        docsLinks.customResources,
      ],
    ],
  );
  // The text the terminal shows: one line, the sentence once.
  const text = await s.check(['alone']);
  assert.equal(text.status, 1, text.stderr);
  assert.equal(text.stdout.split('\n').filter((l) => l.includes(' error kind-not-served ')).length, 1, text.stdout);
});

test('the same resource beside its CRD, in one folder or one stream: no error, the order as information', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const folder = await s.check(['--format', 'json', 'together']);
  assert.equal(folder.status, 0, folder.stdout + folder.stderr);
  const found = findingsOf(folder.stdout);
  assert.deepEqual(
    found.filter((f) => f.code === 'kind-not-served'),
    [],
  );
  const info = found.filter((f) => f.code === 'kind-from-new-crd');
  assert.equal(info.length, 1, JSON.stringify(found));
  assert.equal(info[0]!.file, 'together/certificate.yaml');
  assert.equal(info[0]!.severity, 'information');
  assert.match(
    info[0]!.message,
    new RegExp(
      `CustomResourceDefinition certificates\\.${group.replaceAll('.', '\\.')} in together/crds/certificates\\.yaml, which the cluster does not serve yet`,
    ),
  );
  assert.match(info[0]!.message, /Apply the CRD first/);
  // By default the check prints errors and warnings: the folder is clean.
  const text = await s.check(['together']);
  assert.equal(text.status, 0, text.stdout + text.stderr);
  assert.doesNotMatch(text.stdout, /kind-not-served|kind-from-new-crd/);

  // A stream (`kubectl kustomize ... | check -`): the CRD and the resource in one standard input.
  const stream = await s.check(['--format', 'json', '-'], `${crd}---\n${certificate(s.namespace)}`);
  assert.equal(stream.status, 0, stream.stdout + stream.stderr);
  const streamed = findingsOf(stream.stdout);
  assert.deepEqual(
    streamed.filter((f) => f.code === 'kind-not-served'),
    [],
  );
  assert.deepEqual(
    streamed.filter((f) => f.code === 'kind-from-new-crd').map((f) => f.file),
    ['<stdin>'],
  );
});

test('a built-in kind at a removed version keeps the deprecation guide and names what is served', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await s.check(['--format', 'json', 'old']);
  assert.equal(run.status, 1, run.stderr);
  assert.deepEqual(
    findingsOf(run.stdout).map((f) => [f.code, f.message, f.docs]),
    [
      [
        'kind-not-served',
        'The cluster does not serve PodDisruptionBudget in policy/v1beta1 (served: policy/v1).',
        docsLinks.apiVersions,
      ],
    ],
  );
});

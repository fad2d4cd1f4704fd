// `kube-conflict-hints check` judges a custom resource by its CRD's validation rules
// (x-kubernetes-validations) in the bundle as it ships, where the CEL library is loaded only when a
// rule is first judged (scripts/bundle.mjs): a rule the manifest breaks is the server's 422 in its
// words, one it keeps says nothing. The server's own dry run is asked first, as the truth.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, connect, deleteObject, freshNamespace, get, objectOf, request, type KubeObject } from '../support/seed';
import { waitForOpenApi } from '../support/seed-crd';
import { runCli, scratchDir, writeFiles } from './cli-process';

// A group of this file's own: no other test installs it.
const group = 'kchlazycel.example.com';
const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gauges.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge', listKind: 'GaugeList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }],
                properties: { min: { type: 'integer' }, max: { type: 'integer' } },
              },
            },
          },
        },
      },
    ],
  },
};

const gauge = (namespace: string, name: string, min: number, max: number) =>
  `apiVersion: ${group}/v1\nkind: Gauge\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  min: ${min}\n  max: ${max}\n`;

test('a CRD validation rule the manifest breaks is reported as the server answers it; one it keeps is not', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const conn = connect('admin', cluster.kubeconfig);
  objectOf(await apply(conn, 'kch-test-setup', crd, { force: true }), 'install the Gauge CRD');
  after(() => deleteObject(conn, crd));
  for (let established = false; !established; await new Promise((r) => setTimeout(r, 200))) {
    const conditions = ((objectOf(await get(conn, crd)).status as { conditions?: { type: string; status: string }[] })
      ?.conditions ?? []) as { type: string; status: string }[];
    established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
  }
  await waitForOpenApi(conn, [`apis/${group}/v1`]);
  const namespace = await freshNamespace(conn, 'validation-rules');
  // The truth: the server refuses the broken gauge with the rule's message and takes the other.
  const dryRun = (name: string, min: number, max: number) =>
    request(conn, 'PATCH', `/apis/${group}/v1/namespaces/${namespace}/gauges/${name}`, {
      query: { fieldManager: 'kubectl', dryRun: 'All' },
      body: { apiVersion: `${group}/v1`, kind: 'Gauge', metadata: { name, namespace }, spec: { min, max } },
      contentType: 'application/apply-patch+yaml',
    });
  const refused = await dryRun('broken', 5, 1);
  assert.equal(refused.status, 422);
  assert.match(JSON.stringify(refused.body), /min must not exceed max/);
  assert.equal((await dryRun('kept', 1, 5)).status, 201);

  const dir = scratchDir('validation-rules');
  writeFiles(dir, { 'broken.yaml': gauge(namespace, 'broken', 5, 1), 'kept.yaml': gauge(namespace, 'kept', 1, 5) });
  const check = (file: string) =>
    runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--format', 'json', file], { cwd: dir });
  const broken = await check('broken.yaml');
  assert.equal(broken.status, 1, broken.stderr);
  const findings = (JSON.parse(broken.stdout) as { findings: { code: string; message: string }[] }).findings;
  const rule = findings.filter((f) => f.code === 'validation-rule-fails');
  assert.equal(rule.length, 1, broken.stdout);
  assert.match(rule[0]!.message, /spec: Invalid value: "object": min must not exceed max/);
  const kept = await check('kept.yaml');
  assert.equal(kept.status, 0, kept.stdout + kept.stderr);
  assert.deepEqual(
    (JSON.parse(kept.stdout) as { findings: { code: string }[] }).findings.filter((f) =>
      f.code.startsWith('validation-rule'),
    ),
    [],
  );
});

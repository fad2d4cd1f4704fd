// LimitRanges and admission webhooks made or removed while a file is open: the editor judges the
// file again when a namespace's LimitRanges or ResourceQuotas, or the cluster's webhook
// configurations, change (the cache watches them; nothing else need change), and says what the API
// server would answer now.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { auditSentinel, readAuditEvents } from '../support/cluster';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { create, connect, deleteObject, freshNamespace, objectOf, request, type KubeObject } from '../support/seed';

const coded = (code: string) => (ds: Diagnostic[]) => ds.filter((d) => d.code === code);
const limited = coded('limit-range-forbidden');
const hooked = coded('admission-webhook');

test('a LimitRange, then a webhook, made while a Pod’s file is open: each is said; removed, each goes', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const home = await freshNamespace(admin, 'kch-limits-open');
  t.after(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: home } }));
  const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${home}
spec:
  containers:
  - name: web
    image: nginx:1.0
    resources:
      requests: {cpu: "1"}
      limits: {cpu: "1"}
`;
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  t.after(() => server.shutdown());
  const uri = 'file:///w/app/pod.yaml';
  await server.open(uri, manifest);

  // The namespace's LimitRanges were read (none) before one is made: the editor learns of it from
  // the watch, not from a first read.
  const limitReads = () =>
    readAuditEvents(cluster.auditLog).filter(
      (e) => e.objectRef?.resource === 'limitranges' && e.objectRef.namespace === home && e.verb === 'list',
    );
  // Diagnostics are pulled, as the editor pulls them: the file is judged further at each pull.
  const deadline = Date.now() + 20_000;
  while ((await server.diagnostics(uri), limitReads().length === 0)) {
    if (Date.now() > deadline) throw new Error('the editor never read the namespace’s LimitRanges');
    await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  }
  const first = await server.diagnosticsUntil(uri, () => true);
  assert.deepEqual([...limited(first), ...hooked(first)], [], 'nothing limits the Pod yet');

  const limitRange: KubeObject = {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'cpu-cap', namespace: home },
    spec: { limits: [{ type: 'Container', max: { cpu: '500m' } }] },
  };
  objectOf(await create(admin, 'kch-test-setup', limitRange), 'limit range');
  const refused = await server.diagnosticsUntil(uri, (d) => limited(d).length > 0, 20_000);
  assert.match(limited(refused)[0]!.message, /maximum cpu usage per Container is 500m, but limit is 1/);

  await deleteObject(admin, limitRange);
  await server.diagnosticsUntil(uri, (d) => limited(d).length === 0, 20_000);

  // A webhook that would judge the Pod (never called: nothing is sent but reads).
  const webhook: KubeObject = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: `kch-open-${home}` },
    webhooks: [
      {
        name: 'pods.kch.example.com',
        clientConfig: { url: 'https://127.0.0.1:9/validate' },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': home } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
      },
    ],
  };
  objectOf(await create(admin, 'kch-test-setup', webhook), 'webhook configuration');
  let present = true;
  t.after(() => (present ? deleteObject(admin, webhook) : undefined));
  const judged = await server.diagnosticsUntil(uri, (d) => hooked(d).length > 0, 20_000);
  assert.match(hooked(judged)[0]!.message, new RegExp(`kch-open-${home}`));

  await deleteObject(admin, webhook);
  present = false;
  await server.diagnosticsUntil(uri, (d) => hooked(d).length === 0, 20_000);
});

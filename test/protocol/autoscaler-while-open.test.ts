// An autoscaler made or removed while a file is open: the editor judges the file again when the
// HorizontalPodAutoscalers of the object's namespace change (the cache watches them; nothing else
// need change). A Flux-applied Deployment whose Git sets replicas fights an autoscaler that targets
// it; before the autoscaler exists there is no fight, and after it is removed there is none again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { stringify } from 'yaml';
import { auditSentinel, readAuditEvents } from '../support/cluster';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { apply, connect, deleteObject, objectOf, request, type KubeObject } from '../support/seed';
import { seedAppliers } from '../support/seed-appliers';

const fights = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'gitops-fight');

test('an autoscaler made while the file is open fights Git’s replicas; removed, the fight goes', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const scene = await seedAppliers(admin, 'autoscaler-open');
  const live = scene.objects['flux-kustomize'];
  const text = stringify({
    apiVersion: live.apiVersion,
    kind: live.kind,
    metadata: { name: live.metadata.name, namespace: live.metadata.namespace, labels: live.metadata.labels },
    spec: { replicas: 2, selector: (live.spec as { selector: unknown }).selector },
  });
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  t.after(() => server.shutdown());
  const uri = 'file:///w/flux-web.yaml';
  await server.open(uri, text);
  await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'exists'));

  // The namespace's autoscalers were read (and found none) before one is made: the editor learns of
  // the new one from the watch, not from a first read.
  const hpaReads = () =>
    readAuditEvents(cluster.auditLog).filter(
      (e) =>
        e.objectRef?.resource === 'horizontalpodautoscalers' &&
        e.objectRef.namespace === scene.namespace &&
        e.verb === 'list',
    );
  const deadline = Date.now() + 20_000;
  // Diagnostics are pulled, as the editor pulls them: the file is judged further at each pull.
  while ((await server.diagnostics(uri), hpaReads().length === 0)) {
    if (Date.now() > deadline) throw new Error('the editor never read the namespace’s autoscalers');
    await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  }
  assert.deepEqual(fights(await server.diagnosticsUntil(uri, () => true)), [], 'no autoscaler yet');

  const hpa: KubeObject = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web-hpa', namespace: scene.namespace },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: live.metadata.name },
      minReplicas: 2,
      maxReplicas: 6,
    },
  };
  objectOf(await apply(admin, 'kch-test-setup', hpa), 'the autoscaler');
  let present = true;
  t.after(() => (present ? deleteObject(admin, hpa) : undefined));

  const fighting = await server.diagnosticsUntil(uri, (d) => fights(d).length === 1, 20_000);
  const fight = fights(fighting)[0]!;
  assert.equal(text.split('\n')[fight.range.start.line]!.trim(), 'replicas: 2');
  assert.match(fight.message, /the HorizontalPodAutoscaler web-hpa sets it to its own count: they fight/);
  // One list, then the watch: the autoscaler was not found by reading the collection again.
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  assert.equal(hpaReads().length, 1, JSON.stringify(hpaReads().map((e) => e.requestURI)));

  await deleteObject(admin, hpa);
  present = false;
  const calm = await server.diagnosticsUntil(uri, (d) => fights(d).length === 0, 20_000);
  assert.ok(
    calm.some((d) => d.code === 'exists'),
    'the object is still judged',
  );
});

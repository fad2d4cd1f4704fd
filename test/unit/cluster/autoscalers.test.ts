// The autoscaler reads of the force preview (cluster/autoscalers.ts) against the real kube-apiserver:
// a namespace's HorizontalPodAutoscalers from the watched cache (a new one is seen without asking
// the cluster again for a list), a user who may not list them gets "unknown" (the preview then says
// "may", never "will") without waiting, a kind without /scale costs no request, and a namespace the
// API server would refuse never reaches a URL.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  autoscalersFor,
  autoscalersSignature,
  createClusterConnection,
  readAutoscalers,
  type ClusterConnection,
} from '../../../server/src/cluster';
import { auditSentinel, readAuditEvents } from '../../support/cluster';
import { requireCluster } from '../../support/env';
import { connect, create, freshNamespace, objectOf, request } from '../../support/seed';

const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

const hpa = (namespace: string, name: string, target: string) => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name, namespace },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 1, maxReplicas: 3 },
});

const names = (facts: Awaited<ReturnType<typeof readAutoscalers>>) =>
  facts.state === 'read' ? facts.autoscalers.map((a) => (a.metadata as { name: string }).name).sort() : facts;

test('the autoscalers of a namespace, kept current by the watch; a user who may not list them gets unknown; bad names never reach a URL', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'autoscalers');
  objectOf(await create(admin, 'kubectl-create', hpa(namespace, 'web', 'web')), 'create web');
  const userAgent = `kch-autoscalers-test-${process.pid}`;
  const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' }, { userAgent });
  open.push(c);

  assert.deepEqual(names(await readAutoscalers(c, namespace)), ['web']);
  objectOf(await create(admin, 'kubectl-create', hpa(namespace, 'api', 'api')), 'create api');
  // The watch brings the new one; asking again is answered from the cache.
  for (let i = 0; i < 100 && JSON.stringify(names(await readAutoscalers(c, namespace))) !== '["api","web"]'; i++)
    await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(names(await readAutoscalers(c, namespace)), ['api', 'web']);
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const lists = readAuditEvents(cluster.auditLog).filter(
    (e) => e.userAgent === userAgent && e.verb === 'list' && e.objectRef?.resource === 'horizontalpodautoscalers',
  );
  assert.equal(lists.length, 1, 'one LIST, then the watch');

  // A ConfigMap has no /scale: no autoscaler can target it, and nothing is asked.
  assert.deepEqual(await autoscalersFor(c, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'elsewhere' }), {
    state: 'read',
    autoscalers: [],
  });
  assert.deepEqual(names(await autoscalersFor(c, { apiVersion: 'apps/v1', kind: 'Deployment', namespace })), [
    'api',
    'web',
  ]);

  const refused = await readAutoscalers(c, '../secrets');
  assert.equal(refused.state, 'unknown');
  assert.match(refused.state === 'unknown' ? refused.reason : '', /not a name the API server accepts/);

  const stranger = await createClusterConnection(
    { kubeconfig: cluster.kubeconfig, context: 'stranger' },
    { userAgent },
  );
  open.push(stranger);
  const forbidden = await readAutoscalers(stranger, namespace);
  assert.equal(forbidden.state, 'unknown');
  assert.match(
    forbidden.state === 'unknown' ? forbidden.reason : '',
    /^HorizontalPodAutoscalers may not be listed here/,
  );

  // Once a sentinel after them is in the log, every request above is: none held the refused name.
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  assert.ok(
    readAuditEvents(cluster.auditLog)
      .filter((e) => e.userAgent === userAgent)
      .every((e) => !e.requestURI.includes('..') && !/\/secrets(\/|\?|$)/.test(e.requestURI)),
  );
});

test('what the editor compares of a namespace’s autoscalers: a status the controller writes changes nothing, a spec does', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'autoscaler-status');
  const web = objectOf(await create(admin, 'kubectl-create', hpa(namespace, 'web', 'web')), 'create web');
  const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' });
  open.push(c);
  const read = async () => {
    const facts = await readAutoscalers(c, namespace);
    assert.equal(facts.state, 'read');
    return facts;
  };
  // Until the cache's watch has brought the object at `resourceVersion` (or later).
  const readAt = async (resourceVersion: string) => {
    for (let i = 0; i < 100; i++) {
      const facts = await read();
      const at = facts.state === 'read' ? (facts.autoscalers[0]?.metadata as { resourceVersion?: string }) : undefined;
      if (at?.resourceVersion && BigInt(at.resourceVersion) >= BigInt(resourceVersion)) return facts;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the cache never brought resourceVersion ${resourceVersion}`);
  };
  const before = autoscalersSignature(await read());

  // What the autoscaler controller writes at every sync: its status subresource.
  const statusPath = `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers/web/status`;
  const synced = await request(admin, 'PATCH', statusPath, {
    query: { fieldManager: 'kube-controller-manager' },
    contentType: 'application/merge-patch+json',
    body: { status: { currentReplicas: 2, desiredReplicas: 3, lastScaleTime: '2026-12-03T20:00:00Z' } },
  });
  assert.equal(synced.status, 200, JSON.stringify(synced.body));
  const afterStatus = await readAt((synced.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  assert.notDeepEqual(
    (afterStatus.state === 'read' ? afterStatus.autoscalers[0]?.status : undefined) ?? {},
    (web.status as object | undefined) ?? {},
    'the status did change',
  );
  assert.equal(autoscalersSignature(afterStatus), before, 'a status alone is nothing to judge again');

  // A new bound is.
  const bounded = await request(admin, 'PATCH', statusPath.replace(/\/status$/, ''), {
    query: { fieldManager: 'kubectl-edit' },
    contentType: 'application/merge-patch+json',
    body: { spec: { maxReplicas: 5 } },
  });
  assert.equal(bounded.status, 200, JSON.stringify(bounded.body));
  const afterSpec = await readAt((bounded.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  assert.notEqual(autoscalersSignature(afterSpec), before);
});

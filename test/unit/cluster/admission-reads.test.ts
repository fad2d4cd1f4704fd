// The admission reads (cluster/admission-reads.ts) against the real kube-apiserver: a peek answers
// at once and starts the read, whose answer arrives with a change; a namespace's LimitRanges and
// ResourceQuotas come in one LIST each, once; a user who may not list them (stranger) gets
// "unknown", and the connection stays healthy.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createClusterConnection, createFactsSource, type ClusterConnection } from '../../../server/src/cluster';
import { auditSentinel, readAuditEvents } from '../../support/cluster';
import { requireCluster } from '../../support/env';
import { connect, create, freshNamespace, objectOf, request } from '../../support/seed';

const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

test('webhooks and a namespace policies: peeked, then read once; a user who may not list them gets unknown', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'admission-reads');
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace },
      spec: { limits: [{ type: 'Container', max: { cpu: '500m' } }] },
    }),
    'limit range',
  );
  const userAgent = `kch-admission-reads-test-${process.pid}`;
  const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' }, { userAgent });
  open.push(c);
  const admission = c.admission!;
  assert.equal(admission.peekWebhooks(), undefined, 'a peek never waits');
  assert.equal(admission.peekPolicies(namespace), undefined);
  const changed = new Promise<void>((resolve) => admission.onChange(resolve));
  await changed;
  assert.equal((await admission.webhooks()).state, 'known');
  const policies = await admission.policies(namespace);
  assert.equal(policies.state, 'known');
  assert.deepEqual(
    policies.state === 'known' ? policies.limitRanges.map((l) => (l.metadata as { name: string }).name) : [],
    ['limits'],
  );
  assert.equal(admission.peekPolicies(namespace)?.state, 'known');

  // The facts of a Pod carry both; a ConfigMap's carry the webhooks only.
  const facts = createFactsSource(c);
  const pod = await facts.load({ apiVersion: 'v1', kind: 'Pod', name: 'web', namespace });
  assert.equal(pod.webhooks?.state, 'known');
  assert.equal(pod.namespacePolicies?.state, 'known');
  const cm = await facts.load({ apiVersion: 'v1', kind: 'ConfigMap', name: 'web', namespace });
  assert.equal(cm.namespacePolicies, undefined);
  facts.dispose();

  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const lists = readAuditEvents(cluster.auditLog).filter(
    (e) =>
      e.userAgent === userAgent &&
      e.verb === 'list' &&
      ['limitranges', 'resourcequotas', 'validatingwebhookconfigurations', 'mutatingwebhookconfigurations'].includes(
        e.objectRef?.resource ?? '',
      ),
  );
  assert.deepEqual(lists.map((e) => e.objectRef?.resource).sort(), [
    'limitranges',
    'mutatingwebhookconfigurations',
    'resourcequotas',
    'validatingwebhookconfigurations',
  ]);

  const s = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'stranger' }, { userAgent });
  open.push(s);
  const refused = await s.admission!.webhooks();
  assert.equal(refused.state, 'unknown');
  assert.equal((await s.admission!.policies(namespace)).state, 'unknown');
  assert.notEqual(s.health().state, 'forbidden');
});

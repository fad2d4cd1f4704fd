// The verifier against the real kube-apiserver: the server's own 409 causes for seeded conflicts,
// the would-be object of an accepted dry run, the three kinds of 409, and proof from the audit log
// that the layer never sent a write without dryRun=All.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createClusterConnection, type ClusterConnection } from '../../../server/src/cluster';
import type { JsonObject } from '../../../server/src/core/json';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { auditSentinel, readAuditEvents } from '../../support/cluster';
import { apply, configMap, connect, freshNamespace, get, objectOf, request, type KubeObject } from '../../support/seed';
import { editedAndAutoscaled } from '../../support/seed-scenarios';

// This run's own: the audit log of a long-running local server holds earlier runs' requests too.
const userAgent = `kch-cluster-layer-test-verifier-${process.pid}-${Date.now().toString(36)}`;
const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

async function admin(cluster: TestClusterInfo): Promise<ClusterConnection> {
  const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' }, { userAgent });
  open.push(c);
  return c;
}

const asJson = (o: KubeObject): JsonObject => o as unknown as JsonObject;

describe('dry-run apply', () => {
  test('the causes of a seeded conflict, each once, and nothing stored', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const seedConn = connect('admin');
    const namespace = await freshNamespace(seedConn, 'kch-verify');
    const { manifest, live } = await editedAndAutoscaled(seedConn, namespace);
    const c = await admin(cluster);
    const verdict = await c.dryRunApply({ object: asJson(manifest) }, { fieldManager: 'kubectl' });
    assert.equal(verdict.outcome, 'conflict', JSON.stringify(verdict));
    if (verdict.outcome !== 'conflict') return;
    assert.equal(verdict.conflict, 'fieldManager');
    assert.equal(verdict.reason, 'Conflict');
    assert.match(verdict.message, /^Apply failed with 2 conflicts/);
    assert.deepEqual(verdict.causes.map((cause) => [cause.field, cause.message]).sort(), [
      ['.spec.replicas', 'conflict with "kube-controller-manager" with subresource "scale" using apps/v1'],
      ['.spec.template.spec.containers[name="app"].image', 'conflict with "kubectl-edit" using apps/v1'],
    ]);
    assert.ok(verdict.causes.every((cause) => cause.reason === 'FieldManagerConflict'));
    const after = objectOf(await get(seedConn, manifest), 'read back');
    assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion, 'a dry run stores nothing');
  });

  test('accepted: the would-be object shows what the apply would remove', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const seedConn = connect('admin');
    const namespace = await freshNamespace(seedConn, 'kch-verify');
    const first = configMap(namespace, 'settings', { mode: 'prod', legacy: 'yes' }, { team: 'a' });
    objectOf(await apply(seedConn, 'kubectl', first), 'seed');
    const c = await admin(cluster);
    // YAML text as the user wrote it, comments included, is what the server decodes.
    const text = `# settings for prod\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: prod # unchanged\n`;
    const verdict = await c.dryRunApply(
      {
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'settings', namespace },
          data: { mode: 'prod' },
        },
        text,
      },
      { fieldManager: 'kubectl' },
    );
    assert.equal(verdict.outcome, 'accepted', JSON.stringify(verdict));
    if (verdict.outcome !== 'accepted') return;
    assert.deepEqual(verdict.object.data, { mode: 'prod' }, 'data.legacy would be removed');
    assert.equal((verdict.object.metadata as JsonObject).labels, undefined, 'the team label would be removed');
    const stored = objectOf(await get(seedConn, first), 'read back');
    assert.deepEqual(stored.data, { mode: 'prod', legacy: 'yes' });
  });

  // Measured on v1.34: an apply whose uid does not match is not a 409 but 422 Invalid
  // ("metadata.uid: ... field is immutable"); the 409 "Precondition failed: UID in precondition" belongs
  // to updates (PUT) and deletes.
  test('a stale resourceVersion is the optimistic-lock 409; a wrong uid is rejected as invalid', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const seedConn = connect('admin');
    const namespace = await freshNamespace(seedConn, 'kch-verify');
    const seeded = objectOf(
      await apply(seedConn, 'kubectl', configMap(namespace, 'settings', { mode: 'prod' })),
      'seed',
    );
    objectOf(await apply(seedConn, 'kubectl', configMap(namespace, 'settings', { mode: 'debug' })), 'second write');
    const c = await admin(cluster);
    const base = { apiVersion: 'v1', kind: 'ConfigMap', data: { mode: 'debug' } };
    const stale = await c.dryRunApply(
      {
        object: {
          ...base,
          metadata: { name: 'settings', namespace, resourceVersion: seeded.metadata.resourceVersion! },
        },
      },
      { fieldManager: 'kubectl' },
    );
    assert.equal(stale.outcome === 'conflict' && stale.conflict, 'resourceVersion', JSON.stringify(stale));
    const wrongUid = await c.dryRunApply(
      { object: { ...base, metadata: { name: 'settings', namespace, uid: '00000000-0000-0000-0000-000000000000' } } },
      { fieldManager: 'kubectl' },
    );
    assert.equal(wrongUid.outcome, 'rejected', JSON.stringify(wrongUid));
    if (wrongUid.outcome !== 'rejected') return;
    assert.equal(wrongUid.problem.httpStatus, 422);
    assert.equal(wrongUid.problem.reason, 'Invalid');
    assert.deepEqual(
      wrongUid.causes.map((cause) => cause.field),
      ['metadata.uid'],
    );
  });
});

describe('dry-run create', () => {
  test("an existing name is AlreadyExists in the server's words; a new one is accepted", async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const seedConn = connect('admin');
    const namespace = await freshNamespace(seedConn, 'kch-verify');
    const settings = configMap(namespace, 'app-config', { mode: 'prod' });
    objectOf(await apply(seedConn, 'kubectl', settings), 'seed');
    const c = await admin(cluster);
    const verdict = await c.dryRunCreate({ object: asJson(settings) }, { fieldManager: 'kubectl-create' });
    assert.equal(verdict.outcome, 'conflict', JSON.stringify(verdict));
    if (verdict.outcome !== 'conflict') return;
    assert.equal(verdict.conflict, 'alreadyExists');
    assert.equal(verdict.message, 'configmaps "app-config" already exists');
    const fresh = await c.dryRunCreate(
      { object: asJson(configMap(namespace, 'brand-new', { a: 'b' })) },
      { fieldManager: 'kubectl-create' },
    );
    assert.equal(fresh.outcome, 'accepted');
    const notStored = await get(seedConn, configMap(namespace, 'brand-new', {}));
    assert.equal(notStored.status, 404, 'the dry-run create stored nothing');
  });
});

describe('audit', () => {
  test('the layer sent only reads and dryRun=All writes', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG: the audit log is the only proof of what the layer sent');
    // Entries are written as requests complete: a sentinel sent after the layer's last request,
    // once in the log, shows the log has caught up with everything before it.
    await auditSentinel(cluster.auditLog, (p) => request(connect('admin'), 'GET', p));
    const ours = readAuditEvents(cluster.auditLog).filter((entry) => entry.userAgent === userAgent);
    assert.ok(ours.length > 0, 'the test requests are in the audit log');
    const writes = ours.filter((entry) => !['get', 'list', 'watch'].includes(entry.verb));
    assert.ok(writes.length > 0, 'the dry runs are there');
    const withoutDryRun = writes.filter(
      (entry) => new URL(entry.requestURI, 'https://x').searchParams.get('dryRun') !== 'All',
    );
    assert.deepEqual(withoutDryRun, []);
  });
});

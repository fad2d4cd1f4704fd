// Live objects from the real kube-apiserver: GET with managedFields, "does not exist" as data, a
// watch that brings someone else's change within seconds, and Secrets that never hold values, not
// even when the answer on the way is the whole object.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { createClusterConnection, type ClusterConnection } from '../../../server/src/cluster';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { startFaultProxy } from '../../support/fault-proxy';
import { existing, nextChange, plantedSecret } from '../../support/live-objects';
import {
  apply,
  configMap,
  connect,
  deleteObject,
  freshNamespace,
  kubectlEdit,
  objectOf,
  patch,
  type KubeObject,
} from '../../support/seed';

const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

async function viewer(cluster: TestClusterInfo): Promise<ClusterConnection> {
  const c = await createClusterConnection(
    { kubeconfig: cluster.kubeconfig, context: 'viewer' },
    { userAgent: 'kch-cluster-layer-test' },
  );
  open.push(c);
  return c;
}

function refOf(obj: KubeObject): { apiVersion: string; kind: string; name: string; namespace: string } {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace ?? 'default',
  };
}

describe('live objects', () => {
  test('an existing object comes with its managedFields; a missing one is absent, not an error', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-live');
    // kubectl keeps `level`; the edit takes `mode` (a manager left owning nothing disappears).
    const settings = configMap(namespace, 'settings', { mode: 'prod', level: 'info' });
    objectOf(await apply(admin, 'kubectl', settings), 'seed');
    objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');

    const c = await viewer(cluster);
    const live = existing(await c.getObject(refOf(settings)));
    assert.deepEqual(
      live.metadata.managedFields?.map((m) => [m.manager, m.operation]),
      [
        ['kubectl', 'Apply'],
        ['kubectl-edit', 'Update'],
      ],
    );
    assert.deepEqual(live.data, { mode: 'debug', level: 'info' });
    assert.equal(live.kind, 'ConfigMap');

    const missing = await c.getObject({ ...refOf(settings), name: 'not-created-yet' });
    assert.equal(missing.state, 'absent');
    // Both answers are now synchronous: typing never waits, and a name answered is not asked again.
    const sent = c.requestsSent();
    assert.equal(c.peekObject(refOf(settings)).state, 'exists');
    assert.equal(c.peekObject({ ...refOf(settings), name: 'not-created-yet' }).state, 'absent');
    assert.equal(c.requestsSent(), sent, 'no request for a name already answered');
  });

  test('the namespace defaults to the context namespace for namespaced kinds, and is empty for cluster-scoped ones', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await viewer(cluster);
    const state = await c.getObject({ apiVersion: 'v1', kind: 'Namespace', name: 'default' });
    assert.equal(existing(state).metadata.name, 'default');
    assert.equal(c.resolveRef({ apiVersion: 'v1', kind: 'Namespace', name: 'default' })?.namespace, '');
    assert.equal(c.resolveRef({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' })?.namespace, 'default');
  });

  test('a change made on the cluster reaches subscribers within seconds, deletion too', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-watch');
    const settings = configMap(namespace, 'settings', { mode: 'prod' });
    objectOf(await apply(admin, 'kubectl', settings), 'seed');
    const c = await viewer(cluster);
    existing(await c.getObject(refOf(settings)));

    const edited = nextChange(
      c,
      (ch) =>
        ch.name === 'settings' && ch.state.state === 'exists' && JSON.stringify(ch.state.object).includes('"debug"'),
    );
    const started = Date.now();
    objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');
    const change = await edited;
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 5_000, `arrived after ${elapsed} ms`);
    assert.equal(change.namespace, namespace);
    assert.deepEqual(existing(c.peekObject(refOf(settings))).data, { mode: 'debug' });
    assert.ok(
      existing(c.peekObject(refOf(settings))).metadata.managedFields?.some((m) => m.manager === 'kubectl-edit'),
    );

    const deleted = nextChange(c, (ch) => ch.name === 'settings' && ch.state.state === 'absent');
    objectOf(await deleteObject(admin, settings), 'delete');
    await deleted;
    assert.equal(c.peekObject(refOf(settings)).state, 'absent');

    const created = nextChange(c, (ch) => ch.name === 'settings' && ch.state.state === 'exists');
    objectOf(await apply(admin, 'helm', settings), 'recreate');
    assert.equal((await created).state.state, 'exists');
  });

  test("a Secret's values never enter the cache, whatever way they arrive", async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-secret');
    const value = Buffer.from('hunter2-very-secret').toString('base64');
    // Client-side apply also stores a copy of the values in the last-applied annotation.
    const secret = await plantedSecret(admin, namespace, { password: value }, { user: 'root-user-name' });
    const c = await viewer(cluster);
    const live = existing(await c.getObject(refOf(secret)));
    const forbidden = [value, 'hunter2', 'root-user-name'];
    const leaks = (o: unknown): string[] => forbidden.filter((s) => JSON.stringify(o).includes(s));
    assert.deepEqual(leaks(live), []);
    assert.ok(
      JSON.stringify(live.metadata.managedFields).includes('f:password'),
      'who owns which key is still visible',
    );

    const newValue = Buffer.from('rotated-secret-value').toString('base64');
    forbidden.push(newValue, 'rotated-secret-value');
    const changed = nextChange(c, (ch) => ch.name === 'db' && ch.state.state === 'exists');
    objectOf(await patch(admin, 'kubectl-edit', secret, { data: { password: newValue } }), 'rotate');
    assert.deepEqual(leaks((await changed).state), []);
    assert.deepEqual(leaks(c.peekObject(refOf(secret))), []);
  });

  test("a Secret's values never enter the cache from an answer that ignores the metadata-only Accept", async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-secret-whole');
    const value = Buffer.from('whole-object-secret').toString('base64');
    const secret = await plantedSecret(admin, namespace, { password: value }, { user: 'whole-user-name' });
    // Between the product and the server, something that does not know the metadata-only form and
    // asks for the whole object: the answer holds the values, and the last-applied copy of them.
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    t.after(() => proxy.close());
    proxy.set({ kind: 'wholeObjects', match: (r) => r.path.includes('/secrets') });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-whole-objects-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const kubeconfig = proxy.kubeconfig(cluster.kubeconfig, path.join(scratch, 'config'));
    const c = await createClusterConnection({ kubeconfig, context: 'viewer' }, { userAgent: 'kch-cluster-layer-test' });
    open.push(c);
    const live = existing(await c.getObject(refOf(secret)));
    assert.ok(
      proxy.requests.some((r) => r.fault === 'wholeObjects' && r.status === 200),
      'the server answered a read of Secrets with whole objects',
    );
    const forbidden = [value, 'whole-object-secret', 'whole-user-name'];
    assert.deepEqual(
      forbidden.filter((s) => JSON.stringify(live).includes(s)),
      [],
    );
    assert.deepEqual(
      forbidden.filter((s) => JSON.stringify(c.peekObject(refOf(secret))).includes(s)),
      [],
    );
    assert.ok(
      JSON.stringify(live.metadata.managedFields).includes('f:password'),
      'who owns which key is still visible',
    );
  });
});

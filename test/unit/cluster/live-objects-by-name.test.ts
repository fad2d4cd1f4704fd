// Reads that cost what is checked, not what the cluster holds, against the real kube-apiserver:
// one object among hundreds of its kind is read by name (a GET for a one-shot check, a LIST and a
// WATCH selecting its name for the editor), never by listing its namespace; many objects of one
// collection still cost one LIST; a user who may get but not list still gets answers; Secrets read
// by name stay metadata only. Every request is seen through a recording proxy.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { createClusterConnection, type ClusterConnection } from '../../../server/src/cluster';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { existing, nextChange, plantedSecret } from '../../support/live-objects';
import {
  collectionReads,
  collectionRequests,
  described,
  recordCluster,
  type RecordingProxy,
} from '../../support/recording-proxy';
import {
  apply,
  configMap,
  connect,
  createMany,
  freshNamespace,
  freshNamespaceFor,
  kubectlEdit,
  numberedConfigMaps,
  objectOf,
  patch,
  type KubeObject,
} from '../../support/seed';

/** A connection through a recording proxy, as `user`; `follow: false` is the command line's check. */
async function recorded(
  t: TestContext,
  cluster: TestClusterInfo,
  user: 'admin' | 'viewer' | 'stranger',
  follow: boolean,
): Promise<{ c: ClusterConnection; proxy: RecordingProxy }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-by-name-'));
  const { proxy, kubeconfig } = await recordCluster(cluster, user, path.join(scratch, 'kubeconfig'));
  const c = await createClusterConnection(
    { kubeconfig },
    { userAgent: 'kch-cluster-layer-test', liveObjects: { follow } },
  );
  t.after(async () => {
    c.dispose();
    await proxy.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  return { c, proxy };
}

describe('live objects read by name', () => {
  test('one ConfigMap among five hundred: the check GETs it, the editor selects and watches its name, nobody lists the namespace', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespaceFor(t, admin, 'kch-by-name');
    // More than one page of a list (500), so that a list would show; the ConfigMap has a history.
    await createMany(admin, numberedConfigMaps(namespace, 520));
    const settings = configMap(namespace, 'settings', { mode: 'prod', level: 'info' });
    objectOf(await apply(admin, 'kubectl', settings), 'seed');
    objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'settings' };

    const check = await recorded(t, cluster, 'viewer', false);
    await check.c.expectObjects([ref, { ...ref, name: 'not-created-yet' }]);
    const live = existing(await check.c.getObject(ref));
    assert.deepEqual(
      live.metadata.managedFields?.map((m) => m.manager),
      ['kubectl', 'kubectl-edit'],
    );
    assert.equal((await check.c.getObject({ ...ref, name: 'not-created-yet' })).state, 'absent');
    assert.deepEqual(collectionReads(check.proxy, collection).sort(), ['GET not-created-yet', 'GET settings']);

    const editor = await recorded(t, cluster, 'viewer', true);
    existing(await editor.c.getObject(ref));
    assert.equal((await editor.c.getObject({ ...ref, name: 'not-created-yet' })).state, 'absent');
    // Another manager's edit reaches the editor through the watch of that one name.
    const edited = nextChange(
      editor.c,
      (ch) =>
        ch.name === 'settings' && ch.state.state === 'exists' && JSON.stringify(ch.state.object).includes('"trace"'),
    );
    objectOf(await kubectlEdit(admin, settings, { data: { mode: 'trace' } }), 'edit');
    await edited;
    assert.deepEqual(existing(editor.c.peekObject(ref)).data, { mode: 'trace', level: 'info' });
    // A name created after it was found absent arrives the same way.
    const created = nextChange(editor.c, (ch) => ch.name === 'not-created-yet' && ch.state.state === 'exists');
    objectOf(await apply(admin, 'helm', configMap(namespace, 'not-created-yet', { a: 'b' })), 'create');
    await created;
    assert.deepEqual([...new Set(collectionReads(editor.proxy, collection))].sort(), [
      'LIST metadata.name=not-created-yet',
      'LIST metadata.name=settings',
      'WATCH metadata.name=not-created-yet',
      'WATCH metadata.name=settings',
    ]);
    const watches = collectionRequests(editor.proxy, collection).filter((r) => r.url.searchParams.has('watch'));
    assert.ok(
      watches.every((w) => w.url.searchParams.get('resourceVersion')),
      'each watch starts where its read left off',
    );

    // Every object of the kind is wanted (the autoscalers of a namespace are read so): that is a list.
    const all = await editor.c.listObjects('v1', 'ConfigMap', namespace);
    assert.ok(all.ok);
    assert.deepEqual(
      all.value.filter((o) => !/^other-\d+$/.test(String((o.metadata as { name?: unknown }).name))).length,
      all.value.length - 520,
    );
    assert.ok(
      ['settings', 'not-created-yet'].every((n) =>
        all.value.some((o) => (o.metadata as { name?: unknown }).name === n),
      ),
    );
    assert.ok(collectionReads(editor.proxy, collection).includes('LIST'));
  });

  test('twenty names of a collection twenty-five times their number: the first page ends the list, the rest are read by name', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespaceFor(t, admin, 'kch-by-name-page');
    await createMany(admin, numberedConfigMaps(namespace, 510));
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const names = Array.from({ length: 20 }, (_, i) => `other-${i * 25}`);
    const check = await recorded(t, cluster, 'viewer', false);
    await check.c.expectObjects(names.map((name) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name })));
    for (const name of names)
      assert.equal(
        existing(await check.c.getObject({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name })).metadata.name,
        name,
      );
    const requests = collectionRequests(check.proxy, collection);
    const lists = requests.filter((r) => described(r, collection) === 'LIST');
    assert.equal(lists.length, 1, 'one page, no second');
    assert.equal(lists[0]!.url.searchParams.get('continue'), null);
    // What the first page held is not asked again; the rest is, by name.
    const page = (JSON.parse(lists[0]!.exchange.body) as { items: { metadata: { name: string } }[] }).items.map(
      (i) => i.metadata.name,
    );
    assert.deepEqual(
      requests
        .filter((r) => r !== lists[0])
        .map((r) => described(r, collection))
        .sort(),
      names
        .filter((n) => !page.includes(n))
        .map((n) => `GET ${n}`)
        .sort(),
    );
  });

  test('two hundred objects of one collection, said before they are read: one LIST, no read by name', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespaceFor(t, admin, 'kch-by-name-many');
    await createMany(admin, numberedConfigMaps(namespace, 200, 'web'));
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const refs = Array.from({ length: 200 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace,
      name: `web-${i}`,
    }));
    const check = await recorded(t, cluster, 'viewer', false);
    await check.c.expectObjects(refs);
    for (const ref of refs) existing(await check.c.getObject(ref));
    assert.deepEqual(collectionReads(check.proxy, collection), ['LIST']);
  });

  test('a user who may get but not list still gets answers, by GET', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-by-name-get');
    for (const object of [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'get-only', namespace },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'get-only', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'get-only' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'stranger' }],
      },
    ])
      objectOf(await apply(admin, 'kch-test-setup', object as KubeObject), object.kind);
    const settings = configMap(namespace, 'settings', { mode: 'prod' });
    objectOf(await apply(admin, 'kubectl', settings), 'seed');
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'settings' };

    const check = await recorded(t, cluster, 'stranger', false);
    assert.deepEqual(existing(await check.c.getObject(ref)).data, { mode: 'prod' });
    assert.equal((await check.c.getObject({ ...ref, name: 'missing' })).state, 'absent');

    const editor = await recorded(t, cluster, 'stranger', true);
    assert.deepEqual(existing(await editor.c.getObject(ref)).data, { mode: 'prod' });
    assert.equal((await editor.c.getObject({ ...ref, name: 'missing' })).state, 'absent');
    const refused = collectionRequests(editor.proxy, collection).filter((r) => r.exchange.status === 403);
    assert.deepEqual(
      refused.map((r) => described(r, collection)),
      ['LIST metadata.name=settings'],
      'the selected list is refused once; every read after it is a GET',
    );
    assert.ok(
      collectionRequests(editor.proxy, collection).some(
        (r) => described(r, collection) === 'GET missing' && r.exchange.status === 404,
      ),
    );
  });

  test('a Secret read by name is read as metadata only, its watch too, and no value arrives', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'kch-by-name-secret');
    const value = Buffer.from('by-name-secret-value').toString('base64');
    const secret = await plantedSecret(admin, namespace, { password: value });
    const editor = await recorded(t, cluster, 'viewer', true);
    const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: 'db' };
    const live = existing(await editor.c.getObject(ref));
    assert.ok(JSON.stringify(live.metadata.managedFields).includes('f:password'));
    const newValue = Buffer.from('rotated-by-name-value').toString('base64');
    const changed = nextChange(editor.c, (ch) => ch.name === 'db' && ch.state.state === 'exists');
    objectOf(await patch(admin, 'kubectl-edit', secret, { data: { password: newValue } }), 'rotate');
    await changed;
    const collection = `/api/v1/namespaces/${namespace}/secrets`;
    const requests = collectionRequests(editor.proxy, collection).filter((r) => r.exchange.method === 'GET');
    const objectReads = requests.filter((r) => r.url.pathname === collection);
    assert.deepEqual([...new Set(objectReads.map((r) => described(r, collection)))].sort(), [
      'LIST metadata.name=db',
      'WATCH metadata.name=db',
    ]);
    // The server answers metadata only: no `data` (the copy in kubectl's last-applied annotation is
    // taken out by the transport before anything parses it).
    for (const r of objectReads) {
      assert.match(r.exchange.accept, /^application\/json;as=PartialObjectMetadata(List)?;g=meta\.k8s\.io;v=v1$/);
      assert.match(r.exchange.body, /PartialObjectMetadata/);
      assert.doesNotMatch(r.exchange.body, /"(data|stringData)":/, `${described(r, collection)} answered values`);
    }
    const cached = JSON.stringify(editor.c.peekObject(ref));
    for (const planted of [value, newValue, 'by-name-secret-value', 'rotated-by-name-value'])
      assert.ok(!cached.includes(planted), 'no value in the cache');
  });
});

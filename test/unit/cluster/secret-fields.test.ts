// A Secret's type and immutable, which its metadata-only read lacks (cluster/secret-fields.ts),
// against the real kube-apiserver: the live object the connection hands out carries the live type
// and, where a manager's fields record it, whether it is immutable; each is asked once per object
// (one Table GET, one dry-run JSON Patch of tests), a Secret nobody made immutable costs no PATCH,
// a user who may not patch gets the type and no guess about immutable, and an object deleted and
// created again under the same name is asked about again.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createClusterConnection, type ClusterConnection } from '../../../server/src/cluster';
import type { JsonObject } from '../../../server/src/core/json';
import { auditSentinel, readAuditEvents } from '../../support/cluster';
import { requireCluster } from '../../support/env';
import { apply, connect, create, deleteObject, freshNamespace, objectOf, request } from '../../support/seed';

const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

const live = async (c: ClusterConnection, namespace: string, name: string): Promise<JsonObject> => {
  const state = await c.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  assert.equal(state.state, 'exists', `${name}: ${JSON.stringify(state)}`);
  return state.state === 'exists' ? state.object : {};
};

test("a Secret's type and immutable are learned once per object, without a value, and never guessed", async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'secret-fields');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  objectOf(
    await create(admin, 'kubectl-create', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'token', namespace },
      type: 'example.com/token',
      data: { t: b64('x') },
    }),
    'create token',
  );
  objectOf(
    await apply(admin, 'kubectl', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'frozen', namespace },
      immutable: true,
      data: { a: b64('1') },
    }),
    'apply frozen',
  );
  objectOf(
    await apply(admin, 'kubectl', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'thawed', namespace },
      immutable: false,
      data: { a: b64('1') },
    }),
    'apply thawed',
  );

  const userAgent = `kch-secret-fields-test-${process.pid}`;
  const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' }, { userAgent });
  open.push(c);
  const token = await live(c, namespace, 'token');
  assert.equal(token.type, 'example.com/token');
  assert.equal(token.immutable, undefined, 'nobody set immutable: nothing is asked or said');
  assert.equal(token.data, undefined, 'no value');
  const frozen = await live(c, namespace, 'frozen');
  assert.deepEqual([frozen.type, frozen.immutable, frozen.data], ['Opaque', true, undefined]);
  const thawed = await live(c, namespace, 'thawed');
  assert.deepEqual([thawed.type, thawed.immutable], ['Opaque', false]);
  // Asked again: answered from what was learned, and the same object is handed out.
  assert.equal(await live(c, namespace, 'frozen'), await live(c, namespace, 'frozen'));

  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const events = readAuditEvents(cluster.auditLog).filter(
    (e) => e.userAgent === userAgent && e.objectRef?.resource === 'secrets' && e.stage === 'ResponseComplete',
  );
  const asked = (verb: string, name: string) =>
    events.filter((e) => e.verb === verb && e.objectRef?.name === name).length;
  assert.deepEqual(
    ['token', 'frozen', 'thawed'].map((n) => asked('get', n)),
    [1, 1, 1],
    'one Table GET per Secret',
  );
  assert.deepEqual(
    ['token', 'frozen', 'thawed'].map((n) => asked('patch', n)),
    [0, 1, 1],
    'a dry-run test only where immutable is recorded',
  );
  assert.ok(events.filter((e) => e.verb === 'patch').every((e) => e.requestURI.includes('dryRun=All')));

  // Deleted and created again, mutable: another uid, asked about again.
  objectOf(
    await deleteObject(admin, { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name: 'frozen' } }),
    'delete frozen',
  );
  const again = objectOf(
    await apply(admin, 'kubectl', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'frozen', namespace },
      type: 'example.com/token',
      immutable: false,
      data: { a: b64('1') },
    }),
    'apply frozen again',
  );
  let seen: JsonObject = {};
  for (let i = 0; i < 100; i++) {
    // The watch brings the deletion first, then the new object.
    const state = await c.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name: 'frozen' });
    seen = state.state === 'exists' ? state.object : { metadata: {} };
    if (
      (seen.metadata as JsonObject).uid === again.metadata.uid &&
      seen.type === 'example.com/token' &&
      seen.immutable !== undefined
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(
    [(seen.metadata as JsonObject).uid, seen.type, seen.immutable],
    [again.metadata.uid, 'example.com/token', false],
  );

  // A user who may read but not patch: the type, and immutable left unknown.
  const viewer = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'viewer' }, { userAgent });
  open.push(viewer);
  const viewed = await live(viewer, namespace, 'thawed');
  assert.deepEqual([viewed.type, viewed.immutable], ['Opaque', undefined]);
  assert.equal(viewer.health().state, 'connected', 'a refused test is no problem of the connection');
});

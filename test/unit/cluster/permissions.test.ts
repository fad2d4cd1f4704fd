// cluster/permissions.ts against the real API server, through the fault proxy (which logs what
// reached the server, and refuses the reviews on demand): one SelfSubjectAccessReview per question,
// kept; asked again by name only when the broad one is refused; dryRun=All on every review; a
// review that fails is "unknown", never allowed or denied, and no health problem; the user named
// once by a SelfSubjectReview.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { createClusterConnection, type ClusterConnection } from '../../../server/src/cluster';
import { accessUser } from '../../support/access';
import { requireCluster } from '../../support/env';
import { startFaultProxy, type FaultProxy, type ProxiedRequest } from '../../support/fault-proxy';
import { connect, deleteObject, freshNamespace } from '../../support/seed';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-permissions-'));
const closers: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const reviews = (proxy: FaultProxy, from = 0): ProxiedRequest[] =>
  proxy.requests.slice(from).filter((r) => r.path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');

async function through(
  proxy: FaultProxy,
  kubeconfig: string,
  context: string,
  name: string,
): Promise<ClusterConnection> {
  const connection = await createClusterConnection({
    kubeconfig: proxy.kubeconfig(kubeconfig, path.join(scratch, `${name}.kubeconfig`)),
    context,
  });
  closers.push(() => connection.dispose());
  return connection;
}

describe('permissions: SelfSubjectAccessReview per question, as the user', () => {
  test('a refused broad review is asked again by name; answers are kept; every review is a dry run', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin', cluster.kubeconfig);
    const home = await freshNamespace(admin, 'kch-permissions');
    closers.push(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: home } }));
    const user = await accessUser(admin, home, 'one-name', {
      namespaced: [
        {
          namespace: home,
          rules: [
            { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
            { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'], resourceNames: ['mine'] },
          ],
        },
      ],
    });
    closers.push(user.cleanup);
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    closers.push(() => proxy.close());
    const connection = await through(proxy, user.kubeconfig, user.context, 'one-name');
    const question = { verb: 'patch', group: '', resource: 'configmaps', namespace: home } as const;

    assert.deepEqual(await connection.permissions.get({ ...question, name: 'mine' }), { state: 'allowed' });
    assert.equal((await connection.permissions.get({ ...question, name: 'theirs' })).state, 'denied');
    assert.deepEqual(await connection.permissions.get({ ...question, verb: 'get', name: 'any' }), { state: 'allowed' });
    // The broad patch review once, then one per name; the broad get allowed every name at once.
    assert.equal(reviews(proxy).length, 4);
    assert.ok(reviews(proxy).every((r) => r.method === 'POST' && r.query.get('dryRun') === 'All'));
    const before = proxy.requests.length;
    assert.deepEqual(connection.permissions.peek({ ...question, name: 'mine' }), { state: 'allowed' });
    assert.equal(connection.permissions.peek({ ...question, name: 'theirs' }).state, 'denied');
    assert.equal(reviews(proxy, before).length, 0, 'kept answers send nothing');

    assert.deepEqual(await connection.permissions.getUser(), { state: 'known', name: user.username });
    const selfReviews = proxy.requests.filter((r) => r.path === '/apis/authentication.k8s.io/v1/selfsubjectreviews');
    assert.equal(selfReviews.length, 1);
    assert.equal(selfReviews[0]!.query.get('dryRun'), 'All');
  });

  test('a review the cluster refuses or fails is unknown, no health problem, and asked again on refresh', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    closers.push(() => proxy.close());
    const connection = await through(proxy, cluster.kubeconfig, 'viewer', 'refused');
    await connection.checkHealth();
    proxy.set({ kind: 'status', status: 403, match: (r) => r.path.endsWith('/selfsubjectaccessreviews') });
    const question = {
      verb: 'patch',
      group: 'apps',
      resource: 'deployments',
      namespace: 'default',
      name: 'web',
    } as const;
    const refused = await connection.permissions.get(question);
    assert.equal(refused.state, 'unknown');
    assert.equal(connection.health().state, 'connected');

    proxy.heal();
    connection.refresh();
    const seen = proxy.requests.length;
    await proxy.waitForRequest((r) => r.path.endsWith('/selfsubjectaccessreviews') && r.status !== undefined, {
      from: seen,
    });
    // The viewer reads everything and writes nothing: the broad review, then the named one, both refused.
    assert.equal((await connection.permissions.get(question)).state, 'denied');
  });

  test('at most sixteen reviews are out at once, however many are asked', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    closers.push(() => proxy.close());
    const connection = await through(proxy, cluster.kubeconfig, 'viewer', 'bounded');
    proxy.set({ kind: 'slow', delayMs: 200, match: (r) => r.path.endsWith('/selfsubjectaccessreviews') });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        connection.permissions.get({ verb: 'get', group: '', resource: 'configmaps', namespace: `ns-${i}` }),
      ),
    );
    assert.ok(answers.every((a) => a.state === 'allowed'));
    const sent = reviews(proxy);
    assert.equal(sent.length, 40);
    const most = Math.max(
      ...sent.map((r) => sent.filter((o) => o.at <= r.at && (o.answeredAt ?? Infinity) > r.at).length),
    );
    assert.ok(most <= 16 && most >= 2, `reviews out at once: ${most}`);
  });
});

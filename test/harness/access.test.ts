// The three users of the test cluster: admin may do anything, viewer may only read, stranger nothing.
// The product must behave sensibly for each (a 403 on dry-run apply is not a conflict).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import {
  apply,
  connect,
  create,
  freshNamespace,
  get,
  request,
  webDeployment,
  type ApiResult,
  type Connection,
  type RawAnswer,
  type TestUser,
} from '../support/seed';

type Action = (conn: Connection, namespace: string) => Promise<ApiResult | RawAnswer>;

const getDeployment: Action = (conn, ns) => get(conn, webDeployment(ns));
const listDeployments: Action = (conn, ns) => request(conn, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments`);
const dryRunApply: Action = (conn, ns) =>
  apply(conn, 'kubectl', webDeployment(ns, 'web', { replicas: 2 }), { dryRun: true });
const dryRunCreate: Action = (conn, ns) => create(conn, 'kubectl-create', webDeployment(ns, 'other'), { dryRun: true });
const readOpenApi: Action = (conn) => request(conn, 'GET', '/openapi/v3/apis/apps/v1');

/** deniedVerb: the RBAC verb the server names in its Forbidden message. */
const cases: { user: TestUser; action: string; run: Action; status: number; deniedVerb?: string }[] = [
  { user: 'admin', action: 'dry-run apply', run: dryRunApply, status: 200 },
  { user: 'viewer', action: 'get', run: getDeployment, status: 200 },
  { user: 'viewer', action: 'list', run: listDeployments, status: 200 },
  { user: 'viewer', action: 'read the OpenAPI schema', run: readOpenApi, status: 200 },
  { user: 'viewer', action: 'dry-run apply', run: dryRunApply, status: 403, deniedVerb: 'patch' },
  { user: 'viewer', action: 'dry-run create', run: dryRunCreate, status: 403, deniedVerb: 'create' },
  { user: 'stranger', action: 'get', run: getDeployment, status: 403, deniedVerb: 'get' },
  { user: 'stranger', action: 'list', run: listDeployments, status: 403, deniedVerb: 'list' },
  { user: 'stranger', action: 'dry-run apply', run: dryRunApply, status: 403, deniedVerb: 'patch' },
];

for (const c of cases) {
  test(`${c.user}: ${c.action} answers ${c.status}`, async (t) => {
    if (!requireCluster(t)) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'access');
    const seeded = await apply(admin, 'kubectl', webDeployment(namespace));
    assert.equal(seeded.status, 201);

    const result = await c.run(connect(c.user), namespace);

    assert.equal(result.status, c.status);
    if (c.deniedVerb) {
      const body = ('ok' in result ? (result.ok ? undefined : result.failure) : result.body) as
        { reason?: string; message?: string } | undefined;
      assert.equal(body?.reason, 'Forbidden');
      assert.match(
        body?.message ?? '',
        new RegExp(` is forbidden: User "${c.user}" cannot ${c.deniedVerb} resource "deployments" in API group "apps"`),
      );
    }
  });
}

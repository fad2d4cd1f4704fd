// The language server as a user who may read but not patch: the server's 403, in its own words
// naming the user, on the object's name — the same facts path and judgement as the command line
// (test/differential/permission.test.ts proves the judgement against kubectl's answer) — and gone
// once the user is allowed and the editor refreshes (the reviews are kept until then).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { accessUser } from '../support/access';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { connect, create, deleteObject, freshNamespace, objectOf, request } from '../support/seed';

const ofCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

test("a user who may not patch: the server's 403 on the name, and gone once allowed and refreshed", async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const home = await freshNamespace(admin, 'kch-perm-editor');
  t.after(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: home } }));
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: home },
      data: { mode: 'fast' },
    }),
    'configmap',
  );
  const user = await accessUser(admin, home, 'reader', {
    namespaced: [
      { namespace: home, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] },
    ],
  });
  t.after(user.cleanup);

  const server = await startTestServer({ settings: { kubeconfig: user.kubeconfig, context: user.context } });
  try {
    const uri = 'file:///w/app/configmap.yaml';
    await server.open(uri, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  mode: fast\n');
    const refused = await server.diagnosticsUntil(uri, (d) => ofCode(d, 'forbidden').length === 1);
    const [error] = ofCode(refused, 'forbidden');
    assert.equal(error!.severity, 1, 'an error');
    assert.ok(
      error!.message.startsWith(
        `configmaps "app-config" is forbidden: User "${user.username}" cannot patch resource "configmaps" in API group "" in the namespace "${home}" — `,
      ),
      error!.message,
    );
    assert.deepEqual(error!.range.start, { line: 3, character: 8 });
    assert.equal(error!.codeDescription?.href, docsLinks.authorization);
    assert.deepEqual(
      refused.map((d) => d.code),
      ['forbidden'],
      'a refused apply: nothing else is said',
    );

    // Allowed to patch: the kept reviews are asked again on refresh, and the refusal goes.
    for (const kind of ['Role', 'RoleBinding'] as const)
      objectOf(
        await create(admin, 'kch-test-setup', {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind,
          metadata: { name: 'patch-configmaps', namespace: home },
          ...(kind === 'Role'
            ? { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] }] }
            : {
                roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'patch-configmaps' },
                subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: home }],
              }),
        }),
        kind,
      );
    // The authorizer learns of a binding through its informers: wait until it answers so.
    const review = () =>
      request(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            resourceAttributes: { verb: 'patch', resource: 'configmaps', namespace: home, name: 'app-config' },
          },
        },
      });
    while (!((await review()).body as { status?: { allowed?: boolean } }).status?.allowed)
      await new Promise((r) => setTimeout(r, 100));
    await server.request('kubeConflictHints/refresh', { uri });
    await server.diagnosticsUntil(uri, (d) => ofCode(d, 'forbidden').length === 0);
  } finally {
    await server.shutdown();
  }
});

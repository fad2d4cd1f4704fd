// The language server on a new object bound for a namespace that does not exist, against the real
// kube-apiserver (its 404 asked first): an error in the server's words on the `namespace:` line;
// information instead while the Namespace is among the open documents, the error back when that
// document closes; and gone once the namespace is created, learnt from the watch of an open
// Namespace manifest, or on refresh.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { connect, create, objectOf, request } from '../support/seed';

const ofCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);
const aboutNamespace = (ds: Diagnostic[]) => ds.filter((d) => String(d.code).startsWith('namespace-'));
const configMap = (namespace: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  mode: fast\n`;
const namespaceManifest = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;

test("a namespace that does not exist: the server's 404 on the namespace, a Namespace among the open documents, and its creation", async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const suffix = crypto.randomBytes(4).toString('hex');
  const [first, second] = [`kch-missing-a-${suffix}`, `kch-missing-b-${suffix}`];
  // The server's truth: 404 NotFound, in these words.
  for (const ns of [first, second]) {
    const answer = await request(admin, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/app-config`, {
      query: { fieldManager: 'kubectl', dryRun: 'All' },
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-config', namespace: ns } },
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(answer.status, 404);
    assert.deepEqual(
      [(answer.body as { reason: string }).reason, (answer.body as { message: string }).message],
      ['NotFound', `namespaces "${ns}" not found`],
    );
  }

  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  try {
    const cm = 'file:///w/app/configmap.yaml';
    await server.open(cm, configMap(first));
    const alone = await server.diagnosticsUntil(cm, (d) => ofCode(d, 'namespace-not-found').length === 1);
    const [error] = ofCode(alone, 'namespace-not-found');
    assert.equal(error!.severity, 1, 'an error');
    assert.match(
      error!.message,
      new RegExp(`^namespaces "${first}" not found: the namespace "${first}" does not exist in the cluster`),
    );
    assert.deepEqual(error!.range.start, { line: 4, character: 13 });
    assert.equal(error!.codeDescription?.href, docsLinks.namespaces);

    // The Namespace opened beside it: information on the order, no error.
    const nsUri = 'file:///w/app/namespace.yaml';
    await server.open(nsUri, namespaceManifest(first));
    await server.diagnostics(nsUri);
    const together = await server.diagnosticsUntil(cm, (d) => ofCode(d, 'namespace-from-files').length === 1);
    assert.deepEqual(ofCode(together, 'namespace-not-found'), []);
    assert.equal(ofCode(together, 'namespace-from-files')[0]!.severity, 4, 'news, not a problem: a hint');
    assert.match(ofCode(together, 'namespace-from-files')[0]!.message, /the Namespace in namespace\.yaml creates it/);

    // Closed again: the error is back.
    await server.close(nsUri);
    await server.diagnosticsUntil(
      cm,
      (d) => ofCode(d, 'namespace-not-found').length === 1 && ofCode(d, 'namespace-from-files').length === 0,
    );

    // Created while a Namespace manifest is open (its watch): the finding goes.
    await server.open(nsUri, namespaceManifest(first));
    await server.diagnostics(nsUri);
    await server.diagnosticsUntil(cm, (d) => ofCode(d, 'namespace-from-files').length === 1);
    objectOf(
      await create(admin, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: first } }),
      `namespace ${first}`,
    );
    await server.diagnosticsUntil(cm, (d) => aboutNamespace(d).length === 0);

    // Another namespace, created with no Namespace manifest open: the user's refresh reads it again.
    const other = 'file:///w/app/other.yaml';
    await server.open(other, configMap(second));
    await server.diagnosticsUntil(other, (d) => ofCode(d, 'namespace-not-found').length === 1);
    objectOf(
      await create(admin, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: second } }),
      `namespace ${second}`,
    );
    await server.request('kubeConflictHints/refresh', { uri: other });
    await server.diagnosticsUntil(other, (d) => aboutNamespace(d).length === 0);
  } finally {
    await server.shutdown();
  }
});

// The language server on kinds the real kube-apiserver does not serve (its 404 asked first): a custom
// resource whose CRD is not installed is an error that says so and links the CRD documentation;
// once the editor also holds the CustomResourceDefinition (another open document, or the same
// file) the error gives way to information on the order of the apply, and comes back when that
// document closes; a built-in kind at a removed version keeps the deprecation guide.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { certificateWithCrd, connect, freshNamespace, request } from '../support/seed';

const group = 'certs.kind-not-served-editor.example.com';

const ofCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

test('kind-not-served in the editor: the cause, the link, and a CRD among the open documents', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'kind-not-served-lsp');
  // The server's truth: the group is not served (404), and policy/v1beta1 no longer is.
  assert.equal((await request(conn, 'GET', `/apis/${group}/v1`)).status, 404);
  assert.equal((await request(conn, 'GET', '/apis/policy/v1beta1')).status, 404);
  const { certificate, crd } = certificateWithCrd(group, namespace);

  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  try {
    const cr = 'file:///w/app/certificate.yaml';
    await server.open(cr, certificate);
    const alone = await server.diagnosticsUntil(cr, (d) => ofCode(d, 'kind-not-served').length === 1);
    const [error] = ofCode(alone, 'kind-not-served');
    assert.equal(error!.severity, 1, 'an error');
    assert.equal(
      error!.message,
      `The cluster serves no API group ${group}: Certificate is a custom resource whose CustomResourceDefinition is not installed. Install the CRD before this object; kubectl apply fails on it (no matches for kind "Certificate" in version "${group}/v1").`,
    );
    assert.equal(error!.codeDescription?.href, docsLinks.customResources);
    assert.deepEqual(error!.range.start, { line: 1, character: 6 });

    // The CRD opened beside it (and looked at, as the editor pulls every open document): the
    // certificate's error becomes information, without touching the certificate.
    const crdUri = 'file:///w/crds/certificates.yaml';
    await server.open(crdUri, crd);
    await server.diagnostics(crdUri);
    const together = await server.diagnosticsUntil(cr, (d) => ofCode(d, 'kind-from-new-crd').length === 1);
    assert.deepEqual(ofCode(together, 'kind-not-served'), []);
    const [info] = ofCode(together, 'kind-from-new-crd');
    assert.equal(info!.severity, 3, 'information');
    assert.match(
      info!.message,
      new RegExp(
        `CustomResourceDefinition certificates\\.${group.replaceAll('.', '\\.')} in certificates\\.yaml, which the cluster does not serve yet`,
      ),
    );

    // Closed again: the error is back.
    await server.close(crdUri);
    await server.diagnosticsUntil(
      cr,
      (d) => ofCode(d, 'kind-not-served').length === 1 && ofCode(d, 'kind-from-new-crd').length === 0,
    );

    // One file holding both, as a stream does.
    const both = 'file:///w/app/bundle.yaml';
    await server.open(both, `${crd}---\n${certificate}`);
    const inOne = await server.diagnosticsUntil(both, (d) => ofCode(d, 'kind-from-new-crd').length === 1);
    assert.deepEqual(ofCode(inOne, 'kind-not-served'), []);

    // A built-in kind at a removed version: the deprecation guide and what is served, as before.
    const old = 'file:///w/app/pdb.yaml';
    await server.open(
      old,
      `apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: ${namespace}\nspec:\n  minAvailable: 1\n`,
    );
    const removed = await server.diagnosticsUntil(old, (d) => ofCode(d, 'kind-not-served').length === 1);
    assert.deepEqual(
      ofCode(removed, 'kind-not-served').map((d) => [d.message, d.codeDescription?.href]),
      [
        [
          'The cluster does not serve PodDisruptionBudget in policy/v1beta1 (served: policy/v1).',
          docsLinks.apiVersions,
        ],
      ],
    );
  } finally {
    await server.shutdown();
  }
});

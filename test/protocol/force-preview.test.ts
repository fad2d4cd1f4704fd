// The force preview's acceptance, against the real kube-apiserver: a Deployment applied server-side
// as `kubectl`, a HorizontalPodAutoscaler targeting it, its replicas written through /scale as the
// autoscaler's controller writes them (`kube-controller-manager`), its image changed by `kubectl
// edit`; the manifest sets both. The editor's "Preview forcing…" code action lists both fields and
// managers and says the autoscaler takes the replicas back; then a REAL dry run with force=true
// confirms the takeover list from the server's own managedFields, and the audit log shows the
// product sent nothing but reads.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { stringify } from 'yaml';
import type { ForcePreviewResult } from '../../server/src/protocol';
import { auditSentinel, readAuditEvents } from '../support/cluster';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { managerKey, takenFrom, type ManagedEntryLike } from '../support/managed-fields-oracle';
import { apply, connect, freshNamespace, get, objectOf, request } from '../support/seed';
import { autoscaledAndEdited } from '../support/seed-scenarios';

test('forcing an autoscaled, hand-edited Deployment: the preview lists both fields and managers, the autoscaler takes replicas back, and a forced dry run takes exactly that', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'force-preview');
  const { manifest } = await autoscaledAndEdited(admin, namespace, 'web');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-force-preview-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'web.yaml');
  const text = stringify(manifest);
  fs.writeFileSync(file, text);
  const uri = pathToFileURL(file).href;

  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  const started = new Date().toISOString();
  let preview: ForcePreviewResult;
  try {
    await server.open(uri, text);
    const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');
    const diagnostics = await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2);
    const replicas = conflicts(diagnostics).find((d) => d.message.startsWith('.spec.replicas'))!;
    const action = (await server.codeActions(uri, replicas.range, [replicas])).find(
      (a) => a.title === 'Preview forcing…',
    );
    assert.ok(action?.command, 'the conflict offers "Preview forcing…"');
    preview = (await server.request('workspace/executeCommand', action.command)) as ForcePreviewResult;
  } finally {
    await server.shutdown();
  }

  // Both fields and both managers, in the server's order of managers, each as its entry names it.
  assert.deepEqual(
    preview.preview.losses.map((l) => [l.manager, l.operation, l.subresource ?? '', l.fields.map((f) => f.path)]),
    [
      ['kube-controller-manager', 'Update', 'scale', ['.spec.replicas']],
      ['kubectl-edit', 'Update', '', ['.spec.template.spec.containers[name="app"].image']],
    ],
  );
  const [autoscaled, edited] = preview.preview.losses;
  assert.deepEqual(
    autoscaled!.takesBack && [
      autoscaled!.takesBack.certainty,
      autoscaled!.takesBack.kind,
      autoscaled!.takesBack.by,
      autoscaled!.takesBack.reason,
    ],
    [
      'will',
      'autoscaler',
      'kube-controller-manager',
      'an autoscaler (HorizontalPodAutoscaler web) scales this Deployment',
    ],
  );
  assert.equal(edited!.takesBack, undefined, 'nothing writes a hand edit back');
  assert.match(edited!.time ?? '', /^20\d\d-\d\d-\d\dT[\d:]+Z$/, "the edit's time, as recorded");
  assert.match(
    preview.text,
    /Will be taken back by kube-controller-manager: an autoscaler \(HorizontalPodAutoscaler web\) scales this Deployment\./,
  );
  assert.equal(
    preview.command,
    `kubectl apply --server-side --force-conflicts --field-manager=kubectl --kubeconfig=${cluster.kubeconfig} --context=admin -f ${file}`,
  );

  // The product sent only reads (and dry runs), among them the list of the namespace's autoscalers (the positive
  // signal that it looked), seen once a sentinel request after them reached the audit log.
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const mine = readAuditEvents(cluster.auditLog).filter(
    (e) =>
      (e.userAgent ?? '').startsWith(`kube-conflict-hints (editor; pid ${process.pid})`) &&
      (e.requestReceivedTimestamp ?? '') >= started,
  );
  assert.ok(
    mine.some(
      (e) =>
        e.verb === 'list' &&
        e.objectRef?.resource === 'horizontalpodautoscalers' &&
        e.objectRef.namespace === namespace,
    ),
    'the autoscalers were listed',
  );
  // Reads and dry runs only: the access reviews of the user's permission are created with dryRun=All.
  assert.deepEqual(
    mine
      .filter((e) => !['get', 'list', 'watch'].includes(e.verb) && !/[?&]dryRun=All(&|$)/.test(e.requestURI ?? ''))
      .map((e) => `${e.verb} ${e.requestURI}`),
    [],
  );

  // The truth: the same apply sent for real with force (dryRun=All: the server stores nothing).
  const before = objectOf(await get(admin, manifest), 'read before');
  const forced = objectOf(await apply(admin, 'kubectl', manifest, { dryRun: true, force: true }), 'forced dry run');
  const byServer = takenFrom(
    before.metadata.managedFields as ManagedEntryLike[],
    forced.metadata.managedFields as ManagedEntryLike[],
    'kubectl',
  );
  const byPreview = new Map(preview.preview.losses.map((l) => [managerKey(l), l.fields.map((f) => f.path).sort()]));
  assert.deepEqual(byPreview, byServer);
  assert.equal(
    objectOf(await get(admin, manifest)).metadata.resourceVersion,
    before.metadata.resourceVersion,
    'the dry run stored nothing',
  );
});

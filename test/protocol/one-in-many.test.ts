// The editor pays for the objects it shows, not for the namespace around them (real kube-apiserver,
// every request seen through a recording proxy): one ConfigMap with a conflict among three hundred
// others is read and watched by its name, another manager's edit of it reaches the open document
// through that watch, and no request lists the namespace's ConfigMaps.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { collectionReads, recordCluster } from '../support/recording-proxy';
import {
  apply,
  configMap,
  connect,
  createMany,
  freshNamespaceFor,
  kubectlEdit,
  numberedConfigMaps,
  objectOf,
} from '../support/seed';

const conflict = (ds: Diagnostic[]) => ds.find((d) => d.code === 'field-conflict');

test('one ConfigMap among three hundred: found, followed by name, the namespace never listed', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespaceFor(t, admin, 'lsp-one-in-many');
  await createMany(admin, numberedConfigMaps(namespace, 300));
  const settings = configMap(namespace, 'settings', { mode: 'prod' });
  objectOf(await apply(admin, 'kubectl', settings), 'seed');
  objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-lsp-one-in-many-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(dir, 'kubeconfig'));
  t.after(() => proxy.stop());
  const server = await startTestServer({ settings: { kubeconfig, fieldManager: 'kubectl' } });
  t.after(() => server.shutdown());

  const uri = 'file:///w/settings.yaml';
  await server.open(
    uri,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: prod\n`,
  );
  const first = await server.diagnosticsUntil(uri, (d) => conflict(d) !== undefined);
  assert.match(conflict(first)!.message, /^\.data\.mode is managed by "kubectl-edit"/);
  assert.match(conflict(first)!.message, /live "debug"/);

  // Another manager's edit reaches the open document by itself.
  objectOf(await kubectlEdit(admin, settings, { data: { mode: 'trace' } }), 'edit');
  const after = await server.diagnosticsUntil(uri, (d) => /live "trace"/.test(conflict(d)?.message ?? ''));
  assert.equal(after.filter((d) => d.code === 'field-conflict').length, 1);

  // Every read of the collection selects the one name: a list of it, and its watch.
  assert.deepEqual([...new Set(collectionReads(proxy, `/api/v1/namespaces/${namespace}/configmaps`))].sort(), [
    'LIST metadata.name=settings',
    'WATCH metadata.name=settings',
  ]);
});

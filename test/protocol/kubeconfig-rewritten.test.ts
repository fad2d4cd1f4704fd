// The cluster comes back on a new address and the kubeconfig is rewritten to say so (a local
// cluster restarted, a tunnel re-opened): the editor follows the file, with no reload, no Refresh
// and no context picked again. The first address is a pass-through that is closed; the second is
// another, whose request log shows the editor reaching it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import type { StatusParams } from '../../server/src/protocol';
import { scratchDir } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { startFaultProxy } from '../support/fault-proxy';
import { startTestServer } from '../support/lsp-client';
import { connect, freshNamespace, webDeploymentText } from '../support/seed';
import { editedAndAutoscaled } from '../support/seed-scenarios';

const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');

test('a kubeconfig rewritten with the cluster\'s new address: the editor reconnects by itself and the conflicts come from the new address', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'kubeconfig-rewritten');
  await editedAndAutoscaled(conn, namespace);
  const scratch = scratchDir('kubeconfig-rewritten');
  const before = await startFaultProxy(cluster.server, cluster.kubeconfig);
  const after = await startFaultProxy(cluster.server, cluster.kubeconfig);
  t.after(() => Promise.all([before.close(), after.close()]));
  const kubeconfig = before.kubeconfig(cluster.kubeconfig, path.join(scratch, 'config'));

  const server = await startTestServer({ settings: { kubeconfig, context: 'admin' } });
  t.after(() => server.shutdown());
  const uri = pathToFileURL(path.join(scratch, 'web.yaml')).href;
  await server.open(uri, webDeploymentText(namespace));
  assert.equal(conflicts(await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2, 60_000)).length, 2);

  // The cluster leaves the first address, and the editor says so.
  await before.close();
  await server.request('kubeConflictHints/refresh', { uri });
  await server.waitForNotification('kubeConflictHints/status', (p) => (p as StatusParams).health === 'unreachable', 30_000);

  // A tool writes the new address as tools do: a new file renamed over the old one.
  fs.renameSync(after.kubeconfig(cluster.kubeconfig, path.join(scratch, 'config.new')), kubeconfig);
  const port = new URL(after.server).port;
  const found = await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2 && after.requests.some((r) => r.path.includes('/deployments')), 30_000);
  assert.equal(conflicts(found).length, 2);
  await server.waitForNotification('kubeConflictHints/status', (p) => (p as StatusParams).health === 'connected' && (p as StatusParams).server?.includes(`:${port}`) === true, 10_000);
});

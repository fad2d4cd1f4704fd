// The cluster goes away, then comes back on a new address and the kubeconfig is rewritten to say so
// (a local cluster restarted, a tunnel re-opened). While it is away, findings and hovers say that
// they rest on old facts and since when; once the file is rewritten the editor follows it, with no
// reload, no Refresh and no context picked again, and the findings are live again. The first
// address is a pass-through that is closed; the second is another, whose request log shows the
// editor reaching it.
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

test('the cluster away: findings and hovers marked old; the kubeconfig rewritten with its new address: the editor reconnects by itself and they are live again', async (t) => {
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
  const old = /\(as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\)$/;
  const marked = await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2 && conflicts(ds).every((d) => old.test(d.message)), 30_000);
  const replicas = conflicts(marked).find((d) => d.message.includes('.spec.replicas'))!;
  const hover = (await server.hover(uri, replicas.range.start)) as { contents: { value: string } };
  assert.match(hover.contents.value, /^\*\*Not live: as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\.\*\*/);

  // A tool writes the new address as tools do: a new file renamed over the old one.
  fs.renameSync(after.kubeconfig(cluster.kubeconfig, path.join(scratch, 'config.new')), kubeconfig);
  const port = new URL(after.server).port;
  const found = await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2 && after.requests.some((r) => r.path.includes('/deployments')), 30_000);
  assert.equal(conflicts(found).length, 2);
  assert.deepEqual(found.filter((d) => / \(as of |cluster unreachable/.test(d.message)), [], 'live again: nothing marked old');
  await server.waitForNotification('kubeConflictHints/status', (p) => (p as StatusParams).health === 'connected' && (p as StatusParams).server?.includes(`:${port}`) === true, 10_000);
});

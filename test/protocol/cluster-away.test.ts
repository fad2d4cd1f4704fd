// The cluster goes away, then comes back on a new address and the kubeconfig is rewritten to say so
// (a local cluster restarted, a tunnel re-opened). While it is away, findings, hovers and ownership
// hints say that they rest on old facts and since when; once the file is rewritten the editor follows it, with no
// reload, no Refresh and no context picked again, and the findings are live again. The first
// address is a pass-through that is closed; the second is another, whose request log shows the
// editor reaching it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic, InlayHint } from 'vscode-languageserver-protocol';
import type { StatusParams } from '../../server/src/protocol';
import { scratchDir } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { startFaultProxy } from '../support/fault-proxy';
import { startTestServer } from '../support/lsp-client';
import { connect, freshNamespace, webDeploymentText } from '../support/seed';
import { editedAndAutoscaled } from '../support/seed-scenarios';

const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');
const tooltipOf = (h: InlayHint) => (typeof h.tooltip === 'object' ? h.tooltip.value : String(h.tooltip ?? ''));

test('the cluster away: findings, hovers and ownership hints marked old; the kubeconfig rewritten with its new address: the editor reconnects by itself and they are live again', async (t) => {
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
  const text = webDeploymentText(namespace);
  await server.open(uri, text);
  assert.equal(conflicts(await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2, 60_000)).length, 2);
  const hints = async () =>
    ((await server.request('textDocument/inlayHint', {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } },
    })) ?? []) as InlayHint[];
  const replicasLine = text.split('\n').findIndex((l) => /^\s*replicas:/.test(l));
  const live = (await hints()).find((h) => h.position.line === replicasLine);
  assert.equal(live?.label, 'kube-controller-manager (scale)', "the autoscaler's hint, live");

  // The cluster leaves the first address, and the editor says so.
  await before.close();
  await server.request('kubeConflictHints/refresh', { uri });
  await server.waitForNotification(
    'kubeConflictHints/status',
    (p) => (p as StatusParams).health === 'unreachable',
    30_000,
  );
  const old = /\(as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\)$/;
  const marked = await server.diagnosticsUntil(
    uri,
    (ds) => conflicts(ds).length === 2 && conflicts(ds).every((d) => old.test(d.message)),
    30_000,
  );
  const replicas = conflicts(marked).find((d) => d.message.includes('.spec.replicas'))!;
  const hover = (await server.hover(uri, replicas.range.start)) as { contents: { value: string } };
  assert.match(
    hover.contents.value,
    /^\*\*Not live: as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\.\*\*/,
  );
  const oldHints = await hints();
  assert.ok(oldHints.length > 0, 'the hints stay, as the findings do');
  for (const h of oldHints) {
    assert.match(String(h.label), / \(as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\)$/);
    assert.match(
      tooltipOf(h),
      /^\*\*Not live: as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\.\*\*\n\n/,
    );
  }
  assert.ok(
    oldHints.some(
      (h) => h.position.line === replicasLine && String(h.label).startsWith('kube-controller-manager (scale) (as of '),
    ),
  );

  // A tool writes the new address as tools do: a new file renamed over the old one.
  fs.renameSync(after.kubeconfig(cluster.kubeconfig, path.join(scratch, 'config.new')), kubeconfig);
  const port = new URL(after.server).port;
  const found = await server.diagnosticsUntil(
    uri,
    (ds) => conflicts(ds).length === 2 && after.requests.some((r) => r.path.includes('/deployments')),
    30_000,
  );
  assert.equal(conflicts(found).length, 2);
  assert.deepEqual(
    found.filter((d) => / \(as of |cluster unreachable/.test(d.message)),
    [],
    'live again: nothing marked old',
  );
  await server.waitForNotification(
    'kubeConflictHints/status',
    (p) => (p as StatusParams).health === 'connected' && (p as StatusParams).server?.includes(`:${port}`) === true,
    10_000,
  );
  const liveAgain = await hints();
  assert.equal(liveAgain.find((h) => h.position.line === replicasLine)?.label, 'kube-controller-manager (scale)');
  assert.deepEqual(
    liveAgain.filter(
      (h) => / \(as of |cluster unreachable/.test(String(h.label)) || tooltipOf(h).startsWith('**Not live'),
    ),
    [],
    'live again: no hint marked old',
  );
});

// Trust fails closed. A kubeconfig can run any program (an exec credential plugin), and a
// workspace's settings can name the kubeconfig, so the language server contacts no cluster, and
// reads no kubeconfig for one, unless the editor says the workspace is trusted. A client that says
// nothing (no initializationOptions), or anything but `clusterAccess: true`, gets no access.
//
// The kubeconfig here authenticates with an exec plugin that leaves a marker file when it runs; the
// last test shows that the very same setup does run it once the workspace is trusted.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { requireCluster } from '../support/env';
import { execKubeconfig } from '../support/exec-kubeconfig';
import { startTestServer, type TestServer } from '../support/lsp-client';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-trust-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Everything that would reach the cluster in a trusted workspace, each answered. */
async function useEveryFeature(server: TestServer): Promise<void> {
  const uri = 'file:///w/app.yaml';
  await server.open(
    uri,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\ndata:\n  a: "1"\n',
  );
  assert.deepEqual(await server.diagnostics(uri), []);
  assert.ok(await server.hover(uri, { line: 3, character: 8 }), 'hovers answer');
  // A field's hover says ownership is not looked up here, not that the cluster is slow to answer.
  const fieldHover = await server.hover(uri, { line: 6, character: 3 });
  const text =
    typeof fieldHover?.contents === 'object' && 'value' in fieldHover.contents ? fieldHover.contents.value : '';
  assert.match(text, /\.data\.a[\s\S]*not checked against a cluster/);
  assert.deepEqual(await server.codeLenses(uri), []);
  assert.equal(await server.request('kubeConflictHints/ownership', { uri, position: { line: 3, character: 8 } }), null);
  assert.deepEqual(await server.request('kubeConflictHints/verify', { uri }), {
    agreed: 0,
    differences: [],
    failed: ['No cluster access in this workspace.'],
  });
  await server.request('kubeConflictHints/refresh', null);
}

describe('without the editor saying the workspace is trusted, no exec plugin runs', () => {
  const clients: { name: string; initializationOptions: Record<string, unknown> | null; detail: RegExp }[] = [
    {
      name: 'a client that sends no initializationOptions',
      initializationOptions: null,
      detail: /did not say that this workspace is trusted/,
    },
    {
      name: 'initializationOptions without clusterAccess',
      initializationOptions: {},
      detail: /did not say that this workspace is trusted/,
    },
    {
      name: 'clusterAccess that is not the boolean true',
      initializationOptions: { clusterAccess: 'true' },
      detail: /^The editor's clusterAccess is neither true nor false: no cluster is contacted\.$/,
    },
    {
      name: 'an untrusted workspace',
      initializationOptions: { clusterAccess: false },
      detail: /^Untrusted workspace: no cluster is contacted\.$/,
    },
  ];
  for (const client of clients) {
    test(client.name, async (t) => {
      const cluster = requireCluster(t);
      if (!cluster) return;
      const plugin = execKubeconfig(cluster.kubeconfig, dir, `untrusted-${clients.indexOf(client)}`);
      // As a workspace folder's settings would name it.
      const server = await startTestServer({
        initializationOptions: client.initializationOptions,
        settings: { kubeconfig: plugin.file, context: 'plugin' },
      });
      try {
        const status = (await server.waitForNotification('kubeConflictHints/status')) as {
          health: string;
          detail: string;
        };
        assert.equal(status.health, 'disabled');
        assert.match(status.detail, client.detail);
        await useEveryFeature(server);
      } finally {
        await server.shutdown();
      }
      assert.deepEqual(plugin.runs(), [], 'the exec plugin ran');
    });
  }
});

test('the same kubeconfig in a trusted workspace does run its plugin and connects', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const plugin = execKubeconfig(cluster.kubeconfig, dir, 'trusted');
  const server = await startTestServer({
    initializationOptions: { clusterAccess: true },
    settings: { kubeconfig: plugin.file, context: 'plugin' },
  });
  try {
    // The cluster is contacted once a manifest is open.
    await server.open(
      'file:///w/app.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\n',
    );
    await server.diagnostics('file:///w/app.yaml');
    await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'connected',
    );
  } finally {
    await server.shutdown();
  }
  assert.ok(plugin.runs().length > 0, 'the exec plugin did not run: the tests above prove nothing');
});

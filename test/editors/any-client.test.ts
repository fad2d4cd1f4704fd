// `kube-conflict-hints lsp --stdio` as editors other than VS Code meet it, against the local
// kube-apiserver: settings from whichever of LSP's three ways a client supports (or none: the
// defaults), diagnostics pushed to clients that cannot pull them, the product's requests as
// workspace/executeCommand, and progress while a slow first load runs (only for clients that can
// show it). An autoscaler owns .spec.replicas; the manifest sets 3, so `serverSide` finds a field
// conflict and `create` finds that the object already exists: the two modes tell which settings won.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ClientCapabilities, Diagnostic } from 'vscode-languageserver-protocol';
import { testCluster, type TestClusterInfo } from '../support/env';
import { execKubeconfig } from '../support/exec-kubeconfig';
import { startFaultProxy } from '../support/fault-proxy';
import { apply, autoscale, connect, freshNamespace, objectOf, webDeployment } from '../support/seed';
import { startStdioClient, type StdioClient, type StdioClientOptions } from './stdio-client';

let cluster: TestClusterInfo;
let namespace: string;
let text: string;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-any-client-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
const uri = pathToFileURL(path.join(scratch, 'web.yaml')).href;

/** What Neovim 0.7, Helix or eglot say: push diagnostics only, no progress unless asked for. */
const pushOnly: ClientCapabilities = {
  textDocument: { publishDiagnostics: { versionSupport: true }, hover: { contentFormat: ['markdown'] } },
};

const conflictOnReplicas = (d: Diagnostic[]) =>
  d.some((x) => x.code === 'field-conflict' && /\.spec\.replicas/.test(x.message));
const alreadyExists = (d: Diagnostic[]) => d.some((x) => x.code === 'already-exists');

before(async () => {
  const info = testCluster();
  // Under CI=true and outside it alike: these tests need the local API server (npm test starts one).
  if (!info) throw new Error('no local kube-apiserver: run through `npm test` or `npm run cluster:up`');
  cluster = info;
  const conn = connect('admin', cluster.kubeconfig);
  namespace = await freshNamespace(conn, 'any-client');
  const manifest = webDeployment(namespace, 'web');
  objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
  await autoscale(conn, manifest, 5);
  text = `${JSON.stringify(manifest, null, 2)}\n`;
});

async function withClient(
  options: Partial<StdioClientOptions>,
  body: (client: StdioClient) => Promise<void>,
): Promise<void> {
  const client = await startStdioClient({
    capabilities: pushOnly,
    env: { KUBECONFIG: cluster.kubeconfig, HOME: scratch },
    ...options,
  });
  try {
    await body(client);
  } finally {
    await client.close();
  }
}

test('a client that supports no way of sending settings gets the defaults (KUBECONFIG, its current context) and pushed diagnostics', async () => {
  await withClient({}, async (client) => {
    await client.open(uri, text);
    const diagnostics = await client.publishedUntil(uri, conflictOnReplicas);
    const replicas = diagnostics.find((d) => d.code === 'field-conflict')!;
    assert.equal(
      replicas.range.start.line,
      text.split('\n').findIndex((l) => l.includes('"replicas"')),
    );
    assert.match(replicas.message, /managed by "kube-controller-manager" with subresource "scale"/);
    const hover = await client.request<{ contents: { value: string } }>('textDocument/hover', {
      textDocument: { uri },
      position: replicas.range.start,
    });
    assert.match(hover.contents.value, /kube-controller-manager/);
  });
});

test('settings in initializationOptions are used', async () => {
  await withClient({ initializationOptions: { kubeConflictHints: { applyMode: 'create' } } }, async (client) => {
    await client.open(uri, text);
    const diagnostics = await client.publishedUntil(uri, alreadyExists);
    assert.ok(!conflictOnReplicas(diagnostics), 'create mode predicts no field conflicts');
  });
});

test('settings pushed with workspace/didChangeConfiguration take effect at once: the diagnostics are published again', async () => {
  await withClient({}, async (client) => {
    await client.open(uri, text);
    await client.publishedUntil(uri, conflictOnReplicas);
    await client.notify('workspace/didChangeConfiguration', {
      settings: { kubeConflictHints: { applyMode: 'create' } },
    });
    const diagnostics = await client.publishedUntil(uri, alreadyExists);
    assert.ok(!conflictOnReplicas(diagnostics));
  });
});

test('workspace/configuration answers override the other sources; a null answer (Neovim for an unknown section) keeps them', async () => {
  await withClient(
    {
      capabilities: { ...pushOnly, workspace: { configuration: true } },
      initializationOptions: { kubeConflictHints: { applyMode: 'create' } },
      configuration: (section) => (section === 'kubeConflictHints' ? { applyMode: 'serverSide' } : null),
    },
    async (client) => {
      await client.open(uri, text);
      await client.publishedUntil(uri, conflictOnReplicas);
      assert.ok(client.received.some((m) => m.method === 'workspace/configuration'));
    },
  );
  await withClient(
    {
      capabilities: { ...pushOnly, workspace: { configuration: true } },
      initializationOptions: { kubeConflictHints: { applyMode: 'create' } },
      configuration: () => null,
    },
    async (client) => {
      await client.open(uri, text);
      await client.publishedUntil(uri, alreadyExists);
    },
  );
});

test('a kubeconfig from workspace/configuration or didChangeConfiguration, which project files can answer, is ignored with a warning; from initializationOptions it is used', async () => {
  // Its exec plugin leaves a marker when it runs. The env's KUBECONFIG reaches the same cluster without one.
  const fromProject = execKubeconfig(cluster.kubeconfig, scratch, 'from-project');
  await withClient(
    {
      capabilities: { ...pushOnly, workspace: { configuration: true } },
      configuration: (section) => (section === 'kubeConflictHints' ? { kubeconfig: fromProject.file } : null),
    },
    async (client) => {
      await client.notify('workspace/didChangeConfiguration', {
        settings: { kubeConflictHints: { kubeconfig: fromProject.file } },
      });
      await client.open(uri, text);
      // The conflict comes from the cluster through KUBECONFIG: the settings were asked and answered by then.
      await client.publishedUntil(uri, conflictOnReplicas);
      assert.ok(client.received.some((m) => m.method === 'workspace/configuration'));
      const warning = await client.waitFor(
        (m) =>
          m.method === 'window/showMessage' &&
          /ignored kubeConflictHints\.kubeconfig from workspace\/configuration/.test(
            String((m.params as { message: string }).message),
          ),
      );
      assert.match(String((warning.params as { message: string }).message), /initializationOptions/);
    },
  );
  assert.deepEqual(fromProject.runs(), [], 'a kubeconfig a project file named ran its exec plugin');
  const fromLaunch = execKubeconfig(cluster.kubeconfig, scratch, 'from-launch');
  await withClient(
    { initializationOptions: { kubeConflictHints: { kubeconfig: fromLaunch.file } } },
    async (client) => {
      await client.open(uri, text);
      await client.publishedUntil(uri, conflictOnReplicas);
    },
  );
  assert.ok(
    fromLaunch.runs().length > 0,
    'the kubeconfig from initializationOptions was not used: the check above proves nothing',
  );
});

test('a client that says clusterAccess: false gets no cluster access, even from the lsp command', async () => {
  await withClient({ initializationOptions: { clusterAccess: false } }, async (client) => {
    const status = await client.waitFor((m) => m.method === 'kubeConflictHints/status');
    assert.equal((status.params as { health: string }).health, 'disabled');
    await client.open(uri, text);
    // The server's answer for this text: published, and without anything from the cluster.
    const diagnostics = await client.publishedUntil(uri, () => true);
    assert.deepEqual(diagnostics, []);
  });
});

test('the ownership view and the other requests are workspace/executeCommand commands', async () => {
  await withClient({}, async (client) => {
    const commands = client.initializeResult.capabilities.executeCommandProvider?.commands ?? [];
    assert.deepEqual([...commands].sort(), [
      'kube-conflict-hints.contexts',
      'kube-conflict-hints.fleet',
      'kube-conflict-hints.forcePreview',
      'kube-conflict-hints.managers',
      'kube-conflict-hints.overlays',
      'kube-conflict-hints.refresh',
      'kube-conflict-hints.releases',
      'kube-conflict-hints.showOwnership',
      'kube-conflict-hints.verify',
    ]);
    await client.open(uri, text);
    const replicas = (await client.publishedUntil(uri, conflictOnReplicas)).find((d) => d.code === 'field-conflict')!;
    const view = await client.request<{ title: string; text: string } | null>('workspace/executeCommand', {
      command: 'kube-conflict-hints.showOwnership',
      arguments: [uri, replicas.range.start],
    });
    assert.match(view?.title ?? '', /^Deployment .*\/web \(live, with owners\)$/);
    assert.match(view?.text ?? '', /replicas: 5\s+# kube-controller-manager/);
    const contexts = await client.request<{ current?: string; contexts: { name: string }[] }>(
      'workspace/executeCommand',
      { command: 'kube-conflict-hints.contexts', arguments: [] },
    );
    assert.equal(contexts.current, 'admin');
    await assert.rejects(
      client.request('workspace/executeCommand', { command: 'kube-conflict-hints.showOwnership', arguments: [] }),
      /needs the document/,
    );
  });
});

test(
  'a slow first load shows progress to a client that supports it, and to no other',
  { timeout: 180_000 },
  async () => {
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    try {
      const kubeconfig = proxy.kubeconfig(cluster.kubeconfig, path.join(scratch, 'slow.yaml'));
      // Every read of Deployments waits well past the second after which progress is shown.
      proxy.set({ kind: 'slow', delayMs: 4000, match: (r) => r.path.includes('/deployments') });
      const env = { KUBECONFIG: kubeconfig, HOME: scratch };

      await withClient({ capabilities: { ...pushOnly, window: { workDoneProgress: true } }, env }, async (client) => {
        await client.open(uri, text);
        const created = await client.waitFor((m) => m.method === 'window/workDoneProgress/create');
        const token = (created.params as { token: string | number }).token;
        const isProgress = (kind: string) => (m: { method: string; params: unknown }) =>
          m.method === '$/progress' &&
          (m.params as { token: unknown }).token === token &&
          (m.params as { value: { kind: string } }).value.kind === kind;
        const begin = await client.waitFor(isProgress('begin'));
        assert.match(
          (begin.params as { value: { message: string } }).value.message,
          /^0 of 1 objects loaded from the cluster$/,
        );
        await client.waitFor(isProgress('end'));
        await client.publishedUntil(uri, conflictOnReplicas);
      });

      await withClient({ capabilities: pushOnly, env }, async (client) => {
        await client.open(uri, text);
        // The same slow load, to its end (the conflict arrives), and no progress was offered.
        await client.publishedUntil(uri, conflictOnReplicas);
        assert.deepEqual(
          client.received.filter((m) => m.method === 'window/workDoneProgress/create' || m.method === '$/progress'),
          [],
        );
      });
    } finally {
      await proxy.close();
    }
  },
);

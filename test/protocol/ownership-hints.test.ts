// Ownership at a glance over real JSON-RPC, against the real local kube-apiserver: the bundled
// server (`kube-conflict-hints lsp --stdio`) puts an inlay hint at the end of each line whose field
// another manager owns — the autoscaler's replicas, the image `kubectl edit` changed — and none on
// the lines the user's own apply owns; `ownershipHints: false` takes them away (the server asks the
// client to pull the hints again, and they come back empty). The ownership view, filtered by one
// manager, marks that manager's lines alone. On a Helm chart the hint sits on the template line and
// the values line the rendered field comes from.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { InlayHint } from 'vscode-languageserver-protocol';
import { stringify } from 'yaml';
import { requireCluster, testCluster, type TestClusterInfo } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { autoscale, connect, freshNamespace } from '../support/seed';
import { requireTool } from '../tools/tools';
import { editedAndAutoscaled } from '../support/seed-scenarios';
import { startStdioClient, type StdioClient } from '../editors/stdio-client';

let cluster: TestClusterInfo;
let text: string;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-ownership-hints-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
const uri = pathToFileURL(path.join(scratch, 'web.yaml')).href;

before(async () => {
  const info = testCluster();
  // Under CI=true and outside it alike: these tests need the local API server (npm test starts one).
  if (!info) throw new Error('no local kube-apiserver: run through `npm test` or `npm run cluster:up`');
  cluster = info;
  const conn = connect('admin', cluster.kubeconfig);
  // kubectl apply --server-side, kubectl edit of the image, an autoscaler scaling through /scale.
  const { manifest } = await editedAndAutoscaled(conn, await freshNamespace(conn, 'ownership-hints'));
  text = stringify(manifest);
});

const lineOf = (pattern: RegExp) => text.split('\n').findIndex((l) => pattern.test(l));

/** Asks for the hints of the whole document until `done` holds, asking again each time the server says they changed. */
async function hintsUntil(
  client: StdioClient,
  done: (hints: InlayHint[]) => boolean,
  what: string,
): Promise<InlayHint[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const from = client.received.length;
    const hints = await client.request<InlayHint[] | null>('textDocument/inlayHint', {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } },
    });
    if (done(hints ?? [])) return hints ?? [];
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(hints)}`);
    await client.waitFor((m) => m.method === 'workspace/inlayHint/refresh', {
      from,
      timeoutMs: Math.max(1, deadline - Date.now()),
    });
  }
}

test('inlay hints name the other owner of each line, with how long ago, and the setting takes them away', async () => {
  let settings: Record<string, unknown> = {};
  const client = await startStdioClient({
    capabilities: {
      workspace: { configuration: true, inlayHint: { refreshSupport: true } },
      textDocument: { inlayHint: {}, publishDiagnostics: {} },
    },
    configuration: (section) => (section === 'kubeConflictHints' ? settings : null),
    env: { KUBECONFIG: cluster.kubeconfig, HOME: scratch },
  });
  try {
    assert.deepEqual(client.initializeResult.capabilities.inlayHintProvider, { resolveProvider: false });
    await client.open(uri, text);
    const replicas = lineOf(/^ {2}replicas: 3$/);
    const image = lineOf(/^ +image: nginx:1\.25$/);
    // Until the image's line is hinted: a list item is named by its key only once the schema is
    // loaded (it may come after the live object), and only then are the image's owners found.
    const hints = await hintsUntil(client, (h) => h.some((x) => x.position.line === image), 'the hint on the image');
    // Exactly the two lines others own; the lines of the user's own apply (kubectl) get none.
    assert.deepEqual(
      hints.map((h) => h.position.line).sort((a, b) => a - b),
      [replicas, image],
    );
    const at = (line: number) => hints.find((h) => h.position.line === line)!;
    // The server records no time for writes through the scale subresource.
    assert.equal(at(replicas).label, 'kube-controller-manager (scale)');
    assert.match(String(at(image).label), /^kubectl-edit · \d+ (s|min) ago$/);
    for (const line of [replicas, image])
      assert.equal(at(line).position.character, text.split('\n')[line]!.length, 'at the end of the line');
    const tooltip = (at(replicas).tooltip as { kind: string; value: string }).value;
    assert.match(tooltip, /\| kube-controller-manager \| Update \| scale \| apps\/v1 \| _not recorded_ \|/);
    assert.match(
      (at(image).tooltip as { value: string }).value,
      /\| kubectl-edit \| Update \| {2}\| apps\/v1 \| \d+ (s|min) ago \(20\d\d-\d\d-\d\dT[\d:]+Z\) \|/,
    );

    // Only the lines asked about (an editor asks for what it shows).
    const onReplicas = await client.request<InlayHint[]>('textDocument/inlayHint', {
      textDocument: { uri },
      range: { start: { line: replicas, character: 0 }, end: { line: replicas, character: 20 } },
    });
    assert.deepEqual(
      onReplicas.map((h) => h.label),
      ['kube-controller-manager (scale)'],
    );

    // The setting off: the server asks the client to pull again, and there are none.
    settings = { ownershipHints: false };
    await client.notify('workspace/didChangeConfiguration', { settings: { kubeConflictHints: settings } });
    await hintsUntil(client, (h) => h.length === 0, 'no hints with ownershipHints off');
    // And on again: the same two (the empty answer was the setting's, not a lost cluster).
    settings = { ownershipHints: true };
    await client.notify('workspace/didChangeConfiguration', { settings: { kubeConflictHints: settings } });
    const again = await hintsUntil(client, (h) => h.length === 2, 'the hints back');
    assert.deepEqual(
      again.map((h) => h.position.line).sort((a, b) => a - b),
      [replicas, image],
    );

    // Seen as kubectl-edit applying by hand (an update, clientSide), the image is the user's own line and kubectl's lines are another's.
    settings = { fieldManager: 'kubectl-edit', applyMode: 'clientSide' };
    await client.notify('workspace/didChangeConfiguration', { settings: { kubeConflictHints: settings } });
    const asEditor = await hintsUntil(
      client,
      (h) => !h.some((x) => x.position.line === image),
      'the hints as seen by kubectl-edit',
    );
    assert.ok(
      asEditor.some((h) => h.position.line === lineOf(/^ +- name: app$/) && /^kubectl · /.test(String(h.label))),
      JSON.stringify(asEditor),
    );
  } finally {
    await client.close();
  }
});

test('the ownership view: a legend of managers, and filtered by one manager only its lines are marked', async () => {
  const client = await startStdioClient({
    capabilities: { textDocument: { publishDiagnostics: {} } },
    env: { KUBECONFIG: cluster.kubeconfig, HOME: scratch },
  });
  try {
    await client.open(uri, text);
    // The object is known once its conflicts are published.
    await client.publishedUntil(uri, (d) => d.some((x) => x.code === 'field-conflict'));
    const position = { line: lineOf(/^ {2}replicas:/), character: 2 };
    type View = {
      title: string;
      text: string;
      managers: { manager: string; operation: string; subresource?: string; fields: number }[];
      manager?: string;
    };
    const whole = await client.request<View>('workspace/executeCommand', {
      command: 'kube-conflict-hints.showOwnership',
      arguments: [{ uri, position }],
    });
    assert.deepEqual(
      whole.managers.map((m) => [m.manager, m.operation, m.subresource ?? '', m.fields]),
      [
        ['kubectl', 'Apply', '', 7],
        ['kube-controller-manager', 'Update', 'scale', 1],
        ['kubectl-edit', 'Update', '', 1],
      ],
    );
    assert.match(whole.text, /^# Managers:\n# {4}kubectl +Apply +apps\/v1 +\d+ (s|min) ago \(.*Z\) +7 fields\n/);
    assert.match(whole.text, /replicas: 5\s+# kube-controller-manager \(Update, scale\)/);

    const filtered = await client.request<View>('workspace/executeCommand', {
      command: 'kube-conflict-hints.showOwnership',
      arguments: [uri, position, 'kubectl-edit'],
    });
    assert.equal(filtered.manager, 'kubectl-edit');
    assert.match(filtered.title, /\(live, lines of kubectl-edit\)$/);
    assert.match(filtered.text, /image: nginx:1\.26\s+# kubectl-edit \(Update\)/);
    assert.match(filtered.text, /^ {2}replicas: 5$/m, "the autoscaler's line is not marked");
    assert.doesNotMatch(filtered.text, /# kubectl \(Apply\)/);
  } finally {
    await client.close();
  }
});

test("on a chart, the hint sits on the template line and the values line of the autoscaler's replicas, and on no line Helm alone owns", async (t) => {
  const helm = requireTool(t, 'helm4');
  if (!requireCluster(t) || !helm) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'hints-helm');
  const repo = fs.mkdtempSync(path.join(scratch, 'chart-'));
  const home = path.join(repo, '.home');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
    KUBECONFIG: cluster.kubeconfig,
  };
  assert.equal(spawnSync(helm, ['create', 'shop'], { cwd: repo, env }).status, 0);
  const installed = spawnSync(helm, ['install', 'web', 'shop', '--kube-context', 'admin', '--namespace', namespace], {
    cwd: repo,
    encoding: 'utf8',
    env,
  });
  assert.equal(installed.status, 0, installed.stderr);
  await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } }, 5);

  // Helm 4 applies as `helm`: the user's manager for the chart, whatever fieldManager says.
  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace, helmPath: helm, helmRelease: 'web' },
    workspaceFolders: [pathToFileURL(repo).href],
  });
  t.after(() => server.shutdown());
  const template = path.join(repo, 'shop', 'templates', 'deployment.yaml');
  const values = path.join(repo, 'shop', 'values.yaml');
  for (const f of [template, values]) await server.open(pathToFileURL(f).href, fs.readFileSync(f, 'utf8'));
  // Rendered, and the live object known: the conflict is on the template.
  await server.diagnosticsUntil(
    pathToFileURL(template).href,
    (ds) => ds.some((d) => d.code === 'field-conflict'),
    60_000,
  );
  for (const [file, key] of [
    [template, /^\s*replicas:/],
    [values, /^replicaCount:/],
  ] as const) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const hints = (await server.request('textDocument/inlayHint', {
      textDocument: { uri: pathToFileURL(file).href },
      range: { start: { line: 0, character: 0 }, end: { line: lines.length, character: 0 } },
    })) as InlayHint[];
    assert.deepEqual(
      hints.map((h) => [h.position.line, h.label]),
      [[lines.findIndex((l) => key.test(l)), 'kube-controller-manager (scale)']],
      `${path.basename(file)}: ${JSON.stringify(hints)}`,
    );
  }
});

// A polite neighbour in an editor full of YAML that has nothing to do with Kubernetes:
// - no cluster contact (no kubeconfig read, no exec plugin, no request) until a Kubernetes manifest
//   is open or the user asks with a command;
// - syntax errors only where no other language service of the editor reports them, and never at
//   the cost of the other documents' findings;
// - messages said once.
// Over real JSON-RPC, against the real local kube-apiserver.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { editorUserAgent } from '../../server/src/lsp/session';
import type { DocumentStateParams, InitializationOptions, Settings } from '../../server/src/protocol';
import { readAuditEvents, waitForAuditEvent } from '../support/cluster';
import { requireCluster } from '../support/env';
import { execKubeconfig } from '../support/exec-kubeconfig';
import { holdingTheLoop, startTestServer, type TestServer } from '../support/lsp-client';
import { recordCluster } from '../support/recording-proxy';
import { configMap, connect, create, freshNamespace, objectOf } from '../support/seed';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-polite-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** YAML and JSON a Kubernetes user also opens, none of them a manifest. */
const unrelated: { uri: string; text: string; languageId: string }[] = [
  {
    uri: 'file:///w/.github/workflows/ci.yml',
    languageId: 'yaml',
    text: 'name: ci\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm test\n',
  },
  {
    uri: 'file:///w/docker-compose.yml',
    languageId: 'yaml',
    text: 'services:\n  web:\n    image: nginx:1.27\n    ports:\n      - "8080:80"\n  db:\n    image: postgres:16\n',
  },
  {
    // Helm values may hold whole objects, but not at the top level of a document.
    uri: 'file:///w/chart/values.yaml',
    languageId: 'yaml',
    text: 'replicaCount: 2\nextraObjects:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: extra\n',
  },
  {
    uri: 'file:///w/openapi.json',
    languageId: 'json',
    text: '{\n  "openapi": "3.0.0",\n  "info": { "title": "shop", "version": "1" },\n  "paths": {}\n}\n',
  },
];

const statuses = (server: TestServer) =>
  server.notifications
    .filter((n) => n.method === 'kubeConflictHints/status')
    .map((n) => n.params as { health: string; context: string });

/** Requests the editor's language servers of this process sent since `since` (ms), from the audit log. */
const editorRequestsSince = (auditLog: string, since: number) =>
  readAuditEvents(auditLog).filter(
    (e) => e.userAgent === editorUserAgent && Date.parse(e.requestReceivedTimestamp ?? '') >= since,
  );

test('unrelated YAML and JSON: no kubeconfig read, no exec plugin, no request, until a manifest is open', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'polite');
  objectOf(
    await create(admin, 'kubectl-create', configMap(namespace, 'app-config', { mode: 'fast' })),
    'create app-config',
  );
  const kube = execKubeconfig(cluster.kubeconfig, dir, 'unrelated');
  const since = Date.now();
  const server = await startTestServer({ settings: { kubeconfig: kube.file, context: 'plugin' } });
  try {
    const first = (await server.waitForNotification('kubeConflictHints/status')) as { health: string; detail: string };
    assert.equal(first.health, 'idle');
    assert.match(first.detail, /no cluster has been contacted/);
    // Everything the editor asks of an open document, each answered.
    for (const file of unrelated) {
      await server.open(file.uri, file.text, file.languageId);
      assert.deepEqual(await server.diagnostics(file.uri), [], file.uri);
      assert.equal(await server.hover(file.uri, { line: 1, character: 2 }), null);
      assert.deepEqual(await server.codeLenses(file.uri), []);
      assert.equal(
        await server.request('kubeConflictHints/ownership', { uri: file.uri, position: { line: 1, character: 2 } }),
        null,
      );
      await server.request('kubeConflictHints/managers', { uri: file.uri });
    }
    // Every answer is in: a session would have been made before them, and says so in the status
    // (the context it reads from the kubeconfig). None was made.
    assert.deepEqual(
      statuses(server).map((s) => s.health),
      ['idle'],
    );
    assert.deepEqual(kube.runs(), [], 'the exec plugin ran');

    // The first manifest: now the plugin runs, the cluster answers and the findings come.
    const opened = Date.now();
    const uri = 'file:///w/app-config.yaml';
    await server.open(
      uri,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
    );
    const ds = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'field-conflict'));
    assert.match(ds.find((d) => d.code === 'field-conflict')!.message, /^\.data\.mode is managed by "kubectl-create"/);
    await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'connected',
    );
    assert.equal((statuses(server).find((s) => s.health !== 'idle') ?? { context: '' }).context, 'plugin');
    assert.ok(kube.runs().length > 0, 'the exec plugin runs once a manifest is open');
    assert.ok(
      kube.runs().every((at) => at >= opened),
      `the plugin ran before the manifest was open: ${kube.runs().join(', ')} < ${opened}`,
    );
    assert.ok(
      await waitForAuditEvent(
        cluster.auditLog,
        (e) => e.userAgent === editorUserAgent && e.objectRef?.namespace === namespace,
      ),
      "the manifest's reads are in the audit log",
    );
    const early = editorRequestsSince(cluster.auditLog, since).filter(
      (e) => Date.parse(e.requestReceivedTimestamp!) < opened,
    );
    assert.deepEqual(
      early.map((e) => `${e.verb} ${e.requestURI}`),
      [],
      'requests before a manifest was open',
    );
  } finally {
    await server.shutdown();
  }
});

test("the user asks: Refresh connects with no manifest open; the Kubernetes extension's refresh does not", async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const kube = execKubeconfig(cluster.kubeconfig, dir, 'asked');
  const server = await startTestServer({ settings: { kubeconfig: kube.file, context: 'plugin' } });
  try {
    await server.waitForNotification('kubeConflictHints/status');
    await server.open(unrelated[0]!.uri, unrelated[0]!.text);
    // What the client sends when the Kubernetes extension switches context: nothing is connected yet.
    assert.equal(await server.request('kubeConflictHints/refresh', null), null);
    assert.deepEqual(
      statuses(server).map((s) => s.health),
      ['idle'],
    );
    assert.deepEqual(kube.runs(), []);
    // The user's command *Refresh from the cluster*.
    await server.request('kubeConflictHints/refresh', { uri: unrelated[0]!.uri, connect: true });
    await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'connected',
    );
    assert.ok(kube.runs().length > 0, 'the user asked: the plugin runs');
  } finally {
    await server.shutdown();
  }
});

test('the first manifest: the status comes from its first reads, with no probe of the cluster beside them', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'polite-probe');
  objectOf(await create(admin, 'kubectl-create', configMap(namespace, 'app-config', { mode: 'fast' })));
  const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(dir, 'probe-kubeconfig'));
  const server = await startTestServer({ settings: { kubeconfig, context: 'recorded' } });
  try {
    const uri = 'file:///w/probe.yaml';
    await server.open(
      uri,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
    );
    await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'field-conflict'));
    await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'connected',
    );
    const sent = proxy.exchanges().map((e) => `${e.method} ${e.url.replace(/\?.*/, '')}`);
    assert.ok(
      sent.some((r) => r.startsWith(`GET /api/v1/namespaces/${namespace}/configmaps`)),
      `the object was read: ${sent.join(', ')}`,
    );
    // Discovery's own GET /api, when it asks: never a second one to learn the health.
    assert.ok(sent.filter((r) => r === 'GET /api').length <= 1, sent.join(', '));
  } finally {
    await server.shutdown();
    await proxy.stop();
  }
});

/** One file: a good object, a broken one (its quote swallows the `---`), a duplicate key, YAML kubectl refuses, a good object. */
const mixed = (namespace: string) =>
  [
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n  namespace: ${namespace}\ndata:\n  a: "unterminated\n`,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  name: twice\n  namespace: ${namespace}\n`,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infinite\n  namespace: ${namespace}\ndata:\n  x: .inf\n`,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
  ].join('---\n');

const syntaxCodes = (ds: Diagnostic[]) =>
  ds
    .map((d) => String(d.code))
    .filter((c) => ['yaml-syntax', 'duplicate-key', 'yaml-decode'].includes(c))
    .sort();

// Who reports syntax errors: the editor's other language services (what the client detected) and
// the setting. `yaml-decode` (YAML that kubectl refuses) is ours alone and always reported.
const syntaxRows: {
  name: string;
  services?: Record<string, string>;
  setting?: Settings['syntaxErrors'];
  languageId: string;
  reported: boolean;
}[] = [
  { name: 'no other YAML service: reported here', languageId: 'yaml', reported: true },
  {
    name: 'Red Hat YAML present: left to it',
    services: { yaml: 'redhat.vscode-yaml' },
    languageId: 'yaml',
    reported: false,
  },
  {
    name: 'Red Hat YAML present, syntaxErrors "always"',
    services: { yaml: 'redhat.vscode-yaml' },
    setting: 'always',
    languageId: 'yaml',
    reported: true,
  },
  { name: 'no other service, syntaxErrors "never"', setting: 'never', languageId: 'yaml', reported: false },
  {
    name: 'a YAML service says nothing of JSON documents',
    services: { yaml: 'redhat.vscode-yaml' },
    languageId: 'json',
    reported: true,
  },
  {
    name: "VS Code's JSON service present: JSON left to it",
    services: { json: 'vscode.json-language-features' },
    languageId: 'json',
    reported: false,
  },
];

for (const row of syntaxRows) {
  test(`syntax errors: ${row.name}`, async () => {
    const initializationOptions: InitializationOptions = {
      clusterAccess: false,
      ...(row.services ? { syntaxServices: row.services } : {}),
    };
    const server = await startTestServer({
      initializationOptions,
      settings: row.setting ? { syntaxErrors: row.setting } : {},
    });
    try {
      const uri = `file:///w/mixed.${row.languageId}`;
      await server.open(uri, mixed('default'), row.languageId);
      const expected = row.reported ? ['duplicate-key', 'yaml-decode', 'yaml-syntax'] : ['yaml-decode'];
      assert.deepEqual(syntaxCodes(await server.diagnostics(uri)), expected);
    } finally {
      await server.shutdown();
    }
  });
}

test('syntax errors left to Red Hat YAML: the document that does not parse is still "not judged", with the reason; fixed, it is judged', async () => {
  const server = await startTestServer({
    initializationOptions: { clusterAccess: false, syntaxServices: { yaml: 'redhat.vscode-yaml' } },
  });
  try {
    const uri = 'file:///w/broken.yaml';
    const good =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\ndata:\n  mode: safe\n';
    const stateOf = (state: DocumentStateParams['state']) => (p: unknown) =>
      (p as DocumentStateParams).uri === uri && (p as DocumentStateParams).state === state;
    await server.open(uri, good.replace('  mode: safe', '  mode: "unterminated'));
    assert.deepEqual(syntaxCodes(await server.diagnostics(uri)), [], 'Red Hat YAML underlines it: not twice');
    const state = (await holdingTheLoop(() =>
      server.waitForNotification('kubeConflictHints/documentState', stateOf('not-judged')),
    )) as DocumentStateParams;
    assert.match(state.reason ?? '', /^YAML syntax error: .+ \(shown by redhat\.vscode-yaml\)$/);
    // Never judged before: the first "judged" is the fixed text's.
    await server.change(uri, good);
    await server.diagnostics(uri);
    await holdingTheLoop(() => server.waitForNotification('kubeConflictHints/documentState', stateOf('judged')));
  } finally {
    await server.shutdown();
  }
});

test('syntax errors: Red Hat YAML installed while the editor runs: its errors are no longer repeated', async () => {
  const server = await startTestServer({ initializationOptions: { clusterAccess: false } });
  try {
    const uri = 'file:///w/mixed.yaml';
    await server.open(uri, mixed('default'));
    assert.deepEqual(syntaxCodes(await server.diagnostics(uri)), ['duplicate-key', 'yaml-decode', 'yaml-syntax']);
    const refreshed = server.waitForRefresh();
    // What the client sends when extensions change.
    await server.notify('kubeConflictHints/syntaxServices', { yaml: 'redhat.vscode-yaml' });
    await refreshed;
    assert.deepEqual(syntaxCodes(await server.diagnostics(uri)), ['yaml-decode']);
  } finally {
    await server.shutdown();
  }
});

test("a syntax error in one document hides none of the other documents' findings, whoever reports it", async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'polite-syntax');
  for (const name of ['app-config', 'other-config']) {
    objectOf(await create(admin, 'kubectl-create', configMap(namespace, name, { mode: 'fast' })), `create ${name}`);
  }
  const text = mixed(namespace);
  const lines = text.split('\n');
  const modeLines = lines.flatMap((l, i) => (l === '  mode: safe' ? [i] : []));
  for (const services of [{ yaml: 'redhat.vscode-yaml' }, {}]) {
    const server = await startTestServer({
      initializationOptions: { clusterAccess: true, syntaxServices: services },
      settings: { kubeconfig: cluster.kubeconfig, context: 'admin' },
    });
    try {
      const uri = 'file:///w/mixed.yaml';
      await server.open(uri, text);
      const ds = await server.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'field-conflict').length === 2);
      const conflicts = ds.filter((d) => d.code === 'field-conflict');
      assert.deepEqual(
        conflicts.map((d) => d.range.start.line),
        modeLines,
        'a conflict on the first and on the last object',
      );
      for (const d of conflicts) assert.match(d.message, /^\.data\.mode is managed by "kubectl-create"/);
      assert.deepEqual(
        syntaxCodes(ds),
        'yaml' in services ? ['yaml-decode'] : ['duplicate-key', 'yaml-decode', 'yaml-syntax'],
      );
    } finally {
      await server.shutdown();
    }
  }
});

test('kind-not-served says its sentence once, naming what is served instead', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  try {
    const uri = 'file:///w/old.yaml';
    await server.open(
      uri,
      'apiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: old\n  namespace: default\n',
    );
    const ds = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'kind-not-served'));
    assert.deepEqual(
      ds.filter((d) => d.code === 'kind-not-served').map((d) => d.message),
      ['The cluster does not serve Deployment in apps/v1beta1 (served: apps/v1).'],
    );
  } finally {
    await server.shutdown();
  }
});

// Charts and overlays in the editor, over real JSON-RPC, with the real Helm 4 and kustomize and the
// real local kube-apiserver: a template is never read as YAML; the chart is rendered as Helm would
// send it and the autoscaler's conflict shows on the template's `replicas:` line and on
// `replicaCount:` in values.yaml, with the owner in the hover and a quick fix that clears it once
// the chart renders again; an overlay's conflict sits on its patch and the base shows nothing
// false; without helm there is one information message and no squiggle; in an untrusted workspace
// no tool runs. Which overlays count is the user's choice (kustomizeOverlays, the request the
// command asks); a file helm reads that the editor never sends (`_helpers.tpl`) renders the chart
// again when it changes on disk; quick fixes on a template line edit values.yaml, or remove a
// literal line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic, Hover } from 'vscode-languageserver-protocol';
import { lineOf, scratchDir, writeFiles } from '../cli/cli-process';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { startTestServer, type TestServer } from '../support/lsp-client';
import {
  apply,
  autoscale,
  baseDeploymentText,
  connect,
  freshNamespace,
  type KubeObject,
  objectOf,
  patch,
} from '../support/seed';
import { requireTool } from '../tools/tools';
import { scaledRelease } from '../support/charts';
import { parseAllDocuments } from 'yaml';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { requests, sendRequest, type DocumentStateParams } from '../../server/src/protocol';

const uriOf = (file: string) => pathToFileURL(file).href;
const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');
const hoverText = (h: Hover | null) =>
  h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';

/** The chart's YAML files as the editor opens them: every template and values.yaml. */
function chartDocuments(chart: string): string[] {
  const templates = fs
    .readdirSync(path.join(chart, 'templates'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => path.join(chart, 'templates', f));
  return [...templates, path.join(chart, 'values.yaml'), path.join(chart, 'Chart.yaml')];
}

/** A language server for the chart of `scaledRelease` (release `web`, the user's helm), stopped after the test. */
async function chartServer(
  t: TestContext,
  cluster: TestClusterInfo,
  helm: string,
  repo: string,
  namespace: string,
): Promise<TestServer> {
  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace, helmPath: helm, helmRelease: 'web' },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  return server;
}

/** A base for overlays: its kustomization and the Deployment `web` (one replica) it holds. */
const overlayBase = {
  'base/kustomization.yaml': 'resources:\n- deployment.yaml\n',
  'base/deployment.yaml': baseDeploymentText(1),
};

async function openFiles(server: TestServer, files: readonly string[]): Promise<void> {
  for (const f of files) await server.open(uriOf(f), fs.readFileSync(f, 'utf8'));
}

test('a chart in the editor: no syntax error on any template; the autoscaler conflict on the template and values lines, with the owner, and the values quick fix clears it', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-helm');
  const server = await chartServer(t, cluster, helm, repo, namespace);
  const files = chartDocuments(chart);
  await openFiles(server, files);
  const template = path.join(chart, 'templates', 'deployment.yaml');
  const values = path.join(chart, 'values.yaml');
  const templateLine = lineOf(fs.readFileSync(template, 'utf8'), /^\s*replicas:/) - 1;
  const valuesLine = lineOf(fs.readFileSync(values, 'utf8'), /^replicaCount:/) - 1;

  const onTemplate = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  assert.deepEqual(
    conflicts(onTemplate).map((d) => d.range.start.line),
    [templateLine],
    JSON.stringify(onTemplate),
  );
  const onValues = await server.diagnosticsUntil(uriOf(values), (ds) => conflicts(ds).length > 0, 30_000);
  assert.deepEqual(
    conflicts(onValues).map((d) => d.range.start.line),
    [valuesLine],
    JSON.stringify(onValues),
  );
  for (const d of [...conflicts(onTemplate), ...conflicts(onValues)]) {
    assert.match(d.message, /kube-controller-manager/);
    assert.match(d.message, /in release web/);
    assert.match(d.message, /helm install and upgrade would fail/);
  }
  // The chart has rendered (the conflict above): no template, values or Chart.yaml gets a finding
  // from its own text, and nothing but the conflicts anywhere.
  for (const f of files) {
    const ds = await server.diagnostics(uriOf(f));
    assert.deepEqual(
      ds.filter((d) =>
        ['yaml-syntax', 'duplicate-key', 'yaml-decode', 'kind-not-served', 'would-delete', 'owned-by-release'].includes(
          String(d.code),
        ),
      ),
      [],
      `${f}: ${JSON.stringify(ds)}`,
    );
    if (f !== template && f !== values)
      assert.deepEqual(
        ds.filter((d) => d.severity === 1 || d.severity === 2),
        [],
        `${f}: ${JSON.stringify(ds)}`,
      );
  }

  // The hover on both lines names the autoscaler that owns replicas.
  for (const [file, line] of [
    [template, templateLine],
    [values, valuesLine],
  ] as const) {
    const character = fs.readFileSync(file, 'utf8').split('\n')[line]!.indexOf('replica') + 2;
    const text = hoverText(await server.hover(uriOf(file), { line, character }));
    assert.match(text, /spec\.replicas/, `${file}: ${text}`);
    assert.match(text, /kube-controller-manager/, `${file}: ${text}`);
    assert.match(text, /release web/, `${file}: ${text}`);
  }

  // The quick fix on values.yaml takes the live value; saved, the chart renders again and the
  // conflict is gone from both files.
  const actions = await server.codeActions(uriOf(values), conflicts(onValues)[0]!.range, conflicts(onValues));
  const take = actions.find((a) => /^Use the live value 5 for replicaCount/.test(a.title));
  assert.ok(take?.edit, JSON.stringify(actions.map((a) => a.title)));
  await server.applyEdit(take.edit);
  assert.match(server.text(uriOf(values)), /^replicaCount: 5$/m);
  fs.writeFileSync(values, server.text(uriOf(values)));
  await server.save(uriOf(values));
  const cleared = await server.diagnosticsUntil(uriOf(values), (ds) => conflicts(ds).length === 0, 60_000);
  assert.deepEqual(
    cleared.filter((d) => d.severity === 1),
    [],
  );
  assert.deepEqual(
    conflicts(await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 0, 30_000)),
    [],
  );
});

test('an overlay in the editor: the autoscaler conflict on the patch replicas line, named by its overlay; nothing false on the base or the kustomization', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'editor-kustomize');
  const repo = scratchDir('editor-kustomize');
  writeFiles(repo, {
    ...overlayBase,
    'overlays/staging/kustomization.yaml': `namespace: ${namespace}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n`,
    'overlays/staging/replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
  });
  // The overlay as the cluster has it: applied server-side as kubectl, then scaled by an autoscaler.
  const built = spawnSync(kustomize, ['build', path.join(repo, 'overlays/staging')], { encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  for (const doc of parseAllDocuments(built.stdout))
    objectOf(await apply(conn, 'kubectl', doc.toJS() as KubeObject), 'apply');
  await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }, 5);

  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', kustomizePath: kustomize },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  const patch = path.join(repo, 'overlays/staging/replicas.yaml');
  const base = path.join(repo, 'base/deployment.yaml');
  const kustomizations = [
    path.join(repo, 'base/kustomization.yaml'),
    path.join(repo, 'overlays/staging/kustomization.yaml'),
  ];
  await openFiles(server, [base, patch, ...kustomizations]);

  const onPatch = await server.diagnosticsUntil(uriOf(patch), (ds) => conflicts(ds).length > 0, 60_000);
  assert.deepEqual(
    conflicts(onPatch).map((d) => d.range.start.line),
    [5],
    JSON.stringify(onPatch),
  );
  assert.match(conflicts(onPatch)[0]!.message, /kube-controller-manager.*in overlay staging/s);
  assert.deepEqual(
    onPatch.filter((d) => d.code !== 'field-conflict' && (d.severity === 1 || d.severity === 2)),
    [],
    'the patch is not read as a whole object',
  );
  // The overlay has rendered (above): the base and the kustomizations get no error or warning.
  for (const f of [base, ...kustomizations]) {
    const ds = await server.diagnostics(uriOf(f));
    assert.deepEqual(
      ds.filter((d) => d.severity === 1 || d.severity === 2),
      [],
      `${f}: ${JSON.stringify(ds)}`,
    );
  }
  const hover = hoverText(await server.hover(uriOf(patch), { line: 5, character: 4 }));
  assert.match(hover, /kube-controller-manager/);
  assert.match(hover, /overlay staging/);
  // The fix edits the patch: its replicas line goes.
  const actions = await server.codeActions(uriOf(patch), conflicts(onPatch)[0]!.range, conflicts(onPatch));
  const drop = actions.find((a) => a.title.startsWith('Remove .spec.replicas here'));
  assert.ok(drop?.edit, JSON.stringify(actions.map((a) => a.title)));
  await server.applyEdit(drop.edit);
  assert.doesNotMatch(server.text(uriOf(patch)), /replicas/);
});

// A chart that appears while the editor runs (`helm create`, a `git checkout`): the editor reports
// the new folder as one event, never the Chart.yaml inside it, and an editor without file watching
// reports nothing — opening Chart.yaml must then be enough.
for (const told of ['one event for the new folder', 'opening Chart.yaml, with no file event'] as const) {
  test(`a chart created while the editor runs (${told}): its template gets no syntax error and its conflict appears without a restart`, async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    if (!cluster || !helm) return;
    const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-newchart');
    // Before the chart is there: the server has read the folder once, for a manifest beside it.
    const aside = `${repo}-chart-aside`;
    fs.renameSync(chart, aside);
    t.after(() => fs.rmSync(aside, { recursive: true, force: true }));
    const server = await chartServer(t, cluster, helm, repo, namespace);
    const manifest = path.join(repo, 'configmap.yaml');
    fs.writeFileSync(
      manifest,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beside-the-chart\n  namespace: ${namespace}\ndata:\n  a: "1"\n`,
    );
    await server.open(uriOf(manifest), fs.readFileSync(manifest, 'utf8'));
    await server.diagnosticsUntil(uriOf(manifest), (ds) => ds.length === 0, 30_000);

    fs.renameSync(aside, chart);
    if (told === 'one event for the new folder')
      await server.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf(chart), type: 1 }] });
    else
      await server.open(uriOf(path.join(chart, 'Chart.yaml')), fs.readFileSync(path.join(chart, 'Chart.yaml'), 'utf8'));
    const template = path.join(chart, 'templates', 'deployment.yaml');
    await server.open(uriOf(template), fs.readFileSync(template, 'utf8'));
    const templateLine = lineOf(fs.readFileSync(template, 'utf8'), /^\s*replicas:/) - 1;
    const seen: Diagnostic[][] = [];
    const found = await server.diagnosticsUntil(
      uriOf(template),
      (ds) => (seen.push(ds), conflicts(ds).length > 0),
      60_000,
    );
    assert.deepEqual(
      conflicts(found).map((d) => d.range.start.line),
      [templateLine],
      JSON.stringify(found),
    );
    assert.deepEqual(
      seen.flat().filter((d) => d.code === 'yaml-syntax' || d.code === 'yaml-decode'),
      [],
      'the template was never read as YAML',
    );
  });
}

test('a template line that writes several labels (include): the hover speaks first of the label in conflict; once the label is back, of it as shared', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-include-hover');
  const conn = connect('admin', cluster.kubeconfig);
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } };
  const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(fs.readFileSync(path.join(chart, 'Chart.yaml'), 'utf8'))![1]!;
  // kubectl label deployment web-shop app.kubernetes.io/version=2.0.0 --overwrite
  const label = (value: string) =>
    patch(
      conn,
      'kubectl-label',
      ref,
      { metadata: { labels: { 'app.kubernetes.io/version': value } } },
      { type: 'merge' },
    );
  objectOf(await label('2.0.0'), 'kubectl label');
  const server = await chartServer(t, cluster, helm, repo, namespace);
  const template = path.join(chart, 'templates', 'deployment.yaml');
  await openFiles(server, [template]);
  const text = fs.readFileSync(template, 'utf8');
  // `{{- include "shop.labels" . | nindent 4 }}`: helm.sh/chart, name, instance, version, managed-by.
  const line = lineOf(text, /^ {4}\{\{- include "shop\.labels" \. \| nindent 4 \}\}$/) - 1;
  const position = { line, character: text.split('\n')[line]!.indexOf('include') + 2 };
  const onLine = (ds: Diagnostic[]) => conflicts(ds).filter((d) => d.range.start.line === line);
  const ds = await server.diagnosticsUntil(uriOf(template), (d) => onLine(d).length > 0, 60_000);
  assert.deepEqual(
    onLine(ds).map((d) => /^(\S+) is managed by "([^"]+)"/.exec(d.message)?.slice(1)),
    [['.metadata.labels.app.kubernetes.io/version', 'kubectl-label']],
  );

  const hover = hoverText(await server.hover(uriOf(template), position));
  const sections = hover.split('\n\n---\n\n');
  assert.match(
    sections[0]!,
    /^_Deployment web-shop in release web in namespace [a-z0-9-]+_\n\n\*\*`\.metadata\.labels\.app\.kubernetes\.io\/version`\*\*\n/,
    hover,
  );
  assert.match(sections[0]!, /\| kubectl-label \| Update \|/, hover);
  assert.match(sections[0]!, /Live value: `"2\.0\.0"` \(manifest: `"[^"]+"`\)/, hover);
  assert.equal(sections.length, 2, hover);
  assert.match(
    sections[1]!,
    /^Also written on this line, without a finding: .*`\.metadata\.labels\.app\.kubernetes\.io\/managed-by`/,
    hover,
  );

  // The label back at the chart's value: no conflict. kubectl-label still owns it beside Helm (the
  // line's ownership hint names it), so the hover still leads with it, now a shared value.
  objectOf(await label(appVersion), 'kubectl label back');
  await server.diagnosticsUntil(uriOf(template), (d) => onLine(d).length === 0, 60_000);
  const after = hoverText(await server.hover(uriOf(template), position)).split('\n\n---\n\n');
  assert.match(
    after[0]!,
    /^_Deployment web-shop in release web in namespace [a-z0-9-]+_\n\n\*\*`\.metadata\.labels\.app\.kubernetes\.io\/version`\*\*\n/,
    after.join('\n'),
  );
  assert.match(after[0]!, /Same value as the live object: applying it shares ownership\./, after.join('\n'));
  assert.doesNotMatch(after[0]!, /Live value/, after.join('\n'));
  assert.match(
    after[1]!,
    /^Also written on this line: .*`\.metadata\.labels\.app\.kubernetes\.io\/managed-by`/,
    after.join('\n'),
  );
});

test('a chart without helm: each open file of the chart says so (the setting to name it), and is not judged until helm is there', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-nohelm');
  const settings = {
    kubeconfig: cluster.kubeconfig,
    context: 'admin',
    namespace,
    helmPath: path.join(repo, 'no-such-helm'),
    helmRelease: 'web',
  };
  const server = await startTestServer({ settings, workspaceFolders: [uriOf(repo)] });
  t.after(() => server.shutdown());
  const files = chartDocuments(chart);
  await openFiles(server, files);
  for (const f of files) {
    const ds = await server.diagnosticsUntil(uriOf(f), (d) => d.some((x) => x.code === 'tool-missing'), 30_000);
    assert.deepEqual(
      ds.map((d) => [d.code, d.severity, d.range.start.line]),
      [['tool-missing', 2, 0]],
      `${f}: ${JSON.stringify(ds)}`,
    );
    assert.match(
      ds[0]!.message,
      /^cannot render release web: .*no-such-helm.*name the binary with kubeConflictHints\.helmPath\)$/,
    );
    const state = (await server.waitForNotification(
      'kubeConflictHints/documentState',
      (p) => (p as DocumentStateParams).uri === uriOf(f) && (p as DocumentStateParams).state !== 'judged',
    )) as DocumentStateParams;
    assert.equal(state.state, 'not-judged', f);
    assert.match(state.reason ?? '', /^The tool that renders the source is missing: /);
  }
  // Said as a message too, once however many files.
  assert.equal(server.notifications.filter((n) => n.method === 'window/showMessage').length, 1);

  // Named in the settings: the chart renders, and the warnings give way to the judgement.
  server.setSettings({ ...settings, helmPath: helm });
  const template = path.join(chart, 'templates', 'deployment.yaml');
  await server.change(uriOf(template), `${fs.readFileSync(template, 'utf8')}\n`);
  const judged = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 1, 60_000);
  assert.deepEqual(
    judged.filter((d) => d.code === 'tool-missing'),
    [],
  );
  await server.waitForNotification(
    'kubeConflictHints/documentState',
    (p) => (p as DocumentStateParams).uri === uriOf(template) && (p as DocumentStateParams).state === 'judged',
  );
});

test("a template that stops rendering: the error in helm's words on its line and on Chart.yaml, nothing judged from the old render; fixed, the conflict is back", async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-template-error');
  const server = await chartServer(t, cluster, helm, repo, namespace);
  const template = path.join(chart, 'templates', 'deployment.yaml');
  const chartYaml = path.join(chart, 'Chart.yaml');
  await openFiles(server, [template, chartYaml]);
  await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 1, 60_000);

  // The last `{{- end }}` deleted and saved: helm stops at the end of the file.
  const good = fs.readFileSync(template, 'utf8');
  const lines = good.split('\n');
  const last = lines.map((l) => l.trim()).lastIndexOf('{{- end }}');
  const broken = lines.filter((_, i) => i !== last).join('\n');
  await server.change(uriOf(template), broken);
  fs.writeFileSync(template, broken);
  await server.save(uriOf(template));
  const failed = await server.diagnosticsUntil(
    uriOf(template),
    (ds) => ds.some((d) => d.code === 'render-failed'),
    60_000,
  );
  assert.deepEqual(conflicts(failed), [], 'nothing from the old render, whose lines have moved');
  const [error] = failed.filter((d) => d.code === 'render-failed');
  assert.match(error!.message, /parse error at \(shop\/templates\/deployment\.yaml:(\d+)\): unexpected EOF/);
  const named = Number(/deployment\.yaml:(\d+)/.exec(error!.message)![1]);
  assert.equal(error!.range.start.line, named - 1, 'on the line helm names');
  const onChart = await server.diagnosticsUntil(uriOf(chartYaml), (ds) => ds.some((d) => d.code === 'render-failed'));
  assert.equal(onChart.filter((d) => d.code === 'render-failed')[0]!.range.start.line, 0);
  await server.waitForNotification(
    'kubeConflictHints/documentState',
    (p) => (p as DocumentStateParams).uri === uriOf(template) && (p as DocumentStateParams).state === 'not-judged',
  );

  // Fixed: the failure goes, the conflict is back.
  await server.change(uriOf(template), good);
  fs.writeFileSync(template, good);
  await server.save(uriOf(template));
  const back = await server.diagnosticsUntil(
    uriOf(template),
    (ds) => conflicts(ds).length === 1 && !ds.some((d) => d.code === 'render-failed'),
    60_000,
  );
  assert.equal(conflicts(back).length, 1);
  assert.deepEqual(
    (await server.diagnostics(uriOf(chartYaml))).filter((d) => d.code === 'render-failed'),
    [],
  );
});

test('an untrusted workspace runs no rendering tool (the same setup, trusted, runs it)', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-trust');
  // A helm that writes down every run before running the real one.
  const wrapper = (name: string) => {
    const file = path.join(repo, '.tools', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `#!/bin/sh\necho "$*" >> ${JSON.stringify(`${file}.log`)}\nexec ${JSON.stringify(helm)} "$@"\n`,
      { mode: 0o755 },
    );
    return {
      file,
      runs: () =>
        fs.existsSync(`${file}.log`) ? fs.readFileSync(`${file}.log`, 'utf8').split('\n').filter(Boolean) : [],
    };
  };
  const watched = wrapper('helm-a');
  const sentinel = wrapper('helm-b');
  const settings = { kubeconfig: cluster.kubeconfig, context: 'admin', namespace, helmRelease: 'web' };
  const template = path.join(chart, 'templates', 'deployment.yaml');
  const values = path.join(chart, 'values.yaml');

  const until = async (server: TestServer) =>
    server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  // Trusted, the watched helm renders the chart.
  const trusted = await startTestServer({
    settings: { ...settings, helmPath: watched.file },
    workspaceFolders: [uriOf(repo)],
  });
  await openFiles(trusted, [template, values]);
  await until(trusted);
  await trusted.shutdown();
  assert.ok(
    watched.runs().some((r) => r.startsWith('template web')),
    watched.runs().join('\n'),
  );
  fs.rmSync(`${watched.file}.log`);

  // Untrusted, with the same settings: opened, pulled, saved, pulled again.
  const untrusted = await startTestServer({
    settings: { ...settings, helmPath: watched.file },
    workspaceFolders: [uriOf(repo)],
    initializationOptions: { clusterAccess: false },
  });
  t.after(() => untrusted.shutdown());
  await openFiles(untrusted, [template, values]);
  assert.deepEqual(await untrusted.diagnostics(uriOf(template)), []);
  await untrusted.save(uriOf(values));
  assert.deepEqual(await untrusted.diagnostics(uriOf(values)), []);
  // Sentinel: a trusted server started afterwards renders the same chart with its own helm to the end.
  const after = await startTestServer({
    settings: { ...settings, helmPath: sentinel.file },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => after.shutdown());
  await openFiles(after, [template, values]);
  await until(after);
  assert.ok(sentinel.runs().some((r) => r.startsWith('template web')));
  assert.deepEqual(watched.runs(), [], 'the untrusted workspace ran helm');
});

/** A base used by two overlays, staging and production, each applied as kubectl in its namespace and scaled to 5 by an autoscaler. */
async function twoScaledOverlays(
  cluster: TestClusterInfo,
  kustomize: string,
  prefix: string,
): Promise<{ repo: string; base: string }> {
  const { conn, repo, base, namespaces } = await baseOfTwoOverlays(cluster, kustomize, prefix);
  await autoscale(
    conn,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: namespaces.staging } },
    5,
  );
  return { repo, base };
}

test("which overlays count: a base used by staging and production is judged per overlay; choosing only staging makes production's conflict go, and a bad entry gets one message", async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const { repo, base } = await twoScaledOverlays(cluster, kustomize, 'editor-overlays');
  const settings = { kubeconfig: cluster.kubeconfig, context: 'admin', kustomizePath: kustomize };
  const server = await startTestServer({ settings, workspaceFolders: [uriOf(repo)] });
  t.after(() => server.shutdown());
  await openFiles(server, [base]);
  const wire = { sendRequest: (method: string, ...params: unknown[]) => server.request(method, params[0]) };

  // By default every overlay that uses the base counts, each named in its message.
  const both = await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 2, 90_000);
  assert.deepEqual(
    conflicts(both).map((d) => d.range.start.line),
    [5, 5],
  );
  assert.deepEqual(
    conflicts(both)
      .map((d) => /in overlay (\w+)/.exec(d.message)?.[1])
      .sort(),
    ['production', 'staging'],
  );
  assert.deepEqual(await sendRequest(wire, requests.overlays, { uri: uriOf(base) }), {
    folder: uriOf(repo),
    overlays: [
      { entry: 'overlays/production', label: 'overlay production', counted: true },
      { entry: 'overlays/staging', label: 'overlay staging', counted: true },
    ],
    keep: [],
    everyOverlay: true,
  });

  // The user chooses staging (as the command writes it), next to an entry that leads out of the folder.
  server.setSettings({ ...settings, kustomizeOverlays: ['overlays/staging', '../../etc'] });
  const one = await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 1, 60_000);
  assert.match(conflicts(one)[0]!.message, /kube-controller-manager.*in overlay staging/s);
  const warning = (await server.waitForNotification(
    'window/showMessage',
    (p) => /kustomizeOverlays/.test((p as { message: string }).message),
    30_000,
  )) as { type: number; message: string };
  assert.equal(warning.type, 2, 'a warning');
  assert.match(warning.message, /"\.\.\/\.\.\/etc" leads outside the workspace folder/);
  const choice = await sendRequest(wire, requests.overlays, { uri: uriOf(base) });
  assert.deepEqual(
    choice.overlays.map((o) => [o.entry, o.counted]),
    [
      ['overlays/production', false],
      ['overlays/staging', true],
    ],
  );
  assert.deepEqual(choice.keep, ['../../etc']);
  assert.equal(choice.everyOverlay, false);
  // Pulled again (a refresh, any edit): still one conflict, and the bad entry was said once.
  await server.change(uriOf(base), `${server.text(uriOf(base))}\n`);
  assert.equal(conflicts(await server.diagnostics(uriOf(base))).length, 1);
  assert.equal(
    server.notifications.filter(
      (n) => n.method === 'window/showMessage' && /kustomizeOverlays/.test((n.params as { message: string }).message),
    ).length,
    1,
  );

  // Back to every overlay: production's conflict returns without anything saved.
  server.setSettings({ ...settings, kustomizeOverlays: [] });
  await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 2, 60_000);
});

/** What the editor's file watcher sends when files change on disk (the server registers for every file). */
async function changedOnDisk(server: TestServer, ...files: string[]): Promise<void> {
  await server.notify('workspace/didChangeWatchedFiles', { changes: files.map((f) => ({ uri: uriOf(f), type: 2 })) });
}

test('saving _helpers.tpl, which the editor never sends, renders the chart again: the conflict on the template goes when the helper prints the live value', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-helpers');
  // The replicas come from a helper, as many charts write them.
  const template = path.join(chart, 'templates', 'deployment.yaml');
  const helpers = path.join(chart, 'templates', '_helpers.tpl');
  fs.writeFileSync(
    template,
    fs
      .readFileSync(template, 'utf8')
      .replace('replicas: {{ .Values.replicaCount }}', 'replicas: {{ include "shop.replicas" . }}'),
  );
  const helpersText = fs.readFileSync(helpers, 'utf8');
  fs.writeFileSync(helpers, `${helpersText}\n{{- define "shop.replicas" -}}\n{{ .Values.replicaCount }}\n{{- end }}\n`);
  const server = await chartServer(t, cluster, helm, repo, namespace);
  await openFiles(server, [template]);
  const templateLine = lineOf(fs.readFileSync(template, 'utf8'), /^\s*replicas:/) - 1;
  const before = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  assert.deepEqual(
    conflicts(before).map((d) => d.range.start.line),
    [templateLine],
  );
  assert.match(conflicts(before)[0]!.message, /live 5, manifest 1/);

  // The helper now prints 5, the live value: saved (on disk; a .tpl is no YAML document the editor syncs).
  fs.writeFileSync(helpers, `${helpersText}\n{{- define "shop.replicas" -}}\n5\n{{- end }}\n`);
  await changedOnDisk(server, helpers);
  assert.deepEqual(
    conflicts(await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 0, 60_000)),
    [],
  );
});

test('quick fixes on a template line: the value from .Values is taken live in values.yaml, and the conflict clears after the render', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-template-fix');
  const server = await chartServer(t, cluster, helm, repo, namespace);
  const template = path.join(chart, 'templates', 'deployment.yaml');
  const values = path.join(chart, 'values.yaml');
  // Only the template is open: the fix edits values.yaml from the disk's text.
  await openFiles(server, [template]);
  const onTemplate = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  const actions = await server.codeActions(uriOf(template), conflicts(onTemplate)[0]!.range, conflicts(onTemplate));
  // Two fixes: leave replicas to the autoscaler (the line goes, preferred, as on a patch line), or
  // share them by taking the live value where the line reads it.
  assert.deepEqual(
    actions.map((a) => [a.title.replace(/ \(.*$/, ''), a.isPreferred]),
    [
      ['Use the live value 5 in values.yaml for replicaCount', false],
      ['Remove this line from the template', true],
    ],
  );
  const take = actions[0]!;
  assert.match(
    take.title,
    /^Use the live value 5 in values\.yaml for replicaCount \(share ownership with "kube-controller-manager" with subresource "scale"/,
  );
  assert.match(
    actions[1]!.title,
    /^Remove this line from the template \(leave \.spec\.replicas to "kube-controller-manager" with subresource "scale"/,
  );
  assert.deepEqual(
    Object.keys(actions[1]!.edit?.changes ?? {}),
    [uriOf(template)],
    'the removal edits the template line, not values.yaml',
  );
  const edit = take.edit!;
  assert.deepEqual(
    Object.keys(edit.changes ?? {}),
    [uriOf(values)],
    'the edit is in values.yaml, the source of the value',
  );
  const valuesText = fs.readFileSync(values, 'utf8');
  const fixed = TextDocument.applyEdits(
    TextDocument.create(uriOf(values), 'yaml', 1, valuesText),
    edit.changes![uriOf(values)]!,
  );
  assert.equal(fixed, valuesText.replace(/^replicaCount: 1$/m, 'replicaCount: 5'));
  fs.writeFileSync(values, fixed);
  await changedOnDisk(server, values);
  assert.deepEqual(
    conflicts(await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 0, 60_000)),
    [],
  );
});

test('a values file two charts are given (helmValuesFiles: ../values-prod.yaml): the fix that takes the live value there names the other chart', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-shared-values');
  // A second chart beside it, given the same values file; the chart's own values.yaml is its alone.
  fs.cpSync(chart, path.join(repo, 'admin'), { recursive: true });
  writeFiles(repo, { 'values-prod.yaml': 'replicaCount: 1\n' });
  const server = await startTestServer({
    settings: {
      kubeconfig: cluster.kubeconfig,
      context: 'admin',
      namespace,
      helmPath: helm,
      helmRelease: 'web',
      helmValuesFiles: ['../values-prod.yaml'],
    },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  const template = path.join(chart, 'templates', 'deployment.yaml');
  await openFiles(server, [template]);
  const onTemplate = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  const titles = (
    await server.codeActions(uriOf(template), conflicts(onTemplate)[0]!.range, conflicts(onTemplate))
  ).map((a) => a.title);
  assert.ok(
    titles.some((title) =>
      title.startsWith(
        'Use the live value 5 in values-prod.yaml for replicaCount, also used by chart admin (share ownership with',
      ),
    ),
    JSON.stringify(titles),
  );
  assert.deepEqual(
    titles.filter((title) => title.includes('values.yaml') && title.includes('also used by')),
    [],
    "the chart's own values.yaml is used by no other chart",
  );
});

test('quick fixes on a template line: a literal value is offered for removal, and the conflict clears after the render', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'editor-template-literal');
  const template = path.join(chart, 'templates', 'deployment.yaml');
  fs.writeFileSync(
    template,
    fs.readFileSync(template, 'utf8').replace('replicas: {{ .Values.replicaCount }}', 'replicas: 2'),
  );
  const server = await chartServer(t, cluster, helm, repo, namespace);
  await openFiles(server, [template]);
  const onTemplate = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 60_000);
  assert.match(conflicts(onTemplate)[0]!.message, /live 5, manifest 2/);
  const actions = await server.codeActions(uriOf(template), conflicts(onTemplate)[0]!.range, conflicts(onTemplate));
  // Nothing about values.yaml: the line reads no value from it.
  assert.equal(actions.length, 1, JSON.stringify(actions.map((a) => a.title)));
  assert.match(
    actions[0]!.title,
    /^Remove this line from the template \(leave \.spec\.replicas to "kube-controller-manager" with subresource "scale"/,
  );
  assert.equal(actions[0]!.isPreferred, true);
  await server.applyEdit(actions[0]!.edit!);
  assert.doesNotMatch(server.text(uriOf(template)), /replicas:/);
  fs.writeFileSync(template, server.text(uriOf(template)));
  await server.save(uriOf(template));
  assert.deepEqual(
    conflicts(await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length === 0, 60_000)),
    [],
  );
});

test('an overlay that does not build because of its base builds again when the base is fixed and saved', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  // The server runs in this process: while it waits on kustomize and the test waits on it, nothing
  // else would keep the event loop alive.
  const alive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(alive));
  const { repo, base } = await twoScaledOverlays(cluster, kustomize, 'editor-broken-base');
  const good = fs.readFileSync(base, 'utf8');
  fs.writeFileSync(base, good.replace('  replicas: 1', '  replicas: [1'));
  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', kustomizePath: kustomize },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  await openFiles(server, [base]);
  await server.diagnostics(uriOf(base));
  // kustomize refused the overlays: the base says so, for each, and says nothing else.
  const refused = await server.diagnosticsUntil(
    uriOf(base),
    (ds) => ds.filter((d) => d.code === 'render-failed').length === 2,
    60_000,
  );
  assert.deepEqual(
    refused
      .filter((d) => d.code === 'render-failed')
      .map((d) => /cannot render overlay (\w+)/.exec(d.message)?.[1])
      .sort(),
    ['production', 'staging'],
  );
  assert.deepEqual(conflicts(refused), []);

  // Fixed in the editor and saved: the base is outside both overlays' folders, and they build again.
  await server.change(uriOf(base), good);
  fs.writeFileSync(base, good);
  await server.save(uriOf(base));
  const both = await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 2, 60_000);
  assert.deepEqual(
    conflicts(both)
      .map((d) => /in overlay (\w+)/.exec(d.message)?.[1])
      .sort(),
    ['production', 'staging'],
  );
});

test('a base saved while the first render of its overlay runs, after that render read it, renders the overlay again', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const alive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(alive));
  const { repo, base } = await twoScaledOverlays(cluster, kustomize, 'editor-saved-mid-render');
  const good = fs.readFileSync(base, 'utf8');
  fs.writeFileSync(base, good.replace('  replicas: 1', '  replicas: [1'));
  // A kustomize that reads the files at once and answers only when the test lets it: the save
  // below then lands after the render read the broken base and before it ends, every time.
  const gate = scratchDir('editor-saved-mid-render-gate');
  const wrapper = path.join(gate, 'kustomize');
  fs.writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      `out=$(mktemp -p ${JSON.stringify(gate)}); err=$(mktemp -p ${JSON.stringify(gate)})`,
      `${JSON.stringify(kustomize)} "$@" >"$out" 2>"$err"; status=$?`,
      `touch ${JSON.stringify(path.join(gate, 'read'))}`,
      `while [ ! -e ${JSON.stringify(path.join(gate, 'open'))} ]; do sleep 0.05; done`,
      'cat "$out"; cat "$err" >&2; exit $status',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const server = await startTestServer({
    settings: {
      kubeconfig: cluster.kubeconfig,
      context: 'admin',
      kustomizePath: wrapper,
      kustomizeOverlays: ['overlays/staging'],
    },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  await openFiles(server, [base]);
  void server.diagnostics(uriOf(base));
  const deadline = Date.now() + 60_000;
  while (!fs.existsSync(path.join(gate, 'read'))) {
    assert.ok(Date.now() < deadline, 'the overlay never started rendering');
    await new Promise((r) => setTimeout(r, 50));
  }
  // The render has read the broken base and has not ended: the fix is saved now.
  await server.change(uriOf(base), good);
  fs.writeFileSync(base, good);
  await server.save(uriOf(base));
  fs.writeFileSync(path.join(gate, 'open'), '');
  const staging = await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 1, 60_000);
  assert.deepEqual(
    staging.filter((d) => d.code === 'render-failed'),
    [],
    'rendered again: the failure is gone',
  );
  assert.match(conflicts(staging)[0]!.message, /in overlay staging/);
});

test('the preferred fix on a patch line leaves replicas to the autoscaler: it removes them from the patch and the base it patches, and after the render no file has the conflict and the server accepts the apply', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const alive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(alive));
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'editor-leave-replicas');
  const repo = scratchDir('editor-leave-replicas');
  const baseText = baseDeploymentText(1);
  const patchText = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n';
  writeFiles(repo, {
    'base/kustomization.yaml': 'resources:\n- deployment.yaml\n',
    'base/deployment.yaml': baseText,
    'overlays/production/kustomization.yaml': `namespace: ${namespace}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n`,
    'overlays/production/replicas.yaml': patchText,
  });
  const overlay = path.join(repo, 'overlays/production');
  const build = () => {
    const built = spawnSync(kustomize, ['build', overlay], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    return parseAllDocuments(built.stdout).map((d) => d.toJS() as KubeObject);
  };
  // Production as the cluster has it: applied server-side as kubectl, then scaled by the autoscaler.
  for (const object of build()) objectOf(await apply(conn, 'kubectl', object), 'apply');
  await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }, 5);
  // The server's own word before the fix: kubectl's apply of what production renders is refused.
  const refused = await apply(
    conn,
    'kubectl',
    build().find((o) => o.kind === 'Deployment')!,
    { dryRun: true },
  );
  assert.equal(refused.status, 409, JSON.stringify(refused));

  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', kustomizePath: kustomize },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  const patch = path.join(overlay, 'replicas.yaml');
  const base = path.join(repo, 'base/deployment.yaml');
  await openFiles(server, [patch, base]);
  const onPatch = await server.diagnosticsUntil(uriOf(patch), (ds) => conflicts(ds).length > 0, 60_000);
  assert.deepEqual(
    conflicts(onPatch).map((d) => d.range.start.line),
    [5],
    JSON.stringify(onPatch),
  );
  assert.deepEqual(
    conflicts(await server.diagnostics(uriOf(base))),
    [],
    "the patch wins: the conflict is the patch line's",
  );

  // The preferred fix, applied as the editor applies it: every file it changes is saved.
  const actions = await server.codeActions(uriOf(patch), conflicts(onPatch)[0]!.range, conflicts(onPatch));
  const preferred = actions.filter((a) => a.isPreferred);
  assert.equal(preferred.length, 1, JSON.stringify(actions.map((a) => [a.title, a.isPreferred])));
  const fix = preferred[0]!;
  const changed = Object.keys(fix.edit?.changes ?? {});
  await server.applyEdit(fix.edit!);
  // All on disk before any save is told, so the render that follows reads them all.
  for (const uri of changed) fs.writeFileSync(new URL(uri), server.text(uri));
  for (const uri of changed) await server.save(uri);

  // The render after the saves clears the patch line; from that same render, the base has no
  // conflict either: the field left what production sends rather than moving to the base's line.
  const cleared = await server.diagnosticsUntil(uriOf(patch), (ds) => conflicts(ds).length === 0, 60_000);
  assert.deepEqual(
    cleared.filter((d) => d.severity === 1),
    [],
  );
  assert.deepEqual(conflicts(await server.diagnostics(uriOf(base))), [], 'the conflict moved to the base');
  // The fix said what it did: both files, each losing only replicas.
  assert.match(
    fix.title,
    /^Remove \.spec\.replicas here and in \.\.\/\.\.\/base\/deployment\.yaml \(leave it to "kube-controller-manager" with subresource "scale"/,
  );
  assert.deepEqual(changed.sort(), [uriOf(patch), uriOf(base)].sort());
  assert.equal(server.text(uriOf(patch)), 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n');
  assert.equal(server.text(uriOf(base)), baseText.replace('  replicas: 1\n', ''));
  // And the server agrees: kubectl's apply of what production renders now is accepted.
  const rendered = build().find((o) => o.kind === 'Deployment')!;
  assert.equal((rendered.spec as Record<string, unknown>).replicas, undefined, 'production sends no replicas');
  objectOf(await apply(conn, 'kubectl', rendered, { dryRun: true }), 'the dry-run apply after the fix');
});

/**
 * A base used by staging and production, each applied as kubectl in its namespace; only production
 * is scaled to 5 by an autoscaler. `productionFiles`: more files of production's (a patch of its own).
 */
async function baseOfTwoOverlays(
  cluster: TestClusterInfo,
  kustomize: string,
  prefix: string,
  productionFiles: Record<string, string> = {},
  productionPatches: readonly string[] = [],
) {
  const conn = connect('admin', cluster.kubeconfig);
  const repo = scratchDir(prefix);
  const namespaces = {
    staging: await freshNamespace(conn, `${prefix}-stg`),
    production: await freshNamespace(conn, `${prefix}-prd`),
  };
  const patches =
    productionPatches.length > 0 ? `patches:\n${productionPatches.map((p) => `- path: ${p}\n`).join('')}` : '';
  writeFiles(repo, {
    ...overlayBase,
    'overlays/staging/kustomization.yaml': `namespace: ${namespaces.staging}\nresources:\n- ../../base\n`,
    'overlays/production/kustomization.yaml': `namespace: ${namespaces.production}\nresources:\n- ../../base\n${patches}`,
    ...Object.fromEntries(Object.entries(productionFiles).map(([f, text]) => [`overlays/production/${f}`, text])),
  });
  const build = (overlay: 'staging' | 'production') => {
    const built = spawnSync(kustomize, ['build', path.join(repo, 'overlays', overlay)], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    return built.stdout;
  };
  for (const overlay of ['staging', 'production'] as const) {
    for (const doc of parseAllDocuments(build(overlay)))
      objectOf(await apply(conn, 'kubectl', doc.toJS() as KubeObject), 'apply');
  }
  await autoscale(
    conn,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: namespaces.production } },
    5,
  );
  const deployment = (overlay: 'staging' | 'production') =>
    parseAllDocuments(build(overlay))
      .map((d) => d.toJS() as KubeObject)
      .find((o) => o.kind === 'Deployment')!;
  return {
    conn,
    repo,
    namespaces,
    base: path.join(repo, 'base/deployment.yaml'),
    production: path.join(repo, 'overlays/production'),
    build,
    deployment,
  };
}

/** Applies a fix as the editor does, then writes every file it touched to disk and saves it (the render reads the disk). */
async function applyAndSave(
  server: TestServer,
  action: { edit?: import('vscode-languageserver-protocol').WorkspaceEdit },
): Promise<string[]> {
  const edit = action.edit!;
  const uris = [
    ...Object.keys(edit.changes ?? {}),
    ...(edit.documentChanges ?? []).map((c) => ('textDocument' in c ? c.textDocument.uri : 'uri' in c ? c.uri : '')),
  ].filter(Boolean);
  const touched = [...new Set(uris)];
  await server.applyEdit(edit);
  for (const uri of touched) fs.writeFileSync(new URL(uri), server.text(uri));
  for (const uri of touched) await server.save(uri);
  return touched;
}

const annotate = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: shop\n';
const who = '(leave it to "kube-controller-manager"';
const overlayLocalCases: {
  /** The file the conflict sits on, in the repository. */
  on: string;
  /** The fixes that edit the shared base, as their titles begin. */
  shared: string[];
  fix: string;
  files: Record<string, string>;
  patches: string[];
  /** What the fix wrote, each file in production's folder. */
  written: Record<string, string>;
  kustomization?: RegExp;
  sent: number | undefined;
}[] = [
  {
    on: 'base/deployment.yaml',
    shared: [
      `Remove .spec.replicas here, also used by overlay staging ${who}`,
      'Use the live value 5 for .spec.replicas here, also used by overlay staging (share ownership with',
    ],
    fix: 'Use the live value 5 for .spec.replicas in overlay production only',
    files: {},
    patches: [],
    // A new patch of production's own, listed in its kustomization.
    written: {
      'deployment-web-patch.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n',
    },
    kustomization: /\npatches:\n- path: deployment-web-patch\.yaml\n$/,
    sent: 5,
  },
  {
    on: 'base/deployment.yaml',
    shared: [`Remove .spec.replicas here, also used by overlay staging ${who}`],
    fix: 'Remove .spec.replicas from overlay production only',
    // Production already patches the Deployment (an annotation): the field goes there, as null.
    files: { 'annotate.yaml': annotate },
    patches: ['annotate.yaml'],
    written: { 'annotate.yaml': `${annotate}spec:\n  replicas: null\n` },
    sent: undefined,
  },
  {
    // Production's own patch sets replicas, over the base's: removing them from what production
    // sends took the base's line too, which staging renders; the local removal is the patch's null.
    on: 'overlays/production/replicas.yaml',
    shared: [`Remove .spec.replicas here and in ../../base/deployment.yaml, also used by overlay staging ${who}`],
    fix: 'Remove .spec.replicas from overlay production only',
    files: { 'replicas.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n' },
    patches: ['replicas.yaml'],
    written: {
      'replicas.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: null\n',
    },
    sent: undefined,
  },
];

for (const c of overlayLocalCases) {
  test(`a fix on ${c.on} that edits the base, which staging renders too, names staging in its title, and "${c.fix}" changes production alone: after it, kustomize builds production without the conflict (the server's dry run agrees) and staging exactly as before`, async (t) => {
    const cluster = requireCluster(t);
    const kustomize = requireTool(t, 'kustomize');
    if (!cluster || !kustomize) return;
    const alive = setInterval(() => undefined, 1000);
    t.after(() => clearInterval(alive));
    const { conn, repo, base, production, build, deployment } = await baseOfTwoOverlays(
      cluster,
      kustomize,
      'editor-local-fix',
      c.files,
      c.patches,
    );
    // The server's own word before the fix: production's apply is refused, staging's accepted.
    assert.equal((await apply(conn, 'kubectl', deployment('production'), { dryRun: true })).status, 409);
    objectOf(await apply(conn, 'kubectl', deployment('staging'), { dryRun: true }), "staging's dry-run apply");
    const stagingBefore = build('staging');
    const baseBefore = fs.readFileSync(base, 'utf8');

    const server = await startTestServer({
      settings: { kubeconfig: cluster.kubeconfig, context: 'admin', kustomizePath: kustomize },
      workspaceFolders: [uriOf(repo)],
    });
    t.after(() => server.shutdown());
    const on = path.join(repo, c.on);
    await openFiles(server, [
      ...new Set([
        on,
        base,
        path.join(production, 'kustomization.yaml'),
        ...c.patches.map((p) => path.join(production, p)),
      ]),
    ]);
    const found = await server.diagnosticsUntil(uriOf(on), (ds) => conflicts(ds).length > 0, 60_000);
    assert.deepEqual(
      conflicts(found).map((d) => [d.range.start.line, /in overlay (\w+)/.exec(d.message)?.[1]]),
      [[5, 'production']],
      JSON.stringify(found),
    );

    const actions = await server.codeActions(uriOf(on), conflicts(found)[0]!.range, conflicts(found));
    const titles = actions.map((a) => a.title);
    // The fixes that edit the base say that staging renders it too; the local removal is preferred to them.
    for (const shared of c.shared)
      assert.ok(
        titles.some((title) => title.startsWith(shared)),
        `${shared} in ${JSON.stringify(titles)}`,
      );
    assert.deepEqual(
      actions.filter((a) => a.isPreferred).map((a) => a.title),
      titles.filter((title) => title.startsWith('Remove .spec.replicas from overlay production only')),
      JSON.stringify(titles),
    );
    const fix = actions.find((a) => a.title.startsWith(c.fix));
    assert.ok(fix?.edit, JSON.stringify(actions.map((a) => [a.title, a.disabled])));

    const touched = await applyAndSave(server, fix);
    assert.deepEqual(
      touched.map((u) => path.relative(production, new URL(u).pathname)).sort(),
      [...Object.keys(c.written), ...(c.kustomization ? ['kustomization.yaml'] : [])].sort(),
    );
    for (const [file, text] of Object.entries(c.written))
      assert.equal(fs.readFileSync(path.join(production, file), 'utf8'), text);
    if (c.kustomization)
      assert.match(fs.readFileSync(path.join(production, 'kustomization.yaml'), 'utf8'), c.kustomization);
    // The render after the saves clears the conflict.
    await server.diagnosticsUntil(uriOf(on), (ds) => conflicts(ds).length === 0, 60_000);
    assert.deepEqual(conflicts(await server.diagnostics(uriOf(base))), [], 'nor did it move to the base');
    // kustomize and the server agree: production sends the live value (or no replicas) and its apply is accepted; staging, and the base, as before.
    const sent = deployment('production');
    assert.equal((sent.spec as Record<string, unknown>).replicas, c.sent);
    objectOf(await apply(conn, 'kubectl', sent, { dryRun: true }), 'the dry-run apply of production after the fix');
    assert.equal(fs.readFileSync(base, 'utf8'), baseBefore);
    assert.equal(build('staging'), stagingBefore);
  });
}

test('the files of an overlay the user left out say why they are silent (a hint, "not judged", with Choose Kustomize overlays… as its fix); the hint goes when the overlay is chosen again', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const { repo, base, production } = await baseOfTwoOverlays(
    cluster,
    kustomize,
    'editor-left-out',
    { 'annotate.yaml': annotate },
    ['annotate.yaml'],
  );
  const settings = {
    kubeconfig: cluster.kubeconfig,
    context: 'admin',
    kustomizePath: kustomize,
    kustomizeOverlays: ['overlays/staging'],
  };
  const server = await startTestServer({ settings, workspaceFolders: [uriOf(repo)] });
  t.after(() => server.shutdown());
  const own = [path.join(production, 'kustomization.yaml'), path.join(production, 'annotate.yaml')];
  await openFiles(server, [base, ...own]);
  const notChosen = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'overlay-not-chosen');

  // The base is judged through staging, which is chosen (its exists hint, the sign it was read): nothing to say why it is silent.
  const onBase = await server.diagnosticsUntil(
    uriOf(base),
    (ds) => ds.some((d) => d.code === 'exists' && /overlay staging/.test(d.message)),
    60_000,
  );
  assert.deepEqual(notChosen(onBase), []);
  for (const f of own) {
    const ds = await server.diagnosticsUntil(uriOf(f), (d) => notChosen(d).length > 0, 30_000);
    assert.deepEqual(
      ds.map((d) => [d.code, d.severity, d.range.start.line]),
      [['overlay-not-chosen', 4, 0]],
      `${f}: a hint on the first line, and nothing else`,
    );
    assert.match(
      ds[0]!.message,
      /^Not judged: no chosen Kustomize overlay uses this file \(overlay production uses it and is left out by kubeConflictHints\.kustomizeOverlays\)\. Choose Kustomize overlays… to judge it\.$/,
    );
    const state = (await server.waitForNotification(
      'kubeConflictHints/documentState',
      (p) => (p as DocumentStateParams).uri === uriOf(f) && (p as DocumentStateParams).state === 'not-judged',
      30_000,
    )) as DocumentStateParams;
    assert.match(state.reason ?? '', /No chosen overlay uses the file/);
    // Its fix opens the choice: the command form of the overlays request, on this file.
    const actions = await server.codeActions(uriOf(f), ds[0]!.range, ds);
    assert.deepEqual(
      actions.map((a) => [a.title, a.command?.command, a.command?.arguments]),
      [['Choose Kustomize overlays…', requests.overlays.command, [{ uri: uriOf(f) }]]],
    );
  }

  // Production chosen again: judged, so the hint goes, and production's conflict is back on the base.
  server.setSettings({ ...settings, kustomizeOverlays: [] });
  for (const f of own)
    assert.deepEqual(notChosen(await server.diagnosticsUntil(uriOf(f), (d) => notChosen(d).length === 0, 60_000)), []);
  const both = await server.diagnosticsUntil(uriOf(base), (ds) => conflicts(ds).length === 1, 60_000);
  assert.match(conflicts(both)[0]!.message, /in overlay production/);
});

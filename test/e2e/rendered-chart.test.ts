// A Helm chart in a real VS Code: the chart `helm create` scaffolds, installed by the real Helm 4 as
// release web and scaled by an autoscaler. Opened, no template gets a syntax error; the autoscaler's
// conflict shows on the template's `replicas:` line and on `replicaCount:` in values.yaml, the hover
// there names the owner, and the quick fix that takes the live value clears it once saved. On the
// template's `include` of the labels, one of which `kubectl label` changed, the hover speaks first
// of that label, the one the line's problem is about.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { chartFiles } from '../support/charts';
import { requireCluster } from '../support/env';
import { autoscale, connect, freshNamespace, objectOf, patch } from '../support/seed';
import { requireTool } from '../tools/tools';
import { positionOfKey, problemPosition, requireEditor, startEditor, type Problem } from './harness';
import { settingsFor } from './scenarios';

const isConflict = (p: Problem) =>
  p.source === 'kube-conflict-hints' &&
  p.severity !== 'info' &&
  /kube-controller-manager/.test(p.message) &&
  /release web/.test(p.message);

/**
 * The chart `helm create` scaffolds, installed by the real Helm 4 as release web and scaled by an
 * autoscaler, open in a real VS Code (artefacts under `name`); undefined when a prerequisite is missing.
 */
async function installedChart(t: TestContext, name: string) {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  const prepared = cluster && helm && requireEditor(t);
  if (!cluster || !helm || !prepared) return undefined;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'e2e-helm');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-e2e-helm-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const home = path.join(scratch, '.home');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
    KUBECONFIG: cluster.kubeconfig,
  };
  assert.equal(spawnSync(helm, ['create', 'shop'], { cwd: scratch, env }).status, 0);
  const installed = spawnSync(helm, ['install', 'web', 'shop', '--kube-context', 'admin', '--namespace', namespace], {
    cwd: scratch,
    encoding: 'utf8',
    env,
  });
  assert.equal(installed.status, 0, installed.stderr);
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } };
  await autoscale(conn, deployment, 5);

  // The chart's files, as the user's repository holds them.
  const files = chartFiles(path.join(scratch, 'shop'), 'shop');
  const editor = await startEditor(t, {
    name,
    ...prepared,
    files,
    // The helm binary is the user's own setting (machine scope), as the release and namespace.
    settings: settingsFor(cluster.kubeconfig, 'admin', {
      'kubeConflictHints.helmPath': helm,
      'kubeConflictHints.helmRelease': 'web',
      'kubeConflictHints.namespace': namespace,
    }),
  });
  return { conn, deployment, files, editor };
}

test(
  'a chart: no syntax error on templates, the autoscaler conflict on the template and on values.yaml, the owner on hover, the values quick fix clears it',
  { timeout: 600_000 },
  async (t) => {
    const chart = await installedChart(t, 'rendered-chart');
    if (!chart) return;
    const { files, editor } = chart;

    const template = files['shop/templates/deployment.yaml']!;
    const values = files['shop/values.yaml']!;
    const replicasLine = positionOfKey(template, 'replicas').line;
    await editor.openFile('shop/templates/deployment.yaml');
    // hpa.yaml starts with `{{-`: opened too, it must not be read as JSON or YAML.
    await editor.openFile('shop/templates/hpa.yaml');
    await editor.openFile('shop/templates/deployment.yaml');
    const onTemplate = await editor.waitForProblems(
      (ps) => ps.some((p) => isConflict(p) && p.line === replicasLine),
      `the autoscaler conflict on deployment.yaml line ${replicasLine}`,
      120_000,
    );
    assert.deepEqual(
      onTemplate.filter((p) => !isConflict(p) && p.severity !== 'info'),
      [],
      'nothing but the conflict: no syntax error on a template',
    );
    await editor.screenshot('template-conflict');

    await editor.openFile('shop/values.yaml');
    const at = positionOfKey(values, 'replicaCount');
    const problems = await editor.waitForProblems(
      (ps) => ps.filter(isConflict).some((p) => p.line === at.line),
      `the conflict on values.yaml line ${at.line}`,
      60_000,
    );
    // The owners of the rendered field, beside the problem: only the field hover names the object.
    const hover = await editor.hover(
      { line: at.line, column: at.column + 2 },
      { expect: /Deployment web-shop in release web[\s\S]*kube-controller-manager/ },
    );
    assert.match(hover, /scale/);
    await editor.screenshot('values-conflict-hover');

    await editor.quickFix(
      problemPosition(problems.filter(isConflict), at.line),
      /^Use the live value 5 for replicaCount/,
    );
    const saved = await editor.save();
    assert.match(saved, /^replicaCount: 5$/m, 'the fix takes the live value in values.yaml');
    await editor.waitForProblems(
      (ps) => !ps.some(isConflict),
      'the conflict gone once the chart renders again',
      120_000,
    );
    await editor.screenshot('after-quick-fix');
  },
);

test(
  'a template line that writes several labels: the hover speaks first of the label kubectl label changed; once it is back, of it as shared',
  { timeout: 600_000 },
  async (t) => {
    const chart = await installedChart(t, 'include-hover');
    if (!chart) return;
    const { conn, deployment, files, editor } = chart;
    const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(files['shop/Chart.yaml']!)![1]!;
    // kubectl label deployment web-shop app.kubernetes.io/version=2.0.0 --overwrite
    const label = (value: string) =>
      patch(
        conn,
        'kubectl-label',
        deployment,
        { metadata: { labels: { 'app.kubernetes.io/version': value } } },
        { type: 'merge' },
      );
    objectOf(await label('2.0.0'), 'kubectl label');

    const template = files['shop/templates/deployment.yaml']!;
    // `{{- include "shop.labels" . | nindent 4 }}`: helm.sh/chart, name, instance, version, managed-by.
    const index = template.split('\n').findIndex((l) => l === '    {{- include "shop.labels" . | nindent 4 }}');
    assert.ok(index >= 0, 'the include of the labels under metadata');
    const at = { line: index + 1, column: template.split('\n')[index]!.indexOf('include') + 3 };
    const onLine = (p: Problem) =>
      p.source === 'kube-conflict-hints' &&
      p.line === at.line &&
      /app\.kubernetes\.io\/version is managed by "kubectl-label"/.test(p.message);
    await editor.openFile('shop/templates/deployment.yaml');
    await editor.waitForProblems(
      (ps) => ps.some(onLine),
      `the label conflict on deployment.yaml line ${at.line}`,
      120_000,
    );
    // The problem and, below it, the hover of the same label; managed-by (same value) only named.
    const hover = await editor.hover(at, {
      expect:
        /Deployment web-shop in release web in namespace [a-z0-9-]+\s*\.metadata\.labels\.app\.kubernetes\.io\/version[\s\S]*Also written on this line, without a finding/,
    });
    assert.match(hover, /kubectl-label/);
    assert.match(hover, /Live value: "2\.0\.0"/);
    assert.doesNotMatch(hover.slice(0, hover.indexOf('Also written on this line')), /managed-by/);
    await editor.screenshot('include-hover');

    // The label back at the chart's value: the conflict goes; kubectl-label still shares the label
    // (the line's ownership hint names it), and the hover says so: a shared value, no error.
    await editor.page.keyboard.press('Escape');
    objectOf(await label(appVersion), 'kubectl label back');
    await editor.waitForProblems((ps) => !ps.some(onLine), 'the label conflict gone', 120_000);
    const after = await editor.hover(at, {
      expect:
        /Deployment web-shop in release web in namespace [a-z0-9-]+\s*\.metadata\.labels\.app\.kubernetes\.io\/version[\s\S]*Same value as the live object[\s\S]*Also written on this line: /,
    });
    assert.doesNotMatch(after, /is managed by "kubectl-label"|Live value/);
    await editor.screenshot('include-hover-after');
  },
);

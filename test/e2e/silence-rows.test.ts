// More states in which the product cannot judge, each seen where the user looks in a real VS Code,
// and gone when its cause is: a chart created by `helm create` while the editor is open (no syntax
// error on its templates, its conflict without a restart); a template that stops rendering (the
// error on the line helm names, the status bar not ✓; the `{{- end }}` typed back, both go); a file
// of flow-style documents that start with `{`, which kubectl reads as JSON and refuses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { chartFiles, helmEnv } from '../support/charts';
import { requireCluster } from '../support/env';
import { autoscale, connect, freshNamespace } from '../support/seed';
import { requireTool } from '../tools/tools';
import { positionOfKey, requireEditor, startEditor, type Problem } from './harness';
import { settingsFor } from './scenarios';

const ours = (ps: Problem[]) => ps.filter((p) => p.source === 'kube-conflict-hints');

test(
  'helm create while the editor is open: the new template has no syntax error, and its conflict appears without a restart',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    const prepared = cluster && helm && requireEditor(t);
    if (!cluster || !helm || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'e2e-helm-create');
    const editor = await startEditor(t, {
      name: 'helm-create-while-open',
      ...prepared,
      files: { 'notes.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n' },
      settings: settingsFor(cluster.kubeconfig, 'admin', {
        'kubeConflictHints.helmPath': helm,
        'kubeConflictHints.helmRelease': 'web',
        'kubeConflictHints.namespace': namespace,
      }),
    });
    await editor.openFile('notes.yaml');
    // In the terminal, as the user would: the chart appears in the open folder, is installed and scaled.
    const env = helmEnv(path.join(editor.workspace, '..', '.helm-home'), cluster.kubeconfig);
    const created = spawnSync(helm, ['create', 'shop'], { cwd: editor.workspace, encoding: 'utf8', env });
    assert.equal(created.status, 0, created.stderr);
    const installed = spawnSync(
      helm,
      ['install', 'web', './shop', '--kube-context', 'admin', '--namespace', namespace],
      { cwd: editor.workspace, encoding: 'utf8', env },
    );
    assert.equal(installed.status, 0, installed.stderr);
    await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } }, 5);

    const template = fs.readFileSync(path.join(editor.workspace, 'shop/templates/deployment.yaml'), 'utf8');
    const at = positionOfKey(template, 'replicas');
    await editor.openFile('shop/templates/deployment.yaml');
    const problems = await editor.waitForProblems(
      (ps) =>
        ours(ps).some((p) => p.severity === 'error' && p.line === at.line && /kube-controller-manager/.test(p.message)),
      `the autoscaler conflict on line ${at.line} of the new chart`,
      180_000,
    );
    assert.deepEqual(
      ours(problems).filter((p) => p.severity !== 'info' && !/kube-controller-manager/.test(p.message)),
      [],
      'nothing but the conflict: no syntax error on a template',
    );
    await editor.screenshot('helm-create-conflict');
  },
);

test(
  'a template that stops rendering: the error on the line helm names and a status bar that is not ✓; the end typed back, both go',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    const prepared = cluster && helm && requireEditor(t);
    if (!cluster || !helm || !prepared) return;
    const namespace = await freshNamespace(connect('admin', cluster.kubeconfig), 'e2e-helm-template');
    const scratch = fs.mkdtempSync(path.join(editorScratch(), 'kch-e2e-template-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    assert.equal(
      spawnSync(helm, ['create', 'shop'], { cwd: scratch, env: helmEnv(path.join(scratch, '.home')) }).status,
      0,
    );
    const files = chartFiles(path.join(scratch, 'shop'), 'shop');
    // The `{{- end }}` that closes `{{- if not .Values.autoscaling.enabled }}` is deleted.
    const whole = files['shop/templates/deployment.yaml']!;
    const replicas = positionOfKey(whole, 'replicas');
    const lines = whole.split('\n');
    assert.match(lines[replicas.line]!, /^\s*\{\{- end \}\}$/, 'the end after replicas');
    files['shop/templates/deployment.yaml'] = [
      ...lines.slice(0, replicas.line),
      ...lines.slice(replicas.line + 1),
    ].join('\n');
    const editor = await startEditor(t, {
      name: 'template-stops-rendering',
      ...prepared,
      files,
      settings: settingsFor(cluster.kubeconfig, 'admin', {
        'kubeConflictHints.helmPath': helm,
        'kubeConflictHints.helmRelease': 'web',
        'kubeConflictHints.namespace': namespace,
      }),
    });
    await editor.openFile('shop/templates/deployment.yaml');
    const failed = await editor.waitForProblems(
      (ps) => ours(ps).some((p) => p.severity === 'error' && /cannot render release web/.test(p.message)),
      'the template error',
      120_000,
    );
    const error = ours(failed).find((p) => /cannot render release web/.test(p.message))!;
    const named = Number(/deployment\.yaml:(\d+)/.exec(error.message)?.[1]);
    assert.ok(named > 0, error.message);
    assert.ok(
      ours(failed).some((p) => p.line === named),
      `on the line helm names (${named}): ${JSON.stringify(ours(failed))}`,
    );
    await editor.waitForStatus(
      (item) => item.icons.includes('warning') && / not judged$/.test(item.text),
      'the status bar: this file is not judged',
    );
    await editor.screenshot('template-error');

    // The user types the end back and saves: the chart renders again, the error and the warning go.
    await editor.typeOnNewLineAfter(replicas.line, '{{- end }}');
    await editor.save();
    await editor.waitForProblems(
      (ps) => !ours(ps).some((p) => /cannot render/.test(p.message)),
      'the template error gone',
      120_000,
    );
    await editor.waitForStatus((item) => !/ not judged$/.test(item.text), 'the status bar no longer says not judged');
    await editor.screenshot('template-fixed');
  },
);

test(
  'flow-style documents that start with {: kubectl reads them as JSON and refuses; the editor says so where it stops, and the file is not judged',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const editor = await startEditor(t, {
      name: 'flow-style-refused',
      ...prepared,
      files: {
        'flow.yaml':
          '{apiVersion: v1, kind: ConfigMap, metadata: {name: flow-a}}\n---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: flow-b}}\n',
      },
      settings: settingsFor(cluster.kubeconfig, 'admin'),
    });
    await editor.openFile('flow.yaml');
    const problems = await editor.waitForProblems(
      (ps) =>
        ours(ps).some((p) => p.severity === 'error' && /looking for beginning of object key string/.test(p.message)),
      "kubectl's JSON refusal",
      120_000,
    );
    assert.equal(ours(problems).find((p) => /looking for beginning/.test(p.message))!.line, 1);
    await editor.waitForStatus(
      (item) => item.icons.includes('warning') && / not judged$/.test(item.text),
      'the status bar: this file is not judged',
    );
    await editor.screenshot('flow-style-refused');
  },
);

function editorScratch(): string {
  return fs.realpathSync(process.env.TMPDIR ?? '/tmp');
}

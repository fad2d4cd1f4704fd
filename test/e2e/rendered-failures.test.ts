// A chart that cannot be judged says so where the user looks, in a real VS Code: a values file helm
// refuses is an error on the line helm names and on Chart.yaml, and the status bar is not ✓ over it;
// with helm not found, each open file of the chart carries the reason (with the setting that names
// the binary), and the status bar says the file was not judged.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { chartFiles } from '../support/charts';
import { requireCluster } from '../support/env';
import { connect, freshNamespace } from '../support/seed';
import { requireTool } from '../tools/tools';
import { requireEditor, startEditor, type Problem } from './harness';
import { settingsFor } from './scenarios';

const ours = (ps: Problem[]) => ps.filter((p) => p.source === 'kube-conflict-hints');

/** `helm create shop` as the repository holds it: path in the workspace → text. */
function scaffold(t: TestContext, helm: string): Record<string, string> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-e2e-helm-failures-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const home = path.join(scratch, '.home');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
  };
  assert.equal(spawnSync(helm, ['create', 'shop'], { cwd: scratch, env }).status, 0);
  const files = chartFiles(path.join(scratch, 'shop'), 'shop');
  return files;
}

test(
  'a values file helm refuses: the error on its line and on Chart.yaml, and the status bar says the file is not judged',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    const prepared = cluster && helm && requireEditor(t);
    if (!cluster || !helm || !prepared) return;
    const namespace = await freshNamespace(connect('admin', cluster.kubeconfig), 'e2e-helm-values');
    const files = scaffold(t, helm);
    // A list left open at the end of values.yaml: helm names the line where it stops.
    files['shop/values.yaml'] = `${files['shop/values.yaml']}\nextra: [\n`;
    const editor = await startEditor(t, {
      name: 'rendered-values-refused',
      ...prepared,
      files,
      settings: settingsFor(cluster.kubeconfig, 'admin', {
        'kubeConflictHints.helmPath': helm,
        'kubeConflictHints.helmRelease': 'web',
        'kubeConflictHints.namespace': namespace,
      }),
    });
    await editor.openFile('shop/values.yaml');
    const onValues = await editor.waitForProblems(
      (ps) => ours(ps).some((p) => p.severity === 'error' && /cannot load values\.yaml/.test(p.message)),
      'the values error on values.yaml',
      120_000,
    );
    const error = ours(onValues).find((p) => /cannot load values\.yaml/.test(p.message))!;
    const named = Number(/yaml: line (\d+)/.exec(error.message)?.[1]);
    assert.equal(error.line, named, `on the line helm names: ${error.message}`);
    const status = await editor.waitForStatus(
      (item) => item.icons.includes('warning') && / not judged$/.test(item.text),
      'the status bar: this file is not judged',
    );
    assert.ok(status.warning, 'with the warning background');
    assert.match(await editor.statusBarTooltip(), /This file: The source does not render: cannot render release web/);
    await editor.screenshot('values-refused');

    await editor.openFile('shop/Chart.yaml');
    await editor.waitForProblems(
      (ps) => ours(ps).some((p) => p.line === 1 && /cannot load values\.yaml/.test(p.message)),
      'the same error on Chart.yaml, line 1',
    );
  },
);

test(
  'helm not found: each open file of the chart says so and names the setting; the status bar is not ✓',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    const prepared = cluster && helm && requireEditor(t);
    if (!cluster || !helm || !prepared) return;
    const files = scaffold(t, helm);
    const editor = await startEditor(t, {
      name: 'rendered-helm-missing',
      ...prepared,
      files,
      settings: settingsFor(cluster.kubeconfig, 'admin', { 'kubeConflictHints.helmPath': '/nonexistent/helm' }),
    });
    await editor.openFile('shop/templates/deployment.yaml');
    const problems = await editor.waitForProblems(
      (ps) => ours(ps).some((p) => p.severity === 'warning' && /kubeConflictHints\.helmPath/.test(p.message)),
      'the missing helm on the template',
      120_000,
    );
    assert.deepEqual(
      ours(problems).map((p) => [p.severity, p.line]),
      [['warning', 1]],
      JSON.stringify(problems),
    );
    assert.match(ours(problems)[0]!.message, /\/nonexistent\/helm/);
    await editor.waitForStatus(
      (item) => item.icons.includes('warning') && / not judged$/.test(item.text),
      'the status bar: this file is not judged',
    );
    await editor.screenshot('helm-missing');
  },
);

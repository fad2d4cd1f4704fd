// A chart installed in another namespace than the context's, in a real VS Code: the user has named
// neither release nor namespace, and the conflict still shows, found from the cluster's own word;
// the hover names the release and its namespace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chartFiles, chartInstalledElsewhere } from '../support/charts';
import { requireCluster } from '../support/env';
import { requireTool } from '../tools/tools';
import { positionOfKey, requireEditor, startEditor, type Problem } from './harness';
import { settingsFor } from './scenarios';

test(
  "a release in another namespace than the context's: its conflict appears with no setting touched, and the hover names the namespace",
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    const prepared = cluster && helm && requireEditor(t);
    if (!cluster || !helm || !prepared) return;
    const { chart, name, namespace, install } = await chartInstalledElsewhere(cluster, helm, 'e2e-release-found');
    const isConflict = (p: Problem) =>
      p.source === 'kube-conflict-hints' &&
      p.severity === 'error' &&
      new RegExp(`release web in namespace ${namespace}`).test(p.message);

    // The chart's files as the user's repository holds them; only helm's path is set (a user setting).
    const files = chartFiles(chart, name);
    const editor = await startEditor(t, {
      name: 'release-found',
      ...prepared,
      files,
      settings: settingsFor(cluster.kubeconfig, 'admin', { 'kubeConflictHints.helmPath': helm }),
    });
    const template = files[`${name}/templates/deployment.yaml`]!;
    const at = positionOfKey(template, 'replicas');
    await editor.openFile(`${name}/templates/deployment.yaml`);
    const problems = await editor.waitForProblems(
      (ps) => ps.some((p) => isConflict(p) && p.line === at.line),
      `the autoscaler conflict, in namespace ${namespace}, on line ${at.line}`,
      180_000,
    );
    assert.ok(problems.some((p) => /kube-controller-manager/.test(p.message)));
    const hover = await editor.hover(
      { line: at.line, column: at.column + 2 },
      { expect: new RegExp(`release web in namespace ${namespace}`) },
    );
    assert.match(hover, /kube-controller-manager/);
    await editor.screenshot('release-found-hover');

    // Installed again elsewhere, as `api` scaled to 7: after *Refresh from the cluster* the editor
    // asks which release the chart's files describe; the answer is followed.
    const second = await install('api', 7);
    await editor.runCommand('Kube Conflict Hints: Refresh from the cluster');
    await editor.answerQuickPick('api', `the quick pick of the releases, with api in ${second}`);
    const isApi = (p: Problem) =>
      p.source === 'kube-conflict-hints' &&
      p.severity === 'error' &&
      new RegExp(`release api in namespace ${second}`).test(p.message);
    await editor.waitForProblems(
      (ps) => ps.some((p) => isApi(p) && p.line === at.line) && !ps.some(isConflict),
      `the conflict of release api in ${second}`,
      180_000,
    );
    await editor.screenshot('release-chosen');
  },
);

// `kube-conflict-hints check` on objects whose managers wrote through another apiVersion (the
// autoscaling/v1 and v2 HorizontalPodAutoscaler histories of the differential corpus): the check
// names every conflict the server names, each in the version its manager wrote at, as the editor
// does. The truth is the server's own answer to a dry-run apply of the manifest, sent as kubectl
// sends it (JSON of the object).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { loadScenarios, withNamespace } from '../differential/scenario';
import { replayHistory } from '../differential/replay';
import { sendRaw, serverStatus } from '../differential/oracle';
import { requireCluster } from '../support/env';
import { connect, freshNamespace, objectPath, type KubeObject } from '../support/seed';
import { runCli, scratchDir, writeFiles } from './cli-process';

const cases = loadScenarios().filter(
  (s) => s.file.endsWith('versions.yaml') && s.name.startsWith('hpa ') && s.server === 'fieldConflict' && !s.excluded,
);

test('harness: the HPA histories at other versions are in the corpus', () => {
  assert.ok(cases.length >= 2, `${cases.length} HPA scenarios with a field conflict in versions.yaml`);
});

for (const scenario of cases) {
  test(`check names the server's conflicts: ${scenario.name}`, async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'mgr-versions');
    const text = withNamespace(scenario.manifest, namespace);
    const object = parseYaml(text) as KubeObject;
    await replayHistory(admin, scenario.history, object, namespace);

    const answer = await sendRaw(
      admin,
      'PATCH',
      await objectPath(admin, object),
      { dryRun: 'All', fieldManager: 'kubectl', force: 'false', fieldValidation: 'Strict' },
      'application/apply-patch+yaml',
      JSON.stringify(object),
    );
    const server = serverStatus(answer);
    assert.ok(
      server && server.causes.length > 0,
      `the history no longer provokes a conflict: ${JSON.stringify(server ?? 'accepted')}`,
    );

    const dir = scratchDir('manager-versions');
    writeFiles(dir, { 'hpa.yaml': text });
    const run = await runCli([
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--format',
      'json',
      dir,
    ]);
    assert.equal(run.status, 1, run.stderr);
    const report = JSON.parse(run.stdout) as { findings: { code: string; serverMessage?: string }[] };
    const conflicts = report.findings.filter((f) => f.code === 'field-conflict');
    // Each conflict finding carries the server's whole message, as the prediction writes it.
    assert.deepEqual([...new Set(conflicts.map((f) => f.serverMessage))], [server.message], "the server's words");
    assert.equal(
      conflicts.length,
      server.causes.length,
      `one finding per conflict the server names: ${JSON.stringify(server.causes)}`,
    );
  });
}

// The pipeline users write: `kubectl kustomize overlay | kube-conflict-hints check -`. The overlay
// (namePrefix, namespace, a strategic-merge patch) was applied server-side as `kubectl` and an
// autoscaler has since scaled it: check, reading the rendered stream from a real pipe, finds the
// replicas conflict on the rendered object, on the line of the rendered text that sets it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, baseDeploymentText, connect, freshNamespace, objectOf, scale, type KubeObject } from '../support/seed';
import { lineOf, runCli, scratchDir, writeFiles } from './cli-process';

test('kubectl kustomize overlay | check - finds the conflict an autoscaler left on the rendered Deployment', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'cli-kustomize');
  const dir = scratchDir('kustomize-pipe');
  writeFiles(dir, {
    'base/kustomization.yaml': 'resources:\n- deployment.yaml\n- settings.yaml\n',
    'base/deployment.yaml': baseDeploymentText(1),
    'base/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  retries: "3"\n',
    'overlays/prod/kustomization.yaml': `namePrefix: prod-\nnamespace: ${namespace}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n`,
    'overlays/prod/replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n',
  });
  const overlay = path.join(dir, 'overlays', 'prod');
  const kubectlEnv = { PATH: process.env.PATH ?? '', HOME: dir };

  // The history: the rendered overlay applied server-side (kubectl kustomize | kubectl apply
  // --server-side -f -), then the autoscaler scales the Deployment to 5.
  const rendered = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', env: kubectlEnv });
  assert.equal(rendered.status, 0, rendered.stderr);
  const objects = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as KubeObject);
  assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort(), [
    `ConfigMap/${namespace}/prod-settings`,
    `Deployment/${namespace}/prod-web`,
  ]);
  for (const o of objects) objectOf(await apply(conn, 'kubectl', o), `apply ${o.metadata.name}`);
  objectOf(
    await scale(
      conn,
      'kube-controller-manager',
      objects.find((o) => o.kind === 'Deployment')!,
      5,
    ),
    'scale prod-web',
  );

  // The pipe itself: kubectl's stdout is check's stdin.
  const kustomize = spawn('kubectl', ['kustomize', overlay], { env: kubectlEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  const run = await runCli(
    ['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--format', 'json', '-'],
    { stdin: kustomize.stdout },
  );
  assert.equal(run.status, 1, `${run.stdout}${run.stderr}`);
  const report = JSON.parse(run.stdout) as {
    findings: { file: string; code: string; message: string; range: { start: { line: number } } }[];
    objects: { file: string; object?: { kind: string; name: string; namespace?: string } }[];
  };
  assert.deepEqual(
    report.objects.map((o) => `${o.file} ${o.object?.kind}/${o.object?.namespace}/${o.object?.name}`).sort(),
    [`<stdin> ConfigMap/${namespace}/prod-settings`, `<stdin> Deployment/${namespace}/prod-web`],
  );
  const conflicts = report.findings.filter((f) => f.code === 'field-conflict');
  assert.equal(conflicts.length, 1, JSON.stringify(report.findings, null, 2));
  assert.equal(conflicts[0]!.file, '<stdin>');
  assert.match(conflicts[0]!.message, /^\.spec\.replicas is managed by "kube-controller-manager"/);
  assert.equal(
    conflicts[0]!.range.start.line + 1,
    lineOf(rendered.stdout, /^ {2}replicas: 3$/),
    'on the rendered replicas: line',
  );
});

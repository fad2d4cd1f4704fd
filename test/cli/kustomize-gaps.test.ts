// Overlays on the command line where one thing goes wrong or the user names only a part: an overlay
// the tool refuses is that overlay's error while the others are still checked; a base named alone is
// judged through the overlays in sibling folders (bounded search under the current directory or
// --search-root); --verify dry-runs the rendered objects; an object whose findings land in several
// files is one object in the summary. Real kustomize, real API server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import {
  apply,
  autoscale,
  baseDeploymentText,
  connect,
  freshNamespace,
  kubectlEdit,
  type KubeObject,
  objectOf,
} from '../support/seed';
import { requireTool } from '../tools/tools';
import { runCli, scratchDir, writeFiles } from './cli-process';

interface JsonFinding {
  file: string;
  code: string;
  path?: string;
  message: string;
  range: { start: { line: number } };
  rendered?: { target: string };
}

const deployment = baseDeploymentText(2);

async function repository(t: Parameters<typeof requireCluster>[0]) {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return undefined;
  const conn = connect('admin', cluster.kubeconfig);
  const staging = await freshNamespace(conn, 'kg-staging');
  const production = await freshNamespace(conn, 'kg-production');
  const repo = scratchDir('kustomize-gaps');
  writeFiles(repo, {
    'base/kustomization.yaml': 'resources:\n- deployment.yaml\n',
    'base/deployment.yaml': deployment,
    'overlays/staging/kustomization.yaml': `namespace: ${staging}\nresources:\n- ../../base\n`,
    'overlays/production/kustomization.yaml': `namespace: ${production}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n`,
    'overlays/production/replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n',
    // kustomize refuses this one: the patch it names is not there.
    'overlays/broken/kustomization.yaml': `namespace: ${staging}\nresources:\n- ../../base\npatches:\n- path: missing.yaml\n`,
  });
  // Both overlays applied; the autoscaler scales both; someone edits production's image.
  const applied: KubeObject[] = [];
  for (const overlay of ['staging', 'production']) {
    const out: { status: number | null; stdout: string; stderr: string } = spawnSync(
      kustomize,
      ['build', `overlays/${overlay}`],
      { cwd: repo, encoding: 'utf8' },
    );
    assert.equal(out.status, 0, out.stderr);
    for (const d of parseAllDocuments(out.stdout)) {
      const o = d.toJS() as KubeObject;
      objectOf(await apply(conn, 'kubectl', o), `apply ${overlay}`);
      applied.push(o);
    }
  }
  for (const o of applied) await autoscale(conn, o, 5);
  objectOf(
    await kubectlEdit(conn, applied[1]!, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } },
    }),
    'edit',
  );
  const base = ['--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--kustomize-binary', kustomize];
  return { repo, base };
}

test('a base named alone is judged through the overlays beside it; the overlay kustomize refuses is one error and the others are still checked', async (t) => {
  const r = await repository(t);
  if (!r) return;
  const run = await runCli(['check', ...r.base, '--format', 'json', 'base/deployment.yaml'], { cwd: r.repo });
  assert.equal(run.status, 1, run.stderr);
  const findings = (JSON.parse(run.stdout) as { findings: JsonFinding[] }).findings;
  const at = (f: JsonFinding) =>
    `${f.file}:${f.range.start.line + 1} ${f.code} ${f.path ?? ''} ${f.rendered?.target ?? ''}`.trim();
  const errors = findings
    .filter((f) => f.code !== 'exists')
    .map(at)
    .sort();
  assert.deepEqual(
    errors,
    [
      // staging sets replicas nowhere but in the base: the autoscaler's conflict is on the base's line.
      'base/deployment.yaml:6 field-conflict .spec.replicas overlay staging',
      // production's image comes from the base; its replicas from its patch, which was not named.
      'base/deployment.yaml:17 field-conflict .spec.template.spec.containers[name="app"].image overlay production',
      'overlays/broken/kustomization.yaml:1 render-failed',
    ].sort(),
    JSON.stringify(findings, null, 2),
  );
  const broken = findings.find((f) => f.code === 'render-failed')!;
  assert.match(broken.message, /^cannot render overlay broken: .*missing\.yaml/);

  // From inside base/, the overlays are outside the default search root; --search-root finds them.
  const inside = await runCli(['check', ...r.base, '--format', 'json', 'deployment.yaml'], {
    cwd: path.join(r.repo, 'base'),
  });
  assert.ok(
    !(JSON.parse(inside.stdout) as { findings: JsonFinding[] }).findings.some(
      (f) => f.rendered?.target === 'overlay staging',
    ),
    inside.stdout,
  );
  const rooted = await runCli(['check', ...r.base, '--format', 'json', '--search-root', '..', 'deployment.yaml'], {
    cwd: path.join(r.repo, 'base'),
  });
  const rootedAt = (JSON.parse(rooted.stdout) as { findings: JsonFinding[] }).findings
    .filter((f) => f.code === 'field-conflict')
    .map(at)
    .sort();
  assert.deepEqual(
    rootedAt,
    [
      'deployment.yaml:6 field-conflict .spec.replicas overlay staging',
      'deployment.yaml:17 field-conflict .spec.template.spec.containers[name="app"].image overlay production',
    ].sort(),
  );
  const missing = await runCli(['check', ...r.base, '--search-root', 'nowhere', 'deployment.yaml'], {
    cwd: path.join(r.repo, 'base'),
  });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--search-root nowhere: not a folder/);
});

test('-k: one object is counted once though its findings land in two files; --verify dry-runs the rendered objects', async (t) => {
  const r = await repository(t);
  if (!r) return;
  const run = await runCli(['check', ...r.base, '--verify', '-k', 'overlays/production'], { cwd: r.repo });
  assert.equal(run.status, 1, run.stderr);
  // replicas on the patch, the image on the base: one Deployment, in two files.
  assert.match(run.stdout, /^overlays\/production\/replicas\.yaml:6:\d+ error field-conflict \.spec\.replicas /m);
  assert.match(
    run.stdout,
    /^base\/deployment\.yaml:17:\d+ error field-conflict \.spec\.template\.spec\.containers\[name="app"\]\.image /m,
  );
  assert.match(run.stdout, / — 1 object judged in 1 file, serverSide as "kubectl"/);
  // The server's dry run of what the overlay renders agrees with the prediction, and says so.
  assert.match(run.stdout, /deployments\.apps\/web .*in overlay production — the dry run agrees/);
  assert.doesNotMatch(run.stdout, /dry-run-differs/);
});

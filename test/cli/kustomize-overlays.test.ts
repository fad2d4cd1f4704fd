// Overlays checked as they would be applied: `check` builds each kustomization with the user's
// kustomize, predicts on the rendered objects against the real API server, and puts each finding on
// the source line that sets the field — a patch, the base's resource file, or the kustomization's own
// entry (replicas:, images:). A base used by two overlays is judged per overlay, and the message
// names the overlay. Without the tool: one line, exit 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, kubectlEdit, type KubeObject, objectOf } from '../support/seed';
import { requireTool } from '../tools/tools';
import { lineOf, runCli, scratchDir, writeFiles } from './cli-process';

interface JsonFinding {
  file: string;
  code: string;
  severity: string;
  message: string;
  path?: string;
  range: { start: { line: number } };
  rendered?: { target: string; root: string; index: number };
}

test('check on a folder of overlays: each conflict on the line that sets the field, per overlay; -k builds one overlay', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const conn = connect('admin', cluster.kubeconfig);
  const staging = await freshNamespace(conn, 'k-staging');
  const production = await freshNamespace(conn, 'k-production');
  const repo = scratchDir('kustomize-overlays');
  const files: Record<string, string> = {
    'base/kustomization.yaml':
      'resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: settings\n  literals:\n  - retries=3\n',
    'base/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web',
      'spec:',
      '  replicas: 1',
      '  selector:',
      '    matchLabels:',
      '      app: web',
      '  template:',
      '    metadata:',
      '      labels:',
      '        app: web',
      '    spec:',
      '      containers:',
      '      - name: app',
      '        image: nginx:1.25',
      '      - name: sidecar',
      '        image: busybox:1.36',
      '',
    ].join('\n'),
    // staging: a strategic-merge patch sets the replicas, a JSON 6902 patch the sidecar's image.
    'overlays/staging/kustomization.yaml': `namespace: ${staging}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n- path: sidecar.yaml\n  target:\n    kind: Deployment\n    name: web\n`,
    'overlays/staging/replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
    'overlays/staging/sidecar.yaml':
      '- op: replace\n  path: /spec/template/spec/containers/1/image\n  value: busybox:1.37\n',
    // production: namePrefix and namespace, replicas: and images: entries, a component's annotation.
    'overlays/production/kustomization.yaml': `namePrefix: prod-\nnamespace: ${production}\nresources:\n- ../../base\ncomponents:\n- ../../components/team\nreplicas:\n- name: web\n  count: 4\nimages:\n- name: nginx\n  newTag: "1.27"\n`,
    'components/team/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  team: shop\n',
  };
  writeFiles(repo, files);

  // The history: both overlays rendered and applied server-side as kubectl; then an autoscaler scales
  // each Deployment, someone `kubectl edit`s production's image, and another tool takes staging's sidecar image.
  const applied: Record<string, KubeObject[]> = {};
  for (const overlay of ['staging', 'production']) {
    const out: { status: number | null; stdout: string; stderr: string } = spawnSync(
      kustomize,
      ['build', `overlays/${overlay}`],
      { cwd: repo, encoding: 'utf8' },
    );
    assert.equal(out.status, 0, out.stderr);
    applied[overlay] = parseAllDocuments(out.stdout).map((d) => d.toJS() as KubeObject);
    for (const o of applied[overlay]!) objectOf(await apply(conn, 'kubectl', o), `apply ${o.metadata.name}`);
  }
  const deployment = (overlay: string) => applied[overlay]!.find((o) => o.kind === 'Deployment')!;
  await autoscale(conn, deployment('staging'), 5);
  await autoscale(conn, deployment('production'), 6);
  objectOf(
    await kubectlEdit(conn, deployment('production'), {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.28' }] } } },
    }),
    'edit production',
  );
  objectOf(
    await apply(
      conn,
      'argocd-controller',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: staging },
        spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1.38' }] } } },
      } as KubeObject,
      { force: true },
    ),
    'argocd takes the sidecar image',
  );

  const env = {};
  const run = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--kustomize-binary',
      kustomize,
      '--format',
      'json',
      '.',
    ],
    { cwd: repo, env },
  );
  assert.equal(run.status, 1, `${run.stdout}${run.stderr}`);
  const report = JSON.parse(run.stdout) as { findings: JsonFinding[] };
  const at = (f: JsonFinding) => `${f.file}:${f.range.start.line + 1} ${f.path} (${f.rendered?.target})`;
  const line = (file: string, pattern: RegExp) => lineOf(files[file]!, pattern);
  const expected = [
    {
      why: 'staging: the autoscaler owns replicas, which the strategic-merge patch sets',
      where: `overlays/staging/replicas.yaml:${line('overlays/staging/replicas.yaml', /replicas: 2/)} .spec.replicas (overlay staging)`,
    },
    {
      why: 'staging: argocd owns the sidecar image, which the JSON 6902 patch sets',
      where: `overlays/staging/sidecar.yaml:${line('overlays/staging/sidecar.yaml', /value: busybox/)} .spec.template.spec.containers[name="sidecar"].image (overlay staging)`,
    },
    {
      why: 'production: the autoscaler owns replicas, which the replicas: entry sets',
      where: `overlays/production/kustomization.yaml:${line('overlays/production/kustomization.yaml', /count: 4/)} .spec.replicas (overlay production)`,
    },
    {
      why: 'production: kubectl edit owns the image, which the images: entry sets',
      where: `overlays/production/kustomization.yaml:${line('overlays/production/kustomization.yaml', /newTag/)} .spec.template.spec.containers[name="app"].image (overlay production)`,
    },
  ];
  const conflicts = report.findings.filter((f) => f.code === 'field-conflict');
  assert.deepEqual(conflicts.map(at).sort(), expected.map((e) => e.where).sort(), JSON.stringify(conflicts, null, 2));
  for (const c of conflicts)
    assert.match(c.message, / \(in overlay (staging|production)\)$/, 'the message names the overlay');
  // The base sets neither field as rendered: nothing false lands on it.
  assert.deepEqual(
    report.findings.filter((f) => f.file.startsWith('base/') && f.severity !== 'information'),
    [],
  );
  assert.deepEqual(
    report.findings.filter((f) => ['yaml-syntax', 'kind-not-served', 'would-delete'].includes(f.code)),
    [],
  );

  // -k builds the one overlay named, in text.
  const one = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--kustomize-binary',
      kustomize,
      '-k',
      'overlays/staging',
    ],
    { cwd: repo, env },
  );
  assert.equal(one.status, 1, one.stderr);
  assert.match(
    one.stdout,
    new RegExp(
      `^overlays/staging/replicas\\.yaml:6:13 error field-conflict \\.spec\\.replicas is managed by "kube-controller-manager"`,
      'm',
    ),
  );
  assert.doesNotMatch(one.stdout, /overlay production/);

  // SARIF: the source file, with the rendered object as the related location.
  const sarif = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--kustomize-binary',
      kustomize,
      '--format',
      'sarif',
      '-k',
      'overlays/staging',
    ],
    { cwd: repo, env },
  );
  const results = (
    JSON.parse(sarif.stdout) as {
      runs: {
        results: {
          ruleId: string;
          locations: { physicalLocation: { artifactLocation: { uri: string } } }[];
          relatedLocations?: { physicalLocation: { artifactLocation: { uri: string } } }[];
        }[];
      }[];
    }
  ).runs[0]!.results;
  const replicas = results.find(
    (r) =>
      r.ruleId === 'field-conflict' &&
      r.locations[0]!.physicalLocation.artifactLocation.uri === 'overlays/staging/replicas.yaml',
  );
  assert.ok(replicas, JSON.stringify(results, null, 2));
  assert.equal(replicas.relatedLocations?.[0]?.physicalLocation.artifactLocation.uri, 'overlays/staging');

  // Without the tool: one line, exit 2.
  const missing = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--kustomize-binary',
      path.join(repo, 'no-kustomize'),
      '-k',
      'overlays/staging',
    ],
    { cwd: repo, env },
  );
  assert.equal(missing.status, 2);
  assert.equal(missing.stdout, '');
  assert.match(
    missing.stderr,
    /^kube-conflict-hints: cannot render overlay staging: .*no-kustomize is not installed or cannot be run.*\n$/,
  );
});

// `check` on a repository that holds a Helm chart (as `helm create` scaffolds it) and Kustomize
// overlays: templates, values, patches and kustomization files are rendered sources, not manifests.
// None of them may get a yaml-syntax, kind-not-served or would-delete finding from its own text —
// the noise a chart or overlay user used to get. The overlay is rendered and checked as it would be
// applied; chart files (and a component no overlay uses) are named as "not checked yet: rendered
// source" rather than passed over in silence. The plain manifest beside them is still checked.
//
// The history makes the old noise real: the overlay's Deployment was applied server-side as
// kubectl with every field, so reading the replicas patch as a whole object would predict the
// deletion of every other field.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, connect, freshNamespace, objectOf, type KubeObject } from '../support/seed';
import { requireTool } from '../tools/tools';
import { runCli, scratchDir, writeFiles } from './cli-process';

test('check on a folder with a chart and overlays: no syntax, kind or deletion noise on rendered sources, each named as not checked yet', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'cli-rendered');
  const repo = scratchDir('rendered-sources');
  const home = path.join(repo, '.home');
  fs.mkdirSync(path.join(repo, 'charts'));
  const created = spawnSync(helm, ['create', 'charts/shop'], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: home, HELM_CACHE_HOME: `${home}/cache`, HELM_CONFIG_HOME: `${home}/config`, HELM_DATA_HOME: `${home}/data` },
  });
  assert.equal(created.status, 0, created.stderr);
  writeFiles(repo, {
    'deploy/base/kustomization.yaml': 'resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: settings\n  files:\n  - settings.yaml\n',
    'deploy/base/deployment.yaml': [
      'apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: web', '  labels:', '    app: web', 'spec:', '  replicas: 1', '  selector:',
      '    matchLabels:', '      app: web', '  template:', '    metadata:', '      labels:', '        app: web', '    spec:', '      containers:',
      '      - name: app', '        image: nginx:1.25', '',
    ].join('\n'),
    'deploy/base/settings.yaml': 'retries: 3\n',
    'deploy/overlays/staging/kustomization.yaml': `namespace: ${namespace}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n- path: image.yaml\n  target:\n    kind: Deployment\n    name: web\n`,
    'deploy/overlays/staging/replicas.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
    'deploy/overlays/staging/image.yaml': '- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: nginx:1.26\n',
    'deploy/components/audit/kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- audit.yaml\n',
    'deploy/components/audit/audit.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audit\ndata:\n  level: full\n',
    'k8s/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain-settings\n  namespace: ${namespace}\ndata:\n  color: blue\n`,
  });

  // The overlay as the cluster has it: rendered and applied server-side as kubectl.
  const rendered = spawnSync('kubectl', ['kustomize', 'deploy/overlays/staging'], { cwd: repo, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home } });
  assert.equal(rendered.status, 0, rendered.stderr);
  for (const doc of parseAllDocuments(rendered.stdout)) {
    const o = doc.toJS() as KubeObject;
    objectOf(await apply(conn, 'kubectl', o), `apply ${o.kind} ${o.metadata.name}`);
  }

  const run = await runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--namespace', namespace, '--format', 'json', '.'], { cwd: repo });
  assert.ok(run.status === 0 || run.status === 1, `${run.status}: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as {
    findings: { file: string; code: string; message: string }[];
    objects: { file: string; object?: { kind: string; name: string }; notes: string[] }[];
  };

  const renderedSources = [
    'charts/shop/Chart.yaml',
    'charts/shop/values.yaml',
    ...fs.readdirSync(path.join(repo, 'charts/shop/templates'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => `charts/shop/templates/${f.split(path.sep).join('/')}`),
    'deploy/base/kustomization.yaml',
    'deploy/base/deployment.yaml',
    'deploy/base/settings.yaml',
    'deploy/overlays/staging/kustomization.yaml',
    'deploy/overlays/staging/replicas.yaml',
    'deploy/overlays/staging/image.yaml',
    'deploy/components/audit/kustomization.yaml',
    'deploy/components/audit/audit.yaml',
  ].sort();
  assert.ok(renderedSources.includes('charts/shop/templates/deployment.yaml') && renderedSources.length > 15, renderedSources.join(', '));

  const noise = report.findings.filter((f) => ['yaml-syntax', 'kind-not-served', 'would-delete'].includes(f.code));
  assert.deepEqual(noise, [], 'no finding from the text of a rendered source');
  // The overlay was applied as it renders: nothing but information (which objects exist) on its sources.
  assert.deepEqual(report.findings.filter((f) => renderedSources.includes(f.file) && f.code !== 'exists'), [], 'no finding but existence on a rendered source');

  const overlaySources = ['deploy/base/kustomization.yaml', 'deploy/base/deployment.yaml', 'deploy/base/settings.yaml', 'deploy/overlays/staging/kustomization.yaml', 'deploy/overlays/staging/replicas.yaml', 'deploy/overlays/staging/image.yaml'];
  const named = report.objects.filter((o) => o.notes.some((n) => n.startsWith('not checked yet: rendered source')));
  assert.deepEqual(named.map((o) => o.file).sort(), renderedSources.filter((f) => !overlaySources.includes(f)), 'each source that is not rendered is named, once');
  const note = (file: string) => report.objects.find((o) => o.file === file)?.notes.join(' ');
  assert.equal(note('charts/shop/templates/deployment.yaml'), 'not checked yet: rendered source (a template of the Helm chart charts/shop/)');
  assert.equal(note('charts/shop/values.yaml'), 'not checked yet: rendered source (a values file of the Helm chart charts/shop/)');
  assert.equal(note('deploy/components/audit/kustomization.yaml'), 'not checked yet: rendered source (a kustomization)');

  // The overlay's objects are checked where they come from; the hand-written manifest as before.
  assert.deepEqual(report.objects.filter((o) => o.object).map((o) => `${o.file} ${o.object!.kind}/${o.object!.name}`).sort(), [
    'deploy/base/deployment.yaml Deployment/web',
    `deploy/base/kustomization.yaml ConfigMap/${/name: (settings-\w+)/.exec(rendered.stdout)![1]}`,
    'k8s/settings.yaml ConfigMap/plain-settings',
  ].sort());

  // In text, the notes say the same; a template named on its own is recognised through its Chart.yaml.
  const alone = await runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--namespace', namespace, 'charts/shop/templates/deployment.yaml'], { cwd: repo });
  assert.equal(alone.status, 0, alone.stderr);
  assert.equal(alone.stdout.split('\n')[1], 'note: not checked yet: rendered source (a template of the Helm chart charts/shop/)');
});

// `check` on a repository that holds a Helm chart (as `helm create` scaffolds it) and Kustomize
// overlays: templates, values, patches and kustomization files are rendered sources, not manifests.
// None of them may get a yaml-syntax, kind-not-served or would-delete finding from its own text —
// the noise a chart or overlay user used to get. The overlay is rendered and checked as it would be
// applied. The chart, not named with --helm, is rendered as `helm install` would with no options
// (release: the chart's name, the check's namespace, values.yaml) when helm is installed; without
// helm it is one tool-missing warning on its Chart.yaml (not a stop: the plain manifest beside it is
// still checked). A component no overlay uses is named as "not checked yet: rendered source" rather
// than passed over in silence; both are listed as not judged, and the check does not exit 0.
//
// The history makes the old noise real: the overlay's Deployment was applied server-side as
// kubectl with every field, so reading the replicas patch as a whole object would predict the
// deletion of every other field; the chart was installed by the real Helm 4 as release shop, so an
// object checked without the metadata Helm adds would be said to lose it.
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

test('check on a folder with a chart and overlays: no syntax, kind or deletion noise on rendered sources; the chart rendered with helm, one note without it, the same with --helm', async (t) => {
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
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      HELM_CACHE_HOME: `${home}/cache`,
      HELM_CONFIG_HOME: `${home}/config`,
      HELM_DATA_HOME: `${home}/data`,
    },
  });
  assert.equal(created.status, 0, created.stderr);
  writeFiles(repo, {
    'deploy/base/kustomization.yaml':
      'resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: settings\n  files:\n  - settings.yaml\n',
    'deploy/base/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web',
      '  labels:',
      '    app: web',
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
      '',
    ].join('\n'),
    'deploy/base/settings.yaml': 'retries: 3\n',
    'deploy/overlays/staging/kustomization.yaml': `namespace: ${namespace}\nresources:\n- ../../base\npatches:\n- path: replicas.yaml\n- path: image.yaml\n  target:\n    kind: Deployment\n    name: web\n`,
    'deploy/overlays/staging/replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
    'deploy/overlays/staging/image.yaml':
      '- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: nginx:1.26\n',
    'deploy/components/audit/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- audit.yaml\n',
    'deploy/components/audit/audit.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audit\ndata:\n  level: full\n',
    'k8s/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain-settings\n  namespace: ${namespace}\ndata:\n  color: blue\n`,
  });

  // The overlay as the cluster has it: rendered and applied server-side as kubectl.
  const rendered = spawnSync('kubectl', ['kustomize', 'deploy/overlays/staging'], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  assert.equal(rendered.status, 0, rendered.stderr);
  for (const doc of parseAllDocuments(rendered.stdout)) {
    const o = doc.toJS() as KubeObject;
    objectOf(await apply(conn, 'kubectl', o), `apply ${o.kind} ${o.metadata.name}`);
  }

  const helmDir = path.dirname(helm);
  const pathWithoutHelm = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => d !== '' && !fs.existsSync(path.join(d, 'helm')))
    .join(path.delimiter);
  const installed = spawnSync(
    helm,
    ['install', 'shop', 'charts/shop', '--kube-context', 'admin', '--namespace', namespace],
    {
      cwd: repo,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        HELM_CACHE_HOME: `${home}/cache`,
        HELM_CONFIG_HOME: `${home}/config`,
        HELM_DATA_HOME: `${home}/data`,
        KUBECONFIG: cluster.kubeconfig,
      },
    },
  );
  assert.equal(installed.status, 0, installed.stderr);

  const renderedSources = [
    'charts/shop/Chart.yaml',
    'charts/shop/values.yaml',
    ...fs
      .readdirSync(path.join(repo, 'charts/shop/templates'), { recursive: true, encoding: 'utf8' })
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
  assert.ok(
    renderedSources.includes('charts/shop/templates/deployment.yaml') && renderedSources.length > 15,
    renderedSources.join(', '),
  );
  const chartSources = renderedSources.filter((f) => f.startsWith('charts/'));
  const generated = `deploy/base/kustomization.yaml ConfigMap/${/name: (settings-\w+)/.exec(rendered.stdout)![1]}`;
  const helmChart = ['Deployment/shop', 'Service/shop', 'ServiceAccount/shop'];

  // The same folder three ways: without helm, with helm on PATH, and with the chart named by --helm.
  const ways = [
    { how: 'without helm', args: [] as string[], env: { PATH: pathWithoutHelm } },
    {
      how: 'with helm installed',
      args: [] as string[],
      env: { PATH: `${helmDir}${path.delimiter}${pathWithoutHelm}` },
    },
    { how: 'with --helm', args: ['--helm', 'charts/shop', '--helm-binary', helm], env: { PATH: pathWithoutHelm } },
  ];
  for (const way of ways) {
    const run = await runCli(
      [
        'check',
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        '--namespace',
        namespace,
        '--format',
        'json',
        ...way.args,
        '.',
      ],
      { cwd: repo, env: way.env },
    );
    assert.ok(run.status === 0 || run.status === 1, `${way.how}: ${run.status}: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as {
      findings: { file: string; code: string; message: string }[];
      objects: { file: string; object?: { kind: string; name: string }; notes: string[] }[];
      notJudged: { file: string; code?: string; reason: string }[];
    };
    const noise = report.findings.filter((f) => ['yaml-syntax', 'kind-not-served', 'would-delete'].includes(f.code));
    assert.deepEqual(noise, [], `${way.how}: no finding from the text of a rendered source`);
    // Overlay and chart were applied as they render: nothing but information (which objects exist) on their sources.
    assert.deepEqual(
      report.findings.filter(
        (f) =>
          renderedSources.includes(f.file) &&
          f.code !== 'exists' &&
          !(way.how === 'without helm' && f.code === 'tool-missing'),
      ),
      [],
      `${way.how}: no finding but existence on a rendered source`,
    );

    const named = report.objects.filter((o) => o.notes.some((n) => n.startsWith('not checked yet: rendered source')));
    assert.deepEqual(
      named.map((o) => o.file).sort(),
      ['deploy/components/audit/kustomization.yaml', 'deploy/components/audit/audit.yaml'].sort(),
      `${way.how}: only the unused component is named as not checked`,
    );
    assert.equal(
      report.objects.find((o) => o.file === 'deploy/components/audit/kustomization.yaml')?.notes.join(' '),
      'not checked yet: rendered source (a kustomization)',
    );
    // Not judged, and so listed with why; without helm, the chart too.
    assert.deepEqual(
      report.notJudged.map((n) => `${n.file} ${n.code ?? n.reason}`).sort(),
      [
        'deploy/components/audit/audit.yaml not checked yet: rendered source (a resource of deploy/components/audit/kustomization.yaml)',
        'deploy/components/audit/kustomization.yaml not checked yet: rendered source (a kustomization)',
        ...(way.how === 'without helm' ? ['charts/shop/Chart.yaml tool-missing'] : []),
      ].sort(),
      way.how,
    );
    assert.equal(run.status, 1, `${way.how}: what is not judged is not clean`);

    const objects = report.objects
      .filter((o) => o.object)
      .map((o) => `${o.file} ${o.object!.kind}/${o.object!.name}`)
      .sort();
    const fromChart = objects.filter((o) => o.startsWith('charts/'));
    // The overlay's objects are checked where they come from; the hand-written manifest as before.
    assert.deepEqual(
      objects.filter((o) => !o.startsWith('charts/')),
      ['deploy/base/deployment.yaml Deployment/web', generated, 'k8s/settings.yaml ConfigMap/plain-settings'].sort(),
      way.how,
    );
    if (way.how === 'without helm') {
      // One tool-missing warning for the chart, on its Chart.yaml as the editor shows it, and the check goes on.
      assert.deepEqual(fromChart, []);
      const missing = report.findings.filter((f) => chartSources.includes(f.file));
      assert.deepEqual(
        missing.map((f) => `${f.file} ${f.code}`),
        ['charts/shop/Chart.yaml tool-missing'],
      );
      assert.match(missing[0]!.message, /^cannot render release shop: helm is not installed/);
    } else {
      // Rendered as `helm install shop charts/shop` would: its objects on their templates.
      for (const o of helmChart)
        assert.ok(
          fromChart.some((c) => c.endsWith(` ${o}`) && c.startsWith('charts/shop/templates/')),
          `${way.how}: ${o} among ${fromChart.join(', ')}`,
        );
      assert.ok(
        report.findings.some((f) => f.code === 'exists' && f.file === 'charts/shop/templates/deployment.yaml'),
        `${way.how}: the release's Deployment is read from the cluster`,
      );
    }
  }

  // In text, a template named on its own without helm: the chart's one warning, listed as not judged, and exit 1.
  const alone = await runCli(
    [
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--namespace',
      namespace,
      'charts/shop/templates/deployment.yaml',
    ],
    { cwd: repo, env: { PATH: pathWithoutHelm } },
  );
  assert.equal(alone.status, 1, alone.stderr);
  assert.match(
    alone.stdout.split('\n')[1] ?? '',
    /^charts\/shop\/Chart\.yaml:1:1 warning tool-missing cannot render release shop: helm is not installed/,
  );
  assert.match(
    alone.stdout,
    /— 0 objects judged in 1 file, .*; 1 not judged:\n {2}charts\/shop\/Chart\.yaml:1:1 release shop \(charts\/shop\): tool-missing cannot render release shop: helm is not installed/,
  );
});

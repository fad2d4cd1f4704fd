// `check --helm CHART`: the chart `helm create` scaffolds, installed by the real Helm 4, then scaled
// by an autoscaler. The check renders the chart with the user's helm and must put the autoscaler's
// conflict on the template's `replicas:` line and on `replicaCount:` in values.yaml — and nothing
// from the templates' own text (they are not YAML). Without helm: one line, exit 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { connect, freshNamespace } from '../support/seed';
import { requireTool } from '../tools/tools';
import { chartInstalledElsewhere, helmEnv, scaledRelease } from '../support/charts';
import { lineOf, runCli, scratchDir } from './cli-process';

interface JsonFinding {
  file: string;
  code: string;
  message: string;
  range: { start: { line: number; character: number } };
  manager?: { manager: string };
}

test('check --helm: an autoscaler conflict lands on the template replicas line and on replicaCount in values.yaml', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const { repo, chart, namespace } = await scaledRelease(cluster, helm, 'cli-helm');

  const run = await runCli(
    [
      'check',
      '--helm',
      'shop',
      '--release',
      'web',
      '--helm-binary',
      helm,
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '-n',
      namespace,
      '--format',
      'json',
      'shop',
    ],
    { cwd: repo },
  );
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as { findings: JsonFinding[] };
  const conflicts = report.findings.filter((f) => f.code === 'field-conflict');
  const at = conflicts.map((f) => `${f.file}:${f.range.start.line + 1}`).sort();
  const template = fs.readFileSync(path.join(chart, 'templates', 'deployment.yaml'), 'utf8');
  const values = fs.readFileSync(path.join(chart, 'values.yaml'), 'utf8');
  assert.deepEqual(
    at,
    [
      `shop/templates/deployment.yaml:${lineOf(template, /^\s*replicas:/)}`,
      `shop/values.yaml:${lineOf(values, /^replicaCount:/)}`,
    ].sort(),
    JSON.stringify(report.findings, null, 1),
  );
  for (const f of conflicts) {
    assert.equal(f.manager?.manager, 'kube-controller-manager');
    assert.match(f.message, /in release web/);
  }
  // The templates are not read as YAML, and Helm 4's own earlier apply (with the ownership
  // metadata it adds) leaves nothing to delete.
  const noise = report.findings.filter((f) =>
    ['yaml-syntax', 'kind-not-served', 'would-delete', 'owned-by-release'].includes(f.code),
  );
  assert.deepEqual(noise, []);
});

test('check --helm: an object of another release is said so, on the template line of its name', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'cli-helm-owner');
  const repo = scratchDir('helm-owner');
  const env = helmEnv(path.join(repo, '.home'), cluster.kubeconfig);
  assert.equal(spawnSync(helm, ['create', 'shop'], { cwd: repo, env }).status, 0);
  // Release "other" installs the chart with the name that release "web" would also render.
  const installed = spawnSync(
    helm,
    ['install', 'other', 'shop', '--kube-context', 'admin', '--namespace', namespace, '--set', 'fullnameOverride=shop'],
    { cwd: repo, encoding: 'utf8', env },
  );
  assert.equal(installed.status, 0, installed.stderr);
  const run = await runCli(
    [
      'check',
      '--helm',
      'shop',
      '--release',
      'web',
      '--values',
      'shop/override.yaml',
      '--helm-binary',
      helm,
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '-n',
      namespace,
      '--format',
      'json',
    ],
    {
      cwd: (fs.writeFileSync(path.join(repo, 'shop', 'override.yaml'), 'fullnameOverride: shop\n'), repo),
    },
  );
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as { findings: JsonFinding[] };
  const owned = report.findings.filter((f) => f.code === 'owned-by-release');
  const template = fs.readFileSync(path.join(repo, 'shop', 'templates', 'deployment.yaml'), 'utf8');
  assert.ok(
    owned.some(
      (f) =>
        f.file === 'shop/templates/deployment.yaml' &&
        f.range.start.line + 1 === lineOf(template, /^\s*name: \{\{ include/) &&
        /belongs to release other/.test(f.message),
    ),
    JSON.stringify(owned, null, 1),
  );
});

test('check --helm without helm: one line, exit 2', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const repo = scratchDir('helm-missing');
  fs.mkdirSync(path.join(repo, 'shop', 'templates'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'shop', 'Chart.yaml'), 'apiVersion: v2\nname: shop\nversion: 0.1.0\n');
  // No helm on PATH.
  const run = await runCli(['check', '--helm', 'shop', '--kubeconfig', cluster.kubeconfig, '--context', 'admin'], {
    cwd: repo,
    env: { PATH: path.join(repo, 'empty') },
  });
  assert.equal(run.status, 2, run.stdout);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /helm/);
});

test(
  'check --helm with no --release and no -n: the release is found where the cluster holds it; several are said on Chart.yaml; naming one judges that one',
  { timeout: 180_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    if (!cluster || !helm) return;
    const { repo, name, namespace, install } = await chartInstalledElsewhere(cluster, helm, 'cli-release-found');
    const check = async (...more: string[]) => {
      const run = await runCli(
        [
          'check',
          '--helm',
          name,
          '--helm-binary',
          helm,
          '--kubeconfig',
          cluster.kubeconfig,
          '--context',
          'admin',
          '--format',
          'json',
          ...more,
        ],
        { cwd: repo },
      );
      assert.equal(run.status, 1, run.stderr);
      return (JSON.parse(run.stdout) as { findings: JsonFinding[] }).findings;
    };
    // The context's namespace is `default`: the release is found in its own.
    const found = await check();
    const conflict = found.find((f) => f.code === 'field-conflict' && f.file === `${name}/templates/deployment.yaml`);
    assert.ok(conflict, JSON.stringify(found, null, 1));
    assert.match(conflict.message, new RegExp(`replicas.*in release web in namespace ${namespace}`));
    assert.deepEqual(
      found.filter((f) => f.code.startsWith('release-')),
      [],
    );

    // Installed again elsewhere: the most likely is judged, and Chart.yaml names both.
    const second = await install('api', 7);
    const both = await check();
    const said = both.filter((f) => f.code === 'release-ambiguous');
    assert.equal(said.length, 1, JSON.stringify(both, null, 1));
    assert.equal(said[0]!.file, `${name}/Chart.yaml`);
    assert.match(said[0]!.message, new RegExp(`installed as 2 releases: .*web in ${namespace}.*`));
    assert.match(said[0]!.message, new RegExp(`api in ${second}`));

    // Named, it is judged as named, without a word on Chart.yaml.
    const named = await check('--release', 'api', '-n', second);
    assert.match(
      named.find((f) => f.code === 'field-conflict')!.message,
      new RegExp(`in release api in namespace ${second}`),
    );
    assert.deepEqual(
      named.filter((f) => f.code.startsWith('release-')),
      [],
    );
  },
);

// `check --helm` where a chart does not render, and with --verify, against the real Helm 4 and 3
// and the real API server:
// - a chart helm refuses (a template error) is one `render-failed` error on its Chart.yaml, and
//   the other charts named are still checked (before: the whole check stopped, exit 2);
// - --verify sends each rendered object, with the ownership metadata Helm adds, as the user's
//   Helm sends it — Helm 4 a server-side apply as `helm`, Helm 3 an update as `helm` — and sets the
//   server's answer beside the prediction (before: no dry run at all for a chart). The answers
//   tell the two apart: an autoscaler's replicas are a conflict for Helm 4's apply and no conflict
//   for Helm 3's update, which overwrites them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { waitForAuditEvent } from '../support/cluster';
import { requireCluster } from '../support/env';
import { autoscale, connect, freshNamespace } from '../support/seed';
import { requireTool } from '../tools/tools';
import { runCli, scratchDir } from './cli-process';

interface JsonReport {
  findings: {
    file: string;
    code: string;
    message: string;
    severity: string;
    range: { start: { line: number; character: number } };
  }[];
  objects: {
    file: string;
    object?: { kind: string; name: string };
    verification?: { agrees: boolean; serverAnswer: string; differences: unknown[] };
  }[];
}

function helm(tool: string, args: string[], cwd: string, kubeconfig?: string): void {
  const home = path.join(cwd, '.home');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  const r = spawnSync(tool, args, { cwd, encoding: 'utf8', env });
  assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
}

for (const version of ['helm4', 'helm3'] as const) {
  test(`check --helm (${version}): a chart with a template error is a render-failed on its Chart.yaml and on the template line, the other chart is still checked`, async (t) => {
    const cluster = requireCluster(t);
    const tool = requireTool(t, version);
    if (!cluster || !tool) return;
    const namespace = await freshNamespace(connect('admin', cluster.kubeconfig), `cli-helm-broken-${version}`);
    const repo = scratchDir('helm-broken');
    helm(tool, ['create', 'good'], repo);
    helm(tool, ['create', 'broken'], repo);
    fs.writeFileSync(
      path.join(repo, 'broken', 'templates', 'extra.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  a: {{ include "no-such-template" . }}\n',
    );

    const run = await runCli(
      [
        'check',
        '--helm',
        'broken',
        '--helm',
        'good',
        '--helm-binary',
        tool,
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        '-n',
        namespace,
        '--format',
        'json',
      ],
      { cwd: repo },
    );
    assert.equal(run.status, 1, `${run.status}: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as JsonReport;
    const failed = report.findings.filter((f) => f.code === 'render-failed');
    // On Chart.yaml, and on the template line helm names (line 6, column 8 of extra.yaml).
    assert.deepEqual(
      failed.map((f) => `${f.file}:${f.range.start.line + 1}:${f.range.start.character + 1}`),
      ['broken/Chart.yaml:1:1', 'broken/templates/extra.yaml:6:8'],
      JSON.stringify(report.findings, null, 1),
    );
    for (const f of failed) {
      assert.equal(f.severity, 'error');
      assert.match(f.message, /release broken/);
      assert.match(f.message, /no-such-template/);
    }
    // The good chart is checked as ever: its objects, on its templates; nothing from the broken one.
    const checked = report.objects.filter((o) => o.object).map((o) => `${o.file} ${o.object!.kind}/${o.object!.name}`);
    assert.ok(checked.includes('good/templates/deployment.yaml Deployment/good'), checked.join('\n'));
    assert.deepEqual(
      checked.filter((c) => c.startsWith('broken/')),
      [],
    );
    assert.deepEqual(
      report.findings.filter((f) => f.code !== 'render-failed' && f.severity === 'error'),
      [],
    );
  });
}

const verifyCases = [
  {
    version: 'helm4' as const,
    // Helm 4 applies server-side as helm: the server names the autoscaler's replicas, as predicted.
    deployment:
      /^Apply failed with 1 conflict: conflict with "kube-controller-manager" with subresource "scale".*\.spec\.replicas/,
    conflicts: 2, // the template's replicas line and replicaCount in values.yaml
    // An apply (force=false) as helm.
    request: (uri: string) => /[?&]fieldManager=helm(&|$)/.test(uri) && /[?&]force=false(&|$)/.test(uri),
  },
  {
    version: 'helm3' as const,
    // Helm 3 updates: the server accepts, writing the chart's replicas over the autoscaler's.
    deployment: /^accepted$/,
    conflicts: 0,
    // A patch (no force: not an apply) as helm.
    request: (uri: string) => /[?&]fieldManager=helm(&|$)/.test(uri) && !/[?&]force=/.test(uri),
  },
];

for (const c of verifyCases) {
  test(`check --helm --verify (${c.version}): each object is dry-run as that Helm sends it, and the server agrees`, async (t) => {
    const cluster = requireCluster(t);
    const tool = requireTool(t, c.version);
    if (!cluster || !tool) return;
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, `cli-helm-verify-${c.version}`);
    const repo = scratchDir('helm-verify');
    helm(tool, ['create', 'shop'], repo);
    helm(
      tool,
      ['install', 'web', 'shop', '--kube-context', 'admin', '--namespace', namespace],
      repo,
      cluster.kubeconfig,
    );
    await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } }, 5);

    const started = new Date().toISOString();
    const run = await runCli(
      [
        'check',
        '--helm',
        'shop',
        '--release',
        'web',
        '--verify',
        '--helm-binary',
        tool,
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        '-n',
        namespace,
        '--format',
        'json',
      ],
      { cwd: repo },
    );
    assert.ok(run.status === 0 || run.status === 1, `${run.status}: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.equal(
      report.findings.filter((f) => f.code === 'field-conflict').length,
      c.conflicts,
      JSON.stringify(report.findings, null, 1),
    );
    const objects = report.objects.filter((o) => o.object);
    assert.ok(objects.length >= 3, JSON.stringify(report.objects, null, 1));
    for (const o of objects) {
      assert.ok(o.verification, `${o.file} ${o.object!.kind}/${o.object!.name}: no dry run`);
      assert.equal(
        o.verification.agrees,
        true,
        `${o.object!.kind}/${o.object!.name}: ${JSON.stringify(o.verification)}`,
      );
    }
    const deployment = objects.find(
      (o) => o.object!.kind === 'Deployment' && o.file === 'shop/templates/deployment.yaml',
    )!;
    assert.match(deployment.verification!.serverAnswer, c.deployment);
    assert.deepEqual(
      report.findings.filter((f) => f.code === 'dry-run-differs'),
      [],
    );

    // What reached the server: the Deployment's dry run, as that Helm sends it.
    const event = await waitForAuditEvent(
      cluster.auditLog,
      (e) =>
        (e.userAgent ?? '').startsWith('kube-conflict-hints/') &&
        e.verb === 'patch' &&
        e.objectRef?.resource === 'deployments' &&
        e.objectRef.namespace === namespace &&
        (e.requestReceivedTimestamp ?? '') >= started,
    );
    assert.ok(event, 'the dry run of the Deployment is in the audit log');
    assert.match(event.requestURI, /[?&]dryRun=All(&|$)/);
    assert.ok(c.request(event.requestURI), event.requestURI);
  });
}

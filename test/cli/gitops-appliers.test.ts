// `kube-conflict-hints check --format json` carries who really applies each object (`appliedBy`),
// against the real kube-apiserver with Argo CD's and Flux's CRDs: the Argo CD Application with its
// policy, the Flux Kustomization and HelmRelease read by name, an applier whose object does not exist
// as unknown with the reason, nothing for an object no tool marks; the same sentences the editor's
// hover shows, and the output valid against schemas/findings.schema.json.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { stringify } from 'yaml';
import { requireCluster } from '../support/env';
import { connect, type KubeObject } from '../support/seed';
import { seedAppliers } from '../support/seed-appliers';
import { repoRoot, runCli, scratchDir, writeFiles } from './cli-process';

interface JsonObjectEntry {
  title: string;
  object?: { name: string };
  appliedBy?: {
    tool: string;
    name: string;
    namespace?: string;
    maybe?: true;
    evidence: string;
    text: string;
    policy?: Record<string, unknown>;
  }[];
}

function manifestOf(live: KubeObject): string {
  const { name, namespace, labels, annotations } = live.metadata;
  return stringify({
    apiVersion: live.apiVersion,
    kind: live.kind,
    metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    ...(live.kind === 'Deployment'
      ? { spec: { replicas: 2, selector: (live.spec as { selector: unknown }).selector } }
      : { data: live.data }),
  });
}

test('check --format json: appliedBy names the Application, Kustomization and HelmRelease with their policies', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const scene = await seedAppliers(connect('admin', cluster.kubeconfig), 'cli-appliers');
  const o = scene.objects;
  const dir = scratchDir('cli-appliers');
  writeFiles(dir, {
    'objects.yaml': [o['argo-tracked'], o['flux-kustomize'], o['flux-helm'], o['flux-gone'], o.plain]
      .map(manifestOf)
      .join('---\n'),
  });
  const run = await runCli(
    ['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--format', 'json', 'objects.yaml'],
    { cwd: dir },
  );
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  const json = JSON.parse(run.stdout) as { objects: JsonObjectEntry[] };
  const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, 'schemas', 'findings.schema.json'), 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  assert.ok(validate(json), ajv.errorsText(validate.errors));

  const of = (name: string) => json.objects.find((e) => e.object?.name === name)?.appliedBy;
  assert.deepEqual(of('argo-web'), [
    {
      tool: 'argocd',
      name: scene.app,
      evidence: 'annotation argocd.argoproj.io/tracking-id, manager argocd-controller',
      text: `Applied by Argo CD application ${scene.app} (automated, self-heal, prune, server-side apply, RespectIgnoreDifferences, 1 ignoreDifferences rule)`,
      policy: {
        state: 'read',
        name: scene.app,
        namespace: scene.controllerNamespace,
        automated: true,
        selfHeal: true,
        prune: true,
        serverSideApply: true,
        respectIgnoreDifferences: true,
        ignoreDifferences: [
          {
            group: 'apps',
            kind: 'Deployment',
            jsonPointers: ['/spec/replicas'],
            jqPathExpressions: [],
            managedFieldsManagers: [],
          },
        ],
      },
    },
  ]);
  assert.deepEqual(
    of('flux-web')?.map((a) => [a.text, a.policy?.state]),
    [[`Applied by Flux Kustomization ${scene.namespace}/shop every 10m (prune, path \`./apps/shop\`)`, 'read']],
  );
  assert.deepEqual(
    of('helm-web')?.map((a) => [a.text, a.policy?.driftDetection]),
    [[`Applied by Flux HelmRelease ${scene.namespace}/web every 5m (drift detection enabled)`, 'enabled']],
  );
  assert.deepEqual(
    of('flux-gone')?.map((a) => a.policy),
    [
      {
        state: 'unknown',
        reason: `Flux Kustomization ${scene.namespace}/gone does not exist (it was deleted, or the mark was copied from another object)`,
      },
    ],
  );
  assert.equal(of('plain'), undefined);

  // Offline, from a snapshot: the same appliers seen, each policy unknown (a snapshot saves none).
  const saved = await runCli(
    ['snapshot', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--out', 'snap', 'objects.yaml'],
    { cwd: dir },
  );
  assert.equal(saved.status, 0, saved.stderr);
  const offline = await runCli(['check', '--snapshot', 'snap', '--format', 'json', 'objects.yaml'], { cwd: dir });
  assert.ok(offline.status === 0 || offline.status === 1, offline.stderr);
  const kept = JSON.parse(offline.stdout) as { objects: JsonObjectEntry[] };
  assert.ok(validate(kept), ajv.errorsText(validate.errors));
  const strip = (entries: JsonObjectEntry[]) =>
    entries.map((e) =>
      e.appliedBy?.map(({ tool, name, namespace, maybe, evidence }) => ({ tool, name, namespace, maybe, evidence })),
    );
  assert.deepEqual(strip(kept.objects), strip(json.objects));
  const offlineArgo = kept.objects.find((e) => e.object?.name === 'argo-web')?.appliedBy?.[0];
  assert.equal(
    offlineArgo?.text,
    `Applied by Argo CD application ${scene.app} (policy unknown: a snapshot does not save the GitOps objects that apply objects)`,
  );
});

// A GitOps controller's own request judged (core/findings/gitops-takes.ts through analyzeResource,
// with AnalysisSettings.controller): on histories captured from the real kube-apiserver and the
// real controllers' apply code (test/fixtures/gitops/controller-apply/, README there), the fields
// the controller takes from other managers are `gitops-takes` findings, there is no field-conflict
// (the controller forces), and the way to keep the live value is said in the controller's terms.
// The differential suite (test/differential/gitops-takes.test.ts) holds the same against the live
// controllers; these run without a cluster.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { analyzeResource, fluxMayKeepLive, type ResourceFacts } from '../../../../server/src/core/findings';
import type { ControllerApplier } from '../../../../server/src/core/gitops/model';
import { applicationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const schema = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonObject,
  ),
).schema;

function judge(
  name: string,
  controller?: ControllerApplier,
  edit?: (text: string) => string,
  permission?: ResourceFacts['permission'],
) {
  const fixture = parse(fs.readFileSync(path.join(fixtures, 'gitops', 'controller-apply', `${name}.yaml`), 'utf8')) as {
    manifest: string;
    live: JsonObject;
  };
  const resource = parseManifestText(edit ? edit(fixture.manifest) : fixture.manifest).resources[0]!;
  const facts: ResourceFacts = {
    kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
    live: { state: 'exists', object: fixture.live },
    schema,
    ...(permission ? { permission } : {}),
  };
  return analyzeResource(resource, facts, {
    fieldManager: 'kubectl',
    applyMode: 'serverSide',
    ...(controller ? { controller } : {}),
  });
}

const flux: ControllerApplier = { name: 'flux', because: 'test' };

test('Flux removes the annotations kubectl edit added that Git does not set (the whole map, its only one): said on the name, no conflict', () => {
  const findings = judge('flux-cleanup-prunes-kubectl-edit', flux);
  const takes = findings.filter((f) => f.code === 'gitops-takes');
  assert.deepEqual(
    takes.map((f) => f.path),
    ['.metadata.annotations'],
  );
  assert.match(
    takes[0]!.message,
    /^Flux kustomize-controller removes \.metadata\.annotations at its next reconciliation: kubectl-edit set it/,
  );
  assert.equal(takes[0]!.severity, 'information');
  assert.ok(fluxMayKeepLive(takes[0]!), 'the Flux quick fix is offered');
  assert.match(takes[0]!.message, /kustomize\.toolkit\.fluxcd\.io\/ssa: IfNotPresent/);
  assert.deepEqual(
    findings.filter((f) => f.code === 'field-conflict' || f.code === 'would-delete'),
    [],
  );
});

test('without a controller the same manifest is kubectl’s apply: nothing is said to be taken', () => {
  const findings = judge('flux-cleanup-prunes-kubectl-edit');
  assert.deepEqual(
    findings.filter((f) => f.code === 'gitops-takes'),
    [],
  );
});

test('Flux takes replicas from kubectl scale: the scale subresource entry is named, with the values', () => {
  const findings = judge('flux-kubectl-scale', flux);
  const takes = findings.filter((f) => f.code === 'gitops-takes');
  assert.deepEqual(
    takes.map((f) => [f.path, f.liveValue, f.manifestValue]),
    [['.spec.replicas', 7, 3]],
  );
  assert.match(takes[0]!.message, /takes \.spec\.replicas from kubectl \(scale\) \(7 → 3\)/);
  assert.deepEqual(
    findings.filter((f) => f.code === 'field-conflict'),
    [],
    'the controller forces: kubectl (scale) owning replicas is no conflict',
  );
});

test('Flux with ssa: IfNotPresent on the manifest takes nothing', () => {
  const findings = judge('flux-kubectl-scale', flux, (t) =>
    t.replace(/ {2}name: web\n/, '  name: web\n  annotations:\n    kustomize.toolkit.fluxcd.io/ssa: IfNotPresent\n'),
  );
  assert.deepEqual(
    findings.filter((f) => f.code === 'gitops-takes'),
    [],
  );
});

test('Argo CD client-side takes the image kubectl edit changed, and says the ignoreDifferences entry to keep it', () => {
  const findings = judge('argocd-csa-self-heal', { name: 'argocd', because: 'test' });
  const takes = findings.filter((f) => f.code === 'gitops-takes');
  assert.deepEqual(
    takes.map((f) => f.path),
    ['.spec.template.spec.containers[name="web"].image'],
  );
  assert.match(
    takes[0]!.message,
    /^Argo CD takes .* from kubectl-edit \("nginx:1\.26" → "nginx:1\.25"\) at its next sync/,
  );
  assert.match(
    takes[0]!.message,
    /spec\.ignoreDifferences: \[\{group: apps, kind: Deployment, name: web, managedFieldsManagers: \[kubectl-edit\]\}\] and syncPolicy\.syncOptions: \[RespectIgnoreDifferences=true\]/,
  );
  assert.ok(!fluxMayKeepLive(takes[0]!));
});

test('Argo CD server-side with RespectIgnoreDifferences on replicas leaves the autoscaler’s count; without it, takes it', () => {
  const application = (respect: boolean) =>
    applicationPolicy({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop', namespace: 'argocd' },
      spec: {
        syncPolicy: { syncOptions: ['ServerSideApply=true', ...(respect ? ['RespectIgnoreDifferences=true'] : [])] },
        ignoreDifferences: [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }],
      },
    })!;
  const kept = judge('argocd-ssa-respect-replicas', { name: 'argocd-ssa', policy: application(true), because: 'test' });
  assert.deepEqual(
    kept.filter((f) => f.code === 'gitops-takes'),
    [],
  );
  const taken = judge('argocd-ssa-respect-replicas', {
    name: 'argocd-ssa',
    policy: application(false),
    because: 'test',
  });
  const takes = taken.filter((f) => f.code === 'gitops-takes');
  assert.deepEqual(
    takes.map((f) => f.path),
    ['.spec.replicas'],
  );
  assert.match(
    takes[0]!.message,
    /^Argo CD application shop takes \.spec\.replicas from kube-controller-manager \(scale\)/,
  );
  assert.match(
    takes[0]!.message,
    /jsonPointers: \[\/spec\/replicas\]\}\] and syncPolicy\.syncOptions: \[RespectIgnoreDifferences=true\]/,
  );
});

test("a credential that may only read checks the controller's request: the controller sends with its own", () => {
  const readOnly: ResourceFacts['permission'] = {
    user: 'viewer',
    namespace: 'shop',
    answers: [{ verb: 'patch', named: true, state: 'denied' }],
  };
  const asUser = judge('flux-kubectl-scale', undefined, undefined, readOnly);
  assert.deepEqual(
    asUser.map((f) => f.code),
    ['forbidden'],
    'your own apply: refused',
  );
  const asFlux = judge('flux-kubectl-scale', flux, undefined, readOnly);
  assert.deepEqual(
    asFlux.filter((f) => f.code === 'forbidden' || f.code === 'permission-unknown'),
    [],
  );
  assert.ok(asFlux.some((f) => f.code === 'gitops-takes'));
});

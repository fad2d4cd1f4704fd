// What a GitOps controller's next sync does to a change by hand (core/findings/gitops-revert.ts), on
// objects and policies captured from the real server (test/fixtures/gitops/detect/captured.yaml:
// a Deployment applied by kustomize-controller for the Kustomization `shop`, and one applied by
// argocd-controller for the Application with self-heal, server-side apply and an ignoreDifferences
// rule on /spec/replicas with RespectIgnoreDifferences). What the controllers really do is the
// differential suite's (test/differential/gitops-reverts.test.ts); here, each branch of the rule.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { analyzeResource, applierFacts, type ResourceFacts } from '../../../../server/src/core/findings';
import { applicationPolicy, helmReleasePolicy, kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { PolicyFacts } from '../../../../server/src/core/gitops/model';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schema } from '../../../support/findings-fixtures';

const captured = parse(
  fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'gitops', 'detect', 'captured.yaml'),
    'utf8',
  ),
) as { objects: Record<string, JsonObject>; policies: Record<string, JsonObject> };

/** The user's manifest: the live object's identity and spec as written, with `change` applied. */
function manifestOf(live: JsonObject, change: (m: JsonObject) => void): string {
  const metadata = live.metadata as JsonObject;
  const spec = live.spec as JsonObject;
  const template = spec.template as JsonObject;
  const containers = ((template.spec as JsonObject).containers as JsonObject[]).map((c) => ({
    name: c.name,
    image: c.image,
  }));
  const m: JsonObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: metadata.name, namespace: metadata.namespace, labels: { ...(metadata.labels as JsonObject) } },
    spec: {
      replicas: spec.replicas,
      selector: spec.selector,
      template: { metadata: template.metadata, spec: { containers } },
    },
  };
  change(m);
  return stringify(m);
}

function reverts(
  live: JsonObject,
  policy: PolicyFacts | undefined,
  change: (m: JsonObject) => void,
  fieldManager = 'kubectl',
): { path: string; message: string }[] {
  const resource = parseManifestText(manifestOf(live, change)).resources[0]!;
  const facts: ResourceFacts = {
    kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
    live: { state: 'exists', object: live },
    schema,
    // The policy of the object a mark names; Helm's own marks and a bare manager name none (cluster/gitops.ts).
    ...(policy
      ? { appliers: applierFacts(live, (s) => (s.kind !== 'helm' && s.name !== '' ? policy : undefined)) }
      : {}),
  };
  return analyzeResource(resource, facts, { fieldManager, applyMode: 'serverSide' })
    .filter((f) => f.code === 'gitops-reverts')
    .map((f) => ({ path: f.path ?? '', message: f.message }));
}

const flux = captured.objects['flux-kustomize']!;
const fluxKustomization = kustomizationPolicy(captured.policies.kustomization)!;
const fluxPolicy: PolicyFacts = { state: 'read', policy: fluxKustomization };
const argo = captured.objects['argo-tracked']!;
const argoPolicy = applicationPolicy(captured.policies.application)!;
const spec = (m: JsonObject) => m.spec as JsonObject & { replicas: number };
const labels = (m: JsonObject) => (m.metadata as JsonObject).labels as JsonObject;
const image = (m: JsonObject) =>
  ((((m.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0]!;

test('Flux: a field Git sets goes back at the next reconciliation, one only kubectl sets is removed', () => {
  const said = reverts(flux, fluxPolicy, (m) => {
    spec(m).replicas = 5;
    labels(m).team = 'checkout';
  });
  assert.deepEqual(said.map((s) => s.path).sort(), ['.metadata.labels.team', '.spec.replicas']);
  const replicas = said.find((s) => s.path === '.spec.replicas')!;
  assert.match(
    replicas.message,
    /^Flux Kustomization kch-capture-detect-\w+\/shop puts \.spec\.replicas back to 2 \(Git's value\) at its next reconciliation, every 10m/,
  );
  assert.match(said.find((s) => s.path === '.metadata.labels.team')!.message, /removes .* Git does not set it/);
});

test('Flux: nothing changed is nothing to revert; a manager Flux does not take over keeps its own fields', () => {
  assert.deepEqual(
    reverts(flux, fluxPolicy, () => undefined),
    [],
  );
  const other = reverts(
    flux,
    fluxPolicy,
    (m) => {
      spec(m).replicas = 5;
      labels(m).team = 'checkout';
    },
    'platform-tool',
  );
  assert.deepEqual(
    other.map((s) => s.path),
    ['.spec.replicas'],
  );
});

test('Flux: a suspended Kustomization reverts nothing; an unknown policy says nothing', () => {
  const suspended: PolicyFacts = {
    state: 'read',
    policy: { ...fluxKustomization, suspend: true },
  };
  assert.deepEqual(
    reverts(flux, suspended, (m) => void (spec(m).replicas = 5)),
    [],
  );
  const unknown: PolicyFacts = {
    state: 'unknown',
    reason: 'forbidden',
    sighting: { kind: 'flux-kustomize', name: 'shop', evidence: 'label' },
  };
  assert.deepEqual(
    reverts(flux, unknown, (m) => void (spec(m).replicas = 5)),
    [],
  );
});

test('Argo CD: self-heal puts back a field Git sets within about 5 s; ignoreDifferences decides for replicas', () => {
  const change = (m: JsonObject) => {
    spec(m).replicas = 5;
    image(m).image = 'nginx:1.26';
    labels(m).team = 'checkout';
  };
  // As captured: RespectIgnoreDifferences keeps the hand-set replicas; the image goes back; the label stays.
  const respected = reverts(argo, { state: 'read', policy: argoPolicy }, change);
  assert.deepEqual(
    respected.map((s) => s.path),
    ['.spec.template.spec.containers[name="web"].image'],
  );
  assert.match(
    respected[0]!.message,
    /^Argo CD application shop-\w+ \(self-heal on\) will put back .* within about 5 s/,
  );
  // Without RespectIgnoreDifferences the next sync writes Git's replicas again.
  const ignoredOnly = reverts(
    argo,
    { state: 'read', policy: { ...argoPolicy, respectIgnoreDifferences: false } },
    change,
  );
  assert.deepEqual(ignoredOnly.map((s) => s.path).sort(), [
    '.spec.replicas',
    '.spec.template.spec.containers[name="web"].image',
  ]);
  assert.match(ignoredOnly.find((s) => s.path === '.spec.replicas')!.message, /add RespectIgnoreDifferences=true/);
  // Without self-heal: at the next sync.
  const manual = reverts(argo, { state: 'read', policy: { ...argoPolicy, automated: false, selfHeal: false } }, change);
  assert.ok(manual.every((s) => /manual sync/.test(s.message)));
});

// A Deployment Helm's install created for helm-controller (an Update entry marking the label map with
// `.`) and its HelmRelease with drift detection enabled (test/fixtures/gitops/helm-install).
const helmInstall = parse(
  fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'gitops', 'helm-install', 'captured.yaml'),
    'utf8',
  ),
) as { live: JsonObject; helmRelease: JsonObject };
const helmPolicy = helmReleasePolicy(helmInstall.helmRelease)!;

test('Flux HelmRelease with drift detection: the fields helm-controller wrote go back; a label it never wrote has no owner and stays', () => {
  const said = reverts(helmInstall.live, { state: 'read', policy: helmPolicy }, (m) => {
    spec(m).replicas = 5;
    image(m).image = 'nginx:1.26';
    labels(m).team = 'checkout';
  });
  assert.deepEqual(said.map((s) => s.path).sort(), [
    '.spec.replicas',
    '.spec.template.spec.containers[name="web"].image',
  ]);
  assert.match(
    said.find((s) => s.path === '.spec.replicas')!.message,
    /^Flux HelmRelease kch-capture-helm-install\/web corrects drift \(driftDetection enabled\): \.spec\.replicas goes back to 3 at its next reconciliation, every 5m\.$/,
  );
});

test('Flux HelmRelease: drift detection warn, or the object marked driftDetection: disabled (any case), takes nothing back', () => {
  const change = (m: JsonObject) => void (spec(m).replicas = 5);
  assert.deepEqual(
    reverts(helmInstall.live, { state: 'read', policy: { ...helmPolicy, driftDetection: 'warn' } }, change),
    [],
  );
  for (const [where, value] of [
    ['annotations', 'disabled'],
    ['labels', 'Disabled'],
  ] as const) {
    const metadata = helmInstall.live.metadata as JsonObject;
    const marked: JsonObject = {
      ...helmInstall.live,
      metadata: {
        ...metadata,
        [where]: { ...(metadata[where] as JsonObject), 'helm.toolkit.fluxcd.io/driftDetection': value },
      },
    };
    assert.deepEqual(reverts(marked, { state: 'read', policy: helmPolicy }, change), [], where);
  }
});

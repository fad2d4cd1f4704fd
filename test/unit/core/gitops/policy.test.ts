// The policies of the objects that apply others (server/src/core/gitops/policy.ts), read from the
// Application, Kustomization and HelmRelease the real API server answered
// (test/fixtures/gitops/detect/captured.yaml), with the controllers' defaults where a field is not
// written, and hostile objects read as far as their types allow, never thrown on.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { applicationPolicy, helmReleasePolicy, kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject } from '../../../../server/src/core/json';

const captured = parse(
  fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'gitops', 'detect', 'captured.yaml'),
    'utf8',
  ),
) as {
  namespace: string;
  controllerNamespace: string;
  app: string;
  policies: Record<'application' | 'otherApplication' | 'kustomization' | 'helmRelease', JsonObject>;
};

test('an Argo CD Application: automated with self-heal and prune, server-side apply, RespectIgnoreDifferences, its rules and sources', () => {
  assert.deepEqual(applicationPolicy(captured.policies.application), {
    kind: 'argocd',
    name: captured.app,
    namespace: captured.controllerNamespace,
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
    sources: [{ repoURL: 'https://github.com/example/shop.git', path: 'deploy/shop' }],
  });
  const manual = applicationPolicy(captured.policies.otherApplication);
  assert.equal(manual?.automated, false);
  assert.equal(manual?.selfHeal, false);
  assert.equal(manual?.serverSideApply, false);
});

test("Argo CD's own defaults: automated.enabled false turns automation off; a sync option counts only as written exactly", () => {
  const app = (syncPolicy: unknown) =>
    applicationPolicy({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop', namespace: 'argocd' },
      spec: { syncPolicy } as JsonObject,
    });
  assert.equal(app({ automated: { enabled: false, selfHeal: true } })?.automated, false);
  assert.equal(app({ automated: { enabled: false, selfHeal: true } })?.selfHeal, false);
  assert.equal(app({ automated: {} })?.automated, true);
  assert.equal(app({ syncOptions: ['ServerSideApply=True', 'ServerSideApply = true'] })?.serverSideApply, false);
  assert.equal(app({ syncOptions: ['ServerSideApply=true'] })?.serverSideApply, true);
});

test('a Flux Kustomization and HelmRelease: interval, suspend, force, prune, path; drift detection', () => {
  assert.deepEqual(kustomizationPolicy(captured.policies.kustomization), {
    kind: 'flux-kustomize',
    name: 'shop',
    namespace: captured.namespace,
    interval: '10m',
    suspend: false,
    force: false,
    prune: true,
    path: './apps/shop',
  });
  assert.deepEqual(helmReleasePolicy(captured.policies.helmRelease), {
    kind: 'flux-helm',
    name: 'web',
    namespace: captured.namespace,
    interval: '5m',
    suspend: false,
    driftDetection: 'enabled',
    driftIgnore: [],
  });
});

test('an object of another kind is no policy; hostile fields read as not written', () => {
  assert.equal(applicationPolicy(captured.policies.kustomization), undefined);
  assert.equal(kustomizationPolicy(captured.policies.application), undefined);
  assert.equal(helmReleasePolicy({ ...captured.policies.helmRelease, apiVersion: 'other.io/v2' }), undefined);
  for (const metadata of [
    undefined,
    null,
    {},
    { name: 'shop' },
    { name: '../x', namespace: 'a' },
    { name: 7, namespace: 'a' },
  ])
    assert.equal(
      applicationPolicy({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata } as JsonObject),
      undefined,
    );
  const hostile = applicationPolicy({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'shop', namespace: 'argocd' },
    spec: {
      syncPolicy: { automated: 'yes', syncOptions: 'ServerSideApply=true' },
      ignoreDifferences: [null, 'x', { kind: 7 }, { kind: 'Deployment', jsonPointers: [1, '/spec/replicas', null] }],
      source: [],
      sources: [{ repoURL: 5 }, { repoURL: 'https://example.com/r.git', path: {} }],
    },
  });
  assert.deepEqual(hostile, {
    kind: 'argocd',
    name: 'shop',
    namespace: 'argocd',
    automated: false,
    selfHeal: false,
    prune: false,
    serverSideApply: false,
    respectIgnoreDifferences: false,
    ignoreDifferences: [
      { kind: 'Deployment', jsonPointers: ['/spec/replicas'], jqPathExpressions: [], managedFieldsManagers: [] },
    ],
    sources: [{ repoURL: 'https://example.com/r.git' }],
  });
  const flux = kustomizationPolicy({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1beta2',
    kind: 'Kustomization',
    metadata: { name: 'shop', namespace: 'flux' },
    spec: { interval: 10, suspend: 'true', force: 1, prune: null, path: ['x'] },
  });
  assert.deepEqual(flux, {
    kind: 'flux-kustomize',
    name: 'shop',
    namespace: 'flux',
    interval: '',
    suspend: false,
    force: false,
    prune: false,
    path: '',
  });
  assert.equal(
    helmReleasePolicy({
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'web', namespace: 'flux' },
      spec: { driftDetection: { mode: 'Enabled' } },
    })?.driftDetection,
    'disabled',
  );
  // A list longer than any real one is read up to its bound.
  const many = applicationPolicy({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'shop', namespace: 'argocd' },
    spec: { ignoreDifferences: Array.from({ length: 5000 }, () => ({ kind: 'ConfigMap' })) },
  });
  assert.equal(many?.ignoreDifferences.length, 256);
});

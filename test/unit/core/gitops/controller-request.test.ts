// What each GitOps controller adds to Git's object before it applies it (core/gitops/controller-request.ts),
// as the controllers' own code does: Flux's Kustomization labels (from the policy, else from what
// its last apply left on the live object), Argo CD's tracking id (kept from its last sync), the Helm
// release of helm-controller, and the field manager and request of each. The requests themselves are
// held to the controllers' code by controller-apply.test.ts and the differential suite.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  controllerManagers,
  controllerMode,
  controllerSend,
} from '../../../../server/src/core/gitops/controller-request';
import { kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject } from '../../../../server/src/core/json';

const git: JsonObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: { replicas: 3 },
};
const live = (metadata: JsonObject): JsonObject => ({
  ...git,
  metadata: { name: 'web', namespace: 'shop', ...metadata },
});

test('each controller applies as its own field manager, Argo CD client-side unless ServerSideApply=true', () => {
  assert.deepEqual(controllerManagers, {
    flux: 'kustomize-controller',
    'flux-helm': 'helm-controller',
    argocd: 'argocd-controller',
    'argocd-ssa': 'argocd-controller',
  });
  assert.equal(controllerMode('argocd'), 'clientSide');
  for (const name of ['argocd-ssa', 'flux', 'flux-helm'] as const) assert.equal(controllerMode(name), 'serverSide');
});

test('Flux labels the object with its Kustomization: from the policy, else from the labels its last apply left', () => {
  const policy = kustomizationPolicy({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: 'flux-system' },
    spec: { interval: '10m', path: './apps' },
  })!;
  assert.deepEqual(controllerSend({ name: 'flux', policy, because: 'test' }, git, undefined).request, {
    applier: 'flux-kustomize',
    fieldManager: 'kustomize-controller',
    kustomization: { name: 'apps', namespace: 'flux-system' },
  });
  const marked = live({
    labels: { 'kustomize.toolkit.fluxcd.io/name': 'infra', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
  });
  assert.deepEqual(controllerSend({ name: 'flux', because: 'test' }, git, marked).request, {
    applier: 'flux-kustomize',
    fieldManager: 'kustomize-controller',
    kustomization: { name: 'infra', namespace: 'flux-system' },
  });
  assert.deepEqual(controllerSend({ name: 'flux', because: 'test' }, git, live({})).request, {
    applier: 'flux-kustomize',
    fieldManager: 'kustomize-controller',
  });
});

test("Argo CD's target carries the tracking id its last sync wrote; one Git writes itself stays", () => {
  const tracked = live({ annotations: { 'argocd.argoproj.io/tracking-id': 'shop:apps/Deployment:shop/web' } });
  const sent = controllerSend({ name: 'argocd-ssa', because: 'test' }, git, tracked);
  assert.deepEqual(sent.request, {
    applier: 'argocd-server-side',
    fieldManager: 'argocd-controller',
    ignore: [],
    respectIgnoreDifferences: false,
  });
  assert.deepEqual((sent.manifest.metadata as JsonObject).annotations, {
    'argocd.argoproj.io/tracking-id': 'shop:apps/Deployment:shop/web',
  });
  assert.equal(controllerSend({ name: 'argocd', because: 'test' }, git, live({})).manifest, git);
  const own: JsonObject = {
    ...git,
    metadata: { ...(git.metadata as JsonObject), annotations: { 'argocd.argoproj.io/tracking-id': 'mine' } },
  };
  assert.equal(controllerSend({ name: 'argocd', because: 'test' }, own, tracked).manifest, own);
});

test("helm-controller's upgrade carries the release the live object names", () => {
  const released = live({
    annotations: { 'meta.helm.sh/release-name': 'web', 'meta.helm.sh/release-namespace': 'shop' },
  });
  assert.deepEqual(controllerSend({ name: 'flux-helm', because: 'test' }, git, released).request, {
    applier: 'flux-helm',
    fieldManager: 'helm-controller',
    release: { name: 'web', namespace: 'shop' },
  });
});

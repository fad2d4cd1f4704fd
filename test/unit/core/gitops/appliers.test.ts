// Who applies an object, from its live metadata (server/src/core/gitops/appliers.ts), on objects the
// real API server answered (test/fixtures/gitops/detect/captured.yaml, captured by capture.ts beside
// it): Argo CD's tracking id only when it names the object itself (as Argo CD's isSelfReferencedObj
// decides), its instance label as a maybe, Flux's and Helm's marks, the controllers' managers as
// evidence; hostile metadata gives no sighting rather than a wrong one.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { applierSightings, argoInstance, parseTrackingId } from '../../../../server/src/core/gitops/appliers';
import type { JsonObject } from '../../../../server/src/core/json';

const captured = parse(
  fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'gitops', 'detect', 'captured.yaml'),
    'utf8',
  ),
) as { namespace: string; app: string; objects: Record<string, JsonObject> };
const ns = captured.namespace;
const seen = (name: string) => applierSightings(captured.objects[name]!);

test("Argo CD's tracking id names the Application, bare when it lives in the controller's namespace", () => {
  assert.deepEqual(seen('argo-tracked'), [
    {
      kind: 'argocd',
      name: captured.app,
      evidence: 'annotation argocd.argoproj.io/tracking-id, manager argocd-controller',
    },
  ]);
  assert.deepEqual(seen('argo-other-namespace'), [
    {
      kind: 'argocd',
      name: 'billing',
      namespace: ns,
      evidence: 'annotation argocd.argoproj.io/tracking-id, manager argocd-controller',
    },
  ]);
});

test('a tracking id copied from another object counts for nothing, as Argo CD does not count it', () => {
  assert.deepEqual(seen('argo-copied'), []);
});

test('the instance label alone is a maybe; beside a Helm release of the same name it is the chart’s', () => {
  assert.deepEqual(seen('argo-label'), [
    { kind: 'argocd', name: captured.app, evidence: 'label app.kubernetes.io/instance', maybe: true },
  ]);
  assert.deepEqual(seen('helm'), [
    {
      kind: 'helm',
      name: 'settings',
      namespace: ns,
      evidence: 'annotations meta.helm.sh/release-name, meta.helm.sh/release-namespace',
    },
  ]);
});

test('Flux labels name the Kustomization or HelmRelease with its namespace; helm-controller’s objects are Helm releases too', () => {
  assert.deepEqual(seen('flux-kustomize'), [
    {
      kind: 'flux-kustomize',
      name: 'shop',
      namespace: ns,
      evidence:
        'labels kustomize.toolkit.fluxcd.io/name, kustomize.toolkit.fluxcd.io/namespace, manager kustomize-controller',
    },
  ]);
  assert.deepEqual(
    seen('flux-helm').map((s) => `${s.kind} ${s.namespace}/${s.name}`),
    [`flux-helm ${ns}/web`, `helm ${ns}/web`],
  );
});

test("a controller's manager without any mark: the tool is known, its object is not", () => {
  assert.deepEqual(seen('manager-only'), [
    { kind: 'flux-kustomize', name: '', evidence: 'manager kustomize-controller' },
  ]);
  assert.deepEqual(seen('plain'), []);
});

test('tracking ids parse as Argo CD parses them; instance names split at the first underscore', () => {
  assert.deepEqual(parseTrackingId('shop:apps/Deployment:web/api'), {
    app: 'shop',
    group: 'apps',
    kind: 'Deployment',
    namespace: 'web',
    name: 'api',
  });
  assert.deepEqual(parseTrackingId('shop:/Namespace:/web'), {
    app: 'shop',
    group: '',
    kind: 'Namespace',
    namespace: '',
    name: 'web',
  });
  for (const bad of [
    'shop',
    'shop:apps/Deployment',
    'shop:apps:web/api',
    'shop:a/b/c:web/api',
    'shop:apps/D:web',
    7,
    null,
  ])
    assert.equal(parseTrackingId(bad as never), undefined, String(bad));
  assert.deepEqual(argoInstance('argocd_shop'), { name: 'shop', namespace: 'argocd' });
  assert.deepEqual(argoInstance('shop'), { name: 'shop' });
  for (const bad of ['', 'Shop', '../x', 'a/b', 'ns_', '_shop', 'n s_shop', 'x'.repeat(254)])
    assert.equal(argoInstance(bad), undefined, bad);
});

test('a cluster-scoped object counts its tracking id whatever namespace the id carries (the destination)', () => {
  const live = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: 'reader',
      annotations: { 'argocd.argoproj.io/tracking-id': 'shop:rbac.authorization.k8s.io/ClusterRole:web/reader' },
    },
  };
  assert.deepEqual(
    applierSightings(live).map((s) => s.name),
    ['shop'],
  );
  // Another kind, group or name: copied.
  for (const id of [
    'shop:rbac.authorization.k8s.io/Role:web/reader',
    'shop:/ClusterRole:web/reader',
    'shop:rbac.authorization.k8s.io/ClusterRole:web/writer',
  ])
    assert.deepEqual(
      applierSightings({
        ...live,
        metadata: { ...live.metadata, annotations: { 'argocd.argoproj.io/tracking-id': id } },
      }),
      [],
      id,
    );
});

test('hostile metadata gives no sighting, never a wrong one or a throw', () => {
  const hostile: unknown[] = [
    {},
    { metadata: null },
    { metadata: { labels: 'x', annotations: [1], managedFields: 'x' } },
    { metadata: { labels: { 'kustomize.toolkit.fluxcd.io/name': 7, 'kustomize.toolkit.fluxcd.io/namespace': 'ns' } } },
    { metadata: { labels: { 'kustomize.toolkit.fluxcd.io/name': '../../secrets' } } },
    { metadata: { labels: { 'helm.toolkit.fluxcd.io/name': 'a/b', 'helm.toolkit.fluxcd.io/namespace': 'ns' } } },
    { metadata: { annotations: { 'argocd.argoproj.io/tracking-id': `${'a'.repeat(2000)}:/ConfigMap:/x` } } },
    { metadata: { annotations: { 'meta.helm.sh/release-name': 'web', 'meta.helm.sh/release-namespace': 'ns' } } },
    { metadata: { managedFields: [null, 3, { manager: {} }, { manager: '__proto__' }, { manager: 'constructor' }] } },
    { metadata: { labels: { __proto__: { 'kustomize.toolkit.fluxcd.io/name': 'shop' } } } },
  ];
  for (const live of hostile) assert.deepEqual(applierSightings(live as JsonObject), [], JSON.stringify(live));
  // A namespace label that is no namespace: the Kustomization is named, its namespace is not.
  assert.deepEqual(
    applierSightings({
      metadata: {
        labels: { 'kustomize.toolkit.fluxcd.io/name': 'shop', 'kustomize.toolkit.fluxcd.io/namespace': 'Not_A_NS' },
      },
    }),
    [
      {
        kind: 'flux-kustomize',
        name: 'shop',
        evidence: 'labels kustomize.toolkit.fluxcd.io/name, kustomize.toolkit.fluxcd.io/namespace',
      },
    ],
  );
});

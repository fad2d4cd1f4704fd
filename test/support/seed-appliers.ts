// Objects applied as the GitOps tools apply them, with the marks each tool writes, and the Argo CD
// Applications, Flux Kustomizations and HelmReleases whose policies name them: the scene the
// detection of "who really applies this object" is captured from (test/fixtures/gitops/detect/) and
// checked against live (test/unit/cluster/gitops.test.ts, test/protocol/gitops-appliers.test.ts,
// test/cli/gitops-appliers.test.ts).
//
// Each object is applied server-side under the controller's own field manager (argocd-controller,
// kustomize-controller, helm-controller, helm) with the labels and annotations the tool writes
// (argo-cd util/argo/resource_tracking.go; Flux's kustomize-controller and helm-controller labels;
// Helm's ownership annotations). No controller runs: the policies are objects of the real CRDs
// (test/support/gitops-crds.ts) with the status Argo CD's controller writes (controllerNamespace),
// and a HelmRelease of the minimal CRD in test/fixtures/gitops/detect/helmrelease-crd.yaml.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { applyCrd } from '../differential/replay';
import { installGitopsCrds } from './gitops-crds';
import { apply, create, freshNamespace, objectOf, type Connection, type KubeObject } from './seed';

const helmReleaseCrdFile = path.join(import.meta.dirname, '..', 'fixtures', 'gitops', 'detect', 'helmrelease-crd.yaml');

/** Argo CD's Application and AppProject, Flux's Kustomization (from their modules) and the HelmRelease fixture. */
export async function installApplierCrds(conn: Connection): Promise<void> {
  await installGitopsCrds(conn);
  await applyCrd(conn, parse(fs.readFileSync(helmReleaseCrdFile, 'utf8')) as KubeObject);
}

export interface AppliersScene {
  /** Where the applied objects and the Flux objects live. */
  readonly namespace: string;
  /** The namespace Argo CD's controller would run in: the Application named without a namespace lives here. */
  readonly controllerNamespace: string;
  /** The Application in the controller's namespace (its tracking ids name it bare). */
  readonly app: string;
  /** The applied objects, by case, as the server answered. */
  readonly objects: Record<AppliedCase, KubeObject>;
  /** The policy objects, as the server answered. */
  readonly policies: {
    application: KubeObject;
    otherApplication: KubeObject;
    kustomization: KubeObject;
    helmRelease: KubeObject;
  };
}

export type AppliedCase =
  | 'argo-tracked'
  | 'argo-other-namespace'
  | 'argo-copied'
  | 'argo-label'
  | 'flux-kustomize'
  | 'flux-gone'
  | 'flux-helm'
  | 'helm'
  | 'manager-only'
  | 'plain';

const configMap = (namespace: string, name: string, metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, ...metadata },
  data: { mode: 'live' },
});

const deployment = (namespace: string, name: string, metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace, ...metadata },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.25-alpine' }] },
    },
  },
});

/**
 * The scene in fresh namespaces. `suffix` makes the Application's name unique in the cluster: a
 * bare tracking id is looked up by name across namespaces, and other tests may hold a `shop`.
 */
export async function seedAppliers(conn: Connection, prefix = 'appliers'): Promise<AppliersScene> {
  await installApplierCrds(conn);
  const namespace = await freshNamespace(conn, prefix);
  const controllerNamespace = await freshNamespace(conn, `${prefix}-argocd`);
  const app = `shop-${namespace.slice(namespace.lastIndexOf('-') + 1)}`;
  const written = async (manager: string, object: KubeObject, how: 'apply' | 'create' = 'apply') =>
    objectOf(
      how === 'apply' ? await apply(conn, manager, object) : await create(conn, manager, object),
      `${manager} ${object.kind} ${object.metadata.name}`,
    );

  const application = await written(
    'kch-test-setup',
    {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: app, namespace: controllerNamespace },
      spec: {
        project: 'default',
        source: { repoURL: 'https://github.com/example/shop.git', path: 'deploy/shop', targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace },
        syncPolicy: {
          automated: { selfHeal: true, prune: true },
          syncOptions: ['ServerSideApply=true', 'RespectIgnoreDifferences=true', 'CreateNamespace=true'],
        },
        ignoreDifferences: [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }],
      },
      // What Argo CD's controller writes once it reconciles the Application (the CRD has no status subresource).
      status: { controllerNamespace },
    },
    'create',
  );
  const otherApplication = await written(
    'kch-test-setup',
    {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'billing', namespace },
      spec: {
        project: 'default',
        source: { repoURL: 'https://github.com/example/billing.git', path: '.' },
        destination: { server: 'https://kubernetes.default.svc', namespace },
      },
      status: { controllerNamespace },
    },
    'create',
  );
  // An Application of the same name outside the controller's namespace (Argo CD's "applications in
  // any namespace"): its tracking ids would say `namespace_name`, so a bare name is not it.
  await written(
    'kch-test-setup',
    {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: app, namespace },
      spec: {
        project: 'default',
        source: { repoURL: 'https://github.com/example/other.git', path: '.' },
        destination: { server: 'https://kubernetes.default.svc', namespace },
      },
      status: { controllerNamespace },
    },
    'create',
  );
  const kustomization = await written('kch-test-setup', {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'shop', namespace },
    spec: {
      interval: '10m',
      path: './apps/shop',
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'shop' },
    },
  });
  const helmRelease = await written('kch-test-setup', {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: 'web', namespace },
    spec: {
      interval: '5m',
      chart: { spec: { chart: 'web', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
      driftDetection: { mode: 'enabled' },
    },
  });

  const tracking = (instance: string, group: string, kind: string, name: string) => ({
    'argocd.argoproj.io/tracking-id': `${instance}:${group}/${kind}:${namespace}/${name}`,
  });
  const objects: Record<AppliedCase, KubeObject> = {
    'argo-tracked': await written(
      'argocd-controller',
      deployment(namespace, 'argo-web', { annotations: tracking(app, 'apps', 'Deployment', 'argo-web') }),
    ),
    'argo-other-namespace': await written(
      'argocd-controller',
      configMap(namespace, 'argo-billing', {
        annotations: tracking(`${namespace}_billing`, '', 'ConfigMap', 'argo-billing'),
      }),
    ),
    // A tracking id copied from another object (a manifest made from a kubectl get): Argo CD does not count it.
    'argo-copied': await written(
      'kubectl',
      configMap(namespace, 'argo-copied', { annotations: tracking(app, 'apps', 'Deployment', 'argo-web') }),
    ),
    'argo-label': await written(
      'kubectl-client-side-apply',
      configMap(namespace, 'argo-label', { labels: { 'app.kubernetes.io/instance': app } }),
      'create',
    ),
    'flux-kustomize': await written(
      'kustomize-controller',
      deployment(namespace, 'flux-web', {
        labels: { 'kustomize.toolkit.fluxcd.io/name': 'shop', 'kustomize.toolkit.fluxcd.io/namespace': namespace },
      }),
    ),
    'flux-gone': await written(
      'kustomize-controller',
      configMap(namespace, 'flux-gone', {
        labels: { 'kustomize.toolkit.fluxcd.io/name': 'gone', 'kustomize.toolkit.fluxcd.io/namespace': namespace },
      }),
    ),
    'flux-helm': await written(
      'helm-controller',
      deployment(namespace, 'helm-web', {
        labels: {
          'helm.toolkit.fluxcd.io/name': 'web',
          'helm.toolkit.fluxcd.io/namespace': namespace,
          'app.kubernetes.io/managed-by': 'Helm',
          'app.kubernetes.io/instance': 'web',
        },
        annotations: { 'meta.helm.sh/release-name': 'web', 'meta.helm.sh/release-namespace': namespace },
      }),
    ),
    helm: await written(
      'helm',
      configMap(namespace, 'helm-settings', {
        labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/instance': 'settings' },
        annotations: { 'meta.helm.sh/release-name': 'settings', 'meta.helm.sh/release-namespace': namespace },
      }),
    ),
    // Flux's labels removed by hand: only its manager is left.
    'manager-only': await written('kustomize-controller', configMap(namespace, 'manager-only')),
    plain: await written('kubectl', configMap(namespace, 'plain')),
  };
  return {
    namespace,
    controllerNamespace,
    app,
    objects,
    policies: { application, otherApplication, kustomization, helmRelease },
  };
}

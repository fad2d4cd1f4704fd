// The request a GitOps controller sends for one object of the repository it applies from, as the
// product predicts it (controller-apply.ts): the controller named by the user (`check --applier`,
// the `kubeConflictHints.applier` setting) or detected from its object, with what that object's
// policy and the live object's marks add to what Git holds:
// - Flux kustomize-controller labels every object with its Kustomization's name and namespace
//   (from the policy, else from the labels its last apply left on the live object);
// - Argo CD adds its tracking id to the target (kept from the live object, where its last sync
//   wrote it), sends client-side unless `ServerSideApply=true`, and honours `ignoreDifferences`
//   only with `RespectIgnoreDifferences=true`;
// - Flux helm-controller writes the Helm release's label and annotations (the release named on
//   the live object).
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ControllerApplier, ControllerRequest } from './model';

const TRACKING_ID = 'argocd.argoproj.io/tracking-id';

/** The field manager each controller applies as. */
export const controllerManagers = {
  flux: 'kustomize-controller',
  'flux-helm': 'helm-controller',
  argocd: 'argocd-controller',
  'argocd-ssa': 'argocd-controller',
} as const;

/** How each controller sends: Argo CD's default sync is kubectl's client-side apply, the others apply server-side. */
export function controllerMode(name: ControllerApplier['name']): 'serverSide' | 'clientSide' {
  return name === 'argocd' ? 'clientSide' : 'serverSide';
}

export interface ControllerSend {
  readonly request: ControllerRequest;
  /** What Git holds, with what the controller adds to the target before it applies. */
  readonly manifest: JsonObject;
}

export function controllerSend(
  applier: ControllerApplier,
  manifest: JsonObject,
  live: JsonObject | undefined,
): ControllerSend {
  const fieldManager = controllerManagers[applier.name];
  const policy = applier.policy;
  switch (applier.name) {
    case 'flux': {
      const kustomization =
        policy?.kind === 'flux-kustomize'
          ? { name: policy.name, namespace: policy.namespace }
          : ownerFromLabels(live, 'kustomize.toolkit.fluxcd.io');
      return {
        request: { applier: 'flux-kustomize', fieldManager, ...(kustomization ? { kustomization } : {}) },
        manifest,
      };
    }
    case 'flux-helm': {
      const release = helmRelease(live);
      return { request: { applier: 'flux-helm', fieldManager, ...(release ? { release } : {}) }, manifest };
    }
    case 'argocd':
    case 'argocd-ssa': {
      const argo = policy?.kind === 'argocd' ? policy : undefined;
      const ignore = argo?.ignoreDifferences ?? [];
      const respectIgnoreDifferences = argo?.respectIgnoreDifferences ?? false;
      const tracked = withTrackingId(manifest, live);
      return applier.name === 'argocd-ssa'
        ? {
            request: { applier: 'argocd-server-side', fieldManager, ignore, respectIgnoreDifferences },
            manifest: tracked,
          }
        : {
            request: { applier: 'argocd-client-side', fieldManager, ignore, respectIgnoreDifferences },
            manifest: tracked,
          };
    }
  }
}

function metaOf(obj: JsonObject | undefined, name: 'labels' | 'annotations'): JsonObject {
  const meta = obj && isJsonObject(obj.metadata) ? obj.metadata : {};
  const map: JsonValue | undefined = meta[name];
  return isJsonObject(map) ? map : {};
}

function ownerFromLabels(live: JsonObject | undefined, group: string): { name: string; namespace: string } | undefined {
  const labels = metaOf(live, 'labels');
  const name = labels[`${group}/name`];
  const namespace = labels[`${group}/namespace`];
  return typeof name === 'string' && typeof namespace === 'string' ? { name, namespace } : undefined;
}

function helmRelease(live: JsonObject | undefined): { name: string; namespace: string } | undefined {
  const annotations = metaOf(live, 'annotations');
  const name = annotations['meta.helm.sh/release-name'];
  const namespace = annotations['meta.helm.sh/release-namespace'];
  return typeof name === 'string' && typeof namespace === 'string' ? { name, namespace } : undefined;
}

/** Argo CD writes its tracking id on every target it applies: the one its last sync left is kept. */
function withTrackingId(manifest: JsonObject, live: JsonObject | undefined): JsonObject {
  const id = metaOf(live, 'annotations')[TRACKING_ID];
  if (typeof id !== 'string' || metaOf(manifest, 'annotations')[TRACKING_ID] !== undefined) return manifest;
  const meta = isJsonObject(manifest.metadata) ? manifest.metadata : {};
  return { ...manifest, metadata: { ...meta, annotations: { ...metaOf(manifest, 'annotations'), [TRACKING_ID]: id } } };
}

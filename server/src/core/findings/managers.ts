// What a field manager usually is, in one line for a hover or a diagnostic. The names are the ones
// kubectl, controllers and deployment tools write (kubectl: staging/src/k8s.io/kubectl/pkg/cmd/*
// --field-manager defaults; kube-controller-manager: the HPA writes through the scale subresource).
import { isJsonObject, type JsonObject } from '../json';
import type { ManagerIdentity } from '../ssa/messages';

export interface ManagerRole {
  /** A few words for a diagnostic: "an autoscaler". */
  short: string;
  /** One sentence for a hover: what it means and what to do. */
  explanation: string;
}

export function managerRole(m: ManagerIdentity): ManagerRole | undefined {
  const name = m.manager;
  if (name === 'kube-controller-manager' && m.subresource === 'scale') {
    return {
      short: 'an autoscaler',
      explanation:
        'A HorizontalPodAutoscaler sets the replica count through the scale subresource. Remove `replicas` from the manifest rather than fight it.',
    };
  }
  if (name === 'kubectl' && m.subresource === 'scale') {
    return { short: 'kubectl scale', explanation: 'Someone ran `kubectl scale` on the live object.' };
  }
  const table: Record<string, ManagerRole> = {
    'kubectl-edit': {
      short: 'a manual kubectl edit',
      explanation:
        'Someone changed the live object by hand with `kubectl edit`. Decide whether to overwrite that change.',
    },
    'kubectl-patch': {
      short: 'a manual kubectl patch',
      explanation: 'Someone changed the live object by hand with `kubectl patch`.',
    },
    'kubectl-set': {
      short: 'kubectl set',
      explanation: 'Someone changed the live object with `kubectl set` (often `kubectl set image`).',
    },
    'kubectl-label': { short: 'kubectl label', explanation: 'Someone added or changed labels with `kubectl label`.' },
    'kubectl-annotate': {
      short: 'kubectl annotate',
      explanation: 'Someone added or changed annotations with `kubectl annotate`.',
    },
    'kubectl-replace': {
      short: 'kubectl replace',
      explanation: 'The object was last replaced whole with `kubectl replace`.',
    },
    'kubectl-rollout': {
      short: 'kubectl rollout',
      explanation: '`kubectl rollout restart` or `undo` wrote this (a restartedAt annotation or an older template).',
    },
    'kubectl-create': {
      short: 'kubectl create',
      explanation: 'The object was created with `kubectl create`, which owns every field it set, defaults included.',
    },
    'kubectl-client-side-apply': {
      short: 'client-side kubectl apply',
      explanation:
        'Plain `kubectl apply` (client-side) wrote these fields. After one successful `kubectl apply --server-side`, kubectl moves them to the `kubectl` manager and they stop conflicting.',
    },
    'before-first-apply': {
      short: 'the object before its first server-side apply',
      explanation:
        'The object had no field ownership recorded when it was first applied server-side (it predates field tracking, or its managedFields were reset); this manager owns every field it had then.',
    },
    'ancient-changes': {
      short: 'merged older changes',
      explanation:
        'The server merged more than ten update managers into this one; who made the changes is no longer known.',
    },
    helm: { short: 'Helm', explanation: 'Another deployment tool owns this object: a Helm release.' },
    'argocd-controller': {
      short: 'Argo CD',
      explanation: 'Another deployment tool owns this object: an Argo CD application.',
    },
    'kustomize-controller': {
      short: 'Flux',
      explanation: 'Another deployment tool owns this object: a Flux Kustomization.',
    },
    'helm-controller': {
      short: 'Flux Helm',
      explanation: 'Another deployment tool owns this object: a Flux HelmRelease.',
    },
    'kube-controller-manager': {
      short: 'a controller',
      explanation: 'A built-in controller of the cluster writes this field.',
    },
    kubectl: {
      short: m.operation === 'Apply' ? 'kubectl apply --server-side' : 'kubectl',
      explanation:
        m.operation === 'Apply'
          ? 'A server-side `kubectl apply` set this field.'
          : 'kubectl wrote this field with an update.',
    },
  };
  return Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
}

/** The distinct manager names of a live object, in the order the server lists them. */
export function managerNames(live: JsonObject | undefined): string[] {
  const entries =
    live && isJsonObject(live.metadata) && Array.isArray(live.metadata.managedFields)
      ? live.metadata.managedFields
      : [];
  const names: string[] = [];
  for (const e of entries) {
    if (isJsonObject(e) && typeof e.manager === 'string' && !names.includes(e.manager)) names.push(e.manager);
  }
  return names;
}

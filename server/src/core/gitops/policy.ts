// The policy of the object that applies another: an Argo CD Application, a Flux Kustomization or a
// Flux HelmRelease, read from that object as the cluster answered it (or a snapshot held it). Hostile
// input: every value is checked for its type, a value of another type counts as not written (the
// controller's default), and lists are bounded. The defaults are the controllers' own:
// - Argo CD (pkg/apis/application/v1alpha1/types.go): automated sync when `syncPolicy.automated` is
//   set and its `enabled` is not false (IsAutomatedSyncEnabled), `prune` and `selfHeal` false unless
//   written, a sync option counts only as the exact string Argo CD looks for (SyncOptions.HasOption:
//   `ServerSideApply=true`, `RespectIgnoreDifferences=true`).
// - Flux kustomize-controller (api/v1 KustomizationSpec): `suspend` and `force` false, `path` the
//   source's root when empty.
// - Flux helm-controller (api/v2 DriftDetection): `driftDetection.mode` `disabled` unless written.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { isNamespaceName, isObjectName } from './appliers';
import type {
  ArgoApplicationPolicy,
  ArgoIgnoreRule,
  FluxHelmReleasePolicy,
  FluxKustomizationPolicy,
  HelmDriftMode,
} from './model';

/** The kinds whose objects hold a policy, as the cluster serves them. */
export const policyKinds = {
  argocd: {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    resource: 'applications',
    label: 'Argo CD Application',
  },
  'flux-kustomize': {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    resource: 'kustomizations',
    label: 'Flux Kustomization',
  },
  'flux-helm': {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    resource: 'helmreleases',
    label: 'Flux HelmRelease',
  },
} as const;

/** At most this many entries of a list are read (syncOptions, ignoreDifferences and their lists, sources). */
const maxEntries = 256;

export function applicationPolicy(object: JsonValue | undefined): ArgoApplicationPolicy | undefined {
  const id = identity(object, policyKinds.argocd);
  if (!id || !isJsonObject(object)) return undefined;
  const spec = objectAt(object.spec);
  const syncPolicy = objectAt(spec.syncPolicy);
  const automatedValue = syncPolicy.automated;
  const automatedSpec = objectAt(automatedValue);
  const automated = isJsonObject(automatedValue) && automatedSpec.enabled !== false;
  const options = strings(syncPolicy.syncOptions);
  return {
    kind: 'argocd',
    ...id,
    automated,
    selfHeal: automated && automatedSpec.selfHeal === true,
    prune: automated && automatedSpec.prune === true,
    serverSideApply: options.includes('ServerSideApply=true'),
    respectIgnoreDifferences: options.includes('RespectIgnoreDifferences=true'),
    ignoreDifferences: list(spec.ignoreDifferences).flatMap((entry) => {
      const rule = ignoreRule(entry);
      return rule ? [rule] : [];
    }),
    sources: [...(isJsonObject(spec.source) ? [spec.source] : []), ...list(spec.sources)].flatMap((s) => {
      if (!isJsonObject(s) || typeof s.repoURL !== 'string') return [];
      return [
        {
          repoURL: s.repoURL,
          ...(typeof s.path === 'string' ? { path: s.path } : {}),
          ...(typeof s.chart === 'string' ? { chart: s.chart } : {}),
        },
      ];
    }),
  };
}

function ignoreRule(entry: JsonValue): ArgoIgnoreRule | undefined {
  if (!isJsonObject(entry) || typeof entry.kind !== 'string') return undefined;
  return {
    ...(typeof entry.group === 'string' ? { group: entry.group } : {}),
    kind: entry.kind,
    ...(typeof entry.name === 'string' ? { name: entry.name } : {}),
    ...(typeof entry.namespace === 'string' ? { namespace: entry.namespace } : {}),
    jsonPointers: strings(entry.jsonPointers),
    jqPathExpressions: strings(entry.jqPathExpressions),
    managedFieldsManagers: strings(entry.managedFieldsManagers),
  };
}

export function kustomizationPolicy(object: JsonValue | undefined): FluxKustomizationPolicy | undefined {
  const id = identity(object, policyKinds['flux-kustomize']);
  if (!id || !isJsonObject(object)) return undefined;
  const spec = objectAt(object.spec);
  return {
    kind: 'flux-kustomize',
    ...id,
    interval: typeof spec.interval === 'string' ? spec.interval : '',
    suspend: spec.suspend === true,
    force: spec.force === true,
    prune: spec.prune === true,
    path: typeof spec.path === 'string' ? spec.path : '',
  };
}

export function helmReleasePolicy(object: JsonValue | undefined): FluxHelmReleasePolicy | undefined {
  const id = identity(object, policyKinds['flux-helm']);
  if (!id || !isJsonObject(object)) return undefined;
  const spec = objectAt(object.spec);
  const mode = objectAt(spec.driftDetection).mode;
  const driftDetection: HelmDriftMode = mode === 'enabled' || mode === 'warn' ? mode : 'disabled';
  return {
    kind: 'flux-helm',
    ...id,
    interval: typeof spec.interval === 'string' ? spec.interval : '',
    suspend: spec.suspend === true,
    driftDetection,
  };
}

/** The object's name and namespace, when it is an object of the kind (any served version of its group). */
function identity(
  object: JsonValue | undefined,
  of: { readonly apiVersion: string; readonly kind: string },
): { name: string; namespace: string } | undefined {
  if (!isJsonObject(object) || object.kind !== of.kind || typeof object.apiVersion !== 'string') return undefined;
  const group = of.apiVersion.slice(0, of.apiVersion.indexOf('/'));
  if (!object.apiVersion.startsWith(`${group}/`)) return undefined;
  const metadata = objectAt(object.metadata);
  const { name, namespace } = metadata;
  if (typeof name !== 'string' || !isObjectName(name)) return undefined;
  if (typeof namespace !== 'string' || !isNamespaceName(namespace)) return undefined;
  return { name, namespace };
}

function objectAt(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value.slice(0, maxEntries) : [];
}

function strings(value: JsonValue | undefined): string[] {
  return list(value).filter((v): v is string => typeof v === 'string');
}

/** Flux's per-object `kustomize.toolkit.fluxcd.io/ssa` annotation, as the live object carries it. */
export const fluxSsaAnnotation = 'kustomize.toolkit.fluxcd.io/ssa';

/** The object's Flux ssa mode: Override, Merge, IfNotPresent, Ignore (undefined when it has none). */
export function fluxSsaModeOf(object: JsonObject): string | undefined {
  const metadata = object.metadata;
  const annotations = isJsonObject(metadata) ? metadata.annotations : undefined;
  const value: JsonValue | undefined = isJsonObject(annotations) ? annotations[fluxSsaAnnotation] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The mark that keeps an object out of helm-controller's drift detection (helm-controller api/v2). */
export const helmDriftDetectionKey = 'helm.toolkit.fluxcd.io/driftDetection';

/**
 * Whether helm-controller's drift detection leaves the object alone: a label or annotation
 * `helm.toolkit.fluxcd.io/driftDetection: disabled`, the value compared without case, as
 * fluxcd/pkg/ssa utils.AnyInMetadata compares its exclusion selector.
 */
export function helmDriftExcluded(object: JsonObject): boolean {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  return [metadata.labels, metadata.annotations].some((marks) => {
    const value = isJsonObject(marks) ? marks[helmDriftDetectionKey] : undefined;
    return typeof value === 'string' && value.toLowerCase() === 'disabled';
  });
}

/**
 * Whether an Application's `ignoreDifferences` covers a field of an object: an entry for its group
 * and kind (and name and namespace, where given) whose JSON pointer is the field's or an ancestor's,
 * or whose `managedFieldsManagers` names the manager writing it. jq paths are not read.
 */
export function argoIgnores(
  policy: ArgoApplicationPolicy,
  target: { readonly apiVersion: string; readonly kind: string; readonly name?: string; readonly namespace?: string },
  pointer: string | undefined,
  manager?: string,
): boolean {
  const group = target.apiVersion.includes('/') ? target.apiVersion.slice(0, target.apiVersion.indexOf('/')) : '';
  return policy.ignoreDifferences.some(
    (rule) =>
      rule.kind === target.kind &&
      (rule.group ?? '') === group &&
      (rule.name === undefined || rule.name === target.name) &&
      (rule.namespace === undefined || rule.namespace === target.namespace) &&
      ((manager !== undefined && rule.managedFieldsManagers.includes(manager)) ||
        (pointer !== undefined && rule.jsonPointers.some((p) => pointer === p || pointer.startsWith(`${p}/`)))),
  );
}

/** `.spec.replicas` → `/spec/replicas`; undefined for a path through a list item or a key with a dot or slash. */
export function jsonPointerOf(serverPath: string): string | undefined {
  if (serverPath.includes('[')) return undefined;
  return serverPath.replace(/\./g, '/');
}

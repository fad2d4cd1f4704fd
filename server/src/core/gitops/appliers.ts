// Who applies an object, as its live metadata says: the marks each tool writes on what it applies,
// read from the live object alone (plain JSON, hostile: every value is checked before it is used).
//
// - Argo CD: the `argocd.argoproj.io/tracking-id` annotation, `<app>:<group>/<kind>:<namespace>/<name>`,
//   where `<app>` is the Application's name, or `<namespace>_<name>` when the Application lives outside
//   the controller's namespace (argo-cd util/argo/resource_tracking.go ParseAppInstanceValue,
//   util/argo/argo.go AppInstanceName). The id counts only when it names this very object: a copied
//   annotation names another one, and Argo CD itself does not count it (controller/state.go
//   isSelfReferencedObj: same group, kind and name, and the same namespace unless the object is
//   cluster-scoped). The older `app.kubernetes.io/instance` label (tracking method `label`) is a weaker
//   sign: Helm charts write the same label with the release's name, so it is a `maybe`.
// - Flux: kustomize-controller labels what it applies `kustomize.toolkit.fluxcd.io/name` and
//   `/namespace`, helm-controller `helm.toolkit.fluxcd.io/name` and `/namespace` (fluxcd docs,
//   "Kustomization" and "HelmRelease" APIs).
// - Helm: the release's `meta.helm.sh/release-name` and `/release-namespace` annotations with the
//   `app.kubernetes.io/managed-by: Helm` label (helm pkg/action/validate.go).
// - The field managers in managedFields (`argocd-controller`, `kustomize-controller`,
//   `helm-controller`): evidence beside a mark, or the only sign when the marks were removed.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ApplierKind, ApplierSighting } from './model';

export const argoTrackingAnnotation = 'argocd.argoproj.io/tracking-id';
export const argoInstanceLabel = 'app.kubernetes.io/instance';
export const fluxKustomizeNameLabel = 'kustomize.toolkit.fluxcd.io/name';
export const fluxKustomizeNamespaceLabel = 'kustomize.toolkit.fluxcd.io/namespace';
export const fluxHelmNameLabel = 'helm.toolkit.fluxcd.io/name';
export const fluxHelmNamespaceLabel = 'helm.toolkit.fluxcd.io/namespace';
export const helmManagedByLabel = 'app.kubernetes.io/managed-by';
export const helmReleaseNameAnnotation = 'meta.helm.sh/release-name';
export const helmReleaseNamespaceAnnotation = 'meta.helm.sh/release-namespace';

/** The field managers of the controllers, as they write them (argo-cd common.ArgoCDSSAManager; Flux's controller names). */
export const applierManagers: Readonly<Record<string, ApplierKind>> = {
  'argocd-controller': 'argocd',
  'kustomize-controller': 'flux-kustomize',
  'helm-controller': 'flux-helm',
};

/** An Argo CD tracking id, parsed as Argo CD parses it. */
export interface ArgoTrackingId {
  /** The instance name: the Application's name, or `namespace_name`. */
  readonly app: string;
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** `<app>:<group>/<kind>:<namespace>/<name>`; undefined for anything else (Argo CD ignores it too). */
export function parseTrackingId(value: JsonValue | undefined): ArgoTrackingId | undefined {
  if (typeof value !== 'string' || value.length > maxMarkLength) return undefined;
  const first = value.indexOf(':');
  const second = first < 0 ? -1 : value.indexOf(':', first + 1);
  if (second < 0) return undefined;
  const groupKind = value.slice(first + 1, second).split('/');
  const namespaceName = value.slice(second + 1).split('/');
  if (groupKind.length !== 2 || namespaceName.length !== 2) return undefined;
  return {
    app: value.slice(0, first),
    group: groupKind[0]!,
    kind: groupKind[1]!,
    namespace: namespaceName[0]!,
    name: namespaceName[1]!,
  };
}

/**
 * An Argo CD instance name as the Application it names: `namespace_name` names the namespace, a bare
 * name leaves it to the controller's (undefined). Undefined when it cannot name an Application.
 */
export function argoInstance(instance: string): { readonly name: string; readonly namespace?: string } | undefined {
  const cut = instance.indexOf('_');
  const name = cut < 0 ? instance : instance.slice(cut + 1);
  const namespace = cut < 0 ? undefined : instance.slice(0, cut);
  if (!isObjectName(name)) return undefined;
  if (namespace === undefined) return { name };
  return isNamespaceName(namespace) ? { name, namespace } : undefined;
}

/** The tools that apply `live`, by its own marks and managers; most certain first. */
export function applierSightings(live: JsonObject): ApplierSighting[] {
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const labels = isJsonObject(metadata.labels) ? metadata.labels : {};
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : {};
  const managers = managerKinds(metadata.managedFields);
  const sure: ApplierSighting[] = [];
  const maybe: ApplierSighting[] = [];
  const withManager = (kind: ApplierKind, evidence: string) => {
    const manager = managers.get(kind);
    return manager ? `${evidence}, manager ${manager}` : evidence;
  };

  // Argo CD's tracking id, when it is about this object; else, without any tracking id, its instance label.
  const trackingValue = own(annotations, argoTrackingAnnotation);
  const tracking = parseTrackingId(trackingValue);
  if (tracking && namesThisObject(tracking, live, metadata)) {
    const app = argoInstance(tracking.app);
    if (app)
      sure.push({ kind: 'argocd', ...app, evidence: withManager('argocd', `annotation ${argoTrackingAnnotation}`) });
  } else if (trackingValue === undefined) {
    const instance = own(labels, argoInstanceLabel);
    const app = typeof instance === 'string' ? argoInstance(instance) : undefined;
    // Helm's charts write the same label with the release's name: then it is Helm's, not Argo CD's.
    const helmRelease = own(annotations, helmReleaseNameAnnotation);
    const helmsLabel = own(labels, helmManagedByLabel) === 'Helm' && helmRelease === instance;
    if (app && !helmsLabel)
      maybe.push({
        kind: 'argocd',
        ...app,
        evidence: withManager('argocd', `label ${argoInstanceLabel}`),
        maybe: true,
      });
  }

  const fluxPair = (kind: ApplierKind, nameLabel: string, namespaceLabel: string) => {
    const name = own(labels, nameLabel);
    const namespace = own(labels, namespaceLabel);
    if (typeof name !== 'string' || !isObjectName(name)) return;
    const placed = typeof namespace === 'string' && isNamespaceName(namespace) ? { namespace } : {};
    sure.push({ kind, name, ...placed, evidence: withManager(kind, `labels ${nameLabel}, ${namespaceLabel}`) });
  };
  fluxPair('flux-kustomize', fluxKustomizeNameLabel, fluxKustomizeNamespaceLabel);
  fluxPair('flux-helm', fluxHelmNameLabel, fluxHelmNamespaceLabel);

  // Helm's own ownership marks: the release name and namespace, with the managed-by label.
  const release = own(annotations, helmReleaseNameAnnotation);
  const releaseNamespace = own(annotations, helmReleaseNamespaceAnnotation);
  if (
    own(labels, helmManagedByLabel) === 'Helm' &&
    typeof release === 'string' &&
    isObjectName(release) &&
    typeof releaseNamespace === 'string' &&
    isNamespaceName(releaseNamespace)
  )
    sure.push({
      kind: 'helm',
      name: release,
      namespace: releaseNamespace,
      evidence: `annotations ${helmReleaseNameAnnotation}, ${helmReleaseNamespaceAnnotation}`,
    });

  // The instance label is any chart's too: beside another tool's mark it says Argo CD only with Argo CD's manager.
  const others = sure.some((s) => s.kind !== 'argocd');
  const argoMaybe = !others || managers.has('argocd') ? maybe : [];
  // A controller's manager with no mark naming its object: the tool is known, its object is not.
  const sighted = new Set([...sure, ...argoMaybe].map((s) => s.kind));
  const unnamed: ApplierSighting[] = [];
  for (const [kind, manager] of managers)
    if (!sighted.has(kind)) unnamed.push({ kind, name: '', evidence: `manager ${manager}` });
  return [...sure, ...argoMaybe, ...unnamed];
}

/** Argo CD's isSelfReferencedObj: same group, kind and name, and the same namespace unless the object has none. */
function namesThisObject(id: ArgoTrackingId, live: JsonObject, metadata: JsonObject): boolean {
  const apiVersion = typeof live.apiVersion === 'string' ? live.apiVersion : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  return (
    (namespace === id.namespace || namespace === '') &&
    metadata.name === id.name &&
    group === id.group &&
    live.kind === id.kind
  );
}

/** The controllers among the object's managers, in the order the server lists them. */
function managerKinds(entries: JsonValue | undefined): Map<ApplierKind, string> {
  const found = new Map<ApplierKind, string>();
  if (!Array.isArray(entries)) return found;
  for (const entry of entries) {
    const manager = isJsonObject(entry) ? entry.manager : undefined;
    if (typeof manager !== 'string' || !Object.prototype.hasOwnProperty.call(applierManagers, manager)) continue;
    const kind = applierManagers[manager]!;
    if (!found.has(kind)) found.set(kind, manager);
  }
  return found;
}

function own(map: JsonObject, key: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

/** A mark longer than this is no tool's (an annotation may hold 256 KiB). */
const maxMarkLength = 1024;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A name an Application, Kustomization, HelmRelease or Helm release can have (an RFC 1123 subdomain). */
export function isObjectName(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** A namespace's name (an RFC 1123 label). */
export function isNamespaceName(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

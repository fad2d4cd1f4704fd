// Why the cluster does not serve a manifest's kind, and what the user is told about it. Two causes
// look alike from afar and want different advice: a built-in kind at an apiVersion the cluster no
// longer serves (read the deprecation guide, use the version that is served), and a custom
// resource whose CustomResourceDefinition is not installed (install the CRD first). Which one it is
// comes from discovery — is the group served at all, is the kind served at other versions — and
// from the list of Kubernetes' own groups, never from the look of a name. A third case is no
// problem of the manifest: the files applied with it define that CRD, so the object cannot be
// predicted yet, and only the order of the apply matters. Pure: the editor and the command line
// both judge here.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import { docsLinks } from './catalogue';
import { definedNamespaces, type DefinedNamespace } from './namespaces';

/** What discovery says around a kind it does not serve (the cluster layer fills it in). */
export interface NotServedDiscovery {
  /** The versions the cluster serves of the manifest's group, preferred first; empty when it serves no such group. */
  readonly groupVersions: readonly string[];
  /** The apiVersions of the manifest's group that serve a kind of this name. */
  readonly kindServedIn: readonly string[];
  /** The apiVersions of other groups that serve a kind of this name (`apps/v1` for an `extensions/v1beta1` Deployment). */
  readonly kindServedElsewhere: readonly string[];
}

/**
 * The API groups Kubernetes itself serves or once served (the core group is ''). Their kinds are
 * never custom resources: a version of them that is not served was removed or is not enabled.
 * Groups under k8s.io that come as CRDs (gateway.networking.k8s.io, snapshot.storage.k8s.io) are
 * not here, which is why this is a list and not a suffix.
 */
export const builtInGroups: ReadonlySet<string> = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'auditregistration.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'extensions',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'settings.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/**
 * What the files applied together bring that the cluster may not have yet: a kind that a
 * CustomResourceDefinition among them defines, or a namespace that a Namespace object among them
 * creates (namespaces.ts). One list, so that every place that gathers the files checked together
 * (the command line's files, streams and renders; the editor's open documents) passes both.
 */
export type DefinedKind = DefinedCustomKind | DefinedNamespace;

/** A kind that a CustomResourceDefinition among the files defines. */
export interface DefinedCustomKind {
  readonly group: string;
  readonly kind: string;
  /** The versions the CRD serves. */
  readonly versions: readonly string[];
  /** The CRD's name (`certificates.cert-manager.io`). */
  readonly crd: string;
  /** Where the CRD is written, as the user reads it (a path, `<stdin>`, an overlay). */
  readonly file: string;
}

/**
 * The kinds the CustomResourceDefinitions among `resources` define (apiextensions.k8s.io v1, and
 * v1beta1's `version`), then the namespaces their Namespace objects create.
 */
export function definedKinds(resources: Iterable<ManifestResource>, file: string): DefinedKind[] {
  const list = [...resources];
  const out: DefinedKind[] = [];
  for (const r of list) {
    if (r.kind !== 'CustomResourceDefinition' || !r.apiVersion.startsWith('apiextensions.k8s.io/')) continue;
    const spec = r.object.spec;
    if (
      !isJsonObject(spec) ||
      typeof spec.group !== 'string' ||
      !isJsonObject(spec.names) ||
      typeof spec.names.kind !== 'string'
    )
      continue;
    const versions = servedVersions(spec);
    if (versions.length === 0) continue;
    out.push({ group: spec.group, kind: spec.names.kind, versions, crd: r.name ?? '', file });
  }
  out.push(...definedNamespaces(list, file));
  return out;
}

/** Whether a definition is a CRD's kind (not a Namespace). */
export function isCustomKind(d: DefinedKind): d is DefinedCustomKind {
  return !('namespace' in d);
}

function servedVersions(spec: JsonObject): string[] {
  const listed = Array.isArray(spec.versions) ? spec.versions : [];
  // v1 requires `served` on each version; v1beta1 allowed a bare `version` (served) instead.
  const versions = listed.flatMap((v: JsonValue) =>
    isJsonObject(v) && typeof v.name === 'string' && v.served !== false ? [v.name] : [],
  );
  if (listed.length === 0 && typeof spec.version === 'string') versions.push(spec.version);
  return versions;
}

/** The settings of an analysis that also knows the kinds `defined` (unchanged when there are none). */
export function withDefinedKinds<T extends { readonly definedKinds?: readonly DefinedKind[] }>(
  settings: T,
  defined: readonly DefinedKind[],
): T {
  if (defined.length === 0) return settings;
  return { ...settings, definedKinds: [...(settings.definedKinds ?? []), ...defined] };
}

/** A stable key of a set of defined kinds: analyses made with the same key saw the same definitions. */
export function definedKindsKey(defined: readonly DefinedKind[] | undefined): string {
  if (!defined || defined.length === 0) return '';
  return JSON.stringify(
    defined
      .map((d) => (isCustomKind(d) ? [d.group, d.kind, d.versions, d.crd, d.file] : [d.namespace, d.file]))
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
}

/** What to tell the user about a kind the cluster does not serve: the code, the sentence, the link. */
export interface NotServedJudgement {
  readonly code: 'kind-not-served' | 'kind-from-new-crd';
  readonly message: string;
  readonly docs: string;
}

/**
 * The judgement on `apiVersion`/`kind`, which the cluster does not serve. `discovery`: what the
 * cluster serves around it (absent from an older snapshot: then `fallback`, the cluster layer's
 * own sentence, is said); `defined`: the kinds the CRDs among the files checked together define.
 */
export function judgeNotServed(
  apiVersion: string,
  kind: string,
  discovery: NotServedDiscovery | undefined,
  defined: readonly DefinedKind[] | undefined,
  fallback: string,
): NotServedJudgement {
  const [group, version] = splitApiVersion(apiVersion);
  const sameKind = (defined ?? []).filter(isCustomKind).filter((d) => d.group === group && d.kind === kind);
  const definer = sameKind.find((d) => d.versions.includes(version));
  // kubectl maps every object to a resource before it sends any: in one pass the CRD is created
  // and this object fails (its words), and a second pass succeeds.
  const kubectlWords = `no matches for kind "${kind}" in version "${apiVersion}"`;
  if (definer) {
    return {
      code: 'kind-from-new-crd',
      message:
        `${kind} (${apiVersion}) is defined by the CustomResourceDefinition ${definer.crd || `for ${kind}`} in ${definer.file}, which the cluster does not serve yet: ` +
        `nothing about this object can be predicted before it is installed. Apply the CRD first (and wait until it is established): ` +
        `kubectl apply of both in one pass creates the CRD and fails on this object (${kubectlWords}).`,
      docs: docsLinks.customResources,
    };
  }
  // The CRDs among the files define the kind, but not at this version: say so beside the cause.
  const filesToo =
    sameKind.length > 0
      ? ` The CustomResourceDefinition ${sameKind[0]!.crd} in ${sameKind[0]!.file} does not serve ${version} either (it serves ${sameKind[0]!.versions.join(', ')}).`
      : '';
  if (!discovery)
    return {
      code: 'kind-not-served',
      message: (fallback.trim() || `The cluster does not serve ${kind} in ${apiVersion}.`) + filesToo,
      docs: docsLinks.apiVersions,
    };

  if (builtInGroups.has(group) && sameKind.length === 0) {
    // Kubernetes' own kind at a version that was removed (or is not enabled): what is served instead.
    const instead = [
      ...new Set([
        ...discovery.kindServedIn,
        ...discovery.kindServedElsewhere.filter((v) => builtInGroups.has(splitApiVersion(v)[0])),
      ]),
    ];
    const hint = instead.length ? ` (served: ${instead.join(', ')})` : '';
    return {
      code: 'kind-not-served',
      message: `The cluster does not serve ${kind} in ${apiVersion}${hint}.`,
      docs: docsLinks.apiVersions,
    };
  }
  if (discovery.kindServedIn.length > 0) {
    // The CRD is installed, but does not serve this version.
    return {
      code: 'kind-not-served',
      message: `The cluster does not serve ${kind} in ${apiVersion} (served: ${discovery.kindServedIn.join(', ')}): its CustomResourceDefinition does not serve ${version}.${filesToo}`,
      docs: docsLinks.crdVersions,
    };
  }
  // A kind of that name in another group (a project that moved its CRDs to a new group) is worth a word.
  const elsewhere =
    discovery.kindServedElsewhere.length > 0
      ? ` The cluster serves a ${kind} in ${discovery.kindServedElsewhere.join(', ')}.`
      : '';
  const groupSaid =
    discovery.groupVersions.length === 0
      ? `The cluster serves no API group ${group}`
      : `The cluster serves the API group ${group} (${discovery.groupVersions.join(', ')}) but no kind ${kind} in it`;
  return {
    code: 'kind-not-served',
    message: `${groupSaid}: ${kind} is a custom resource whose CustomResourceDefinition is not installed. Install the CRD before this object; kubectl apply fails on it (${kubectlWords}).${elsewhere}${filesToo}`,
    docs: docsLinks.customResources,
  };
}

/** `apps/v1` → ['apps', 'v1'], `v1` → ['', 'v1']. */
function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

// What the prediction needs to know about managers recorded at another apiVersion than the
// manifest's (core/ssa/versions.ts compares each in its own version, as the server does): the
// OpenAPI documents of those versions, and — for a custom resource — its CustomResourceDefinition's
// versions and conversion strategy. Asked only when the live object has such managers, so an
// ordinary object costs nothing more. Reads only: the CRD comes through the same watched cache as
// every live object (a GET where listing is forbidden). Plain data back; a CRD that cannot be read
// leaves the versions unknown, and the prediction says what it cannot compare.
import { canonicalJson, isJsonObject, type JsonObject } from '../core/json';
import { splitApiVersion, type CrdVersions, type KindVersions } from '../core/ssa/versions';
import type { ClusterConnection } from './connection';
import type { LiveObjectState } from './types';

export interface ManagerVersions {
  /** The OpenAPI documents of the other versions known now (one per served version). */
  readonly documents: readonly JsonObject[];
  /** undefined: no manager at another version, or the answer is still coming. */
  readonly versions?: KindVersions;
  /** Something is still being read; `load` waits for it. */
  readonly pending: boolean;
}

const none: ManagerVersions = { documents: [], pending: false };

/** The apiVersions of the same group, other than `apiVersion`, that the live object's managers were recorded at. */
export function otherManagerVersions(live: JsonObject | undefined, apiVersion: string): string[] {
  const entries =
    live && isJsonObject(live.metadata) && Array.isArray(live.metadata.managedFields)
      ? live.metadata.managedFields
      : [];
  const [group] = splitApiVersion(apiVersion);
  const out = new Set<string>();
  for (const e of entries) {
    if (!isJsonObject(e) || typeof e.apiVersion !== 'string' || e.apiVersion === apiVersion) continue;
    if (splitApiVersion(e.apiVersion)[0] === group) out.add(e.apiVersion);
  }
  return [...out].sort();
}

/** A CustomResourceDefinition's versions and conversion strategy, as core/ssa/versions.ts reads them. */
export function crdVersions(crd: JsonObject): CrdVersions | undefined {
  const spec = isJsonObject(crd.spec) ? crd.spec : undefined;
  if (!spec || !Array.isArray(spec.versions)) return undefined;
  const strategy = isJsonObject(spec.conversion) ? spec.conversion.strategy : undefined;
  const versions = spec.versions.flatMap((v) => {
    if (!isJsonObject(v) || typeof v.name !== 'string') return [];
    const schema = isJsonObject(v.schema) ? canonicalJson(v.schema.openAPIV3Schema) : '';
    return [{ name: v.name, served: v.served === true, schema }];
  });
  return { conversion: strategy === 'Webhook' ? 'Webhook' : 'None', versions };
}

/** Core groups and the *.k8s.io groups are built in (a CRD there needs an approval few have). */
export function surelyBuiltIn(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** The CustomResourceDefinition that defines a custom kind (read only when managers wrote at other versions). */
export function crdRef(resource: { group: string; resource: string }) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: `${resource.resource}.${resource.group}`,
    namespace: '',
  };
}

// One answer object per CRD object (and constants otherwise), so that the editor can tell by
// identity whether what it analysed with has changed.
const BUILT_IN: KindVersions = { builtIn: true };
const UNKNOWN: KindVersions = {};
const perCrd = new WeakMap<JsonObject, KindVersions>();

/** The kind's versions from its CRD as read (undefined: not read yet); also for a snapshot's saved CRD. */
export function versionsFrom(
  resource: { group: string },
  crd: LiveObjectState | undefined,
): { versions?: KindVersions; pending: boolean } {
  if (surelyBuiltIn(resource.group)) return { versions: BUILT_IN, pending: false };
  if (!crd || crd.state === 'pending') return { pending: true };
  if (crd.state === 'exists') {
    let versions = perCrd.get(crd.object);
    if (!versions) {
      const parsed = crdVersions(crd.object);
      versions = parsed ? { crd: parsed } : UNKNOWN;
      perCrd.set(crd.object, versions);
    }
    return { versions, pending: false };
  }
  // Absent: an aggregated API or a built-in kind; a failure (forbidden): unknown.
  return { versions: crd.state === 'absent' ? BUILT_IN : UNKNOWN, pending: false };
}

/**
 * What is known now about the managers' versions of one live object. `openApi` answers a cached
 * document (undefined while unknown or not published); the missing reads are started by the caller.
 */
export function peekManagerVersions(
  connection: ClusterConnection,
  ref: { apiVersion: string; kind: string },
  resource: { group: string; resource: string },
  live: JsonObject | undefined,
  openApi: (apiVersion: string) => JsonObject | undefined,
): ManagerVersions & { missing: readonly string[] } {
  const others = otherManagerVersions(live, ref.apiVersion);
  if (others.length === 0) return { ...none, missing: [] };
  const served = others.filter((v) => connection.cachedResource(v, ref.kind) !== undefined);
  const documents = served.flatMap((v): JsonObject[] => {
    const d = openApi(v);
    return d ? [d] : [];
  });
  const missing = served.filter((v) => !openApi(v));
  const crd = surelyBuiltIn(resource.group) ? undefined : connection.peekObject(crdRef(resource));
  const { versions, pending } = versionsFrom(resource, crd);
  return { documents, ...(versions ? { versions } : {}), pending: pending || missing.length > 0, missing };
}

/** The same, waiting for the CRD and the documents (`loadOpenApi` fetches one). */
export async function loadManagerVersions(
  connection: ClusterConnection,
  ref: { apiVersion: string; kind: string },
  resource: { group: string; resource: string },
  live: JsonObject | undefined,
  loadOpenApi: (apiVersion: string) => Promise<JsonObject | undefined>,
): Promise<ManagerVersions> {
  const others = otherManagerVersions(live, ref.apiVersion);
  if (others.length === 0) return none;
  const served = (
    await Promise.all(others.map(async (v) => ((await connection.resolveKind(v, ref.kind)).ok ? [v] : [])))
  ).flat();
  const [documents, crd] = await Promise.all([
    Promise.all(served.map(loadOpenApi)).then((docs) => docs.filter((d): d is JsonObject => d !== undefined)),
    surelyBuiltIn(resource.group) ? Promise.resolve(undefined) : connection.getObject(crdRef(resource)),
  ]);
  const { versions } = versionsFrom(resource, crd);
  return { documents, ...(versions ? { versions } : {}), pending: false };
}

// What the check needs to know of each manifest object — is its kind served, does it exist (with
// its managedFields), the schema of its group-version — from one of two places: the live cluster,
// or a snapshot directory. Both answer the same records, so an offline check gives the same
// findings as a live one. A problem that makes the answer unknowable (unreachable, forbidden) is
// returned, not thrown: the command stops with it.
import type { ResourceFacts } from '../core/findings/analysis';
import type { JsonObject } from '../core/json';
import type { ManifestResource } from '../core/manifest/manifest';
import { qualifiedResource } from '../core/ssa/messages';
import type { ReportSource } from './report';
import { schemaFromOpenApi, type SchemaModel } from '../core/ssa/schema';
import { liveFacts, loadNamespaceFacts, notServedKindFacts, type ApiResourceInfo, type ClusterConnection, type ClusterProblem } from '../cluster';

export type FactsAnswer =
  | { ok: true; facts: ResourceFacts; title: string; notes: string[] }
  | { ok: false; problem: ClusterProblem };

export interface FactsReader {
  readonly source: ReportSource;
  read(resource: ManifestResource): Promise<FactsAnswer>;
  close(): void;
}

/** `deployments.apps/web (namespace default)`, `namespaces/team-a`, as kubectl names objects. */
export function objectTitle(resource: ManifestResource, served: ApiResourceInfo | undefined, namespace: string): string {
  const name = resource.name ?? (resource.generateName !== undefined ? `${resource.generateName}*` : '(no name)');
  if (!served) return `${resource.kind}/${name} (${resource.apiVersion}${resource.namespace ? `, namespace ${resource.namespace}` : ''})`;
  return `${qualifiedResource(served)}/${name}${served.namespaced ? ` (namespace ${namespace})` : ''}`;
}

/** The namespace an object lands in: its own, else the default one; '' for cluster-scoped kinds. */
export function placeNamespace(resource: ManifestResource, served: ApiResourceInfo, defaultNamespace: string): string {
  return served.namespaced ? resource.namespace || defaultNamespace : '';
}

/** The schema of one OpenAPI document, built once per document. */
export function schemaOf(document: JsonObject): SchemaModel {
  return schemaFromOpenApi([document]).schema;
}

/** Facts from the cluster: discovery, a GET (through the watched cache) and the OpenAPI v3 document. */
export function liveFactsReader(connection: ClusterConnection): FactsReader {
  const schemas = new Map<string, Promise<{ ok: true; schema?: SchemaModel; note?: string } | { ok: false; problem: ClusterProblem }>>();

  function schemaFor(apiVersion: string) {
    let pending = schemas.get(apiVersion);
    if (!pending) {
      pending = connection.openApiDocument(apiVersion).then((result) => {
        if (result.ok) return { ok: true as const, schema: schemaOf(result.value) };
        // A group-version without a published schema (an old aggregated API) still gets the
        // existence findings; anything else stops the check.
        if (result.problem.kind === 'kindNotServed' || result.problem.kind === 'notFound') {
          return { ok: true as const, note: `${result.problem.message} Field conflicts are not predicted without it.` };
        }
        return { ok: false as const, problem: result.problem };
      });
      schemas.set(apiVersion, pending);
    }
    return pending;
  }

  return {
    source: { kind: 'cluster', context: connection.context?.name ?? '', server: connection.context?.server ?? '' },
    async read(resource) {
      const kind = await connection.resolveKind(resource.apiVersion, resource.kind);
      if (!kind.ok) {
        if (kind.problem.kind !== 'kindNotServed') return { ok: false, problem: kind.problem };
        return {
          ok: true,
          facts: { kind: notServedKindFacts(kind.problem), live: { state: 'absent' }, schema: undefined },
          title: objectTitle(resource, undefined, ''),
          notes: [],
        };
      }
      const served = kind.value;
      const namespace = placeNamespace(resource, served, connection.defaultNamespace);
      const [live, schema] = await Promise.all([
        resource.name === undefined
          ? Promise.resolve({ state: 'absent' as const, observedAt: 0 })
          : connection.getObject({ apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name, namespace }),
        schemaFor(resource.apiVersion),
      ]);
      if (live.state === 'failed' && live.problem.kind !== 'invalidName') return { ok: false, problem: live.problem };
      if (live.state === 'pending') {
        return { ok: false, problem: { kind: 'unreachable', message: `no answer from the cluster for ${objectTitle(resource, served, namespace)}` } };
      }
      if (!schema.ok) return { ok: false, problem: schema.problem };
      const namespaceFacts = await loadNamespaceFacts(connection, { apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name ?? '', namespace }, live);
      return {
        ok: true,
        facts: {
          kind: { state: 'served', group: served.group, resource: served.resource, namespaced: served.namespaced },
          live: liveFacts(live),
          ...(namespaceFacts ? { namespace: namespaceFacts } : {}),
          schema: schema.schema,
        },
        title: objectTitle(resource, served, namespace),
        notes: schema.note ? [schema.note] : [],
      };
    },
    close: () => connection.dispose(),
  };
}

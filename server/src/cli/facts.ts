// What the check needs to know of each manifest object — is its kind served, does it exist (with
// its managedFields), the schema of its group-version — from one of two places: the live cluster,
// or a snapshot directory. Both answer the same records, so an offline check gives the same
// findings as a live one. A problem that makes the answer unknowable (unreachable, forbidden) is
// returned, not thrown: the command stops with it.
import type { HelmReleaseSightings } from '../core/sources/helm-release';
import type { ResourceFacts } from '../core/findings/analysis';
import type { JsonObject } from '../core/json';
import { objectTarget, type ManifestResource } from '../core/manifest/manifest';
import { qualifiedResource } from '../core/ssa/messages';
import type { ReportSource } from './report';
import { schemaFromOpenApi, type SchemaModel } from '../core/ssa/schema';
import { autoscalersFor, createFactsSource, type ApiResourceInfo, type ClusterConnection, type ClusterProblem } from '../cluster';
import type { AutoscalerFacts } from '../core/findings/force-preview';

export type FactsAnswer =
  | { ok: true; facts: ResourceFacts; title: string; notes: string[] }
  | { ok: false; problem: ClusterProblem };

export interface FactsReader {
  readonly source: ReportSource;
  read(resource: ManifestResource): Promise<FactsAnswer>;
  /**
   * The HorizontalPodAutoscalers that could target the object, for the force preview; read only
   * when asked. A reader without it (a snapshot, which saves no autoscalers) knows of none.
   */
  autoscalers?(resource: ManifestResource): Promise<AutoscalerFacts>;
  /**
   * Where a chart is installed (Helm's release records and the objects Helm sent, as metadata only);
   * a reader without it (a snapshot) knows of no release.
   */
  helmSightings?(kinds: readonly { apiVersion: string; kind: string }[]): Promise<{ ok: true; value: HelmReleaseSightings } | { ok: false; why: string }>;
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

/**
 * Facts from the cluster: discovery, a GET (through the watched cache) and the OpenAPI v3 document,
 * read by the cluster layer's one facts path, which the editor's dry-run confirmation reads too.
 */
export function liveFactsReader(connection: ClusterConnection): FactsReader {
  const facts = createFactsSource(connection);
  return {
    source: { kind: 'cluster', context: connection.context?.name ?? '', server: connection.context?.server ?? '' },
    async read(resource) {
      const answer = await facts.read(objectTarget(resource));
      if (!answer.ok) return answer;
      return { ok: true, facts: answer.facts, title: objectTitle(resource, answer.served, answer.namespace), notes: answer.notes };
    },
    helmSightings: async (kinds) => {
      const seen = await connection.helmSightings(kinds);
      return seen.ok ? seen : { ok: false, why: seen.problem.message };
    },
    autoscalers: (resource) => autoscalersFor(connection, { apiVersion: resource.apiVersion, kind: resource.kind, ...(resource.namespace ? { namespace: resource.namespace } : {}) }),
    close: () => {
      facts.dispose();
      connection.dispose();
    },
  };
}

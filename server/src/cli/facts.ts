// What the check needs to know of each manifest object — is its kind served, does it exist (with
// its managedFields), the schema of its group-version — from one of two places: the live cluster,
// or a snapshot directory. Both answer the same records, so an offline check gives the same
// findings as a live one. A problem that makes the answer unknowable (unreachable, forbidden) is
// returned, not thrown: the command stops with it, or, for one object the cluster refuses to let be
// read, lists that object as not judged (ObjectReads).
import type { HelmReleaseSightings } from '../core/sources/helm-release';
import type { AutoscalerFacts, ResourceFacts } from '../core/findings';
import type { JsonObject } from '../core/json';
import { objectTarget, type ManifestResource } from '../core/manifest/manifest';
import { qualifiedResource } from '../core/ssa/messages';
import type { ReportSource } from './report';
import { schemaOfDocuments, type SchemaModel } from '../core/ssa/schema';
import {
  autoscalersFor,
  createFactsSource,
  redactText,
  type ApiResourceInfo,
  type ClusterConnection,
  type ClusterProblem,
  type ClusterResult,
} from '../cluster';

export type FactsAnswer =
  { ok: true; facts: ResourceFacts; title: string; notes: string[] } | { ok: false; problem: ClusterProblem };

export interface FactsReader {
  readonly source: ReportSource;
  read(resource: ManifestResource): Promise<FactsAnswer>;
  /** Starts what every read needs first (the kinds the cluster serves) while the caller parses its files. */
  prepare?(): void;
  /**
   * Every object the check will read, said before the first read: a live reader then reads a few
   * objects of a kind by name and many by one list (a reader without it reads as asked).
   */
  expect?(resources: readonly ManifestResource[]): Promise<void>;
  /**
   * The HorizontalPodAutoscalers that could target the object, for the force preview; read only
   * when asked. A reader without it (a snapshot, which saves no autoscalers) knows of none.
   */
  autoscalers?(resource: ManifestResource): Promise<AutoscalerFacts>;
  /**
   * Where a chart is installed (Helm's release records and the objects Helm sent, as metadata only);
   * a reader without it (a snapshot) knows of no release.
   */
  helmSightings?(kinds: readonly { apiVersion: string; kind: string }[]): Promise<ClusterResult<HelmReleaseSightings>>;
  close(): void;
}

/**
 * The facts of each object of one check, where the cluster's refusal to let one object be read
 * (RBAC on its namespace or its kind: 403) is that object's reason not to be judged, and the others
 * are still read. Any other problem (unreachable, unauthenticated) leaves every answer unknowable
 * and stops the check. So does a refusal of everything: a credential that may read nothing is one
 * line and exit 2 (`allRefused`), not a list of every object.
 */
export class ObjectReads {
  private answered = 0;
  private refusal: ClusterProblem | undefined;

  constructor(private readonly reader: FactsReader) {}

  async read(
    resource: ManifestResource,
  ): Promise<FactsAnswer | { ok: false; problem: ClusterProblem; refused: string }> {
    const answer = await this.reader.read(resource);
    if (answer.ok) this.answered++;
    if (answer.ok || answer.problem.kind !== 'forbidden') return answer;
    this.refusal ??= answer.problem;
    const words = redactText(answer.problem.message.replace(/\s+/g, ' ').trim());
    return {
      ...answer,
      refused: `the cluster refuses to let it be read: ${words} (the check needs get on its kind in its namespace, and list where it reads many objects of that kind)`,
    };
  }

  /** Every object about to be read, before the first is. */
  expect(resources: readonly ManifestResource[]): Promise<void> {
    return this.reader.expect ? this.reader.expect(resources) : Promise.resolve();
  }

  /** Where a chart is installed, as the reader knows it (a snapshot knows of no release). */
  helmSightings(kinds: readonly { apiVersion: string; kind: string }[]): Promise<ClusterResult<HelmReleaseSightings>> {
    return this.reader.helmSightings
      ? this.reader.helmSightings(kinds)
      : Promise.resolve({ ok: false, problem: { kind: 'other', message: 'a snapshot holds no release records' } });
  }

  /** The first refusal, when the cluster answered no read at all. */
  get allRefused(): ClusterProblem | undefined {
    return this.answered === 0 ? this.refusal : undefined;
  }
}

/** `deployments.apps/web (namespace default)`, `namespaces/team-a`, as kubectl names objects. */
export function objectTitle(
  resource: ManifestResource,
  served: ApiResourceInfo | undefined,
  namespace: string,
): string {
  const name = resource.name ?? (resource.generateName !== undefined ? `${resource.generateName}*` : '(no name)');
  if (!served)
    return `${resource.kind}/${name} (${resource.apiVersion}${resource.namespace ? `, namespace ${resource.namespace}` : ''})`;
  return `${qualifiedResource(served)}/${name}${served.namespaced ? ` (namespace ${namespace})` : ''}`;
}

/** The schema of one OpenAPI document, built once per document. */
export function schemaOf(document: JsonObject): SchemaModel {
  return schemaOfDocuments([document]);
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
      return {
        ok: true,
        facts: answer.facts,
        title: objectTitle(resource, answer.served, answer.namespace),
        notes: answer.notes,
      };
    },
    prepare: () => void connection.discovery(),
    expect: (resources) => facts.expect(resources.map(objectTarget)),
    helmSightings: (kinds) => connection.helmSightings(kinds),
    autoscalers: (resource) =>
      autoscalersFor(connection, {
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        ...(resource.namespace ? { namespace: resource.namespace } : {}),
      }),
    close: () => {
      facts.dispose();
      connection.dispose();
    },
  };
}

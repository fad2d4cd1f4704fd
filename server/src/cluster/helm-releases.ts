// Where a chart is installed: the releases the cluster knows, read as metadata only.
//
// Two sources, both without a value of any object:
// - Helm's release records: Secrets labelled `owner=helm` (`sh.helm.release.v1.NAME.vN`), whose labels
//   say the release's name, revision and status. Their data holds the release's values (which may
//   hold secrets): the list asks for metadata only (PartialObjectMetadataList), so it never arrives.
// - The objects Helm sent: every object of a release carries the label `app.kubernetes.io/managed-by:
//   Helm` and the annotations `meta.helm.sh/release-name` / `release-namespace` (Helm adds them to what
//   it sends). Listed as metadata only too, across namespaces, for the kinds the chart renders.
// Which release is the chart's is decided in core (core/sources/helm-release.ts): here, only reading.
import { isJsonObject, type JsonObject } from '../core/json';
import { helmManagedByLabel, helmReleaseNameAnnotation, helmReleaseNamespaceAnnotation } from '../core/findings';
import {
  helmChartLabel,
  type HelmReleaseSightings,
  type HelmSighting,
  type HelmReleaseRecord,
} from '../core/sources/helm-release';
import { qualifiedResource } from '../core/ssa/messages';
import type { Discovery } from './discovery';
import type { ClusterTransport } from './http';
import { metadataOnly } from './live-objects';
import { allNamespacesPath } from './names';
import { classifyFailure, parseJson } from './problems';
import type { ClusterProblem, ClusterResult } from './types';

/** Items read per kind: a release is found among the first of them, and a huge cluster costs one page. */
const PAGE = 500;
/** Kinds listed at most: the chart's first few namespaced kinds say where it is installed. */
export const MAX_SIGHTING_KINDS = 4;

export async function readHelmSightings(
  transport: ClusterTransport,
  discovery: Discovery,
  kinds: readonly { apiVersion: string; kind: string }[],
): Promise<ClusterResult<HelmReleaseSightings>> {
  const unread: string[] = [];
  const records: HelmReleaseRecord[] = [];
  const objects: HelmSighting[] = [];
  let unreachable: ClusterProblem | undefined;
  const list = async (apiVersion: string, kind: string, labelSelector: string): Promise<JsonObject[] | undefined> => {
    const resource = await discovery.resolve(apiVersion, kind);
    if (!resource.ok) {
      if (resource.problem.kind !== 'kindNotServed') unread.push(`${kind}: ${resource.problem.message}`);
      return undefined;
    }
    if (!resource.value.namespaced) return undefined;
    const path = allNamespacesPath(resource.value);
    if (!path.ok) {
      unread.push(`${kind}: ${path.problem.message}`);
      return undefined;
    }
    const purpose = { verb: 'list', resource: qualifiedResource(resource.value) };
    // Metadata only, whatever the kind: labels and annotations are all that is asked.
    const outcome = await transport.send({
      method: 'GET',
      path: path.value,
      query: { labelSelector, limit: String(PAGE) },
      accept: metadataOnly.list,
      purpose,
    });
    if (outcome.kind === 'response' && outcome.status === 200) {
      const body = parseJson(outcome.body);
      const items = isJsonObject(body) && Array.isArray(body.items) ? body.items : [];
      return items.filter(isJsonObject);
    }
    const problem = classifyFailure(outcome, { method: 'GET', path: path.value, ...purpose });
    if (problem.kind === 'unreachable' || problem.kind === 'unauthenticated') unreachable ??= problem;
    unread.push(`${qualifiedResource(resource.value)} in all namespaces: ${problem.message}`);
    return undefined;
  };

  for (const item of (await list('v1', 'Secret', 'owner=helm')) ?? []) {
    const meta = metadataOf(item);
    const release = meta.labels.name;
    if (!release || !meta.namespace) continue;
    const revision = Number(meta.labels.version);
    records.push({
      release,
      namespace: meta.namespace,
      revision: Number.isSafeInteger(revision) ? revision : 0,
      status: meta.labels.status ?? '',
    });
  }
  const seen = new Set<string>();
  for (const { apiVersion, kind } of kinds) {
    const key = `${apiVersion} ${kind}`;
    if (seen.has(key) || seen.size >= MAX_SIGHTING_KINDS) continue;
    seen.add(key);
    for (const item of (await list(apiVersion, kind, `${helmManagedByLabel}=Helm`)) ?? []) {
      const meta = metadataOf(item);
      const release = meta.annotations[helmReleaseNameAnnotation];
      const releaseNamespace = meta.annotations[helmReleaseNamespaceAnnotation];
      if (!release || !releaseNamespace || !meta.name) continue;
      const chart = meta.labels[helmChartLabel];
      objects.push({
        apiVersion,
        kind,
        namespace: meta.namespace,
        name: meta.name,
        release,
        releaseNamespace,
        ...(chart ? { chart } : {}),
      });
    }
  }
  // Nothing read at all because the cluster is away: a problem, not "no release".
  if (unreachable && records.length === 0 && objects.length === 0) return { ok: false, problem: unreachable };
  return { ok: true, value: { records, objects, unread } };
}

function metadataOf(item: JsonObject): {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const metadata = isJsonObject(item.metadata) ? item.metadata : {};
  const strings = (value: unknown): Record<string, string> => {
    const out: Record<string, string> = {};
    if (isJsonObject(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
    return out;
  };
  return {
    name: typeof metadata.name === 'string' ? metadata.name : '',
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    labels: strings(metadata.labels),
    annotations: strings(metadata.annotations),
  };
}

// The HorizontalPodAutoscalers of a namespace, for the force preview's question "will an autoscaler
// take the replicas back?" (core/findings/force-preview.ts judges which of them target the object).
//
// Reads only, and only when asked (a preview, or a field conflict on a kind that has a scale
// subresource): one LIST of the namespace's autoscalers through the watched cache of live objects
// (live-objects.ts), so a second question costs no request and a new autoscaler is seen by its watch.
// The namespace passes the same name check as every other path (names.ts). autoscaling/v2 is asked
// first; a cluster that serves only autoscaling/v1 is asked for that (scaleTargetRef is the same).
import type { AutoscalerFacts } from '../core/findings';
import { isJsonObject } from '../core/json';
import type { ClusterConnection } from './connection';
import { redactText } from './redact';

const versions = ['autoscaling/v2', 'autoscaling/v1'] as const;

/**
 * The autoscalers that could target an object of this kind: none, without a request, for a kind
 * that has no scale subresource (an autoscaler can only scale through /scale).
 */
export async function autoscalersFor(
  connection: ClusterConnection,
  target: { apiVersion: string; kind: string; namespace?: string },
): Promise<AutoscalerFacts> {
  const kind = await connection.resolveKind(target.apiVersion, target.kind);
  if (kind.ok && !kind.value.subresources.includes('scale')) return { state: 'read', autoscalers: [] };
  return readAutoscalers(connection, target.namespace ?? '');
}

/**
 * The autoscalers of `namespace` ('' for the connection's default), or why they are unknown (the
 * user may not list them, the cluster did not answer): then the preview says "may", never "will".
 */
export async function readAutoscalers(connection: ClusterConnection, namespace: string): Promise<AutoscalerFacts> {
  for (const apiVersion of versions) {
    const listed = await connection.listObjects(apiVersion, 'HorizontalPodAutoscaler', namespace);
    if (listed.ok) return { state: 'read', autoscalers: listed.value };
    if (listed.problem.kind !== 'kindNotServed') return { state: 'unknown', reason: describe(listed.problem) };
  }
  // A cluster that serves no autoscaler has none that could target the object.
  return { state: 'read', autoscalers: [] };
}

/** The reason as the preview says it; what the server said passes the redaction every message passes. */
function describe(problem: { kind: string; message: string }): string {
  const said = redactText(problem.message);
  return problem.kind === 'forbidden' ? `HorizontalPodAutoscalers may not be listed here: ${said}` : said;
}

/**
 * What of a namespace's autoscalers a judgement reads: their names and specs (which object each
 * scales, within what bounds). Their status, which the autoscaler controller writes at every sync,
 * changes no finding, and a change of it alone judges nothing again.
 */
export function autoscalersSignature(facts: AutoscalerFacts): string {
  if (facts.state !== 'read') return JSON.stringify(facts);
  return JSON.stringify(
    facts.autoscalers.map((a) => [isJsonObject(a.metadata) ? a.metadata.name : undefined, a.spec ?? null]),
  );
}

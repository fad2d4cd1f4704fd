// The force preview of the resource at a position: the document's own analysis (the same prediction
// its diagnostics come from), the autoscalers of its namespace read on demand (cluster/autoscalers.ts,
// reads only), and core/findings/force-preview.ts's judgement and text. Nothing is sent but reads.
import { fileURLToPath } from 'node:url';
import { autoscalersFor } from '../cluster';
import { forcePreview, objectIdentity, predictionOf, renderForcePreview, type AutoscalerFacts } from '../core/findings';
import type { Position } from '../core/manifest/manifest';
import type { ForcePreviewResult } from '../protocol';
import { resourceAt, type DocumentState } from './workspace';

export async function forcePreviewAt(
  state: DocumentState,
  position: Position | undefined,
): Promise<ForcePreviewResult | null> {
  const resources = state.analysis.resources;
  // Without a position: the first resource with a conflict (what a client without a cursor means).
  const hit = position
    ? resourceAt(resources, position)
    : (resources.find((r) => r.findings.some((f) => f.code === 'field-conflict')) ?? resources[0]);
  if (!hit?.facts || hit.facts.live.state !== 'exists') return null;
  const { resource, facts } = hit;
  const live = hit.facts.live.object;
  const { settings } = state;
  const prediction = predictionOf(resource, facts, {
    fieldManager: settings.fieldManager,
    applyMode: settings.applyMode,
  });
  const takes = (prediction?.conflicts.length ?? 0) + (prediction?.forgiven.length ?? 0) > 0;
  // The autoscalers are read only when forcing takes something: that is when they matter.
  let autoscalers: AutoscalerFacts = { state: 'read', autoscalers: [] };
  if (takes) {
    autoscalers = state.session
      ? await autoscalersFor(state.session.connection, {
          apiVersion: resource.apiVersion,
          kind: resource.kind,
          ...(resource.namespace ? { namespace: resource.namespace } : {}),
        })
      : { state: 'unknown', reason: 'no cluster access' };
  }
  const object = objectIdentity(resource);
  const preview = forcePreview({
    object,
    prediction,
    live,
    fieldManager: settings.fieldManager,
    autoscalers,
    invocation: {
      file: fileOf(state.document.uri),
      ...(settings.kubeconfig ? { kubeconfig: settings.kubeconfig } : {}),
      ...(settings.context ? { context: settings.context } : {}),
      ...(settings.namespace ? { namespace: settings.namespace } : {}),
    },
  });
  return {
    title: `Force preview: ${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}`,
    text: renderForcePreview(preview),
    command: preview.command,
    preview,
  };
}

/** The file kubectl reads: the document's path; an unsaved document has none, so it is piped (`-f -`). */
function fileOf(uri: string): string {
  if (!uri.startsWith('file:')) return '-';
  try {
    return fileURLToPath(uri);
  } catch {
    return '-';
  }
}

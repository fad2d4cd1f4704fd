// The predicted apply of one object on its facts (core/ssa/predict.ts), made once: the findings and
// the force preview of one object judge the same apply, so they share one prediction.
import { jsonDepthExceeds, type JsonObject } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import { manifestLimits } from '../manifest/manifest';
import { predictApply, type ApplyPrediction } from '../ssa/predict';
import type { AnalysisSettings, ResourceFacts } from './facts';

/**
 * The prediction made last, with its facts and resource (both plain data, never changed once made):
 * the force preview of an object follows its findings (the command line previews each object with
 * a conflict right after judging it). Only the last is kept: the editor holds the facts and
 * resources of every open document, and a prediction (the merged object with it) kept for each
 * was megabytes for a few thousand objects; its force preview, asked for later, predicts again.
 * Kept while a few more objects were judged, each prediction outlived V8's young generation and
 * stayed in the old one until the next full collection (docs/performance.md).
 */
const recent: {
  facts: ResourceFacts;
  resource: ManifestResource;
  fieldManager: string;
  applyMode: AnalysisSettings['applyMode'];
  prediction: ApplyPrediction;
}[] = [];
const recentLimit = 1;

/** The apply predicted for a served kind (`resourceName`: its group and resource), made once for a judgement and its preview. */
export function predict(
  resource: ManifestResource,
  live: JsonObject | undefined,
  facts: ResourceFacts,
  settings: AnalysisSettings,
  resourceName: { group: string; resource: string },
): ApplyPrediction {
  for (let i = recent.length - 1; i >= 0; i--) {
    const known = recent[i]!;
    if (
      known.facts === facts &&
      known.resource === resource &&
      known.fieldManager === settings.fieldManager &&
      known.applyMode === settings.applyMode
    )
      return known.prediction;
  }
  const prediction = predictApply({
    manifestObject: resource.object,
    live,
    schema: facts.schema ?? { types: {}, kinds: {} },
    fieldManager: settings.fieldManager,
    mode: settings.applyMode,
    resource: resourceName,
    ...(facts.versions ? { versions: facts.versions } : {}),
  });
  if (recent.length >= recentLimit) recent.shift();
  recent.push({ facts, resource, fieldManager: settings.fieldManager, applyMode: settings.applyMode, prediction });
  return prediction;
}

/**
 * The prediction the findings of an existing object are made of, for judgements on the same apply
 * (the force preview); undefined where the analysis predicts nothing (no schema, nothing live...).
 */
export function predictionOf(
  resource: ManifestResource,
  facts: ResourceFacts,
  settings: AnalysisSettings,
): ApplyPrediction | undefined {
  if (facts.kind.state !== 'served' || facts.live.state !== 'exists' || facts.schema === undefined) return undefined;
  if (jsonDepthExceeds(facts.live.object, manifestLimits.depth)) return undefined;
  return predict(resource, facts.live.object, facts, settings, {
    group: facts.kind.group,
    resource: facts.kind.resource,
  });
}

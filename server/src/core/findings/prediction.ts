// The predicted apply of one object on its facts (core/ssa/predict.ts), made once: the findings and
// the force preview of one object judge the same apply, so they share one prediction.
import { jsonDepthExceeds, type JsonObject } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import { manifestLimits } from '../manifest/manifest';
import { predictApply, type ApplyPrediction } from '../ssa/predict';
import type { AnalysisSettings, ResourceFacts } from './facts';

/**
 * Predictions already made, per facts and resource (both plain data, never changed once made).
 */
const predictions = new WeakMap<
  ResourceFacts,
  WeakMap<
    ManifestResource,
    { fieldManager: string; applyMode: AnalysisSettings['applyMode']; prediction: ApplyPrediction }
  >
>();

/** The apply predicted for a served kind (`resourceName`: its group and resource), made at most once per facts, resource and settings. */
export function predict(
  resource: ManifestResource,
  live: JsonObject | undefined,
  facts: ResourceFacts,
  settings: AnalysisSettings,
  resourceName: { group: string; resource: string },
): ApplyPrediction {
  const known = predictions.get(facts)?.get(resource);
  if (known && known.fieldManager === settings.fieldManager && known.applyMode === settings.applyMode)
    return known.prediction;
  const prediction = predictApply({
    manifestObject: resource.object,
    live,
    schema: facts.schema ?? { types: {}, kinds: {} },
    fieldManager: settings.fieldManager,
    mode: settings.applyMode,
    resource: resourceName,
    ...(facts.versions ? { versions: facts.versions } : {}),
  });
  let byResource = predictions.get(facts);
  if (!byResource) predictions.set(facts, (byResource = new WeakMap()));
  byResource.set(resource, { fieldManager: settings.fieldManager, applyMode: settings.applyMode, prediction });
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

// A custom resource's CRD validation rules (`x-kubernetes-validations`), judged on the object the
// request would store: what the server refuses with 422 Invalid after the merge, in its own words,
// and what the product cannot evaluate (said as unknown, for the dry run to decide). The rules and
// the evaluation live in core/cel/; this file picks the objects and words the findings.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import type { CelNode } from '../cel/schema';
import { validateCelRules, type RuleVerdict } from '../cel/validate';
import { formatServerPath } from '../ssa/messages';
import type { FieldPath } from '../ssa/path';
import type { ApplyMode } from '../ssa/predict';
import { defaultSeverity, docsLinks } from './catalogue';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldRange } from './locate';

export interface RuleJudgementInput {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  readonly rules: CelNode;
  readonly mode: ApplyMode;
  readonly live: JsonObject | undefined;
  /** The server-side apply's merged object (the prediction's), when the object exists. */
  readonly merged: JsonValue | undefined;
  /** Where a path is written in the manifest, or its nearest written parent. */
  readonly rangeFor: (path: FieldPath) => FieldRange;
  /** Said after each finding when the server answers something else first (a 409). */
  readonly orderNote: string;
}

/** The findings of the rules for one manifest object. */
export function validationRuleFindings(input: RuleJudgementInput): Finding[] {
  const stored = storedObject(input);
  if (!stored) return [];
  const verdicts = validateCelRules({
    schema: input.rules,
    object: stored,
    ...(input.mode !== 'create' && input.live ? { old: input.live } : {}),
  });
  return verdicts.map((v) => findingOf(input, v));
}

/**
 * The object the request would store: a create or a new object's apply stores the manifest; a
 * server-side apply the merge the prediction computed; a client-side apply kubectl's patch on the
 * live object (the manifest's fields over it, and the fields its last-applied configuration had
 * and the manifest dropped removed: a JSON merge patch, as kubectl sends for custom resources).
 */
function storedObject(input: RuleJudgementInput): JsonObject | undefined {
  const { resource, live, mode } = input;
  if (mode === 'create') return live ? undefined : resource.object;
  if (!live) return resource.object;
  if (mode === 'serverSide') return isJsonObject(input.merged) ? input.merged : undefined;
  const annotations =
    isJsonObject(live.metadata) && isJsonObject(live.metadata.annotations) ? live.metadata.annotations : {};
  const raw = annotations['kubectl.kubernetes.io/last-applied-configuration'];
  let last: JsonValue = {};
  if (typeof raw === 'string') {
    try {
      last = JSON.parse(raw) as JsonValue;
    } catch {
      last = {};
    }
  }
  return mergePatch(live, resource.object, last) as JsonObject;
}

function mergePatch(live: JsonValue, manifest: JsonValue, last: JsonValue): JsonValue {
  if (!isJsonObject(live) || !isJsonObject(manifest)) return manifest;
  const out: JsonObject = { ...live };
  for (const [k, v] of Object.entries(manifest)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(live[k] ?? null, v, isJsonObject(last) ? (last[k] ?? null) : null);
  }
  if (isJsonObject(last)) for (const k of Object.keys(last)) if (!Object.hasOwn(manifest, k)) delete out[k];
  return out;
}

function findingOf(input: RuleJudgementInput, v: RuleVerdict): Finding {
  const where = input.rangeFor(v.path);
  const path = formatServerPath(v.path);
  const kindOfRule = v.transition ? 'transition rule' : 'validation rule';
  const docs = v.transition ? docsLinks.transitionRules : docsLinks.validationRules;
  if (v.kind === 'unknown') {
    return {
      code: 'validation-rule-unknown',
      severity: defaultSeverity('validation-rule-unknown'),
      message:
        `The CRD's ${kindOfRule} ${JSON.stringify(v.rule.rule)} on ${v.field} cannot be evaluated here: ${v.why}. ` +
        'Whether the server accepts this value is unknown: confirm with the dry run ("Confirm with a dry-run apply", or the check with --verify)',
      range: where.key,
      object: input.object,
      ...(path !== '' ? { path } : {}),
      docs,
    };
  }
  const said = v.detail !== undefined ? `${v.field}: ${v.detail}` : undefined;
  const what = said ?? `${v.field}: its messageExpression cannot be evaluated here, so the server's words are unknown`;
  return {
    code: 'validation-rule-fails',
    severity: defaultSeverity('validation-rule-fails'),
    message:
      `The CRD's ${kindOfRule} ${JSON.stringify(v.rule.rule)} fails${v.transition ? ' against the live object' : ''}: ${what} — ` +
      `the server refuses the ${input.mode === 'create' ? 'create' : 'apply'} (422 Invalid)${input.orderNote}`,
    // A scalar is marked on its value; a map, a list or a field the manifest does not write on its key.
    range: where.node === 'scalar' ? where.value : where.key,
    object: input.object,
    ...(path !== '' ? { path } : {}),
    ...(said !== undefined ? { serverMessage: said } : {}),
    docs,
  };
}

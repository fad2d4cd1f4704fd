// Managers recorded at another apiVersion than the request's. The server compares each manager's
// fields in the version it wrote at: structured-merge-diff merge/update.go converts the live and
// the new object to every manager's version (reconcileManagedFieldsWithSchemaChanges, prune,
// update) and reports a conflict `using <that version>` with that version's paths. The product
// cannot run the server's conversion functions, so each manager's version gets a view:
//   - a CustomResourceDefinition with conversion `None`: the object is only relabelled, and typed
//     with that version's schema (a field that version does not declare is the server's 500);
//   - HorizontalPodAutoscaler autoscaling/v1 <-> autoscaling/v2: the server's conversion
//     (pkg/apis/autoscaling/v1/conversion.go), written out here, since its fields move;
//   - a version the CRD no longer lists: every apply fails (the conversion errors);
//   - a conversion webhook, or a built-in kind whose fields do not map one to one by path: the
//     comparison is unknown, and the prediction says so instead of guessing.
// What the real server does for each case is recorded in test/differential/FINDINGS.md.
import { canonicalJson, isJsonObject, type JsonObject, type JsonValue } from '../json';
import { typeProblems } from './to-field-set';
import type { FieldPath } from './path';
import { fieldType, resolveType, rootTypeFor, type Atom, type SchemaModel, type TypeRef } from './schema';

/** What the cluster says about the versions of a kind (plain data, read by the cluster layer). */
export interface KindVersions {
  /** The kind's CustomResourceDefinition; undefined for a built-in kind or when it could not be read. */
  readonly crd?: CrdVersions;
  /** True when the kind is known to be built in (no CRD of that name exists). */
  readonly builtIn?: boolean;
}

export interface CrdVersions {
  readonly conversion: 'None' | 'Webhook';
  /** Every entry of spec.versions, served or not; `schema` is its openAPIV3Schema as canonical JSON. */
  readonly versions: readonly { readonly name: string; readonly served: boolean; readonly schema: string }[];
}

/** How one manager's version is compared with the request's. */
export type ManagerView =
  /** The object as it is, typed with `root` (that version's schema, or the request's where they are equal). */
  | { readonly kind: 'relabelled'; readonly root: TypeRef; readonly crd: boolean }
  | { readonly kind: 'converted'; readonly root: TypeRef; readonly convert: (value: JsonObject) => JsonObject }
  /** The server cannot convert to that version: every apply of the object fails with `message`. */
  | { readonly kind: 'refused'; readonly message: string }
  /** The product cannot tell what the server compares: `reason` says why, for the user. */
  | { readonly kind: 'unknown'; readonly reason: string };

export function managerView(
  schema: SchemaModel,
  kind: string,
  request: { readonly apiVersion: string; readonly root: TypeRef },
  managerVersion: string,
  versions: KindVersions | undefined,
): ManagerView {
  const crd = versions?.crd;
  const [group] = splitApiVersion(managerVersion);
  if (crd) {
    const name = splitApiVersion(managerVersion)[1];
    const entry = crd.versions.find((v) => v.name === name);
    // apiextensions conversion/converter.go: the CRD converter refuses a version it does not list;
    // the field manager's first conversion (of the live object) returns that error as it is.
    if (!entry)
      return { kind: 'refused', message: `request to convert CR to an invalid group/version: ${managerVersion}` };
    if (crd.conversion === 'Webhook') {
      return {
        kind: 'unknown',
        reason: `the cluster converts ${managerVersion} with a conversion webhook, which only the server can call`,
      };
    }
    const own = rootTypeFor(schema, managerVersion, kind);
    if (own) return { kind: 'relabelled', root: own, crd: true };
    // A version that is listed but not served publishes no OpenAPI; the CRD's own schema says
    // whether it is the request's.
    const requested = crd.versions.find((v) => v.name === splitApiVersion(request.apiVersion)[1]);
    if (requested && requested.schema === entry.schema) return { kind: 'relabelled', root: request.root, crd: true };
    return {
      kind: 'unknown',
      reason: `the schema of ${managerVersion} (not served) differs from ${request.apiVersion}'s`,
    };
  }
  const conversion = knownConversion(group, kind, request.apiVersion, managerVersion);
  const own = rootTypeFor(schema, managerVersion, kind);
  if (conversion) {
    if (own) return { kind: 'converted', root: own, convert: conversion };
    return { kind: 'unknown', reason: `the schema of ${managerVersion} is not known` };
  }
  if (own) return { kind: 'relabelled', root: own, crd: false };
  if (versions?.builtIn === false) return { kind: 'unknown', reason: `the schema of ${managerVersion} is not known` };
  // Nothing is known of that version (an offline snapshot, a CRD that could not be read): the
  // common case is fields that map one to one, checked path by path below (relabelledGaps).
  return { kind: 'relabelled', root: request.root, crd: false };
}

/**
 * Why a relabelled comparison of a kind that is not a None-conversion CRD cannot be trusted: a
 * field of the objects the manager's version does not declare, or a field the manager owns that
 * the compared schema does not declare — a field renamed or moved between the versions.
 */
export function relabelledGaps(
  schema: SchemaModel,
  root: TypeRef,
  objects: readonly JsonValue[],
  owned: readonly FieldPath[],
): FieldPath[] {
  const gaps: FieldPath[] = [];
  for (const o of objects)
    for (const p of typeProblems(schema, root, o)) if (p.message === 'field not declared in schema') gaps.push(p.path);
  for (const path of owned) if (!declared(schema, root, path)) gaps.push(path);
  return gaps;
}

/** Whether every field name along the path is declared by the schema (items and keys are not checked). */
function declared(schema: SchemaModel, root: TypeRef, path: FieldPath): boolean {
  let tr: TypeRef | undefined = root;
  for (const pe of path) {
    const atom: Atom | undefined = tr ? resolveType(schema, tr) : undefined;
    if (!atom) return true;
    if (pe.kind === 'field') {
      if (!atom.map) return true;
      tr = fieldType(atom.map, pe.name);
      if (!tr) return false;
    } else {
      tr = atom.list?.elementType ?? atom.map?.elementType;
    }
  }
  return true;
}

export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

// -------------------------------------------------------------------------------------------------
// HorizontalPodAutoscaler: autoscaling/v1 <-> autoscaling/v2 (through the internal type, which
// autoscaling/v2 mirrors field for field: pkg/apis/autoscaling/v2/conversion.go only drops the
// round-trip annotations).

function knownConversion(
  group: string,
  kind: string,
  from: string,
  to: string,
): ((value: JsonObject) => JsonObject) | undefined {
  if (group !== 'autoscaling' || kind !== 'HorizontalPodAutoscaler') return undefined;
  if (from === 'autoscaling/v2' && to === 'autoscaling/v1') return hpaV2ToV1;
  if (from === 'autoscaling/v1' && to === 'autoscaling/v2') return hpaV1ToV2;
  return undefined;
}

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
/** helpers.go DropRoundTripHorizontalPodAutoscalerAnnotations */
const ROUND_TRIP = [
  METRICS,
  BEHAVIOR,
  'autoscaling.alpha.kubernetes.io/scale-down-tolerance',
  'autoscaling.alpha.kubernetes.io/scale-up-tolerance',
  CURRENT_METRICS,
  CONDITIONS,
];

const obj = (v: JsonValue | undefined): JsonObject => (isJsonObject(v) ? v : {});
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const set = (o: JsonObject, k: string, v: JsonValue | undefined): void => {
  if (v !== undefined && v !== null) o[k] = v;
};

function withAnnotations(meta: JsonObject, add: Record<string, string>): JsonObject {
  const annotations: JsonObject = { ...obj(meta.annotations) };
  for (const k of ROUND_TRIP) delete annotations[k];
  Object.assign(annotations, add);
  const out: JsonObject = { ...meta };
  if (Object.keys(annotations).length > 0) out.annotations = annotations;
  else delete out.annotations;
  return out;
}

const isCpuUtilization = (m: JsonObject): boolean => {
  const r = obj(m.resource);
  return (
    m.type === 'Resource' &&
    isJsonObject(m.resource) &&
    r.name === 'cpu' &&
    typeof obj(r.target).averageUtilization === 'number'
  );
};

/** v2 (internal) MetricSpec -> v1 MetricSpec (Convert_autoscaling_*MetricSource_To_v1_*). */
function metricSpecToV1(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type ?? '' };
  const target = (s: JsonObject) => obj(s.target);
  const metric = (s: JsonObject) => obj(s.metric);
  if (isJsonObject(m.object)) {
    const s = m.object;
    const o: JsonObject = {
      target: obj(s.describedObject),
      metricName: metric(s).name ?? '',
      targetValue: target(s).value ?? '0',
    };
    set(o, 'selector', metric(s).selector);
    set(o, 'averageValue', target(s).averageValue);
    out.object = o;
  }
  if (isJsonObject(m.pods)) {
    const s = m.pods;
    const o: JsonObject = { metricName: metric(s).name ?? '', targetAverageValue: target(s).averageValue ?? '0' };
    set(o, 'selector', metric(s).selector);
    out.pods = o;
  }
  if (isJsonObject(m.resource)) {
    const s = m.resource;
    const o: JsonObject = { name: s.name ?? '' };
    set(o, 'targetAverageUtilization', target(s).averageUtilization);
    set(o, 'targetAverageValue', target(s).averageValue);
    out.resource = o;
  }
  if (isJsonObject(m.containerResource)) {
    const s = m.containerResource;
    const o: JsonObject = { name: s.name ?? '', container: s.container ?? '' };
    set(o, 'targetAverageUtilization', target(s).averageUtilization);
    set(o, 'targetAverageValue', target(s).averageValue);
    out.containerResource = o;
  }
  if (isJsonObject(m.external)) {
    const s = m.external;
    const o: JsonObject = { metricName: metric(s).name ?? '' };
    set(o, 'metricSelector', metric(s).selector);
    set(o, 'targetValue', target(s).value);
    set(o, 'targetAverageValue', target(s).averageValue);
    out.external = o;
  }
  return out;
}

/** v1 MetricSpec (from the annotation) -> v2 MetricSpec (Convert_v1_*MetricSource_To_autoscaling_*). */
function metricSpecToV2(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type ?? '' };
  const identifier = (name: JsonValue | undefined, selector: JsonValue | undefined): JsonObject => {
    const id: JsonObject = { name: name ?? '' };
    set(id, 'selector', selector);
    return id;
  };
  const metricTarget = (type: string, fields: Record<string, JsonValue | undefined>): JsonObject => {
    const t: JsonObject = { type };
    for (const [k, v] of Object.entries(fields)) set(t, k, v);
    return t;
  };
  if (isJsonObject(m.object)) {
    const s = m.object;
    out.object = {
      describedObject: obj(s.target),
      target: metricTarget(s.averageValue === undefined || s.averageValue === null ? 'Value' : 'AverageValue', {
        value: s.targetValue ?? '0',
        averageValue: s.averageValue,
      }),
      metric: identifier(s.metricName, s.selector),
    };
  }
  if (isJsonObject(m.pods)) {
    const s = m.pods;
    out.pods = {
      metric: identifier(s.metricName, s.selector),
      target: metricTarget('AverageValue', { averageValue: s.targetAverageValue ?? '0' }),
    };
  }
  for (const k of ['resource', 'containerResource'] as const) {
    const s = m[k];
    if (!isJsonObject(s)) continue;
    const utilization = s.targetAverageUtilization;
    const o: JsonObject = { name: s.name ?? '' };
    if (k === 'containerResource') o.container = s.container ?? '';
    o.target = metricTarget(utilization === undefined || utilization === null ? 'AverageValue' : 'Utilization', {
      averageValue: s.targetAverageValue,
      averageUtilization: utilization,
    });
    out[k] = o;
  }
  if (isJsonObject(m.external)) {
    const s = m.external;
    out.external = {
      metric: identifier(s.metricName, s.metricSelector),
      target: metricTarget(s.targetValue === undefined || s.targetValue === null ? 'AverageValue' : 'Value', {
        value: s.targetValue,
        averageValue: s.targetAverageValue,
      }),
    };
  }
  return out;
}

/** Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler and its spec and status. */
function hpaV2ToV1(o: JsonObject): JsonObject {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const metrics = list(spec.metrics).map(obj);
  const cpu = metrics.find(isCpuUtilization);
  const v1Spec: JsonObject = { scaleTargetRef: obj(spec.scaleTargetRef), maxReplicas: spec.maxReplicas ?? 0 };
  set(v1Spec, 'minReplicas', spec.minReplicas);
  if (cpu) v1Spec.targetCPUUtilizationPercentage = obj(obj(cpu.resource).target).averageUtilization ?? null;

  const annotations: Record<string, string> = {};
  const others = metrics.filter((m) => !isCpuUtilization(m)).map(metricSpecToV1);
  // The annotations carry JSON the server encodes with Go; only whether an annotation changed
  // matters to the comparison, so a canonical encoding of the same content stands in for it
  // (quantities are compared as written).
  if (others.length > 0) annotations[METRICS] = canonicalJson(others);
  if (list(status.currentMetrics).length > 0) annotations[CURRENT_METRICS] = canonicalJson(list(status.currentMetrics));
  if (spec.behavior !== undefined && spec.behavior !== null) annotations[BEHAVIOR] = canonicalJson(spec.behavior);
  if (list(status.conditions).length > 0) annotations[CONDITIONS] = canonicalJson(list(status.conditions));

  const v1Status: JsonObject = {
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  set(v1Status, 'observedGeneration', status.observedGeneration);
  set(v1Status, 'lastScaleTime', status.lastScaleTime);
  // The last CPU metric with a utilization wins: the loop does not stop at the first.
  for (const m of list(status.currentMetrics).map(obj)) {
    const r = obj(m.resource);
    if (m.type === 'Resource' && r.name === 'cpu' && typeof obj(r.current).averageUtilization === 'number')
      v1Status.currentCPUUtilizationPercentage = obj(r.current).averageUtilization as number;
  }
  return {
    ...o,
    apiVersion: 'autoscaling/v1',
    metadata: withAnnotations(obj(o.metadata), annotations),
    spec: v1Spec,
    status: v1Status,
  };
}

/** Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler, then to v2. */
function hpaV1ToV2(o: JsonObject): JsonObject {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const annotations = obj(obj(o.metadata).annotations);
  const parsed = (key: string): JsonValue | undefined => {
    const raw = annotations[key];
    if (typeof raw !== 'string') return undefined;
    try {
      return JSON.parse(raw) as JsonValue;
    } catch {
      return undefined;
    }
  };
  const v2Spec: JsonObject = { scaleTargetRef: obj(spec.scaleTargetRef), maxReplicas: spec.maxReplicas ?? 0 };
  set(v2Spec, 'minReplicas', spec.minReplicas);
  const cpu = typeof spec.targetCPUUtilizationPercentage === 'number' ? spec.targetCPUUtilizationPercentage : undefined;
  const cpuMetric = (utilization: number): JsonObject => ({
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } },
  });
  let metrics: JsonValue[] = cpu !== undefined ? [cpuMetric(cpu)] : [];
  const others = parsed(METRICS);
  if (Array.isArray(others)) metrics = [...others.map((m) => metricSpecToV2(obj(m))), ...metrics];
  // autoscaling/v1 had an implicit CPU target of 80% (DefaultCPUUtilization), made explicit here.
  if (metrics.length === 0) metrics = [cpuMetric(80)];
  v2Spec.metrics = metrics;
  const behavior = parsed(BEHAVIOR);
  if (isJsonObject(behavior) && Object.keys(behavior).length > 0) v2Spec.behavior = behavior;

  const v2Status: JsonObject = {
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  set(v2Status, 'observedGeneration', status.observedGeneration);
  set(v2Status, 'lastScaleTime', status.lastScaleTime);
  const current = parsed(CURRENT_METRICS);
  if (Array.isArray(current)) v2Status.currentMetrics = current;
  else if (typeof status.currentCPUUtilizationPercentage === 'number') {
    v2Status.currentMetrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } },
      },
    ];
  }
  const conditions = parsed(CONDITIONS);
  if (Array.isArray(conditions)) v2Status.conditions = conditions;
  return {
    ...o,
    apiVersion: 'autoscaling/v2',
    metadata: withAnnotations(obj(o.metadata), {}),
    spec: v2Spec,
    status: v2Status,
  };
}

/**
 * Where a field of a manager's version shows in the manifest's version, for the fields a known
 * conversion moves (undefined: the same path).
 */
export function manifestPathFor(kind: string, manifestVersion: string, managerPath: FieldPath): FieldPath | undefined {
  if (kind !== 'HorizontalPodAutoscaler') return undefined;
  const [first, second, third] = managerPath.map((pe) => (pe.kind === 'field' ? pe.name : ''));
  const spec = (name: string): FieldPath => [
    { kind: 'field', name: 'spec' },
    { kind: 'field', name },
  ];
  if (manifestVersion === 'autoscaling/v2') {
    if (first === 'spec' && second === 'targetCPUUtilizationPercentage') return spec('metrics');
    if (first === 'metadata' && second === 'annotations' && third === METRICS) return spec('metrics');
    if (first === 'metadata' && second === 'annotations' && third === BEHAVIOR) return spec('behavior');
  }
  if (manifestVersion === 'autoscaling/v1' && first === 'spec' && second === 'metrics')
    return spec('targetCPUUtilizationPercentage');
  return undefined;
}

// What a GitOps controller's own apply does to one object: which fields change value, which change
// owner (taken from whom), which are removed. On top of the server-side apply engine (core/ssa), with
// each controller's request as its code sends it:
// - Flux kustomize-controller (github.com/fluxcd/kustomize-controller v1.9.6
//   internal/controller/kustomization_controller.go `apply`, over github.com/fluxcd/pkg/ssa v0.76.2
//   manager_apply.go and patch.go): the objects labelled with the Kustomization's name and namespace
//   and normalized (normalize/normalize.go: a round trip through the Go types of the built-in kinds);
//   `kustomize.toolkit.fluxcd.io/ssa: Ignore` (on the manifest or the live object) and `IfNotPresent`
//   (on the manifest, for an object that exists) skip the object; unless `Merge` is set, the cleanup
//   first hands every managedFields entry of `kubectl` (Apply and Update), `before-first-apply`
//   (Update) and `kustomize-controller` (Update) — matched by manager-name PREFIX and operation, never
//   a subresource's entry — to the `kustomize-controller` Apply entry and removes kubectl's
//   last-applied annotation; then a forced server-side apply, sent only when the cleanup changed
//   something or the dry run differs from the live object. Fields handed over that Git does not set
//   are pruned by that apply.
// - Argo CD server-side (ServerSideApply=true): `kubectl apply --server-side --force-conflicts
//   --field-manager=argocd-controller`, after kubectl's client-side→server-side migration
//   (k8s.io/client-go util/csaupgrade: the `kubectl-client-side-apply` Update entry's fields go to
//   the argocd-controller Apply entry).
// - Argo CD client-side (the default): `kubectl apply --field-manager=argocd-controller`, kubectl's
//   three-way merge against its last-applied annotation, recorded as an Update.
// - RespectIgnoreDifferences=true (argo-cd v3.5.7 controller/sync.go normalizeTargetResources): the
//   ignored paths of the target get the live values before the apply, so the field is co-owned at
//   its live value, not taken.
// - Helm 4's upgrade, server-side and forcing conflicts, as helm-controller runs it, with the
//   release's label and annotations.
// Not modelled (the prediction says nothing of them rather than guess): Flux's recreation of an
// object whose immutable field changed (`spec.force`, `kustomize.toolkit.fluxcd.io/force`),
// `spec.ignore` rules with a target selector (the caller passes the paths whose rule selects the
// object), Argo CD's jqPathExpressions, Helm 3's three-way upgrade, and the server's defaults of
// kinds other than the built-in workloads (a pruned field of those comes back absent).
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json';
import {
  differenceSets,
  emptyFieldSet,
  fieldSetFromPaths,
  intersectSets,
  isEmptySet,
  pathElementKey,
  recursiveDifferenceSets,
  setPaths,
  unionSets,
  type FieldSet,
} from '../ssa/field-set';
import { decodeManagedFields } from '../ssa/managed-fields';
import { compareValues, mergeValues, removeItems, valueAtPath } from '../ssa/merge';
import { managerIdentifier, type ManagerIdentity } from '../ssa/messages';
import type { FieldPath, PathElement } from '../ssa/path';
import { predictApply, STRIPPED_FOR_EVERY_MANAGER, type FieldConflict, type PredictedStatus } from '../ssa/predict';
import { rootTypeFor, type SchemaModel, type TypeRef } from '../ssa/schema';
import { toFieldSet } from '../ssa/to-field-set';
import type { KindVersions } from '../ssa/versions';
import type { ArgoIgnoreRule, ControllerRequest, FluxSsaMode } from './model';

export interface ControllerApplyInput {
  /** The live object with its managedFields, as read; undefined when it does not exist. */
  readonly live: JsonObject | undefined;
  /** The object as Git holds it (rendered), with the namespace it lands in. */
  readonly manifest: JsonObject;
  readonly request: ControllerRequest;
  readonly schema: SchemaModel;
  /** Plural resource and group, for the server's messages. */
  readonly resource: { readonly group: string; readonly resource: string };
  readonly versions?: KindVersions;
}

/** One managedFields entry as the prediction leaves it. */
export interface PredictedOwner {
  readonly identity: ManagerIdentity;
  readonly apiVersion: string;
  readonly fields: FieldSet;
}

export interface HandedOver {
  /** The entry whose fields moved (a kubectl Update, before-first-apply ...). */
  readonly from: ManagerIdentity;
  readonly to: ManagerIdentity;
  readonly paths: readonly FieldPath[];
}

export interface ControllerApplyPrediction {
  /**
   * applied: the request is sent to an existing object; created: to a new one; unchanged: nothing
   * is sent (Flux's dry run equals the live object, or kubectl's patch is empty); skipped: the
   * controller leaves the object alone (Flux `ssa: Ignore`, `IfNotPresent`); refused: the server
   * would refuse the request (`status`).
   */
  readonly outcome: 'applied' | 'created' | 'unchanged' | 'skipped' | 'refused';
  /** Why it was skipped, in the controller's terms. */
  readonly reason?: string;
  /** The object the controller sends (its labels, normalization and ignored values included). */
  readonly sent?: JsonObject;
  /** Entries moved to the controller before its apply (Flux's cleanup, kubectl's migration). */
  readonly handedOver: readonly HandedOver[];
  /** Fields another manager owned whose value the apply changes: the forced apply takes them. */
  readonly taken: readonly FieldConflict[];
  /** Fields the apply removes (top-most), e.g. a field handed to Flux that Git does not set. */
  readonly removed: readonly FieldPath[];
  /** Fields whose value changes, with the value before and after (undefined: absent). */
  readonly changed: readonly { readonly path: FieldPath; readonly before?: JsonValue; readonly after?: JsonValue }[];
  /** The object after the request (without managedFields), where it is known. */
  readonly after?: JsonObject;
  /** managedFields after the request, in the server's order of entries. */
  readonly owners: readonly PredictedOwner[];
  readonly status?: PredictedStatus;
}

const FLUX_GROUP = 'kustomize.toolkit.fluxcd.io';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
/** kustomize-controller's ApplyCleanupOptions: annotations and labels it removes. */
const FLUX_CLEANUP_ANNOTATIONS = [LAST_APPLIED, 'kustomize.toolkit.fluxcd.io/checksum', 'fluxcd.io/sync-checksum'];
const FLUX_CLEANUP_LABELS = ['fluxcd.io/sync-gc-mark'];
/** kubectl apply's default manager of a client-side apply, the one its server-side apply migrates. */
const CSA_MANAGER = 'kubectl-client-side-apply';

/** The fields the server strips from every manager's set (stripmeta.go). */
const STRIPPED: FieldSet = fieldSetFromPaths(STRIPPED_FOR_EVERY_MANAGER);

export function predictControllerApply(input: ControllerApplyInput): ControllerApplyPrediction {
  const request = input.request;
  switch (request.applier) {
    case 'flux-kustomize':
      return predictFlux(input, request);
    case 'argocd-server-side':
    case 'argocd-client-side':
      return predictArgo(input, request);
    case 'flux-helm': {
      // Helm 4's server-side upgrade forcing conflicts, as helm-controller runs it (under its own
      // name; the Helm CLI's is `helm`), every object labelled and annotated with the release.
      const sent = request.release ? withHelmOwnership(input.manifest, request.release) : input.manifest;
      return serverSideApply(input, sent, request.fieldManager, ownersOf(input.live), [], true);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Flux kustomize-controller

function predictFlux(
  input: ControllerApplyInput,
  request: Extract<ControllerRequest, { applier: 'flux-kustomize' }>,
): ControllerApplyPrediction {
  const { live } = input;
  const ssa = request.ssa ?? ssaAnnotation(input.manifest);
  const liveSsa = live ? ssaAnnotation(live) : undefined;
  const kept = (reason: string): ControllerApplyPrediction => ({
    outcome: 'skipped',
    reason,
    handedOver: [],
    taken: [],
    removed: [],
    changed: [],
    ...(live ? { after: withoutManagedFields(live) } : {}),
    owners: ownersOf(live),
  });
  // shouldSkipApply: the exclusion selector on either object, IfNotPresent on the manifest.
  if (ssa === 'Ignore' || liveSsa === 'Ignore') return kept(`${FLUX_GROUP}/ssa: Ignore`);
  if (reconcileDisabled(input.manifest) || (live && reconcileDisabled(live)))
    return kept(`${FLUX_GROUP}/reconcile: disabled`);
  if (live && ssa === 'IfNotPresent') return kept(`${FLUX_GROUP}/ssa: IfNotPresent, and the object exists`);

  let desired = normalizeForFlux(input.manifest);
  if (request.kustomization) desired = withOwnerLabels(desired, request.kustomization);
  const applier: ManagerIdentity = { manager: request.fieldManager, operation: 'Apply' };
  if (!live) return serverSideApply(input, desired, request.fieldManager, [], [], true);

  // The dry run (before the cleanup, as ApplyAll sends it): what spec.ignore compares with.
  const ignore = (request.ignorePaths ?? []).flatMap((p) => {
    const steps = parsePointer(p);
    return steps ? [steps] : [];
  });
  const dry =
    ignore.length > 0 ? serverSideApply(input, desired, request.fieldManager, ownersOf(live), [], true) : undefined;

  // cleanupMetadata: skipped when Merge is set on either object.
  let owners = ownersOf(live);
  let current: JsonObject = live;
  let handedOver: HandedOver[] = [];
  let patched = false;
  if (ssa !== 'Merge' && liveSsa !== 'Merge') {
    const cleaned = fluxCleanup(input, live, owners, applier);
    owners = cleaned.owners;
    current = cleaned.live;
    handedOver = cleaned.handedOver;
    patched = cleaned.patched;
  }
  // spec.ignore (computeDriftedPaths, applyDriftResult): an ignored path whose value the dry run
  // changes is left out of the request where another Apply manager owns it, else sent at its
  // live value, so the field is co-owned, not taken.
  let sent = desired;
  if (dry?.after) {
    for (const steps of ignore) {
      const was = pointerGet(current, steps);
      if (jsonEqual(was, pointerGet(dry.after, steps))) continue;
      const stripped = ownedByAnotherApplier(current, owners, steps, request.fieldManager);
      sent = pointerSet(sent, steps, stripped ? undefined : was) as JsonObject;
    }
  }
  const applied = serverSideApply(input, sent, request.fieldManager, owners, handedOver, true, current);
  if (applied.outcome !== 'applied' || patched) return withChangesFrom(applied, live);
  // Not drifted (manager_diff.go hasDrifted, without the ignored paths): labels, annotations and
  // everything but metadata and status equal between the dry run and the live object: nothing is sent.
  const after = dry?.after ?? applied.after;
  const ignored = (o: JsonObject): JsonObject =>
    ignore.reduce<JsonObject>((v, steps) => pointerSet(v, steps, undefined) as JsonObject, o);
  if (after && !fluxDrifted(ignored(live), ignored(after))) {
    return {
      outcome: 'unchanged',
      handedOver: [],
      taken: [],
      removed: [],
      changed: [],
      after: withoutManagedFields(live),
      owners: ownersOf(live),
    };
  }
  return applied;
}

/**
 * isFieldOwnedByOtherApplyManager (manager_apply.go): an Apply entry of another manager, never a
 * subresource's, holds the pointer's path (as a member or a prefix); a list index is the item's key
 * among the entries' keys at that place. A path that cannot be resolved counts as not owned.
 */
function ownedByAnotherApplier(
  live: JsonObject,
  owners: readonly PredictedOwner[],
  steps: readonly string[],
  manager: string,
): boolean {
  const appliers = owners.filter(
    (o) => o.identity.operation === 'Apply' && !o.identity.subresource && o.identity.manager !== manager,
  );
  const path: PathElement[] = [];
  let value: JsonValue | undefined = live;
  for (const step of steps) {
    if (/^\d+$/.test(step) && Array.isArray(value)) {
      const item: JsonValue | undefined = value[Number(step)];
      if (!isJsonObject(item)) return false;
      const keys = appliers.flatMap((o) => [...(childrenAt(o.fields, path)?.children.values() ?? [])]);
      const key = keys.find(
        (n) => n.element.kind === 'key' && Object.entries(n.element.fields).every(([k, v]) => jsonEqual(item[k], v)),
      );
      if (!key) return false;
      path.push(key.element);
      value = item;
      continue;
    }
    path.push({ kind: 'field', name: step });
    value = isJsonObject(value) ? value[step] : undefined;
  }
  return appliers.some((o) => {
    const parent = childrenAt(o.fields, path.slice(0, -1));
    const last = path[path.length - 1];
    if (!parent || !last) return false;
    const k = pathElementKey(last);
    return parent.members.has(k) || parent.children.has(k);
  });
}

function childrenAt(set: FieldSet, path: readonly PathElement[]): FieldSet | undefined {
  let s: FieldSet | undefined = set;
  for (const pe of path) s = s?.children.get(pathElementKey(pe))?.set;
  return s;
}

function ssaAnnotation(obj: JsonObject): FluxSsaMode | undefined {
  const value = metaMap(obj, 'annotations')[`${FLUX_GROUP}/ssa`] ?? metaMap(obj, 'labels')[`${FLUX_GROUP}/ssa`];
  if (typeof value !== 'string') return undefined;
  // utils.AnyInMetadata compares with strings.EqualFold.
  return (['Override', 'Merge', 'IfNotPresent', 'Ignore'] as const).find(
    (m) => m.toLowerCase() === value.toLowerCase(),
  );
}

function reconcileDisabled(obj: JsonObject): boolean {
  const key = `${FLUX_GROUP}/reconcile`;
  const value = metaMap(obj, 'annotations')[key] ?? metaMap(obj, 'labels')[key];
  return typeof value === 'string' && value.toLowerCase() === 'disabled';
}

function metaMap(obj: JsonObject, name: 'labels' | 'annotations'): JsonObject {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  const map = meta[name];
  return isJsonObject(map) ? map : {};
}

function withOwnerLabels(obj: JsonObject, owner: { readonly name: string; readonly namespace: string }): JsonObject {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  const labels = {
    ...metaMap(obj, 'labels'),
    [`${FLUX_GROUP}/name`]: owner.name,
    [`${FLUX_GROUP}/namespace`]: owner.namespace,
  };
  return { ...obj, metadata: { ...meta, labels } };
}

/** Helm's ownership metadata: the managed-by label and the release's name and namespace annotations. */
function withHelmOwnership(
  obj: JsonObject,
  release: { readonly name: string; readonly namespace: string },
): JsonObject {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  return {
    ...obj,
    metadata: {
      ...meta,
      labels: { ...metaMap(obj, 'labels'), 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: {
        ...metaMap(obj, 'annotations'),
        'meta.helm.sh/release-name': release.name,
        'meta.helm.sh/release-namespace': release.namespace,
      },
    },
  };
}

/**
 * normalize.UnstructuredList: a built-in kind makes a round trip through its Go type, which writes
 * the empty structs Go cannot omit (a Deployment's `strategy: {}`, a container's `resources: {}`)
 * and drops `status`. Those fields are sent, so Flux owns them. (The `creationTimestamp: null` it
 * also writes is owned by nobody: a null is not a field the server records.)
 */
export function normalizeForFlux(obj: JsonObject): JsonObject {
  const apiVersion = String(obj.apiVersion ?? '');
  const kind = String(obj.kind ?? '');
  const out = structuredClone(obj) as JsonObject;
  const isCrd = apiVersion.startsWith('apiextensions.k8s.io/') && kind === 'CustomResourceDefinition';
  if (!isCrd) delete out.status;
  const spec = isJsonObject(out.spec) ? out.spec : undefined;
  const podTemplate = (template: JsonValue | undefined): void => {
    if (!isJsonObject(template)) return;
    podSpec(template.spec);
  };
  const podSpec = (ps: JsonValue | undefined): void => {
    if (!isJsonObject(ps)) return;
    for (const list of ['containers', 'initContainers']) {
      const containers = ps[list];
      if (!Array.isArray(containers)) continue;
      for (const c of containers) if (isJsonObject(c) && c.resources === undefined) c.resources = {};
    }
  };
  if (apiVersion === 'apps/v1' && spec) {
    if (kind === 'Deployment') {
      if (spec.strategy === undefined) spec.strategy = {};
      podTemplate(spec.template);
    } else if (kind === 'StatefulSet') {
      if (spec.updateStrategy === undefined) spec.updateStrategy = {};
      podTemplate(spec.template);
    } else if (kind === 'DaemonSet') {
      if (spec.updateStrategy === undefined) spec.updateStrategy = {};
      podTemplate(spec.template);
    } else if (kind === 'ReplicaSet') podTemplate(spec.template);
  } else if (apiVersion === 'batch/v1' && spec && kind === 'Job') podTemplate(spec.template);
  else if (apiVersion === 'v1' && kind === 'Pod') podSpec(out.spec);
  return out;
}

/**
 * cleanupMetadata (manager_apply.go) with PatchReplaceFieldsManagers (patch.go): the entries of the
 * cleanup's managers, by name prefix and operation and never a subresource's, are merged into the
 * controller's Apply entry (the first one renamed when it has none), and the annotations and labels
 * of the cleanup are removed, in one JSON patch. The server takes the managedFields the patch
 * writes and then records the patch itself as an update: a removed field leaves every set.
 */
function fluxCleanup(
  input: ControllerApplyInput,
  live: JsonObject,
  owners: PredictedOwner[],
  applier: ManagerIdentity,
): { owners: PredictedOwner[]; live: JsonObject; handedOver: HandedOver[]; patched: boolean } {
  const rules: { prefix: string; operation: 'Apply' | 'Update' }[] = [
    { prefix: 'kubectl', operation: 'Apply' },
    { prefix: 'kubectl', operation: 'Update' },
    { prefix: 'before-first-apply', operation: 'Update' },
    { prefix: applier.manager, operation: 'Update' },
  ];
  const matches = (o: PredictedOwner): boolean =>
    !o.identity.subresource &&
    rules.some((r) => o.identity.operation === r.operation && o.identity.manager.startsWith(r.prefix));
  const isApplier = (o: PredictedOwner): boolean =>
    o.identity.manager === applier.manager && o.identity.operation === 'Apply' && !o.identity.subresource;
  const own = owners.find(isApplier);
  let target = own;
  const handedOver: HandedOver[] = [];
  const rest: PredictedOwner[] = [];
  let edited = false;
  for (const o of owners) {
    if (o === own) continue;
    if (matches(o)) {
      edited = true;
      handedOver.push({ from: o.identity, to: applier, paths: setPaths(o.fields) });
      target = target
        ? { ...target, fields: unionSets(target.fields, o.fields) }
        : { identity: applier, apiVersion: o.apiVersion, fields: o.fields };
      continue;
    }
    rest.push(o);
  }
  let next = edited && target ? [...rest, target] : owners;

  const annotations = metaMap(live, 'annotations');
  const labels = metaMap(live, 'labels');
  const goneAnnotations = FLUX_CLEANUP_ANNOTATIONS.filter((k) => annotations[k] !== undefined);
  const goneLabels = FLUX_CLEANUP_LABELS.filter((k) => labels[k] !== undefined);
  let cleaned = live;
  if (goneAnnotations.length > 0 || goneLabels.length > 0) {
    const meta = { ...(live.metadata as JsonObject) };
    if (goneAnnotations.length > 0) {
      const a = { ...annotations };
      for (const k of goneAnnotations) delete a[k];
      meta.annotations = a;
    }
    if (goneLabels.length > 0) {
      const l = { ...labels };
      for (const k of goneLabels) delete l[k];
      meta.labels = l;
    }
    // An emptied map is not stored (ObjectMeta's omitempty): it leaves every set as a whole.
    cleaned = withoutEmptyMetadataMaps({ ...live, metadata: meta });
    const root = rootOf(input);
    if (root) {
      const c = compareValues(input.schema, root, live, cleaned);
      next = next
        .map((o) => ({ ...o, fields: differenceSets(o.fields, c.removed) }))
        .filter((o) => !isEmptySet(o.fields));
    }
  }
  const patched = edited || goneAnnotations.length > 0 || goneLabels.length > 0;
  return { owners: next, live: cleaned, handedOver, patched };
}

/** hasDrifted (manager_diff.go): labels, annotations, and the object without metadata and status. */
function fluxDrifted(live: JsonObject, after: JsonObject): boolean {
  if (!jsonEqual(metaMap(live, 'labels'), metaMap(after, 'labels'))) return true;
  if (!jsonEqual(metaMap(live, 'annotations'), metaMap(after, 'annotations'))) return true;
  const strip = (o: JsonObject): JsonObject => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !jsonEqual(strip(live), strip(after));
}

// ---------------------------------------------------------------------------------------------
// Argo CD

function predictArgo(
  input: ControllerApplyInput,
  request: Extract<ControllerRequest, { applier: 'argocd-server-side' | 'argocd-client-side' }>,
): ControllerApplyPrediction {
  const { live } = input;
  const rules = request.ignore ?? [];
  const target =
    live && request.respectIgnoreDifferences && rules.length > 0
      ? respectIgnoreDifferences(input, live, input.manifest, rules)
      : input.manifest;
  if (request.applier === 'argocd-client-side') return clientSideApply(input, target, request.fieldManager);
  let owners = ownersOf(live);
  const handedOver: HandedOver[] = [];
  if (live && request.clientSideApplyMigration !== false) {
    // kubectl migrates its own client-side manager and an Update entry of the field manager's name
    // (what `kubectl apply --field-manager=argocd-controller` wrote client-side).
    for (const csa of [CSA_MANAGER, request.fieldManager]) {
      const migrated = csaUpgrade(owners, csa, request.fieldManager);
      owners = migrated.owners;
      if (migrated.handedOver) handedOver.push(migrated.handedOver);
    }
  }
  return serverSideApply(input, target, request.fieldManager, owners, handedOver, true);
}

/** Whether an ignoreDifferences entry names this object (group, kind, name, namespace). */
export function ignoreRuleMatches(rule: ArgoIgnoreRule, obj: JsonObject): boolean {
  const [group] = splitGroup(String(obj.apiVersion ?? ''));
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  if ((rule.group ?? '') !== group && rule.group !== '*') return false;
  if (rule.kind !== obj.kind && rule.kind !== '*') return false;
  if (rule.name && rule.name !== meta.name) return false;
  if (rule.namespace && rule.namespace !== meta.namespace) return false;
  return true;
}

function splitGroup(apiVersion: string): [string, string] {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/**
 * normalizeTargetResources: every ignored path of the target takes the live value (or goes, where
 * the live object has none); `status` is never copied. jqPathExpressions are not evaluated here.
 */
function respectIgnoreDifferences(
  input: ControllerApplyInput,
  live: JsonObject,
  manifest: JsonObject,
  rules: readonly ArgoIgnoreRule[],
): JsonObject {
  let target = structuredClone(manifest) as JsonObject;
  const root = rootOf(input);
  for (const rule of rules) {
    if (!ignoreRuleMatches(rule, manifest)) continue;
    for (const pointer of rule.jsonPointers) {
      const steps = parsePointer(pointer);
      if (!steps || steps[0] === 'status') continue;
      const value = pointerGet(live, steps);
      target = pointerSet(target, steps, value) as JsonObject;
    }
    if (!root) continue;
    for (const entry of decodeManagedFields(isJsonObject(live.metadata) ? live.metadata.managedFields : undefined)
      .entries) {
      if (!rule.managedFieldsManagers.includes(entry.identity.manager)) continue;
      for (const path of setPaths(entry.fields)) {
        if (path[0]?.kind === 'field' && path[0].name === 'status') continue;
        const value = valueAtPath(input.schema, root, live, path);
        if (value === undefined || (isJsonObject(value) && Object.keys(value).length > 0)) continue;
        target = setAtFieldPath(target, path, value) as JsonObject;
      }
    }
  }
  return target;
}

/** RFC 6901 pointer → steps; undefined for a pointer that is not one. */
function parsePointer(pointer: string): string[] | undefined {
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function pointerGet(value: JsonValue | undefined, steps: readonly string[]): JsonValue | undefined {
  let v = value;
  for (const s of steps) {
    if (Array.isArray(v)) v = /^\d+$/.test(s) ? v[Number(s)] : undefined;
    else if (isJsonObject(v)) v = Object.hasOwn(v, s) ? v[s] : undefined;
    else return undefined;
  }
  return v;
}

/** A copy of `value` with the pointer's place set to `to` (or removed when undefined). */
function pointerSet(value: JsonValue | undefined, steps: readonly string[], to: JsonValue | undefined): JsonValue {
  const [head, ...rest] = steps;
  if (head === undefined) return to ?? null;
  if (Array.isArray(value)) {
    if (!/^\d+$/.test(head)) return value;
    const i = Number(head);
    if (i >= value.length) return value;
    const out = [...value];
    if (rest.length === 0 && to === undefined) out.splice(i, 1);
    else out[i] = pointerSet(value[i], rest, to);
    return out;
  }
  const obj: JsonObject = isJsonObject(value) ? { ...value } : {};
  if (rest.length === 0) {
    if (to === undefined) delete obj[head];
    else obj[head] = to;
    return obj;
  }
  if (to === undefined && !Object.hasOwn(obj, head)) return obj;
  obj[head] = pointerSet(obj[head], rest, to);
  return obj;
}

/** A copy of `value` with the field path set to `to`; list items found (or added) by their key. */
function setAtFieldPath(value: JsonValue | undefined, path: FieldPath, to: JsonValue): JsonValue {
  const [head, ...rest] = path;
  if (!head) return to;
  if (head.kind === 'field') {
    const obj: JsonObject = isJsonObject(value) ? { ...value } : {};
    obj[head.name] = setAtFieldPath(obj[head.name], rest, to);
    return obj;
  }
  if (head.kind === 'key') {
    const list = Array.isArray(value) ? [...value] : [];
    const i = list.findIndex(
      (item) => isJsonObject(item) && Object.entries(head.fields).every(([k, v]) => jsonEqual(item[k], v)),
    );
    if (i < 0) list.push(setAtFieldPath({ ...head.fields }, rest, to));
    else list[i] = setAtFieldPath(list[i], rest, to);
    return list;
  }
  return value ?? null;
}

/** csaupgrade.upgradedManagedFields: the CSA manager's Update entry joins the SSA manager's Apply entry. */
function csaUpgrade(
  owners: PredictedOwner[],
  csaManager: string,
  ssaManager: string,
): { owners: PredictedOwner[]; handedOver?: HandedOver } {
  const isSsa = (o: PredictedOwner) =>
    o.identity.manager === ssaManager && o.identity.operation === 'Apply' && !o.identity.subresource;
  const isCsa = (o: PredictedOwner) =>
    o.identity.manager === csaManager && o.identity.operation === 'Update' && !o.identity.subresource;
  const csa = owners.find(isCsa);
  if (!csa) return { owners };
  const to: ManagerIdentity = { manager: ssaManager, operation: 'Apply' };
  const ssa = owners.find(isSsa);
  const handedOver: HandedOver = { from: csa.identity, to, paths: setPaths(csa.fields) };
  if (!ssa) {
    return {
      owners: owners.map((o) => (o === csa ? { identity: to, apiVersion: csa.apiVersion, fields: csa.fields } : o)),
      handedOver,
    };
  }
  // Only an entry at the same apiVersion is joined; the CSA entry goes either way.
  const joined = ssa.apiVersion === csa.apiVersion ? unionSets(ssa.fields, csa.fields) : ssa.fields;
  return {
    owners: owners.filter((o) => o !== csa).map((o) => (o === ssa ? { ...ssa, fields: joined } : o)),
    handedOver,
  };
}

// ---------------------------------------------------------------------------------------------
// The requests

/**
 * A forced server-side apply as `manager` over the given entries (Updater.Apply with force: merge,
 * prune what the manager dropped, every changed field taken from its owners, removed fields leave
 * every set), then the server's defaults for a removed `replicas`.
 */
function serverSideApply(
  input: ControllerApplyInput,
  sent: JsonObject,
  manager: string,
  given: readonly PredictedOwner[],
  handedOver: readonly HandedOver[],
  force: boolean,
  current: JsonObject | undefined = input.live,
): ControllerApplyPrediction {
  // An object without managedFields gets a before-first-apply owner of every field it has when
  // the apply arrives (skipnonapplied.go), which the apply then takes fields from.
  let owners = given;
  if (current && owners.length === 0) owners = beforeFirstApply(input, current, String(sent.apiVersion ?? ''));
  const live = current ? withManagedFields(current, owners) : undefined;
  const prediction = predictApply({
    manifestObject: sent,
    live,
    schema: input.schema,
    fieldManager: manager,
    mode: 'serverSide',
    resource: input.resource,
    ...(input.versions ? { versions: input.versions } : {}),
  });
  const refusal = prediction.statuses.find((s) => s.kind !== 'fieldConflict' || !force);
  const root = rootOf(input);
  if (refusal || !root) {
    return {
      outcome: 'refused',
      handedOver,
      taken: [],
      removed: [],
      changed: [],
      owners: [...owners],
      ...(refusal ? { status: refusal } : {}),
      ...(current ? { after: withoutManagedFields(current) } : {}),
    };
  }
  const reset = resetFieldsOf(input.schema, root);
  const applierSet = recursiveDifferenceSets(differenceSets(toFieldSet(input.schema, root, sent).set, STRIPPED), reset);
  const applier: ManagerIdentity = { manager, operation: 'Apply' };
  const apiVersion = String(sent.apiVersion ?? '');
  if (!live) {
    const after = withServerDefaults(sent);
    return {
      outcome: 'created',
      sent,
      handedOver,
      taken: [],
      removed: [],
      changed: valueChanges(input, undefined, after),
      after,
      owners: [{ identity: applier, apiVersion, fields: applierSet }],
    };
  }
  const merged = isJsonObject(prediction.merged) ? prediction.merged : live;
  const after = withServerDefaults(withoutManagedFields(merged));
  const removed = fieldSetFromPaths(prediction.deletions);
  const takenBy = new Map<string, FieldSet>();
  for (const c of prediction.conflicts) {
    const id = managerIdentifier(c.manager);
    takenBy.set(id, unionSets(takenBy.get(id) ?? emptyFieldSet, fieldSetFromPaths([c.path])));
  }
  const applierId = managerIdentifier(applier);
  const next: PredictedOwner[] = [];
  let placed = false;
  for (const o of owners) {
    const id = managerIdentifier(o.identity);
    if (id === applierId) {
      next.push({ identity: applier, apiVersion, fields: applierSet });
      placed = true;
      continue;
    }
    const fields = differenceSets(differenceSets(o.fields, takenBy.get(id) ?? emptyFieldSet), removed);
    if (!isEmptySet(fields)) next.push({ ...o, fields });
  }
  if (!placed && !isEmptySet(applierSet)) next.push({ identity: applier, apiVersion, fields: applierSet });
  return {
    outcome: 'applied',
    sent,
    handedOver,
    taken: prediction.conflicts,
    removed: prediction.deletions,
    changed: valueChanges(input, input.live, after),
    after,
    owners: next,
  };
}

/**
 * `kubectl apply` (client-side) as `manager`: kubectl's three-way merge — the manifest's fields set,
 * those its last-applied annotation set and the manifest no longer does removed, everything else
 * kept — with the annotation rewritten, sent as a patch the server records as an Update of
 * `manager` (Updater.Update: the changed fields become its own, removed fields leave every set).
 * A patch that changes nothing is not sent.
 */
function clientSideApply(
  input: ControllerApplyInput,
  manifest: JsonObject,
  manager: string,
): ControllerApplyPrediction {
  const { live } = input;
  const root = rootOf(input);
  const apiVersion = String(manifest.apiVersion ?? '');
  const identity: ManagerIdentity = { manager, operation: 'Update', apiVersion };
  const annotated = withLastApplied(manifest);
  if (!root) {
    return { outcome: 'refused', handedOver: [], taken: [], removed: [], changed: [], owners: ownersOf(live) };
  }
  const reset = resetFieldsOf(input.schema, root);
  if (!live) {
    // A create records every field of the object as stored, its defaults included.
    const after = withServerDefaults(annotated);
    const c = compareValues(input.schema, root, emptyObjectOf(after), after);
    const fields = differenceSets(recursiveDifferenceSets(unionSets(c.added, c.modified), reset), STRIPPED);
    return {
      outcome: 'created',
      sent: annotated,
      handedOver: [],
      taken: [],
      removed: [],
      changed: valueChanges(input, undefined, after),
      after,
      owners: [{ identity, apiVersion, fields }],
    };
  }
  const bare = withoutManagedFields(live);
  let next = mergeValues(input.schema, root, bare, annotated) as JsonObject;
  const original = lastApplied(live);
  if (original) {
    // kubectl's three-way patch deletes what the last-applied configuration set and the new one
    // (its annotation included) does not; a map that still has keys stays.
    const modified = toFieldSet(input.schema, root, annotated).set;
    const parents = fieldSetFromPaths(
      setPaths(modified).flatMap((p) => p.slice(0, -1).map((_, i) => p.slice(0, i + 1))),
    );
    const dropped = differenceSets(differenceSets(toFieldSet(input.schema, root, original).set, modified), parents);
    // A list or map left empty by the deletions goes with them, as the patch's null deletes it.
    next = withoutNulls((removeItems(input.schema, root, next, differenceSets(dropped, STRIPPED)) ?? {}) as JsonObject);
  }
  next = withServerDefaults(next);
  const c = compareValues(input.schema, root, bare, next);
  const changedSet = recursiveDifferenceSets(unionSets(c.modified, c.added), reset);
  const removedSet = recursiveDifferenceSets(c.removed, reset);
  if (isEmptySet(changedSet) && isEmptySet(removedSet)) {
    return {
      outcome: 'unchanged',
      handedOver: [],
      taken: [],
      removed: [],
      changed: [],
      after: bare,
      owners: ownersOf(live),
    };
  }
  const owners = ownersOf(live);
  const id = managerIdentifier(identity);
  const taken: FieldConflict[] = [];
  const result: PredictedOwner[] = [];
  let placed = false;
  for (const o of owners) {
    if (managerIdentifier(o.identity) === id) {
      const mine = differenceSets(unionSets(differenceSets(o.fields, removedSet), changedSet), STRIPPED);
      if (!isEmptySet(mine)) result.push({ identity, apiVersion, fields: mine });
      placed = true;
      continue;
    }
    for (const path of setPaths(intersectSets(o.fields, changedSet))) {
      const liveValue = valueAtPath(input.schema, root, bare, path);
      const manifestValue = valueAtPath(input.schema, root, next, path);
      taken.push({
        manager: o.identity,
        path,
        ...(liveValue !== undefined ? { liveValue } : {}),
        ...(manifestValue !== undefined ? { manifestValue } : {}),
      });
    }
    const fields = differenceSets(differenceSets(o.fields, changedSet), removedSet);
    if (!isEmptySet(fields)) result.push({ ...o, fields });
  }
  if (!placed) {
    const mine = differenceSets(changedSet, STRIPPED);
    if (!isEmptySet(mine)) result.push({ identity, apiVersion, fields: mine });
  }
  return {
    outcome: 'applied',
    sent: annotated,
    handedOver: [],
    taken,
    removed: setPaths(removedSet),
    changed: valueChanges(input, live, next),
    after: next,
    owners: result,
  };
}

/** The manifest with kubectl's last-applied annotation of itself, as `kubectl apply` writes it. */
function withLastApplied(manifest: JsonObject): JsonObject {
  const meta = isJsonObject(manifest.metadata) ? manifest.metadata : {};
  const annotations = { ...metaMap(manifest, 'annotations') };
  delete annotations[LAST_APPLIED];
  const recorded = { ...manifest, metadata: { ...meta, annotations } };
  return {
    ...manifest,
    metadata: { ...meta, annotations: { ...annotations, [LAST_APPLIED]: `${goJsonSorted(recorded)}\n` } },
  };
}

function lastApplied(live: JsonObject): JsonObject | undefined {
  const raw = metaMap(live, 'annotations')[LAST_APPLIED];
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed = JSON.parse(raw) as JsonValue;
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** JSON as Go's encoding/json writes a map: keys sorted, no spaces. */
function goJsonSorted(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(goJsonSorted).join(',')}]`;
  if (isJsonObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJsonSorted(v[k] as JsonValue)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

function rootOf(input: ControllerApplyInput): TypeRef | undefined {
  return rootTypeFor(input.schema, String(input.manifest.apiVersion ?? ''), String(input.manifest.kind ?? ''));
}

function resetFieldsOf(schema: SchemaModel, root: TypeRef): FieldSet {
  const atom = root.named !== undefined ? schema.types[root.named] : root.inlined;
  return atom?.map && 'status' in atom.map.fields
    ? fieldSetFromPaths([[{ kind: 'field', name: 'status' }]])
    : emptyFieldSet;
}

/**
 * skipnonapplied.go: the owner the server gives every field of an object that has no managedFields,
 * an update from the kind's empty Go object to the live one — so the structs the empty object
 * already has (a Deployment's `spec`, `spec.template`, `spec.strategy`) are not owned as such.
 */
function beforeFirstApply(input: ControllerApplyInput, live: JsonObject, apiVersion: string): PredictedOwner[] {
  const root = rootOf(input);
  if (!root) return [];
  const c = compareValues(input.schema, root, emptyObjectOf(live), withoutManagedFields(live));
  const fields = differenceSets(
    recursiveDifferenceSets(unionSets(c.added, c.modified), resetFieldsOf(input.schema, root)),
    STRIPPED,
  );
  return isEmptySet(fields)
    ? []
    : [{ identity: { manager: 'before-first-apply', operation: 'Update', apiVersion }, apiVersion, fields }];
}

/** The kind's empty Go object as the server encodes it (scheme.New), for the kinds the prediction knows. */
function emptyObjectOf(obj: JsonObject): JsonObject {
  const key = `${String(obj.apiVersion)} ${String(obj.kind)}`;
  const template = { metadata: { creationTimestamp: null }, spec: { containers: null } };
  if (key === 'apps/v1 Deployment')
    return {
      metadata: { creationTimestamp: null },
      spec: { selector: null, strategy: {}, template },
      status: {},
    };
  if (key === 'apps/v1 StatefulSet' || key === 'apps/v1 ReplicaSet' || key === 'apps/v1 DaemonSet')
    return { metadata: { creationTimestamp: null }, spec: { selector: null, template }, status: {} };
  return { metadata: { creationTimestamp: null } };
}

/** The live object's managedFields as entries, in their order. */
export function ownersOf(live: JsonObject | undefined): PredictedOwner[] {
  if (!live || !isJsonObject(live.metadata)) return [];
  return decodeManagedFields(live.metadata.managedFields).entries.map((e) => ({
    identity: e.identity,
    apiVersion: e.apiVersion,
    fields: e.fields,
  }));
}

function withoutManagedFields(obj: JsonObject): JsonObject {
  if (!isJsonObject(obj.metadata) || obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _mf, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

function withManagedFields(obj: JsonObject, owners: readonly PredictedOwner[]): JsonObject {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  return { ...obj, metadata: { ...meta, managedFields: encodeManagedFields(owners) } };
}

/** managedFields as the server writes them (FieldsV1), for entries of the prediction. */
export function encodeManagedFields(owners: readonly PredictedOwner[]): JsonValue[] {
  return owners.map((o) => ({
    manager: o.identity.manager,
    operation: o.identity.operation,
    apiVersion: o.apiVersion,
    fieldsType: 'FieldsV1',
    fieldsV1: encodeFieldsV1(o.fields),
    ...(o.identity.subresource ? { subresource: o.identity.subresource } : {}),
  }));
}

/** A field set as FieldsV1 JSON (serialize.go): `{}` for a member, `.` for a member with children. */
export function encodeFieldsV1(set: FieldSet): JsonObject {
  const out: JsonObject = {};
  for (const [key] of set.members) out[key] = {};
  for (const [key, node] of set.children) {
    const below = encodeFieldsV1(node.set);
    if (Object.keys(below).length === 0) continue;
    out[key] = set.members.has(key) ? { '.': {}, ...below } : below;
  }
  return out;
}

/**
 * The server's defaults for the fields an apply can remove, for the kinds whose defaults the
 * prediction knows (k8s.io/kubernetes pkg/apis/apps/v1/defaults.go SetDefaults_Deployment,
 * SetDefaults_ReplicaSet; pkg/apis/core/v1/defaults.go SetDefaults_PodSpec, SetDefaults_Container,
 * SetDefaults_ReplicationController): a field the apply prunes comes back at its default — a
 * workload's `replicas` at 1 (mimir#7367), a Deployment's strategy, a container's pull policy.
 * Only a missing (or null) field is filled, as the defaulting functions do.
 */
export function withServerDefaults(given: JsonObject): JsonObject {
  const obj = withoutEmptyMetadataMaps(given);
  const key = `${String(obj.apiVersion)} ${String(obj.kind)}`;
  const replicated = ['apps/v1 Deployment', 'apps/v1 StatefulSet', 'apps/v1 ReplicaSet', 'v1 ReplicationController'];
  if (!replicated.includes(key) || !isJsonObject(obj.spec)) return obj;
  const out = structuredClone(obj) as JsonObject;
  const spec = out.spec as JsonObject;
  spec.replicas ??= 1;
  if (key === 'apps/v1 Deployment') {
    const strategy: JsonObject = isJsonObject(spec.strategy) ? spec.strategy : (spec.strategy = {});
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const rolling: JsonObject = isJsonObject(strategy.rollingUpdate)
        ? strategy.rollingUpdate
        : (strategy.rollingUpdate = {});
      rolling.maxUnavailable ??= '25%';
      rolling.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
  }
  if (key !== 'apps/v1 StatefulSet' && isJsonObject(spec.template) && isJsonObject(spec.template.spec))
    podSpecDefaults(spec.template.spec);
  return out;
}

function withoutNulls(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === null) continue;
    out[k] = isJsonObject(v)
      ? withoutNulls(v)
      : Array.isArray(v)
        ? v.map((i) => (isJsonObject(i) ? withoutNulls(i) : i))
        : v;
  }
  return out;
}

/** ObjectMeta's labels and annotations are `omitempty`: an empty map is not stored. */
function withoutEmptyMetadataMaps(obj: JsonObject): JsonObject {
  if (!isJsonObject(obj.metadata)) return obj;
  const meta = obj.metadata;
  const empty = (['labels', 'annotations'] as const).filter(
    (k) => meta[k] === null || (isJsonObject(meta[k]) && Object.keys(meta[k]).length === 0),
  );
  if (empty.length === 0) return obj;
  const out: JsonObject = { ...meta };
  for (const k of empty) delete out[k];
  return { ...obj, metadata: out };
}

function podSpecDefaults(ps: JsonObject): void {
  ps.dnsPolicy ??= 'ClusterFirst';
  ps.restartPolicy ??= 'Always';
  ps.terminationGracePeriodSeconds ??= 30;
  ps.securityContext ??= {};
  ps.schedulerName ??= 'default-scheduler';
  for (const list of ['containers', 'initContainers']) {
    const containers = ps[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      if (!isJsonObject(c)) continue;
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.imagePullPolicy ??= pullsAlways(typeof c.image === 'string' ? c.image : '') ? 'Always' : 'IfNotPresent';
      c.resources ??= {};
      if (Array.isArray(c.ports)) for (const p of c.ports) if (isJsonObject(p)) p.protocol ??= 'TCP';
    }
  }
}

/** SetDefaults_Container: `Always` for an image without a tag or with `latest`, unless pinned by digest. */
function pullsAlways(image: string): boolean {
  if (image.includes('@')) return false;
  const name = image.slice(image.lastIndexOf('/') + 1);
  const colon = name.lastIndexOf(':');
  return colon < 0 || name.slice(colon + 1) === 'latest';
}

/** Every field whose value differs between the two objects (managedFields, status aside), by field path. */
function valueChanges(
  input: ControllerApplyInput,
  before: JsonObject | undefined,
  after: JsonObject,
): { path: FieldPath; before?: JsonValue; after?: JsonValue }[] {
  const root = rootOf(input);
  if (!root) return [];
  const b = before ? withoutManagedFields(before) : {};
  const c = compareValues(input.schema, root, b, after);
  const reset = resetFieldsOf(input.schema, root);
  const all = recursiveDifferenceSets(
    differenceSets(unionSets(unionSets(c.added, c.modified), c.removed), STRIPPED),
    reset,
  );
  return setPaths(all).map((path) => {
    const was = valueAtPath(input.schema, root, b, path);
    const is = valueAtPath(input.schema, root, after, path);
    return { path, ...(was !== undefined ? { before: was } : {}), ...(is !== undefined ? { after: is } : {}) };
  });
}

function withChangesFrom(p: ControllerApplyPrediction, live: JsonObject): ControllerApplyPrediction {
  return p.outcome === 'applied' && p.after ? p : { ...p, after: p.after ?? withoutManagedFields(live) };
}

/** A path as FieldsV1 keys joined by `.`, the form the tests compare owners in. */
export function fieldsV1Path(path: readonly PathElement[]): string {
  return path.map(pathElementKey).join('.');
}

// Predicts what the API server answers to one manifest, from reads only: the live object (with
// managedFields) and the cluster's schema. The apply path mirrors the server's field manager chain
// (k8s.io/apimachinery pkg/util/managedfields/internal: skipnonapplied.go, lastappliedmanager.go,
// buildmanagerinfo.go, stripmeta.go, structuredmerge.go) over structured-merge-diff
// merge/update.go Updater.Apply: merge, prune, compare, conflicts = owned(m) ∩ (Modified ∪ Added).
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { goQuote, type FieldPath } from './path';
import {
  differenceSets,
  emptyFieldSet,
  fieldSetFromPaths,
  hasPath,
  intersectSets,
  isEmptySet,
  isSubsetOf,
  recursiveDifferenceSets,
  setPaths,
  unionSets,
  type FieldSet,
} from './field-set';
import {
  differenceWithNamedMembers,
  ensureNamedFieldsAreMembers,
  reconcileFieldSetWithSchema,
  toFieldSet,
  typeProblems,
  type ValueProblem,
} from './to-field-set';
import { compareValues, mergeValues, removeItems, valueAtPath, type Comparison } from './merge';
import { decodeManagedFields } from './managed-fields';
import {
  alreadyExistsMessage,
  applyConflictMessage,
  conflictCauses,
  formatServerPath,
  invalidMessage,
  managerIdentifier,
  typedPatchRefusalMessage,
  optimisticLockMessage,
  validationErrorsMessage,
  uidMismatchMessage,
  type ConflictCause,
  type ManagerIdentity,
} from './messages';
import { rootTypeFor, type SchemaModel, type TypeRef } from './schema';
import { manifestPathFor, managerView, relabelledGaps, type KindVersions, type ManagerView } from './versions';

/** How the user will send the manifest; it decides which 409s are possible. */
export type ApplyMode = 'serverSide' | 'clientSide' | 'create';

export interface PredictApplyInput {
  /** The manifest as JSON, decoded the way kubectl decodes YAML. */
  readonly manifestObject: JsonObject;
  /** The live object read at the manifest's apiVersion, managedFields included; undefined if not found. */
  readonly live: JsonObject | undefined;
  readonly schema: SchemaModel;
  readonly fieldManager: string;
  readonly mode: ApplyMode;
  /** Plural resource and group, for the server's messages (`deployments`, `apps`). */
  readonly resource: { readonly group: string; readonly resource: string };
  /**
   * Fields the main resource resets on write (the registry's GetResetFields): `status` for kinds
   * with a status subresource. Default: [['status']] when the kind's schema has a `status` field.
   */
  readonly resetFields?: readonly FieldPath[];
  /** Subresource the apply goes to; '' (the main resource) for manifests. */
  readonly subresource?: string;
  /**
   * Top-level fields whose live values were never read, so a conflict under them cannot be
   * decided. Default: a Secret's `data`, `type` and `immutable` (Secrets are read as metadata only,
   * see unreadLiveFields); `stringData` is not among them: the server never stores it, so the live
   * object never has it and every owned `stringData` key the manifest sets is a change.
   */
  readonly unreadLiveFields?: readonly string[];
  /**
   * The kind's versions as the cluster serves them (a CRD's versions and conversion strategy), for
   * managers recorded at another apiVersion; without it, those are compared path by path where
   * the paths say that is safe (see versions.ts).
   */
  readonly versions?: KindVersions;
}

export interface FieldConflict {
  readonly manager: ManagerIdentity;
  readonly path: FieldPath;
  readonly liveValue?: JsonValue;
  readonly manifestValue?: JsonValue;
  /**
   * Where the field is in the manifest's apiVersion, when `path` is another version's (the
   * manager's, as the server names it: `.spec.targetCPUUtilizationPercentage` of autoscaling/v1
   * is `.spec.metrics` of an autoscaling/v2 manifest).
   */
  readonly manifestPath?: FieldPath;
}

/** A manager recorded at another apiVersion whose fields the product cannot compare as the server does. */
export interface UnconvertedManager {
  readonly manager: ManagerIdentity;
  readonly apiVersion: string;
  /** Why, for the user: `the cluster converts ... with a conversion webhook ...`. */
  readonly reason: string;
  /** Fields it owns that this apply may change (path by path, at the manifest's version), possibly none. */
  readonly paths: readonly FieldPath[];
}

export interface ManagerPaths {
  readonly manager: ManagerIdentity;
  readonly paths: readonly FieldPath[];
}

/** A status the server would answer instead of success. */
export interface PredictedStatus {
  readonly code: 400 | 409 | 422 | 500;
  /** '' is the server's StatusReasonUnknown: a plain error turned into a 500 carries no reason. */
  readonly reason: 'Conflict' | 'AlreadyExists' | 'Invalid' | 'BadRequest' | '';
  readonly message: string;
  /** details.causes: one per (manager, path) of a field conflict; the field error of a 422. */
  readonly causes?: readonly ConflictCause[];
  /**
   * Which rule produced it; a conflict of ownership is always answered before the lock.
   * `refused`: the request is turned down before ownership is looked at (see `problems`).
   */
  readonly kind: 'fieldConflict' | 'alreadyExists' | 'staleResourceVersion' | 'uidMismatch' | 'refused';
}

export interface EngineProblem {
  /**
   * managedFields: the live object's could not be decoded; managedFieldsInManifest: the manifest
   * carries metadata.managedFields, which an apply refuses (400).
   */
  readonly code: 'kindNotInSchema' | 'managedFields' | 'conversion' | 'managedFieldsInManifest' | ValueProblem['code'];
  readonly message: string;
  readonly path?: FieldPath;
  /** For a value the server cannot type: where and what its validation says. */
  readonly server?: ValueProblem['server'];
}

export interface ApplyPrediction {
  /** Field ownership conflicts the apply would get, after the kubectl forgiveness rule. */
  readonly conflicts: readonly FieldConflict[];
  /**
   * Fields another manager owns and the manifest sets, under a live value that was never read
   * (a Secret's `data`): a conflict exactly when the values differ, which only the server knows.
   * Not part of `status`; only a dry run decides them.
   */
  readonly uncertain: readonly FieldConflict[];
  /**
   * Managers recorded at another apiVersion that only the server can compare (a conversion
   * webhook, fields that move between versions without a conversion the product knows). While
   * one is listed, a success or the conflicts in `status` are not certain: only a dry run decides.
   */
  readonly unconverted: readonly UnconvertedManager[];
  /** Conflicts the server forgives because kubectl's last-applied configuration set them. */
  readonly forgiven: readonly FieldConflict[];
  /** Paths the apply would remove from the live object, and the managers who owned them. */
  readonly deletions: readonly FieldPath[];
  /**
   * Paths under a live value that was never read (a Secret's `data` keys) that the apply prunes:
   * the applier set them last time, the manifest no longer does, and no other manager owns them.
   * `deletions` cannot name them, since the live value they are removed from is not known.
   */
  readonly unreadRemovals?: readonly FieldPath[];
  readonly deletionsByManager: readonly ManagerPaths[];
  /** What the server answers first (ownership before lock), or undefined when it succeeds. */
  readonly status?: PredictedStatus;
  /** Every 409-class problem found, in the order the server checks them. */
  readonly statuses: readonly PredictedStatus[];
  readonly problems: readonly EngineProblem[];
  /**
   * The object as the server-side apply leaves it before the server's defaulting and validation
   * (merged, pruned): what the server's update validation compares with the live object. Only
   * for an existing object whose manifest the server can type.
   */
  readonly merged?: JsonValue;
}

/** The fields the server strips from every manager's set (stripmeta.go). */
export const STRIPPED_FOR_EVERY_MANAGER: readonly FieldPath[] = [
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'selfLink'],
  ['metadata', 'uid'],
  ['metadata', 'clusterName'],
  ['metadata', 'generation'],
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
].map((names) => names.map((name) => ({ kind: 'field' as const, name })));

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export function predictApply(input: PredictApplyInput): ApplyPrediction {
  const { manifestObject: config, live, mode } = input;
  const problems: EngineProblem[] = [];
  const statuses: PredictedStatus[] = [];
  const meta = isJsonObject(config.metadata) ? config.metadata : {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  const liveMeta = live && isJsonObject(live.metadata) ? live.metadata : undefined;
  const empty: Omit<ApplyPrediction, 'statuses' | 'problems'> = {
    conflicts: [],
    uncertain: [],
    unconverted: [],
    forgiven: [],
    deletions: [],
    deletionsByManager: [],
  };
  const done = (rest: Omit<ApplyPrediction, 'statuses' | 'problems' | 'status'>): ApplyPrediction => {
    const first = statuses[0];
    return { ...rest, statuses, problems, ...(first ? { status: first } : {}) };
  };

  // A create's resourceVersion is never sent: kubectl create, and kubectl apply of a new object,
  // clear it first (kubectl resource helper `Create(namespace, modify=true, obj)`; seen in the
  // request body of `kubectl create --dry-run=server -v=10`). The storage would refuse it
  // (500 "resourceVersion should not be set on objects to be created"), but no kubectl user gets
  // that answer, so it is not predicted; the dry run sends what kubectl sends (cluster/dry-run.ts).
  if (mode === 'create') {
    // generateName: the server picks a fresh name, so the manifest's own name cannot collide.
    const generated = typeof meta.generateName === 'string' && meta.generateName !== '' && name === '';
    if (live && !generated) {
      statuses.push({
        code: 409,
        reason: 'AlreadyExists',
        kind: 'alreadyExists',
        message: alreadyExistsMessage(input.resource, name),
      });
    }
    return done(empty);
  }

  const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : undefined;
  const uid = typeof meta.uid === 'string' ? meta.uid : undefined;

  // A manifest pasted from `kubectl get -o yaml` keeps its managedFields; an apply body must not
  // carry any, not even `[]` (structuredmerge.go Apply: "metadata.managedFields must be nil", 400),
  // and the check comes before the patch is typed, before conflicts, for new objects too.
  if (mode === 'serverSide' && meta.managedFields !== undefined && meta.managedFields !== null) {
    problems.push({
      code: 'managedFieldsInManifest',
      message: 'metadata.managedFields must be nil',
      path: [
        { kind: 'field', name: 'metadata' },
        { kind: 'field', name: 'managedFields' },
      ],
    });
    statuses.push({ code: 400, reason: 'BadRequest', kind: 'refused', message: 'metadata.managedFields must be nil' });
    return done(empty);
  }

  if (!live) {
    // Apply (and a client-side apply, which then creates) on a missing object.
    if (mode === 'serverSide') {
      // patch.go createNewObject runs the same apply on an empty object: a manifest the field
      // manager cannot type is refused before the uid check that follows it.
      const root = rootTypeFor(input.schema, String(config.apiVersion ?? ''), String(config.kind ?? ''));
      if (root) {
        const refusals = [
          ...toFieldSet(input.schema, root, config).problems,
          ...typeProblems(input.schema, root, config),
        ];
        problems.push(...refusals.map(asEngineProblem));
        if (refusals.length > 0) {
          statuses.push(typedRefusal(config, refusals));
          return done(empty);
        }
      }
      if (uid)
        statuses.push({
          code: 409,
          reason: 'Conflict',
          kind: 'uidMismatch',
          message: uidMismatchMessage(input.resource, name, uid),
        });
    }
    return done(empty);
  }

  let result = empty;
  if (mode === 'serverSide') {
    const root = rootTypeFor(input.schema, String(config.apiVersion ?? ''), String(config.kind ?? ''));
    if (!root) {
      problems.push({
        code: 'kindNotInSchema',
        message: `no schema for ${String(config.apiVersion)} ${String(config.kind)}`,
      });
    } else {
      const predicted = predictFieldConflicts(input, root, problems);
      result = predicted;
      const refusals = problems.filter((p) => p.server !== undefined);
      if (refusals.length > 0) statuses.push(typedRefusal(config, refusals as { server: ValueProblem['server'] }[]));
      // A conversion to a manager's version that fails ends the apply before conflicts are reported.
      else if (predicted.conversionRefusal) {
        problems.push({
          code: 'conversion',
          message: `the server cannot convert this object to the apiVersion another manager's fields are recorded at: ${predicted.conversionRefusal}`,
        });
        statuses.push({ code: 500, reason: '', kind: 'refused', message: predicted.conversionRefusal });
      } else if (result.conflicts.length > 0) {
        statuses.push({
          code: 409,
          reason: 'Conflict',
          kind: 'fieldConflict',
          message: applyConflictMessage(result.conflicts),
          causes: conflictCauses(result.conflicts),
        });
      }
    }
  }

  // The lock: a resourceVersion in the manifest is a precondition (store.go Update), checked
  // after the field manager has merged the apply.
  const liveRv = typeof liveMeta?.resourceVersion === 'string' ? liveMeta.resourceVersion : undefined;
  // A resourceVersion that parses to 0 ("" or "0") asks for no precondition: the registry updates
  // unconditionally (store.go Update: newResourceVersion == 0 && AllowUnconditionalUpdate).
  if (rv !== undefined && !/^0*$/.test(rv) && rv !== liveRv) {
    statuses.push({
      code: 409,
      reason: 'Conflict',
      kind: 'staleResourceVersion',
      message: optimisticLockMessage(input.resource, name),
    });
  }
  const liveUid = typeof liveMeta?.uid === 'string' ? liveMeta.uid : undefined;
  if (uid !== undefined && uid !== '' && uid !== liveUid) {
    // An existing object with another uid: the update is refused as an immutable field change.
    statuses.push({
      code: 422,
      reason: 'Invalid',
      kind: 'uidMismatch',
      message: invalidMessage(
        String(config.kind ?? ''),
        input.resource.group,
        name,
        `metadata.uid: Invalid value: ${goQuote(uid)}: field is immutable`,
      ),
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${goQuote(uid)}: field is immutable`,
          field: 'metadata.uid',
        },
      ],
    });
  }
  return done(result);
}

function asEngineProblem(p: ValueProblem): EngineProblem {
  return { code: p.code, message: p.message, path: p.path, server: p.server };
}

/** The applied configuration cannot be typed: a 500, before conflicts and the lock. */
function typedRefusal(config: JsonObject, refusals: readonly { server: ValueProblem['server'] }[]): PredictedStatus {
  return {
    code: 500,
    reason: '',
    kind: 'refused',
    message: typedPatchRefusalMessage(
      config,
      refusals.map((r) => r.server),
    ),
  };
}

interface ManagerState {
  identity: ManagerIdentity;
  /** The apiVersion the set was recorded at. */
  apiVersion: string;
  set: FieldSet;
}

type FieldPrediction = Omit<ApplyPrediction, 'statuses' | 'problems' | 'status'> & { conversionRefusal?: string };

/** The applied configuration typed under a schema: its field set and what the server refuses in it. */
interface TypedConfig {
  readonly set: FieldSet;
  readonly refusals: readonly ValueProblem[];
  /** `set` without the kind's reset fields (defaultResetFields), once asked. */
  withoutReset?: FieldSet;
}

/**
 * Typed once per manifest object, schema and kind: both are never changed once made, and several
 * contexts of one Kubernetes version judge the same object under the same schema (the command
 * line's files are parsed once for every context, and the schema built once per OpenAPI document).
 * Only the live object differs between them.
 *
 * Kept for the last objects typed only, one unless the caller asks for more (keepTypedConfigs: the
 * command line judging several contexts side by side). A typing kept while a few more objects are
 * judged outlives V8's young generation and is copied to the old one, where it stays until the next
 * full collection: the editor's judgement of a file of 2,000 objects left 12 MB of them behind at its
 * peak, kept with 8 objects as with all 2,000 (docs/performance.md). The editor types an object
 * again only when its facts change.
 */
const typedConfigs = new Map<JsonObject, { schema: SchemaModel; root: string; typed: TypedConfig }[]>();
let typedConfigsKept = 1;

/** How many objects' typings are kept (at least one): more where several contexts judge the same objects at once. */
export function keepTypedConfigs(objects: number): void {
  typedConfigsKept = Math.max(1, Math.floor(objects));
  while (typedConfigs.size > typedConfigsKept) typedConfigs.delete(typedConfigs.keys().next().value!);
}

function typedConfig(schema: SchemaModel, root: TypeRef, config: JsonObject): TypedConfig {
  const type = (): TypedConfig => {
    const fieldSet = toFieldSet(schema, root, config);
    return { set: fieldSet.set, refusals: [...fieldSet.problems, ...typeProblems(schema, root, config)] };
  };
  if (root.named === undefined || root.inlined || root.elementRelationship) return type();
  let known = typedConfigs.get(config);
  if (known) {
    // The most recent last: the first is the one forgotten.
    typedConfigs.delete(config);
    typedConfigs.set(config, known);
  } else {
    if (typedConfigs.size >= typedConfigsKept) typedConfigs.delete(typedConfigs.keys().next().value!);
    typedConfigs.set(config, (known = []));
  }
  const found = known.find((k) => k.schema === schema && k.root === root.named);
  if (found) return found.typed;
  const typed = type();
  // A few schemas at most (the versions of a fleet): the oldest is forgotten.
  if (known.length >= 4) known.shift();
  known.push({ schema, root: root.named, typed });
  return typed;
}

function predictFieldConflicts(input: PredictApplyInput, root: TypeRef, problems: EngineProblem[]): FieldPrediction {
  const { schema, manifestObject: config } = input;
  const live = input.live as JsonObject;
  const liveMeta = isJsonObject(live.metadata) ? live.metadata : {};
  const apiVersion = String(config.apiVersion ?? '');
  const subresource = input.subresource ?? '';
  const resetSet = fieldSetFromPaths(input.resetFields ?? defaultResetFields(schema, root));
  const excludeReset = (s: FieldSet): FieldSet => recursiveDifferenceSets(s, resetSet);

  // Duplicate keys, unusable list items and values of the wrong type are refused before any
  // ownership check (structuredmerge.go Apply: "failed to create typed patch object").
  const typed = typedConfig(schema, root, config);
  const refusals = typed.refusals;
  problems.push(...refusals.map(asEngineProblem));
  if (refusals.length > 0)
    return { conflicts: [], uncertain: [], unconverted: [], forgiven: [], deletions: [], deletionsByManager: [] };

  const decoded = decodeManagedFields(liveMeta.managedFields);
  for (const message of decoded.problems) problems.push({ code: 'managedFields', message });
  const managers = new Map<string, ManagerState>();
  for (const e of decoded.entries)
    managers.set(managerIdentifier(e.identity), { identity: e.identity, apiVersion: e.apiVersion, set: e.fields });

  // skipnonapplied.go: an object without managedFields gets a `before-first-apply` Update
  // manager that owns every field it has, before the apply is looked at.
  if (managers.size === 0) {
    const identity: ManagerIdentity = {
      manager: 'before-first-apply',
      operation: 'Update',
      apiVersion,
      ...(subresource ? { subresource } : {}),
    };
    const c = compareValues(schema, root, {}, live);
    const owned = differenceSets(
      excludeReset(unionSets(c.added, c.modified)),
      fieldSetFromPaths(STRIPPED_FOR_EVERY_MANAGER),
    );
    if (!isEmptySet(owned)) managers.set(managerIdentifier(identity), { identity, apiVersion, set: owned });
  }
  reconcileManagedFieldsWithSchemaChanges(schema, String(config.kind ?? ''), root, managers);

  const applier: ManagerIdentity = {
    manager: input.fieldManager || 'unknown',
    operation: 'Apply',
    ...(subresource ? { subresource } : {}),
  };
  const applierId = managerIdentifier(applier);

  // update.go Apply: merge, record the new set, prune what this applier dropped.
  let merged = mergeValues(schema, root, live, config) as JsonValue;
  const lastSet = managers.get(applierId)?.set;
  // Without the reset fields: made once with the typed configuration when the kind's own are reset.
  const appliedSet = input.resetFields ? excludeReset(typed.set) : (typed.withoutReset ??= excludeReset(typed.set));
  managers.set(applierId, { identity: applier, apiVersion, set: appliedSet });
  if (lastSet && !isEmptySet(lastSet)) merged = prune(schema, root, merged, managers, lastSet, appliedSet);

  const comparison = filterComparison(compareValues(schema, root, live, merged), excludeReset);
  const changed = unionSets(comparison.modified, comparison.added);

  const kind = String(config.kind ?? '');
  const views = viewsOfManagers(input, root, managers, applierId);
  // The server converts the live object to every manager's version first (reconcile), then the
  // merged one while pruning (only when this applier applied before), then in update: the first
  // conversion that fails is its answer. (Its managers are a Go map: when several fail, which one
  // speaks first is not fixed; the first by identifier is named here.)
  const conversionRefusal =
    firstRefusal(views, (v) => (v.kind === 'refused' ? v.message : liveTyping(v, live))) ??
    (lastSet && !isEmptySet(lastSet)
      ? firstRefusal(views, (v, version) =>
          prefixed(
            liveTyping(v, merged),
            `failed to prune fields: failed add back owned items: failed to convert merged object at version ${version}: `,
          ),
        )
      : undefined) ??
    firstRefusal(views, (v) => prefixed(liveTyping(v, merged), 'failed to convert new object: '));
  function liveTyping(v: ManagerView, value: JsonValue): string | undefined {
    if (v.kind !== 'relabelled' || !v.crd || v.root === root) return undefined;
    const errors = typeProblems(schema, v.root, value).map((p) => p.server);
    return errors.length > 0 ? validationErrorsMessage(errors) : undefined;
  }

  const conflictsFound: FieldConflict[] = [];
  const unconverted: UnconvertedManager[] = [];
  const deletionsByManager: ManagerPaths[] = [];
  const changedAt = new Map<string, { root: TypeRef; live: JsonValue; merged: JsonValue; changed: FieldSet }>();
  for (const [id, m] of managers) {
    const removed = intersectSets(m.set, comparison.removed);
    const removedFromApplier = id === applierId ? intersectSets(lastSet ?? emptyFieldSet, comparison.removed) : removed;
    if (!isEmptySet(removedFromApplier))
      deletionsByManager.push({ manager: m.identity, paths: setPaths(removedFromApplier) });
    if (id === applierId) continue;
    const view = views.get(m.apiVersion);
    if (!view) {
      for (const path of setPaths(intersectSets(m.set, changed)))
        conflictsFound.push(withValues(schema, root, live, config, { manager: m.identity, path }));
      continue;
    }
    // Nothing changed at the request's version: nothing changes in any other version either.
    if (isEmptySet(changed) || view.kind === 'refused') continue;
    const byPath = setPaths(intersectSets(m.set, changed));
    if (view.kind === 'unknown') {
      unconverted.push({ manager: m.identity, apiVersion: m.apiVersion, reason: view.reason, paths: byPath });
      continue;
    }
    if (view.kind === 'relabelled' && !view.crd) {
      const gaps = relabelledGaps(schema, view.root, [live, merged], setPaths(m.set));
      if (gaps.length > 0) {
        const shown = gaps.slice(0, 3).map(formatServerPath).join(', ');
        unconverted.push({
          manager: m.identity,
          apiVersion: m.apiVersion,
          reason: `${shown} ${gaps.length === 1 ? 'does' : 'do'} not map one to one between ${apiVersion} and ${m.apiVersion}, and the product does not know that conversion`,
          paths: byPath,
        });
        continue;
      }
    }
    let at = changedAt.get(m.apiVersion);
    if (!at) {
      const vLive = view.kind === 'converted' ? view.convert(live) : live;
      const vMerged = view.kind === 'converted' && isJsonObject(merged) ? view.convert(merged) : merged;
      const vReset = fieldSetFromPaths(input.resetFields ?? defaultResetFields(schema, view.root));
      const c = compareValues(schema, view.root, vLive, vMerged);
      at = {
        root: view.root,
        live: vLive,
        merged: vMerged,
        changed: recursiveDifferenceSets(unionSets(c.modified, c.added), vReset),
      };
      changedAt.set(m.apiVersion, at);
    }
    for (const path of setPaths(intersectSets(m.set, at.changed))) {
      const conflict = withValues(schema, at.root, at.live, at.merged, { manager: m.identity, path });
      const manifestPath = view.kind === 'converted' ? manifestPathFor(kind, apiVersion, path) : undefined;
      conflictsFound.push(manifestPath ? { ...conflict, manifestPath } : conflict);
    }
  }

  const unread = new Set(
    input.unreadLiveFields ??
      unreadLiveFields(apiVersion, String(config.kind ?? ''), isJsonObject(live) ? live : undefined),
  );
  let unreadRemovals: FieldPath[] = [];
  if (unread.size > 0 && lastSet && !isEmptySet(lastSet)) {
    let others: FieldSet = emptyFieldSet;
    for (const [id, m] of managers) if (id !== applierId) others = unionSets(others, m.set);
    const dropped = differenceSets(differenceSets(lastSet, appliedSet), others);
    unreadRemovals = setPaths(dropped).filter((p) => p.length > 1 && p[0]?.kind === 'field' && unread.has(p[0].name));
  }
  const isUnread = (c: FieldConflict) => c.path[0]?.kind === 'field' && unread.has(c.path[0].name);
  const uncertain = conflictsFound.filter(isUnread);
  let conflicts = conflictsFound.filter((c) => !isUnread(c));
  let forgiven: FieldConflict[] = [];
  // lastappliedmanager.go: only for the manager literally called `kubectl`.
  if (conflicts.length > 0 && input.fieldManager === 'kubectl') {
    const allowed = allowedConflictsFromLastApplied(schema, root, live, apiVersion);
    if (allowed) {
      forgiven = conflicts.filter((c) => hasPath(allowed, c.path));
      conflicts = conflicts.filter((c) => !hasPath(allowed, c.path));
    }
  }
  // A manager only the server can compare: its path-by-path guesses are named, never claimed.
  const guesses = unconverted.flatMap((u) =>
    u.paths.map((path) => withValues(schema, root, live, config, { manager: u.manager, path })),
  );
  return {
    conflicts,
    uncertain: [...uncertain, ...guesses],
    unconverted,
    forgiven,
    deletions: setPaths(comparison.removed),
    deletionsByManager,
    ...(unreadRemovals.length > 0 ? { unreadRemovals } : {}),
    merged,
    ...(conversionRefusal ? { conversionRefusal } : {}),
  };
}

/** The view of every apiVersion other than the request's that a manager (not the applier) was recorded at. */
function viewsOfManagers(
  input: PredictApplyInput,
  root: TypeRef,
  managers: Map<string, ManagerState>,
  applierId: string,
): Map<string, ManagerView> {
  const apiVersion = String(input.manifestObject.apiVersion ?? '');
  const kind = String(input.manifestObject.kind ?? '');
  const views = new Map<string, ManagerView>();
  for (const [id, m] of managers) {
    if (id === applierId || m.apiVersion === apiVersion || views.has(m.apiVersion)) continue;
    views.set(m.apiVersion, managerView(input.schema, kind, { apiVersion, root }, m.apiVersion, input.versions));
  }
  return views;
}

function firstRefusal(
  views: Map<string, ManagerView>,
  refusal: (view: ManagerView, version: string) => string | undefined,
): string | undefined {
  for (const version of [...views.keys()].sort()) {
    const message = refusal(views.get(version)!, version);
    if (message) return message;
  }
  return undefined;
}

function prefixed(message: string | undefined, prefix: string): string | undefined {
  return message === undefined ? undefined : prefix + message;
}

/**
 * reconcileManagedFieldsWithSchemaChanges (merge/update.go, the first step of Updater.Apply): each
 * manager's set, recorded under the schema of its day, is brought in line with today's schema of
 * the version it was recorded at (a struct that became atomic is owned as a whole), before the
 * merge and every comparison. Changes the map in place.
 */
function reconcileManagedFieldsWithSchemaChanges(
  schema: SchemaModel,
  kind: string,
  requestRoot: TypeRef,
  managers: Map<string, ManagerState>,
): void {
  for (const m of managers.values()) {
    if (isEmptySet(m.set)) continue;
    const root = rootTypeFor(schema, m.apiVersion, kind) ?? requestRoot;
    const reconciled = ofSet(m.set, schema, root, 'reconciled', () => reconcileFieldSetWithSchema(schema, root, m.set));
    if (reconciled) m.set = reconciled;
  }
}

/**
 * What is worked out from a field set under a schema and a type, kept with the set. Sets are never
 * changed once made, and one decoded set is shared by every managedFields entry of the same text
 * (managed-fields.ts): the objects a manager manages alike, and the same live object judged again
 * (the editor, on every keystroke), reconcile it and make its named fields members once.
 */
type SetWork = 'reconciled' | 'namedMembers';
const workedOut = new WeakMap<
  FieldSet,
  { schema: SchemaModel; root: string; work: SetWork; result: FieldSet | undefined }[]
>();

function ofSet(
  set: FieldSet,
  schema: SchemaModel,
  root: TypeRef,
  work: SetWork,
  make: () => FieldSet | undefined,
): FieldSet | undefined {
  if (root.named === undefined || root.inlined || root.elementRelationship) return make();
  let known = workedOut.get(set);
  if (!known) workedOut.set(set, (known = []));
  const found = known.find((k) => k.schema === schema && k.root === root.named && k.work === work);
  if (found) return found.result;
  const result = make();
  // A few schemas at most (the versions of a fleet): the oldest is forgotten.
  if (known.length >= 8) known.shift();
  known.push({ schema, root: root.named, work, result });
  return result;
}

/**
 * The top-level fields of a kind whose live values the product did not read: a Secret's values,
 * and its `type` and `immutable` unless the live object carries them (read as metadata only, a
 * Secret has neither; the cluster layer adds each once it has learned it without reading a value).
 * `stringData` is write-only: the server turns it into `data` after the field manager has run, so
 * it is never live and needs no read.
 */
export function unreadLiveFields(apiVersion: string, kind: string, live?: JsonObject): readonly string[] {
  if (apiVersion !== 'v1' || kind !== 'Secret') return [];
  return ['data', ...(['type', 'immutable'] as const).filter((field) => live?.[field] === undefined)];
}

/**
 * prune (update.go): remove what the applier owned last time and no longer sets, unless another
 * manager (or the new config) owns that exact path; a dropped list item goes as a whole.
 */
function prune(
  schema: SchemaModel,
  root: TypeRef,
  merged: JsonValue,
  managers: Map<string, ManagerState>,
  lastSet: FieldSet,
  /** The applier's new set (one of the managers'). */
  applied: FieldSet,
): JsonValue {
  // The applier still sets every path it set last time (the usual apply again, a value changed or
  // not): whatever the first step removes is added back or left below a path the applier owns now.
  // Every path of `last` is a member of ensure(applied), and so is each path above it (a typed
  // configuration's set holds the list items and map entries above its members, and ensure adds
  // the named fields), so none is in what nobody owns, none is removed with it, and the dangling
  // items of `last` are none: the answer is `merged` itself (removeItems of an empty set).
  if (isSubsetOf(lastSet, applied)) return merged;
  const ensure = (s: FieldSet): FieldSet =>
    ofSet(s, schema, root, 'namedMembers', () => ensureNamedFieldsAreMembers(schema, root, s)) as FieldSet;
  // ensure(toFieldSet(v)), in one walk.
  const mergedSet = toFieldSet(schema, root, merged, true).set;
  // The same for a value removeItems made of `merged`: the parts it left alone are merged's own
  // objects, whose sets are mergedSet's (and nothing of them is in the difference).
  const fieldsOf = (v: JsonValue): FieldSet =>
    v === merged ? mergedSet : toFieldSet(schema, root, v, true, { value: merged, set: mergedSet }).set;
  const lastMembers = ensure(lastSet);
  let pruned = removeItems(schema, root, merged, lastMembers);
  // addBackOwnedItems: mergedSet minus (fieldsOf(pruned) ∪ ensure(every manager's set)). Named
  // fields made members of a union are those of each set, so each manager's set is taken away in
  // turn, the applier's first, and the others only while something is left to take away (usually
  // the applier still owns all it dropped from the merged object); neither the union nor any
  // ensure(set) is made.
  let notOwned = differenceSets(mergedSet, fieldsOf(pruned));
  if (!isEmptySet(notOwned)) notOwned = differenceWithNamedMembers(schema, root, notOwned, applied);
  for (const m of managers.values()) {
    if (isEmptySet(notOwned)) break;
    if (m.set !== applied) notOwned = differenceWithNamedMembers(schema, root, notOwned, m.set);
  }
  pruned = removeItems(schema, root, merged, notOwned);
  // Everything is owned (the usual case): `pruned` is `merged` as removeItems leaves it, so nothing
  // of it dangles, and the last step would remove nothing more.
  if (isEmptySet(notOwned)) return pruned;
  // addBackDanglingItems
  return removeItems(schema, root, merged, intersectSets(differenceSets(mergedSet, fieldsOf(pruned)), lastMembers));
}

/**
 * The paths kubectl's last-applied configuration set and that still hold its values:
 * toFieldSet(lastApplied) minus everything that differs between it and the live object.
 * Undefined when there is no usable annotation (then nothing is forgiven).
 */
function allowedConflictsFromLastApplied(
  schema: SchemaModel,
  root: TypeRef,
  live: JsonObject,
  apiVersion: string,
): FieldSet | undefined {
  const annotations =
    isJsonObject(live.metadata) && isJsonObject(live.metadata.annotations) ? live.metadata.annotations : undefined;
  const raw = annotations?.[LAST_APPLIED];
  if (typeof raw !== 'string' || raw === '') return undefined;
  let lastApplied: JsonValue;
  try {
    lastApplied = JSON.parse(raw) as JsonValue;
  } catch {
    return undefined;
  }
  if (!isJsonObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined;
  const lastSet = toFieldSet(schema, root, lastApplied);
  // ObjectToTyped validates both objects; duplicates in either one end the forgiveness.
  if (lastSet.problems.length > 0 || toFieldSet(schema, root, live).problems.length > 0) return undefined;
  const c = compareValues(schema, root, lastApplied, live);
  return differenceSets(differenceSets(differenceSets(lastSet.set, c.modified), c.added), c.removed);
}

function filterComparison(c: Comparison, filter: (s: FieldSet) => FieldSet): Comparison {
  return { added: filter(c.added), modified: filter(c.modified), removed: filter(c.removed) };
}

function defaultResetFields(schema: SchemaModel, root: TypeRef): FieldPath[] {
  const atom = root.named !== undefined ? schema.types[root.named] : root.inlined;
  return atom?.map && 'status' in atom.map.fields ? [[{ kind: 'field', name: 'status' }]] : [];
}

function withValues(
  schema: SchemaModel,
  root: TypeRef,
  live: JsonValue,
  config: JsonValue,
  c: { manager: ManagerIdentity; path: FieldPath },
): FieldConflict {
  const liveValue = valueAtPath(schema, root, live, c.path);
  const manifestValue = valueAtPath(schema, root, config, c.path);
  return {
    ...c,
    ...(liveValue !== undefined ? { liveValue } : {}),
    ...(manifestValue !== undefined ? { manifestValue } : {}),
  };
}

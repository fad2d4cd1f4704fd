// From one manifest resource and what the cluster is known to say about it, the findings a user
// sees: in the editor as diagnostics, on the command line as compiler-style lines. Pure: the facts
// are handed in as plain data, so the editor (from its live cache), the command line (from a
// cluster or an offline snapshot) and the tests (from captured fixtures) all share this code.
import { isJsonObject, jsonDepthExceeds, type JsonObject, type JsonValue } from '../json';
import { firstCharacter, locate, manifestLimits, type LocateOptions, type ManifestProblem, type ManifestResource, type NamedObjectTarget, type Range } from '../manifest/manifest';
import { defaultSeverity, docsLinks, meansNotJudged, type FindingCode, type Severity } from './catalogue';
import { builtInGroups, isCustomKind, judgeNotServed, type DefinedKind, type NotServedDiscovery } from './kind-served';
import { IMMUTABLE_DATA_CAUSE, immutableChanges, type ImmutableChange } from './immutable';
import { judgeMissingNamespace, type DefinedNamespace } from './namespaces';
import { managerRole } from './managers';
import { describeManager, formatServerPath, invalidMessage, qualifiedResource, type ManagerIdentity } from '../ssa/messages';
import { valueAtPath } from '../ssa/merge';
import type { FieldPath } from '../ssa/path';
import { predictApply, type ApplyMode, type ApplyPrediction, type FieldConflict, type PredictedStatus, type UnconvertedManager } from '../ssa/predict';
import type { KindVersions } from '../ssa/versions';
import { fieldType, resolveType, rootTypeFor, type SchemaModel, type TypeRef } from '../ssa/schema';
import type { CelNode } from '../cel/schema';
import { validationRuleFindings } from './validation-rules';

/** What the cluster says of the manifest's apiVersion and kind. */
export type KindFacts =
  | { readonly state: 'pending' }
  | { readonly state: 'served'; readonly group: string; readonly resource: string; readonly namespaced: boolean }
  /**
   * `message`: the cluster layer's sentence, e.g. the versions that are served; `discovery`: what
   * the cluster serves around the kind, from which the analysis tells why (kind-served.ts).
   */
  | { readonly state: 'notServed'; readonly message: string; readonly discovery?: NotServedDiscovery }
  | { readonly state: 'unavailable'; readonly message: string };

/** What the cluster says of the object the manifest names. */
export type LiveFacts =
  | { readonly state: 'pending' }
  | { readonly state: 'exists'; readonly object: JsonObject }
  | { readonly state: 'absent' }
  | { readonly state: 'unavailable'; readonly message: string }
  /** The name or namespace is one the API server refuses, so the cluster was not asked. */
  | { readonly state: 'invalidName'; readonly field: 'metadata.name' | 'metadata.namespace'; readonly message: string };

/**
 * Whether the namespace a namespaced object goes to exists. Absent when nobody asked: a
 * cluster-scoped kind, an object that exists, a snapshot. `unknown`: not answered yet, or not
 * allowed to be read (a 403): nothing is said then.
 */
export interface NamespaceFacts {
  readonly state: 'exists' | 'missing' | 'unknown';
  readonly name: string;
}

export interface ResourceFacts {
  readonly kind: KindFacts;
  readonly live: LiveFacts;
  readonly namespace?: NamespaceFacts;
  /**
   * The schema of the manifest's group-version (with the group-versions the live object's
   * managers were recorded at, when the cluster serves them); undefined while it is not known.
   */
  readonly schema: SchemaModel | undefined;
  /** The kind's versions (a CRD's versions and conversion), when managers were recorded at another one. */
  readonly versions?: KindVersions;
  /** A custom kind's schema with its CRD validation rules (core/cel/schema.ts), when it has any. */
  readonly rules?: CelNode;
}

export interface AnalysisSettings {
  readonly fieldManager: string;
  readonly applyMode: ApplyMode;
  /** The user's own severity per finding code (`off` hides the finding), as ESLint rules allow. */
  readonly severity?: SeverityOverrides;
  /**
   * The kinds that CustomResourceDefinitions among the files checked together define (a folder, a
   * stream, a render; in the editor the open documents), and the namespaces their Namespace
   * objects create: the cluster need not have them yet.
   */
  readonly definedKinds?: readonly DefinedKind[];
}

export type SeverityOverrides = Readonly<Record<string, Severity | 'off'>>;

/** The user's severity overrides applied: another level, or the finding left out for `off`. */
export function withSeverity(findings: readonly Finding[], overrides: SeverityOverrides | undefined): Finding[] {
  if (!overrides || Object.keys(overrides).length === 0) return [...findings];
  const out: Finding[] = [];
  for (const f of findings) {
    const level = Object.hasOwn(overrides, f.code) ? overrides[f.code] : undefined;
    // What says that (a part of) a file was not judged is never hidden: silence over it would read
    // as "nothing to fear". It can be lowered, not turned off.
    if (level === 'off') {
      if (meansNotJudged(f.code)) out.push(f);
      continue;
    }
    out.push(level && level !== f.severity ? { ...f, severity: level } : f);
  }
  return out;
}

// The codes, their default severities and documentation links live in the rule catalogue.
export type { FindingCode, Severity } from './catalogue';

/** The object a finding is about: a generateName object under its prefix (objectIdentity). */
export type ObjectIdentity = NamedObjectTarget;

/** One thing to tell the user, on one range of the text. Plain data: it crosses every boundary. */
export interface Finding {
  readonly code: FindingCode;
  readonly severity: Severity;
  /** The sentence the user reads. */
  readonly message: string;
  readonly range: Range;
  /** The object it is about (absent for problems of the text itself). */
  readonly object?: ObjectIdentity;
  /** The field, in the API server's notation: `.spec.template.spec.containers[name="app"].image`. */
  readonly path?: string;
  /** The other field manager involved. */
  readonly manager?: ManagerIdentity;
  readonly liveValue?: JsonValue;
  readonly manifestValue?: JsonValue;
  /** What the API server itself would say, word for word, when it would refuse the request. */
  readonly serverMessage?: string;
  /**
   * The field the server's refusal names (`details.causes[].field`) when it is not `path`: a
   * StatefulSet's `spec` for a change of `.spec.serviceName`.
   */
  readonly serverField?: string;
  /** Where the Kubernetes documentation explains it. */
  readonly docs?: string;
}

export function objectIdentity(resource: ManifestResource): ObjectIdentity {
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    name: resource.name ?? resource.generateName ?? '',
    ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}),
  };
}

/** Problems of the text itself (syntax, decoding, duplicate keys), as findings. */
export function problemFindings(problems: readonly ManifestProblem[], overrides?: SeverityOverrides): Finding[] {
  return withSeverity(problems.map((p) => ({ code: p.code, severity: defaultSeverity(p.code), message: p.message, range: p.range })), overrides);
}

export function analyzeResource(resource: ManifestResource, facts: ResourceFacts, settings: AnalysisSettings): Finding[] {
  return withSeverity(findingsOf(resource, facts, settings), settings.severity);
}

/**
 * Why the analysis says nothing of an object on these facts, or only that it exists: the cluster did
 * not tell whether it serves the kind or what the object is (not in a snapshot, an answer that never
 * came), or there is no schema to compare an existing object's fields by for a server-side apply.
 * Undefined when the facts are enough to judge it (a kind not served, or a name the server refuses,
 * is judged: its finding says what the server answers). The stops of `analyzeResource`, named, so
 * that the command line can list the object as not judged rather than count it clean.
 */
export function unjudgedOn(resource: ManifestResource, facts: ResourceFacts, settings: Pick<AnalysisSettings, 'applyMode'>): string | undefined {
  // kubectl apply refuses a generateName before anything of the cluster matters (findingsOf).
  if (settings.applyMode !== 'create' && resource.name === undefined && resource.generateName !== undefined && resource.generateName !== '') return undefined;
  if (facts.kind.state === 'notServed' || facts.live.state === 'invalidName') return undefined;
  if (facts.kind.state === 'unavailable') return `the cluster did not say whether it serves ${resource.apiVersion} ${resource.kind}: ${facts.kind.message}`;
  if (facts.kind.state === 'pending') return `the cluster has not said yet whether it serves ${resource.apiVersion} ${resource.kind}`;
  if (facts.live.state === 'unavailable') return `the live object is not known: ${facts.live.message}`;
  if (facts.live.state === 'pending') return 'the live object is not known yet';
  if (facts.schema === undefined && settings.applyMode === 'serverSide' && facts.live.state === 'exists') return `no schema of ${resource.apiVersion}: the fields are not compared with the live object's`;
  return undefined;
}

function findingsOf(resource: ManifestResource, facts: ResourceFacts, settings: AnalysisSettings): Finding[] {
  const object = objectIdentity(resource);
  const at = (path: FieldPath) => rangeFor(resource, path, facts.schema);
  const findings: Finding[] = [];
  // Ranges are read from the node tree, which a document read for its values alone builds only
  // when asked: only the findings that are made ask.
  let kindAt: Range | undefined;
  const kindRange = (): Range => (kindAt ??= at([{ kind: 'field', name: 'kind' }]).value);

  // kubectl apply (client- or server-side) stops before any request when the object has no name
  // but a generateName (apply.go: "from <generateName>: cannot use generate name with apply"):
  // nothing about the cluster matters then. kubectl create is where generateName works.
  if (settings.applyMode !== 'create' && resource.name === undefined && resource.generateName !== undefined && resource.generateName !== '') {
    const kubectlMessage = `from ${resource.generateName}: cannot use generate name with apply`;
    return [
      {
        code: 'generate-name-apply',
        severity: defaultSeverity('generate-name-apply'),
        message: `kubectl apply refuses a manifest with generateName and no name (${kubectlMessage}): set metadata.name, or send it with kubectl create`,
        range: at(metadataPath('generateName')).key,
        object,
        path: '.metadata.generateName',
        docs: docsLinks.generateName,
      },
    ];
  }

  if (facts.kind.state === 'notServed') {
    // Why it is not served (a removed version, a CRD not installed, a CRD among the files) decides
    // the sentence, the link and even the code: kind-served.ts judges.
    const judged = judgeNotServed(resource.apiVersion, resource.kind, facts.kind.discovery, settings.definedKinds, facts.kind.message);
    return [{ code: judged.code, severity: defaultSeverity(judged.code), message: judged.message, range: kindRange(), object, docs: judged.docs }];
  }
  if (facts.live.state === 'invalidName') {
    const field = facts.live.field === 'metadata.name' ? 'name' : 'namespace';
    // A default namespace (from the settings) has no place in the text: the name carries it.
    const where = resource[field] !== undefined ? at(metadataPath(field)).value : resource.name !== undefined ? at(metadataPath('name')).value : kindRange();
    return [{ code: 'invalid-manifest', severity: defaultSeverity('invalid-manifest'), message: facts.live.message, range: where, object, path: `.${facts.live.field}` }];
  }
  // unjudgedOn names these stops (and the one without a schema below) for the command line's summary.
  if (facts.kind.state !== 'served' || facts.live.state === 'pending' || facts.live.state === 'unavailable') return [];
  const served = facts.kind;
  const live = facts.live.state === 'exists' ? facts.live.object : undefined;
  const resourceName = { group: served.group, resource: served.resource };
  let nameAt: Range | undefined;
  const nameRange = (): Range => (nameAt ??= resource.name !== undefined ? at(metadataPath('name')).value : kindRange());

  // A new object in a namespace that does not exist: the server answers 404 for the namespace. The
  // rest of the judgement (a new object's) still holds once the namespace is there.
  const namespaceWritten = resource.namespace !== undefined && resource.namespace !== '';
  const namespaceJudged = served.namespaced && !live && facts.namespace?.state === 'missing'
    ? judgeMissingNamespace(facts.namespace.name, namespaceWritten ? 'manifest' : 'default', (settings.definedKinds ?? []).filter((d): d is DefinedNamespace => !isCustomKind(d)))
    : undefined;

  if (facts.schema === undefined && settings.applyMode === 'serverSide' && live) return existenceFindings();
  // The engine walks objects recursively; a live object may nest deeper than it can go.
  if (live && jsonDepthExceeds(live, manifestLimits.depth)) {
    return [
      ...existenceFindings(),
      {
        code: 'too-large',
        severity: defaultSeverity('too-large'),
        message: `The live object nests deeper than ${manifestLimits.depth} levels: its fields are not compared with the manifest`,
        range: nameRange(),
        object,
      },
    ];
  }

  const prediction = predict(resource, live, facts, settings, resourceName);

  // One request gets one answer: when the manifest would be refused for several reasons, each
  // finding says which one the server answers first (the order FINDINGS.md records). A missing
  // namespace is looked at last: whatever the prediction refuses a new object for (its body, a
  // server-side apply's uid) is answered before it.
  const first = prediction.status;
  const answers = prediction.statuses.length + (namespaceJudged?.code === 'namespace-not-found' ? 1 : 0);
  const order = (kind: PredictedStatus['kind'] | 'namespace'): string => {
    if (!first || answers < 2) return '';
    return first.kind === kind ? ' The server answers this first.' : ` The server answers ${answerName(first)} first; this one comes only after that is fixed.`;
  };

  if (namespaceJudged) {
    const judged = namespaceJudged;
    const written = namespaceWritten;
    findings.push({
      code: judged.code,
      severity: defaultSeverity(judged.code),
      message: judged.message + (judged.code === 'namespace-not-found' && first ? order('namespace') : ''),
      // A default namespace has no place in the text: the name carries it.
      range: written ? at(metadataPath('namespace')).value : nameRange(),
      object,
      ...(written ? { path: '.metadata.namespace' } : {}),
      ...(judged.serverMessage !== undefined ? { serverMessage: judged.serverMessage } : {}),
      docs: judged.docs,
    });
  }

  for (const status of prediction.statuses) {
    if (status.kind === 'alreadyExists') {
      findings.push({
        code: 'already-exists',
        severity: defaultSeverity('already-exists'),
        message: `${status.message}${managersSuffix(live)} — kubectl create would fail; use kubectl apply, or another name`,
        range: nameRange(),
        object,
        serverMessage: status.message,
        docs: docsLinks.create,
      });
    } else if (status.kind === 'staleResourceVersion') {
      const liveRv = live && isJsonObject(live.metadata) ? live.metadata.resourceVersion : undefined;
      findings.push({
        code: 'stale-resource-version',
        severity: defaultSeverity('stale-resource-version'),
        message: `metadata.resourceVersion ${JSON.stringify(resource.object.metadata && isJsonObject(resource.object.metadata) ? resource.object.metadata.resourceVersion : '')} is stale (live: ${JSON.stringify(liveRv ?? '')}): ${status.message}. Remove it, or read the object again.${order(status.kind)}`,
        range: at(metadataPath('resourceVersion')).value,
        object,
        path: '.metadata.resourceVersion',
        ...(liveRv !== undefined ? { liveValue: liveRv } : {}),
        serverMessage: status.message,
        docs: docsLinks.concurrency,
      });
    } else if (status.kind === 'uidMismatch') {
      const liveUid = live && isJsonObject(live.metadata) ? live.metadata.uid : undefined;
      findings.push({
        code: 'uid-mismatch',
        severity: defaultSeverity('uid-mismatch'),
        message: live
          ? `metadata.uid does not match the live object's (${JSON.stringify(liveUid ?? '')}): the object was deleted and created again since this manifest was written. ${status.message}${order(status.kind)}`
          : `metadata.uid names an object that does not exist: ${status.message}`,
        range: at(metadataPath('uid')).value,
        object,
        path: '.metadata.uid',
        ...(liveUid !== undefined ? { liveValue: liveUid } : {}),
        serverMessage: status.message,
        docs: docsLinks.concurrency,
      });
    }
  }

  const conflictStatus = prediction.statuses.find((s) => s.kind === 'fieldConflict');
  for (const conflict of prediction.conflicts) {
    findings.push(conflictFinding(resource, object, conflict, facts.schema, conflictStatus?.message, order('fieldConflict')));
  }
  // Fields the server will not let the update change: its validation (422) comes after every
  // refusal above, so a finding says which answer comes first.
  if (live && settings.applyMode !== 'create') {
    const after = settings.applyMode === 'serverSide' ? prediction.merged : resource.object;
    const before = first && first.code !== 422 ? ` The server answers ${answerName(first)} first; this one comes only after that is fixed.` : '';
    if (isJsonObject(after)) {
      const serverSide = settings.applyMode === 'serverSide';
      const secretData = immutableSecretData(resource, live, serverSide ? (prediction.unreadRemovals ?? []) : []);
      findings.push(...immutableFindings(resource, object, live, after, serverSide, served.group, at, before, secretData.change));
      if (secretData.unverified) findings.push({ ...secretData.unverified, object, range: at([{ kind: 'field', name: secretData.unverified.field }]).key });
    }
  }
  findings.push(...unverifiedSecretData(object, prediction.uncertain, nameRange));
  findings.push(...unverifiedConversions(object, prediction.unconverted, nameRange));

  const kubectlRefusal = kubectlMetadataRefusal(resource.object);
  for (const problem of prediction.problems) {
    if (problem.code === 'kindNotInSchema' || problem.code === 'managedFields') continue;
    const inMetadata = problem.path?.[0]?.kind === 'field' && problem.path[0].name === 'metadata';
    findings.push({
      code: 'invalid-manifest',
      severity: defaultSeverity('invalid-manifest'),
      message:
        kubectlRefusal && inMetadata
          ? `kubectl refuses the manifest before sending it (unable to decode: ${kubectlRefusal}); a client that sends it gets the server's answer: ${problem.message}`
          : `${problem.message} — the server refuses the manifest before checking ownership${problem.server !== undefined || problem.code === 'managedFieldsInManifest' ? order('refused') : ''}`,
      range: problem.path ? at(problem.path).key : kindRange(),
      object,
      ...(problem.path ? { path: formatServerPath(problem.path) } : {}),
    });
  }

  const schemaRoot = facts.schema && rootTypeFor(facts.schema, resource.apiVersion, resource.kind);
  for (const { manager, paths } of prediction.deletionsByManager) {
    if (manager.manager !== settings.fieldManager || manager.operation !== 'Apply') continue;
    // One finding per removed item or field subtree: each owned path the apply removes is shown at
    // the top of the removed subtree it is in (the item, the map), once.
    for (const path of removedSubtreeRoots(paths, prediction.deletions)) {
      const liveValue = live ? valueAtPath(facts.schema, schemaRoot, live, path) : undefined;
      findings.push({
        code: 'would-delete',
        severity: defaultSeverity('would-delete'),
        message: `This apply would delete ${formatServerPath(path)}${liveValue !== undefined ? ` (live ${showValue(liveValue)})` : ''}: ${describeManager(manager)} set it last time, the manifest no longer does, and no other manager owns it`,
        range: nearestRange(resource, path, facts.schema),
        object,
        path: formatServerPath(path),
        manager,
        ...(liveValue !== undefined ? { liveValue } : {}),
        docs: docsLinks.fieldManagement,
      });
    }
  }

  // CRD validation rules judge the object the request would store; the server checks them after
  // ownership and the lock, so any refusal above comes first.
  if (facts.rules && !builtInGroups.has(served.group)) {
    const refusedFirst = prediction.status && prediction.status.code !== 422 ? ` The server answers ${answerName(prediction.status)} first; this one comes only after that is fixed.` : '';
    findings.push(
      ...validationRuleFindings({
        resource,
        object,
        rules: facts.rules,
        mode: settings.applyMode,
        live,
        merged: prediction.merged,
        rangeFor: (path) => rangeFor(resource, path, facts.schema),
        orderNote: refusedFirst,
      }),
    );
  }

  findings.push(...existenceFindings());
  return findings;

  function existenceFindings(): Finding[] {
    if (!live) return [];
    const out: Finding[] = [];
    if (settings.applyMode !== 'create') {
      out.push({
        code: 'exists',
        severity: defaultSeverity('exists'),
        message: `${qualifiedResource(resourceName)} ${JSON.stringify(resource.name ?? '')} exists${managersSuffix(live)}`,
        range: nameRange(),
        object,
      });
    }
    const controller = controllerOf(live);
    if (controller) {
      out.push({
        code: 'controlled-by',
        severity: defaultSeverity('controlled-by'),
        message: `Controlled by ${controller.kind} ${JSON.stringify(controller.name)}: its controller will revert changes applied here`,
        range: nameRange(),
        object,
        docs: docsLinks.ownerReferences,
      });
    }
    return out;
  }
}

/**
 * Predictions already made, per facts and resource (both plain data, never changed once made):
 * the findings and the force preview of one object judge the same apply, so they share one.
 */
const predictions = new WeakMap<ResourceFacts, WeakMap<ManifestResource, { fieldManager: string; applyMode: AnalysisSettings['applyMode']; prediction: ApplyPrediction }>>();

function predict(resource: ManifestResource, live: JsonObject | undefined, facts: ResourceFacts, settings: AnalysisSettings, resourceName: { group: string; resource: string }): ApplyPrediction {
  const known = predictions.get(facts)?.get(resource);
  if (known && known.fieldManager === settings.fieldManager && known.applyMode === settings.applyMode) return known.prediction;
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
export function predictionOf(resource: ManifestResource, facts: ResourceFacts, settings: AnalysisSettings): ApplyPrediction | undefined {
  if (facts.kind.state !== 'served' || facts.live.state !== 'exists' || facts.schema === undefined) return undefined;
  if (jsonDepthExceeds(facts.live.object, manifestLimits.depth)) return undefined;
  return predict(resource, facts.live.object, facts, settings, { group: facts.kind.group, resource: facts.kind.resource });
}

function conflictFinding(
  resource: ManifestResource,
  object: ObjectIdentity,
  conflict: FieldConflict,
  schema: SchemaModel | undefined,
  serverMessage: string | undefined,
  orderNote: string,
): Finding {
  const path = formatServerPath(conflict.path);
  const role = managerRole(conflict.manager);
  const values =
    conflict.liveValue !== undefined
      ? `live ${liveAndManifest(conflict.liveValue, conflict.manifestValue)}`
      : `not set on the live object, manifest ${conflict.manifestValue !== undefined ? showValue(conflict.manifestValue) : 'sets it'}`;
  // A field of another apiVersion (the manager's) is marked where the manifest sets it.
  const where = rangeFor(resource, conflict.manifestPath ?? conflict.path, schema);
  // A changed scalar is marked on its value; a field the live object lacks, or a whole list item,
  // on its key.
  const scalarChanged = where.node === 'scalar' && conflict.liveValue !== undefined;
  return {
    code: 'field-conflict',
    severity: defaultSeverity('field-conflict'),
    message: `${path} is managed by ${describeManager(conflict.manager)}${role ? ` (${role.short})` : ''}: ${values} — kubectl apply --server-side would fail${orderNote ? `.${orderNote}` : ''}`,
    range: scalarChanged ? where.value : where.key,
    object,
    path,
    manager: conflict.manager,
    ...(conflict.liveValue !== undefined ? { liveValue: conflict.liveValue } : {}),
    ...(conflict.manifestValue !== undefined ? { manifestValue: conflict.manifestValue } : {}),
    ...(serverMessage !== undefined ? { serverMessage } : {}),
    docs: docsLinks.ssaConflicts,
  };
}

/** One finding per field the apply changes and the server keeps, on the key that changes it. */
function immutableFindings(
  resource: ManifestResource,
  object: ObjectIdentity,
  live: JsonObject,
  after: JsonObject,
  afterIsWhole: boolean,
  group: string,
  at: (path: FieldPath) => { key: Range; value: Range; node?: string },
  orderNote: string,
  also?: ImmutableChange,
): Finding[] {
  const changes = [...immutableChanges({ group, kind: resource.kind, live, after, afterIsWhole }), ...(also ? [also] : [])];
  // The server lists every cause in one 422; its whole message is known when there is one cause.
  const causes = new Set(changes.map((c) => `${c.cause.field}: ${c.cause.message}`));
  return changes.map((c) => {
    const path = formatServerPath(c.path);
    const said = `${c.cause.field}: ${c.cause.message}`;
    const serverMessage = invalidMessage(resource.kind, group, resource.name ?? '', said);
    const values = c.detail ?? (c.live !== undefined ? `live ${liveAndManifest(c.live, c.after)}` : `live unset, manifest ${c.after !== undefined ? showValue(c.after) : 'unset'}`);
    return {
      code: 'field-immutable',
      severity: defaultSeverity('field-immutable'),
      message: `${path.slice(1)} cannot be changed on an existing ${resource.kind} (${values}): the server refuses the update (422): ${serverMessage}${serverMessage.endsWith('.') ? '' : '.'}${orderNote}`,
      range: at(c.path).key,
      object,
      path,
      ...(c.live !== undefined ? { liveValue: c.live } : {}),
      ...(c.after !== undefined ? { manifestValue: c.after } : {}),
      ...(c.cause.exact && causes.size === 1 ? { serverMessage } : {}),
      ...(c.cause.field !== path.slice(1) ? { serverField: c.cause.field } : {}),
      docs: c.docs,
    };
  });
}

/**
 * The `data` of an immutable Secret may not change (ValidateSecretUpdate), and its values are never
 * read. A key the server-side apply removes (its manager set it before, the manifest no longer
 * does) changes it for sure: that is a field-immutable change. A key the manifest writes changes it
 * exactly when the value differs, which only the server knows: that is said as unknown, never guessed.
 */
function immutableSecretData(
  resource: ManifestResource,
  live: JsonObject,
  unreadRemovals: readonly FieldPath[],
): { change?: ImmutableChange; unverified?: Omit<Finding, 'object' | 'range'> & { field: string } } {
  if (resource.apiVersion !== 'v1' || resource.kind !== 'Secret' || live.immutable !== true) return {};
  const docs = 'https://kubernetes.io/docs/concepts/configuration/secret/#secret-immutable';
  const keysOf = (field: string) => (isJsonObject(resource.object[field]) ? Object.keys(resource.object[field] as JsonObject) : []);
  // A key pruned from data but written in stringData comes back (the server merges stringData into
  // data after the field manager has run): it changes only if its value does.
  const stringData = new Set(keysOf('stringData'));
  const removed = unreadRemovals.filter((p) => p[0]?.kind === 'field' && p[0].name === 'data' && p.length === 2 && p[1]?.kind === 'field' && !stringData.has(p[1].name));
  if (removed.length > 0) {
    const keys = removed.map((p) => formatServerPath(p).slice(1)).join(', ');
    return { change: { path: [{ kind: 'field', name: 'data' }], cause: IMMUTABLE_DATA_CAUSE('data'), docs, detail: `the apply removes ${keys}, which its manager set before` } };
  }
  const written = [...keysOf('data').map((k) => `data.${k}`), ...keysOf('stringData').map((k) => `stringData.${k}`)];
  if (written.length === 0) return {};
  return {
    unverified: {
      code: 'secret-immutable-data-unverified',
      severity: defaultSeverity('secret-immutable-data-unverified'),
      message:
        `The live Secret is immutable, so the server refuses (422) any change to its data; Secret values are never read, so whether ${written.join(', ')} ` +
        `${written.length === 1 ? 'holds' : 'hold'} the live ${written.length === 1 ? 'value' : 'values'} is unknown. ` +
        'Run "Confirm with a dry-run apply" (or the check with --verify) to let the server decide; to change the data, delete the Secret and create it again',
      path: '.data',
      field: keysOf('data').length > 0 ? 'data' : 'stringData',
      docs,
    },
  };
}

function managersSuffix(live: JsonObject | undefined): string {
  const names = managerNames(live);
  return names.length > 0 ? `; managed by ${names.map((n) => JSON.stringify(n)).join(', ')}` : '';
}

/** The distinct manager names of a live object, in the order the server lists them. */
export function managerNames(live: JsonObject | undefined): string[] {
  const entries = live && isJsonObject(live.metadata) && Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : [];
  const names: string[] = [];
  for (const e of entries) {
    if (isJsonObject(e) && typeof e.manager === 'string' && !names.includes(e.manager)) names.push(e.manager);
  }
  return names;
}

function controllerOf(live: JsonObject): { kind: string; name: string } | undefined {
  const refs = isJsonObject(live.metadata) && Array.isArray(live.metadata.ownerReferences) ? live.metadata.ownerReferences : [];
  for (const ref of refs) {
    if (isJsonObject(ref) && ref.controller === true) return { kind: String(ref.kind ?? ''), name: String(ref.name ?? '') };
  }
  return undefined;
}

/**
 * A Secret is read as metadata only, so whether another manager's `data` key holds the value the
 * manifest sets is unknown: the apply conflicts exactly when they differ. One finding on the
 * Secret names the keys and points to the dry run, which decides. (`type` and `immutable` are
 * compared once the cluster layer has learned them; until then they are left to the dry run.)
 */
function unverifiedSecretData(object: ObjectIdentity, uncertain: readonly FieldConflict[], range: () => Range): Finding[] {
  // Keys only: `.data` itself shows up because the map is absent from the metadata-only read.
  const data = uncertain.filter((c) => c.path.length > 1 && c.path[0]?.kind === 'field' && c.path[0].name === 'data');
  if (data.length === 0) return [];
  const paths = [...new Set(data.map((c) => formatServerPath(c.path)))];
  const managers = [...new Map(data.map((c) => [describeManager(c.manager), c.manager])).entries()];
  const first = managers[0]![1];
  return [
    {
      code: 'secret-data-unverified',
      severity: defaultSeverity('secret-data-unverified'),
      message:
        `${paths.join(', ')} ${paths.length === 1 ? 'is' : 'are'} managed by ${managers.map(([d]) => d).join(', ')}: Secret values are never read, ` +
        `so whether the manifest changes ${paths.length === 1 ? 'it' : 'them'} is unknown — if it does, kubectl apply --server-side fails with a conflict. ` +
        'Run "Confirm with a dry-run apply" (or the check with --verify) to let the server decide',
      range: range(),
      object,
      path: paths[0]!,
      manager: first,
      docs: docsLinks.ssaConflicts,
    },
  ];
}

/**
 * A manager recorded at another apiVersion that only the server can compare (a conversion
 * webhook, fields that move between versions): neither a conflict nor its absence is certain.
 */
function unverifiedConversions(object: ObjectIdentity, unconverted: readonly UnconvertedManager[], range: () => Range): Finding[] {
  return unconverted.map((u) => {
    const paths = u.paths.map(formatServerPath);
    const touched = paths.length > 0 ? ` It owns ${paths.join(', ')}, which this manifest changes.` : '';
    return {
      code: 'conversion-unverified',
      severity: defaultSeverity('conversion-unverified'),
      message:
        `${describeManager(u.manager)} recorded its fields at ${u.apiVersion}, and the server compares them there: ${u.reason}, ` +
        `so whether kubectl apply --server-side conflicts with it is unknown.${touched} ` +
        'Run "Confirm with a dry-run apply" (or the check with --verify) to let the server decide',
      range: range(),
      object,
      ...(paths[0] !== undefined ? { path: paths[0] } : {}),
      manager: u.manager,
      docs: docsLinks.ssaConflicts,
    };
  });
}

/**
 * kubectl decodes every object's `metadata` into its ObjectMeta before it sends anything (its
 * resource builder's metadata-validating decoder), so a wrongly typed field there never reaches the
 * server from kubectl: it stops with Go's JSON error for the first field that does not fit (keys in
 * sorted order, as kubectl's YAML-to-JSON conversion writes them). Its words for the ObjectMeta
 * fields users write; undefined when everything there decodes (or for fields it cannot name).
 */
export function kubectlMetadataRefusal(object: JsonObject): string | undefined {
  const metadata = object.metadata;
  if (!isJsonObject(metadata)) return undefined;
  // The Go type of each field, and of its items or values.
  const goTypes: Record<string, readonly [container: string, item?: string]> = {
    annotations: ['map[string]string', 'string'],
    finalizers: ['[]string', 'string'],
    generateName: ['string'],
    labels: ['map[string]string', 'string'],
    name: ['string'],
    namespace: ['string'],
    resourceVersion: ['string'],
    uid: ['types.UID'],
  };
  const jsonKind = (v: JsonValue): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v);
  const words = (value: JsonValue, field: string, type: string) => `json: cannot unmarshal ${jsonKind(value)} into Go struct field ObjectMeta.metadata.${field} of type ${type}`;
  for (const field of Object.keys(metadata).sort()) {
    // Own keys only: a metadata key such as `constructor` must not find an Object method.
    const types = Object.hasOwn(goTypes, field) ? goTypes[field] : undefined;
    const value = metadata[field];
    if (!types || value === undefined || value === null) continue;
    const [container, item] = types;
    if (item === undefined) {
      if (typeof value !== 'string') return words(value, field, container);
      continue;
    }
    const isMap = container.startsWith('map[');
    if (isMap ? !isJsonObject(value) : !Array.isArray(value)) return words(value, field, container);
    const items = Array.isArray(value) ? value : Object.keys(value as JsonObject).sort().map((k) => (value as JsonObject)[k]!);
    const bad = items.find((v) => v !== null && typeof v !== 'string');
    if (bad !== undefined) return words(bad, field, item);
  }
  return undefined;
}

/** What the server answers, as a finding names it. */
function answerName(status: PredictedStatus): string {
  switch (status.kind) {
    case 'fieldConflict':
      return 'the field conflict (409)';
    case 'staleResourceVersion':
      return 'the stale resourceVersion (409)';
    case 'uidMismatch':
      return `the uid (${status.code})`;
    case 'alreadyExists':
      return 'AlreadyExists (409)';
    default:
      return `the refusal of the manifest (${status.code})`;
  }
}

/**
 * For each owned path the apply removes, the top-most removed path above it (all removed paths
 * come in `removed`), without repeats: one removed list item or map is one finding, however many
 * of its fields the applier owned.
 */
function removedSubtreeRoots(owned: readonly FieldPath[], removed: readonly FieldPath[]): FieldPath[] {
  const key = (p: FieldPath) => formatServerPath(p);
  const removedKeys = new Set(removed.map(key));
  const roots = new Map<string, FieldPath>();
  for (const path of owned) {
    let root = path;
    for (let n = path.length - 1; n > 0; n--) if (removedKeys.has(key(path.slice(0, n)))) root = path.slice(0, n);
    roots.set(key(root), root);
  }
  return [...roots.values()];
}

const metadataPath = (name: string): FieldPath => [
  { kind: 'field', name: 'metadata' },
  { kind: 'field', name },
];

/** A value for a message: JSON, shortened. */
/** A value as a message shows it: JSON, cut to 60 characters. */
export function showValue(v: JsonValue): string {
  const s = JSON.stringify(v);
  return s.length > shownLength ? `${s.slice(0, shownLength - 3)}...` : s;
}

/**
 * Two values a message sets side by side (live, manifest), each cut to 60 characters as showValue
 * cuts one, but around the first place they differ: two long lists that share their first items
 * would otherwise both be cut inside the shared part and read the same. Each then starts at the
 * element (the list item, the map entry) where they part, after a `...`, at the same place in both.
 */
export function showValues(a: JsonValue, b: JsonValue): [string, string] {
  const s = JSON.stringify(a);
  const t = JSON.stringify(b);
  let differ = 0;
  while (differ < s.length && differ < t.length && s[differ] === t[differ]) differ++;
  // The plain cut shows where they part, with a few characters after it.
  if ((s.length <= shownLength && t.length <= shownLength) || s === t || differ + 10 <= shownLength - 3) return [showValue(a), showValue(b)];
  // The element the difference is in: after the last separator of the shared part (a map entry's
  // key included), unless that is far back (inside a long string): then a few characters before.
  const boundary = Math.max(s.lastIndexOf(',', differ - 1), s.lastIndexOf('[', differ - 1), s.lastIndexOf('{', differ - 1)) + 1;
  const start = differ - boundary <= 40 ? boundary : differ - 10;
  const cut = (v: string) => (v.length - start <= shownLength - 3 ? `...${v.slice(start)}` : `...${v.slice(start, start + shownLength - 6)}...`);
  return [cut(s), cut(t)];
}

const shownLength = 60;

/** `5, manifest 3`: the live value and the manifest's (or `unset`), shown where they differ. */
function liveAndManifest(live: JsonValue, manifest: JsonValue | undefined): string {
  if (manifest === undefined) return `${showValue(live)}, manifest unset`;
  const [l, m] = showValues(live, manifest);
  return `${l}, manifest ${m}`;
}

/** Where a path is written, or the nearest written ancestor: key range, value range, node kind. */
export function rangeFor(resource: ManifestResource, path: FieldPath, schema: SchemaModel | undefined): { key: Range; value: Range; node?: string } {
  const options = locateOptions(resource, schema);
  for (let n = path.length; n >= 0; n--) {
    const loc = locate(resource, path.slice(0, n), options);
    if (loc) {
      // The root's "key" would be the whole document; point at its first line instead.
      if (n === 0) return { key: firstCharacter(resource.range), value: firstCharacter(resource.range) };
      return n === path.length ? { key: loc.keyRange, value: loc.valueRange, node: loc.node.kind } : { key: loc.keyRange, value: loc.keyRange };
    }
  }
  return { key: firstCharacter(resource.range), value: firstCharacter(resource.range) };
}

function nearestRange(resource: ManifestResource, path: FieldPath, schema: SchemaModel | undefined): Range {
  return rangeFor(resource, path, schema).key;
}

/** The schema tells which key fields an item may leave to their default (a port's protocol). */
export function locateOptions(resource: ManifestResource, schema: SchemaModel | undefined): LocateOptions {
  if (!schema) return {};
  const root = rootTypeFor(schema, resource.apiVersion, resource.kind);
  if (!root) return {};
  return {
    keyFieldDefault: (listPath, fieldName) => {
      const list = typeAt(schema, root, listPath);
      const item = list?.list ? resolveType(schema, list.list.elementType) : undefined;
      return item?.map?.fields[fieldName]?.default;
    },
  };
}

function typeAt(schema: SchemaModel, root: TypeRef, path: FieldPath) {
  let atom = resolveType(schema, root);
  for (const el of path) {
    if (!atom) return undefined;
    if (el.kind === 'field') {
      const t = atom.map ? fieldType(atom.map, el.name) : undefined;
      atom = t ? resolveType(schema, t) : undefined;
    } else {
      atom = atom.list ? resolveType(schema, atom.list.elementType) : undefined;
    }
  }
  return atom;
}

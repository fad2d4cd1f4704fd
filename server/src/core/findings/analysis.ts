// The rule engine: from one manifest resource and what the cluster is known to say about it (facts.ts),
// the findings (finding.ts) a user sees: in the editor as diagnostics, on the command line as
// compiler-style lines. Pure: the facts are handed in as plain data, so the editor (from its live
// cache), the command line (from a cluster or an offline snapshot) and the tests (from captured
// fixtures) all share this code. A judgement runs the stops in order (the first that speaks is all
// that is said of the object), then predicts the apply and runs every rule on it, in the order the
// findings are listed.
import { fieldStates } from './fleet';
import { fightFindings } from './gitops-fight';
import { revertFindings } from './gitops-revert';
import { takesFindings } from './gitops-takes';
import { controllerManagers, controllerMode } from '../gitops/controller-request';
import { isJsonObject, jsonDepthExceeds, type JsonObject } from '../json';
import { manifestLimits, namespaceOrigin, type ManifestResource, type Range } from '../manifest/manifest';
import { defaultSeverity, docsLinks } from './catalogue';
import type { AnalysisSettings, ResourceFacts } from './facts';
import { objectIdentity, withSeverity, type Finding, type ObjectIdentity } from './finding';
import { IMMUTABLE_DATA_CAUSE, immutableChanges, type ImmutableChange } from './immutable';
import { builtInGroups, isCustomKind, judgeNotServed } from './kind-served';
import { generateNameRefusal, kubectlMetadataRefusal } from './kubectl-refusals';
import { metadataPath, rangeFor, type FieldRange } from './locate';
import { managerNames, managerRole } from './managers';
import { judgeMissingNamespace, type DefinedNamespace, type MissingNamespaceJudgement } from './namespaces';
import { forbiddenWords, judgePermission, type PermissionJudgement, type PermissionRequest } from './permission';
import { predict } from './prediction';
import { liveAndManifest, showValue } from './show-value';
import { validationRuleFindings } from './validation-rules';
import { podSecurityFindings, storedObjectFindings, storedObjectOf, type StoredJudgement } from './stored-judgement';
import { quotaFindings, webhookFindings, type AdmissionJudgement } from './admission-judgement';
import { admissionPolicyFindings } from './admission-policy';
import { describeManager, formatServerPath, invalidMessage, qualifiedResource } from '../ssa/messages';
import { valueAtPath } from '../ssa/merge';
import type { FieldPath } from '../ssa/path';
import type { ApplyPrediction, FieldConflict, PredictedStatus } from '../ssa/predict';
import type { ApplierPolicy, ControllerName } from '../gitops/model';
import { rootTypeFor, type SchemaModel } from '../ssa/schema';

export function analyzeResource(
  resource: ManifestResource,
  facts: ResourceFacts,
  settings: AnalysisSettings,
): Finding[] {
  // A GitOps controller sends with its own credential: what the user may send is not the question.
  const judged = settings.controller && facts.permission ? { ...facts, permission: undefined } : facts;
  return withSeverity(findingsOf(resource, judged, controllerSettings(settings)), settings.severity);
}

/**
 * A GitOps controller sends the manifest: its field manager, and its way of applying (Argo CD's
 * default sync is kubectl's client-side apply; Flux and Argo CD with ServerSideApply=true apply
 * server-side, forcing conflicts, which applyJudgement leaves out).
 */
function controllerSettings(settings: AnalysisSettings): AnalysisSettings {
  const applier = settings.controller;
  if (!applier) return settings;
  return {
    ...settings,
    fieldManager: controllerManagers[applier.name],
    applyMode: controllerMode(applier.name),
  };
}

/**
 * Why the analysis says nothing of an object on these facts, or only that it exists: the cluster did
 * not tell whether it serves the kind or what the object is (not in a snapshot, an answer that never
 * came), or there is no schema to compare an existing object's fields by for a server-side apply.
 * Undefined when the facts are enough to judge it (a kind not served, or a name the server refuses,
 * is judged: its finding says what the server answers). The stops of `analyzeResource`, named, so
 * that the command line can list the object as not judged rather than count it clean.
 */
export function unjudgedOn(
  resource: ManifestResource,
  facts: ResourceFacts,
  settings: Pick<AnalysisSettings, 'applyMode'>,
): string | undefined {
  // kubectl apply refuses a generateName before anything of the cluster matters (the first stop).
  if (generateNameRefusal(resource, settings.applyMode) !== undefined) return undefined;
  if (facts.kind.state === 'notServed' || facts.live.state === 'invalidName') return undefined;
  if (facts.kind.state === 'unavailable')
    return `the cluster did not say whether it serves ${resource.apiVersion} ${resource.kind}: ${facts.kind.message}`;
  if (facts.kind.state === 'pending')
    return `the cluster has not said yet whether it serves ${resource.apiVersion} ${resource.kind}`;
  if (facts.live.state === 'unavailable') return `the live object is not known: ${facts.live.message}`;
  if (facts.live.state === 'pending') return 'the live object is not known yet';
  // A refused request is the server's whole answer, judged whatever else is known.
  if (judgePermission(facts.permission, settings.applyMode, facts.live.state === 'exists').state === 'denied')
    return undefined;
  if (facts.schema === undefined && settings.applyMode === 'serverSide' && facts.live.state === 'exists')
    return `no schema of ${resource.apiVersion}: the fields are not compared with the live object's`;
  return undefined;
}

type ServedKind = Extract<ResourceFacts['kind'], { state: 'served' }>;

/** What every judgement of one object reads. Ranges are read from the node tree, which a document read for its values alone builds only when asked: only the findings that are made ask. */
interface Judgement {
  readonly resource: ManifestResource;
  readonly facts: ResourceFacts;
  readonly settings: AnalysisSettings;
  readonly object: ObjectIdentity;
  /** The kind, when the cluster serves it. */
  readonly served: ServedKind | undefined;
  /** The live object, when it exists. */
  readonly live: JsonObject | undefined;
  at(path: FieldPath): FieldRange;
  /** The `kind:` value. */
  kindRange(): Range;
  /** The `metadata.name` value, or the `kind:` value without a name. */
  nameRange(): Range;
}

/** What the rules of a predicted apply read besides. */
interface ApplyJudgement extends Judgement {
  readonly served: ServedKind;
  readonly resourceName: { group: string; resource: string };
  readonly prediction: ApplyPrediction;
  /** A new object bound for a namespace that does not exist, judged; and whether the manifest writes that namespace. */
  readonly namespace: { judged: MissingNamespaceJudgement; written: boolean } | undefined;
  /**
   * One request gets one answer: when the manifest would be refused for several reasons, each
   * finding says which one the server answers first (the order FINDINGS.md records). What a finding
   * of the answer `kind` says of that ('' for a refusal alone).
   */
  order(kind: PredictedStatus['kind'] | 'namespace'): string;
  /** What a finding of the server's validation (422: immutable fields, CRD rules) says of a refusal answered before it. */
  readonly afterRefusals: string;
}

/** A judgement before the apply is predicted: when it says something (even nothing, `[]`), that is all that is said of the object. */
type Stop = (j: Judgement) => Finding[] | undefined;

/** A judgement of the predicted apply. */
type Rule = (a: ApplyJudgement) => Finding[];

const stops: readonly Stop[] = [
  kubectlRefusesGenerateName,
  kindNotServed,
  nameRefused,
  factsUnknown,
  permissionRefused,
  noSchemaToCompare,
  liveTooDeep,
];

const rules: readonly Rule[] = [
  permissionUnknown,
  missingNamespace,
  createRefused,
  refusedRequest,
  fieldConflicts,
  // A GitOps controller's forced apply: the fields it takes from other managers (gitops-takes.ts).
  gitopsTakes,
  immutableFields,
  unverifiedSecretData,
  unverifiedConversions,
  invalidManifest,
  wouldDelete,
  validationRules,
  // The object the request would store: the server's built-in validation, then Pod Security admission.
  storedObjectRules,
  // Admission of the request: the webhooks the server calls, LimitRange and ResourceQuota for its Pods.
  admissionRules,
  existence,
  // A GitOps controller applies the object: what its next sync does to the change (gitops-revert.ts).
  gitopsReverts,
];

function findingsOf(resource: ManifestResource, facts: ResourceFacts, settings: AnalysisSettings): Finding[] {
  const j = judgement(resource, facts, settings);
  for (const stop of stops) {
    const said = stop(j);
    if (said) return said;
  }
  // factsUnknown stops every kind the cluster does not serve.
  if (!j.served) return [];
  const a = applyJudgement(j, j.served);
  return rules.flatMap((rule) => rule(a));
}

function judgement(resource: ManifestResource, facts: ResourceFacts, settings: AnalysisSettings): Judgement {
  const at = (path: FieldPath) => rangeFor(resource, path, facts.schema);
  let kindAt: Range | undefined;
  const kindRange = (): Range => (kindAt ??= at([{ kind: 'field', name: 'kind' }]).value);
  let nameAt: Range | undefined;
  const nameRange = (): Range =>
    (nameAt ??= resource.name !== undefined ? at(metadataPath('name')).value : kindRange());
  return {
    resource,
    facts,
    settings,
    object: objectIdentity(resource),
    served: facts.kind.state === 'served' ? facts.kind : undefined,
    live: facts.live.state === 'exists' ? facts.live.object : undefined,
    at,
    kindRange,
    nameRange,
  };
}

function applyJudgement(j: Judgement, served: ServedKind): ApplyJudgement {
  const { resource, facts, settings, live } = j;
  const resourceName = { group: served.group, resource: served.resource };
  // A new object in a namespace that does not exist: the server answers 404 for the namespace. The
  // rest of the judgement (a new object's) still holds once the namespace is there.
  const judged =
    served.namespaced && !live && facts.namespace?.state === 'missing'
      ? judgeMissingNamespace(
          facts.namespace.name,
          namespaceOrigin(resource.namespace),
          (settings.definedKinds ?? []).filter((d): d is DefinedNamespace => !isCustomKind(d)),
        )
      : undefined;
  const predicted = predict(resource, live, facts, settings, resourceName);
  // A GitOps controller forces its apply: no conflict is answered (gitops-takes says what it takes).
  const prediction = settings.controller ? forced(predicted) : predicted;
  // A missing namespace is looked at last: whatever the prediction refuses a new object for (its
  // body, a server-side apply's uid) is answered before it.
  const first = prediction.status;
  const answers = prediction.statuses.length + (judged?.code === 'namespace-not-found' ? 1 : 0);
  return {
    ...j,
    served,
    resourceName,
    prediction,
    namespace: judged ? { judged, written: namespaceOrigin(resource.namespace) === 'manifest' } : undefined,
    order: (kind) => {
      if (!first || answers < 2) return '';
      return first.kind === kind ? ' The server answers this first.' : answeredBefore(first);
    },
    // Validation (422) comes after every refusal of ownership, the lock and existence.
    afterRefusals: first && first.code !== 422 ? answeredBefore(first) : '',
  };
}

/** The prediction of an apply that forces conflicts: the fields change owner, the server answers no 409 for them. */
function forced(prediction: ApplyPrediction): ApplyPrediction {
  if (prediction.conflicts.length === 0) return prediction;
  const statuses = prediction.statuses.filter((s) => s.kind !== 'fieldConflict');
  const { status: _status, ...rest } = prediction;
  return { ...rest, conflicts: [], statuses, ...(statuses[0] ? { status: statuses[0] } : {}) };
}

/** Said after a finding whose answer the server gives only after `first`: the sentence, built once. */
function answeredBefore(first: PredictedStatus): string {
  return ` The server answers ${answerName(first)} first; this one comes only after that is fixed.`;
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

// The stops, in order.

/** kubectl apply stops before any request when the object has no name but a generateName. */
function kubectlRefusesGenerateName({ resource, settings, object, at }: Judgement): Finding[] | undefined {
  const kubectlMessage = generateNameRefusal(resource, settings.applyMode);
  if (kubectlMessage === undefined) return undefined;
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

/**
 * Why it is not served (a removed version, a CRD not installed, a CRD among the files) decides
 * the sentence, the link and even the code: kind-served.ts judges.
 */
function kindNotServed({ resource, facts, settings, object, kindRange }: Judgement): Finding[] | undefined {
  if (facts.kind.state !== 'notServed') return undefined;
  const judged = judgeNotServed(
    resource.apiVersion,
    resource.kind,
    facts.kind.discovery,
    settings.definedKinds,
    facts.kind.message,
  );
  return [
    {
      code: judged.code,
      severity: defaultSeverity(judged.code),
      message: judged.message,
      range: kindRange(),
      object,
      docs: judged.docs,
    },
  ];
}

/** A name or namespace the API server refuses: the cluster was not asked. */
function nameRefused({ resource, facts, object, at, kindRange }: Judgement): Finding[] | undefined {
  if (facts.live.state !== 'invalidName') return undefined;
  const field = facts.live.field === 'metadata.name' ? 'name' : 'namespace';
  // A default namespace (from the settings) has no place in the text: the name carries it.
  const where =
    resource[field] !== undefined
      ? at(metadataPath(field)).value
      : resource.name !== undefined
        ? at(metadataPath('name')).value
        : kindRange();
  return [
    {
      code: 'invalid-manifest',
      severity: defaultSeverity('invalid-manifest'),
      message: facts.live.message,
      range: where,
      object,
      path: `.${facts.live.field}`,
    },
  ];
}

/** Nothing is said while the cluster has not told what it serves or what the object is (unjudgedOn names these stops, and the one without a schema below, for the command line's summary). */
function factsUnknown({ facts }: Judgement): Finding[] | undefined {
  return facts.kind.state !== 'served' || facts.live.state === 'pending' || facts.live.state === 'unavailable'
    ? []
    : undefined;
}

/**
 * A request the apply sends that the user may not send: the server's authorization answers 403
 * before the handler looks at the object, so nothing else of it is said (permission.ts).
 */
function permissionRefused({
  resource,
  facts,
  settings,
  served,
  live,
  nameRange,
  object,
}: Judgement): Finding[] | undefined {
  if (!served) return undefined;
  const judged = judgePermission(facts.permission, settings.applyMode, live !== undefined);
  if (judged.state !== 'denied' || createInPatch(settings.applyMode, judged.request)) return undefined;
  return [forbiddenFinding({ resource, facts, settings, nameRange, object }, served, judged)];
}

/**
 * A server-side apply of a missing object is authorized as a create only once the patch handler
 * is about to store it (apiserver endpoints/handlers/patch.go: the create's authorization wraps
 * its validating admission), after the namespace's 404 and the object's own refusals: a rule, not a stop.
 */
function createInPatch(mode: AnalysisSettings['applyMode'], request: PermissionRequest): boolean {
  return mode === 'serverSide' && request.verb === 'create';
}

function forbiddenFinding(
  {
    resource,
    facts,
    settings,
    nameRange,
    object,
  }: Pick<Judgement, 'resource' | 'facts' | 'settings' | 'nameRange' | 'object'>,
  served: ServedKind,
  judged: Extract<PermissionJudgement, { state: 'denied' }>,
  orderNote = '',
): Finding {
  const namespace = served.namespaced ? (facts.permission?.namespace ?? '') : '';
  const words = forbiddenWords(
    resource,
    { group: served.group, resource: served.resource, namespace },
    judged.request,
    settings.applyMode,
    facts.permission?.user,
    judged.reason,
  );
  return {
    code: 'forbidden',
    severity: defaultSeverity('forbidden'),
    message: words.message + orderNote,
    range: nameRange(),
    object,
    ...(words.serverMessage !== undefined ? { serverMessage: words.serverMessage } : {}),
    docs: docsLinks.authorization,
  };
}

/** Without a schema a server-side apply's fields are not compared: only that the object exists. */
function noSchemaToCompare(j: Judgement): Finding[] | undefined {
  return j.facts.schema === undefined && j.settings.applyMode === 'serverSide' && j.live ? existence(j) : undefined;
}

/** The engine walks objects recursively; a live object may nest deeper than it can go. */
function liveTooDeep(j: Judgement): Finding[] | undefined {
  if (!j.live || !jsonDepthExceeds(j.live, manifestLimits.depth)) return undefined;
  return [
    ...existence(j),
    {
      code: 'too-large',
      severity: defaultSeverity('too-large'),
      message: `The live object nests deeper than ${manifestLimits.depth} levels: its fields are not compared with the manifest`,
      range: j.nameRange(),
      object: j.object,
    },
  ];
}

// The rules of the predicted apply, in the order their findings are listed.

/** Whether the user may send the apply's requests is not known: the rest is judged, and this is said quietly. */
function permissionUnknown({ facts, settings, live, served, nameRange, object }: ApplyJudgement): Finding[] {
  const judged = judgePermission(facts.permission, settings.applyMode, live !== undefined);
  if (judged.state !== 'unknown') return [];
  const verbs = [...new Set(judged.requests.map((r) => r.verb))].join(' and ');
  return [
    {
      code: 'permission-unknown',
      severity: defaultSeverity('permission-unknown'),
      message: `Whether ${facts.permission?.user !== undefined ? `user ${JSON.stringify(facts.permission.user)}` : 'the current user'} may ${verbs} ${qualifiedResource(served)} here is unknown (${judged.reason}): the apply may be refused with 403 Forbidden`,
      range: nameRange(),
      object,
      docs: docsLinks.authorization,
    },
  ];
}

function missingNamespace({ namespace, prediction, at, nameRange, object, order }: ApplyJudgement): Finding[] {
  if (!namespace) return [];
  const { judged, written } = namespace;
  return [
    {
      code: judged.code,
      severity: defaultSeverity(judged.code),
      message: judged.message + (judged.code === 'namespace-not-found' && prediction.status ? order('namespace') : ''),
      // A default namespace has no place in the text: the name carries it.
      range: written ? at(metadataPath('namespace')).value : nameRange(),
      object,
      ...(written ? { path: '.metadata.namespace' } : {}),
      ...(judged.serverMessage !== undefined ? { serverMessage: judged.serverMessage } : {}),
      docs: judged.docs,
    },
  ];
}

/**
 * A server-side apply that would create the object, by a user who may not create it: refused (403)
 * when the patch handler is about to store it, after the namespace's 404 and the manifest's refusals.
 */
function createRefused(a: ApplyJudgement): Finding[] {
  const { facts, settings, live, served, namespace, prediction } = a;
  if (live || settings.applyMode !== 'serverSide') return [];
  const judged = judgePermission(facts.permission, settings.applyMode, false);
  if (judged.state !== 'denied' || !createInPatch(settings.applyMode, judged.request)) return [];
  const note =
    namespace?.judged.code === 'namespace-not-found'
      ? ' The server answers the missing namespace (404) first; this one comes only after that is fixed.'
      : prediction.status
        ? answeredBefore(prediction.status)
        : '';
  return [forbiddenFinding(a, served, judged, note)];
}

/** The request refused before any field is compared: AlreadyExists, a stale resourceVersion, another uid. */
function refusedRequest({ resource, live, prediction, at, nameRange, object, order }: ApplyJudgement): Finding[] {
  const findings: Finding[] = [];
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
  return findings;
}

function fieldConflicts({ resource, facts, prediction, object, order }: ApplyJudgement): Finding[] {
  const conflictStatus = prediction.statuses.find((s) => s.kind === 'fieldConflict');
  return prediction.conflicts.map((conflict) =>
    conflictFinding(resource, object, conflict, facts.schema, conflictStatus?.message, order('fieldConflict')),
  );
}

/** Fields the server will not let the update change: its validation (422) comes after every refusal above. */
function immutableFields({
  resource,
  settings,
  live,
  prediction,
  served,
  at,
  object,
  afterRefusals,
}: ApplyJudgement): Finding[] {
  if (!live || settings.applyMode === 'create') return [];
  const after = settings.applyMode === 'serverSide' ? prediction.merged : resource.object;
  if (!isJsonObject(after)) return [];
  const serverSide = settings.applyMode === 'serverSide';
  const secretData = immutableSecretData(resource, live, serverSide ? (prediction.unreadRemovals ?? []) : []);
  const findings = immutableFindings(
    resource,
    object,
    live,
    after,
    serverSide,
    served.group,
    at,
    afterRefusals,
    secretData.change,
  );
  if (secretData.unverified)
    findings.push({
      ...secretData.unverified,
      object,
      range: at([{ kind: 'field', name: secretData.unverified.field }]).key,
    });
  return findings;
}

/** kubectl's own refusal of the metadata, else the server's refusal of the body. */
function invalidManifest({ resource, prediction, at, kindRange, object, order }: ApplyJudgement): Finding[] {
  const kubectlRefusal = kubectlMetadataRefusal(resource.object);
  const findings: Finding[] = [];
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
  return findings;
}

/**
 * What the apply removes that the user's own manager set last time: one finding per removed item
 * or field subtree, each owned path the apply removes shown at the top of the removed subtree it is
 * in (the item, the map), once.
 */
function wouldDelete({ resource, facts, settings, live, prediction, object }: ApplyJudgement): Finding[] {
  // A GitOps controller's own request adds its marks and prunes on its own terms: gitops-takes says what it removes of others'.
  if (settings.controller) return [];
  const schemaRoot = facts.schema && rootTypeFor(facts.schema, resource.apiVersion, resource.kind);
  const findings: Finding[] = [];
  for (const { manager, paths } of prediction.deletionsByManager) {
    if (manager.manager !== settings.fieldManager || manager.operation !== 'Apply') continue;
    for (const path of removedSubtreeRoots(paths, prediction.deletions)) {
      const liveValue = live ? valueAtPath(facts.schema, schemaRoot, live, path) : undefined;
      findings.push({
        code: 'would-delete',
        severity: defaultSeverity('would-delete'),
        message: `This apply would delete ${formatServerPath(path)}${liveValue !== undefined ? ` (live ${showValue(liveValue)})` : ''}: ${describeManager(manager)} set it last time, the manifest no longer does, and no other manager owns it`,
        range: rangeFor(resource, path, facts.schema).key,
        object,
        path: formatServerPath(path),
        manager,
        ...(liveValue !== undefined ? { liveValue } : {}),
        docs: docsLinks.fieldManagement,
      });
    }
  }
  return findings;
}

/**
 * CRD validation rules judge the object the request would store; the server checks them after
 * ownership and the lock, so any refusal above comes first.
 */
function validationRules({
  resource,
  facts,
  settings,
  live,
  served,
  prediction,
  at,
  object,
  afterRefusals,
}: ApplyJudgement): Finding[] {
  if (!facts.rules || builtInGroups.has(served.group)) return [];
  return validationRuleFindings({
    resource,
    object,
    rules: facts.rules,
    mode: settings.applyMode,
    live,
    merged: prediction.merged,
    rangeFor: at,
    orderNote: afterRefusals,
  });
}

/**
 * The object the request would store, judged by the server's built-in validation (422, after
 * ownership and the lock) and then by Pod Security admission (403 for a Pod, a warning for a
 * workload): stored-judgement.ts.
 */
function storedObjectRules(a: ApplyJudgement): Finding[] {
  const j: StoredJudgement = {
    resource: a.resource,
    object: a.object,
    mode: a.settings.applyMode,
    live: a.live,
    merged: a.prediction.merged,
    namespace: a.facts.namespace,
    namespaced: a.served.namespaced,
    at: a.at,
    afterRefusals: a.afterRefusals,
    answeredFirst: a.prediction.status !== undefined || a.namespace?.judged.code === 'namespace-not-found',
  };
  const invalid = storedObjectFindings(j);
  const podSecurity = podSecurityFindings(j, invalid.length > 0);
  return [...invalid, ...podSecurity, ...admissionPolicyRules(a, j, invalid.length > 0, podSecurity)];
}

/**
 * ValidatingAdmissionPolicies (admission-policy.ts), judged on the same stored object; the
 * server runs them after its validation (422) and after Pod Security admission.
 */
function admissionPolicyRules(a: ApplyJudgement, j: StoredJudgement, invalid: boolean, pods: Finding[]): Finding[] {
  const podsRefused = pods.some((f) => f.code === 'pod-security-forbidden');
  const before = invalid
    ? ' The server refuses the object as invalid (422) first; this one comes only after that is fixed.'
    : podsRefused
      ? ' Pod Security admission refuses it first (403); this one comes only after that is fixed.'
      : a.afterRefusals;
  return admissionPolicyFindings({
    resource: a.resource,
    object: a.object,
    stored: storedObjectOf(j),
    live: a.live,
    group: a.served.group,
    plural: a.served.resource,
    namespaced: a.served.namespaced,
    namespaceName: a.served.namespaced ? (a.facts.namespace?.name ?? a.resource.namespace ?? '') : '',
    namespace: a.facts.namespace,
    policies: a.facts.admissionPolicies,
    at: a.at,
    nameRange: a.nameRange(),
    before,
    answeredFirst: j.answeredFirst || invalid || podsRefused,
  });
}

/** The admission webhooks the request meets, and LimitRange and ResourceQuota for its Pods: admission-judgement.ts. */
function admissionRules(a: ApplyJudgement): Finding[] {
  const j: AdmissionJudgement = {
    apiVersion: a.resource.apiVersion,
    kind: a.resource.kind,
    resource: a.served.resource,
    namespaced: a.served.namespaced,
    namespaceName: a.served.namespaced ? (a.facts.namespace?.name ?? a.resource.namespace ?? '') : '',
    namespace: a.facts.namespace,
    manifest: a.resource.object,
    live: a.live,
    mode: a.settings.applyMode,
    webhooks: a.facts.webhooks,
    policies: a.facts.namespacePolicies,
    stored: storedObjectOf({
      resource: a.resource,
      mode: a.settings.applyMode,
      live: a.live,
      merged: a.prediction.merged,
    }),
    afterRefusals: a.afterRefusals,
    object: a.object,
    kindRange: a.kindRange,
  };
  return [...webhookFindings(j), ...quotaFindings(j)];
}

function gitopsReverts(a: ApplyJudgement): Finding[] {
  if (!a.live || a.settings.applyMode === 'create') return [];
  const applier = a.settings.controller;
  // The controller's own policy, when it was detected, joins those the live object's marks name.
  const appliers =
    applier?.policy &&
    !a.facts.appliers?.policies.some((p) => p.state === 'read' && samePolicy(p.policy, applier.policy!))
      ? {
          sightings: a.facts.appliers?.sightings ?? [],
          policies: [...(a.facts.appliers?.policies ?? []), { state: 'read' as const, policy: applier.policy }],
        }
      : a.facts.appliers;
  // Only for an object a GitOps controller applies (a policy was read): its fields, read once for both.
  if (!appliers?.policies.some((p) => p.state === 'read')) return [];
  const fields = fieldStates(a.resource, a.live, a.facts.schema);
  const facts = { resource: a.resource, object: a.object, facts: { ...a.facts, appliers }, live: a.live, fields };
  return [
    ...fightFindings({ ...facts, nameRange: a.nameRange() }),
    // The manifest is what Git holds when the controller sends it: nothing of it is a change by hand.
    ...(applier ? [] : revertFindings({ ...facts, fieldManager: a.settings.fieldManager })),
  ];
}

function policyKindOf(name: ControllerName): ApplierPolicy['kind'] {
  return name === 'flux' ? 'flux-kustomize' : name === 'flux-helm' ? 'flux-helm' : 'argocd';
}

function samePolicy(a: ApplierPolicy, b: ApplierPolicy): boolean {
  return a.kind === b.kind && a.name === b.name && a.namespace === b.namespace;
}

/** What a GitOps controller's forced apply takes from other managers (gitops-takes.ts). */
function gitopsTakes(a: ApplyJudgement): Finding[] {
  const named = a.settings.controller;
  if (!named || !a.live || !a.facts.schema) return [];
  // A controller named without its object: the policy the live object's marks name, where it is that controller's.
  const marked = named.policy
    ? undefined
    : a.facts.appliers?.policies.find((p) => p.state === 'read' && p.policy.kind === policyKindOf(named.name));
  const applier = marked?.state === 'read' ? { ...named, policy: marked.policy } : named;
  return takesFindings({
    resource: a.resource,
    object: a.object,
    applier,
    live: a.live,
    schema: a.facts.schema,
    resourceName: a.resourceName,
    at: a.at,
    nameRange: a.nameRange,
  });
}

/** That the object exists (not for a create, which it refuses), and who controls it. */
function existence({ resource, settings, live, served, nameRange, object }: Judgement): Finding[] {
  if (!live || !served) return [];
  const out: Finding[] = [];
  if (settings.applyMode !== 'create') {
    out.push({
      code: 'exists',
      severity: defaultSeverity('exists'),
      message: `${qualifiedResource({ group: served.group, resource: served.resource })} ${JSON.stringify(resource.name ?? '')} exists${managersSuffix(live)}`,
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

// What the rules build their findings with.

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
  at: (path: FieldPath) => FieldRange,
  orderNote: string,
  also?: ImmutableChange,
): Finding[] {
  const changes = [
    ...immutableChanges({ group, kind: resource.kind, live, after, afterIsWhole }),
    ...(also ? [also] : []),
  ];
  // The server lists every cause in one 422; its whole message is known when there is one cause.
  const causes = new Set(changes.map((c) => `${c.cause.field}: ${c.cause.message}`));
  return changes.map((c) => {
    const path = formatServerPath(c.path);
    const said = `${c.cause.field}: ${c.cause.message}`;
    const serverMessage = invalidMessage(resource.kind, group, resource.name ?? '', said);
    const values =
      c.detail ??
      (c.live !== undefined
        ? `live ${liveAndManifest(c.live, c.after)}`
        : `live unset, manifest ${c.after !== undefined ? showValue(c.after) : 'unset'}`);
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
  const keysOf = (field: string) =>
    isJsonObject(resource.object[field]) ? Object.keys(resource.object[field] as JsonObject) : [];
  // A key pruned from data but written in stringData comes back (the server merges stringData into
  // data after the field manager has run): it changes only if its value does.
  const stringData = new Set(keysOf('stringData'));
  const removed = unreadRemovals.filter(
    (p) =>
      p[0]?.kind === 'field' &&
      p[0].name === 'data' &&
      p.length === 2 &&
      p[1]?.kind === 'field' &&
      !stringData.has(p[1].name),
  );
  if (removed.length > 0) {
    const keys = removed.map((p) => formatServerPath(p).slice(1)).join(', ');
    return {
      change: {
        path: [{ kind: 'field', name: 'data' }],
        cause: IMMUTABLE_DATA_CAUSE('data'),
        docs,
        detail: `the apply removes ${keys}, which its manager set before`,
      },
    };
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

function controllerOf(live: JsonObject): { kind: string; name: string } | undefined {
  const refs =
    isJsonObject(live.metadata) && Array.isArray(live.metadata.ownerReferences) ? live.metadata.ownerReferences : [];
  for (const ref of refs) {
    if (isJsonObject(ref) && ref.controller === true)
      return { kind: String(ref.kind ?? ''), name: String(ref.name ?? '') };
  }
  return undefined;
}

/**
 * A Secret is read as metadata only, so whether another manager's `data` key holds the value the
 * manifest sets is unknown: the apply conflicts exactly when they differ. One finding on the
 * Secret names the keys and points to the dry run, which decides. (`type` and `immutable` are
 * compared once the cluster layer has learned them; until then they are left to the dry run.)
 */
function unverifiedSecretData({ prediction, object, nameRange }: ApplyJudgement): Finding[] {
  // Keys only: `.data` itself shows up because the map is absent from the metadata-only read.
  const data = prediction.uncertain.filter(
    (c) => c.path.length > 1 && c.path[0]?.kind === 'field' && c.path[0].name === 'data',
  );
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
      range: nameRange(),
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
function unverifiedConversions({ prediction, object, nameRange }: ApplyJudgement): Finding[] {
  return prediction.unconverted.map((u) => {
    const paths = u.paths.map(formatServerPath);
    const touched = paths.length > 0 ? ` It owns ${paths.join(', ')}, which this manifest changes.` : '';
    return {
      code: 'conversion-unverified',
      severity: defaultSeverity('conversion-unverified'),
      message:
        `${describeManager(u.manager)} recorded its fields at ${u.apiVersion}, and the server compares them there: ${u.reason}, ` +
        `so whether kubectl apply --server-side conflicts with it is unknown.${touched} ` +
        'Run "Confirm with a dry-run apply" (or the check with --verify) to let the server decide',
      range: nameRange(),
      object,
      ...(paths[0] !== undefined ? { path: paths[0] } : {}),
      manager: u.manager,
      docs: docsLinks.ssaConflicts,
    };
  });
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

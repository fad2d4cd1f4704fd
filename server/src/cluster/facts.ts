// What the cluster says about the objects a manifest names, shaped as core/findings/facts.ts states it:
// is the kind served, does the object exist (with its managedFields), what is the schema of its
// group-version. `peek` answers from the caches without waiting (the editor, on every keystroke);
// `read` waits for the answers: the command line's facts and the dry-run confirmation of both the
// editor and the command line, so both judge an object on the same facts.
import {
  applierFacts,
  permissionQuestions,
  podSpecPath,
  type ApplierFacts,
  type AutoscalerFacts,
  type KindFacts,
  type LiveFacts,
  type NamespaceFacts,
  type PermissionAnswer,
  type PermissionFacts,
  type ResourceFacts,
} from '../core/findings';
import type { ApplierSighting, PolicyFacts } from '../core/gitops/model';
import type { JsonObject } from '../core/json';
import { placeInNamespace, type NamedObjectTarget, type ObjectTarget } from '../core/manifest/manifest';
import type { SchemaModel } from '../core/ssa/schema';
import type { CelNode } from '../core/cel/schema';
import { AdmissionPolicies, policiesReadNamespace } from './admission-policies';
import { autoscalersSignature, readAutoscalers } from './autoscalers';
import type { ClusterConnection } from './connection';
import { notServedKindFacts } from './discovery';
import { KeptAnswer } from './kept-answer';
import { createClusterShare } from './share';
import type { NamespaceState } from './namespaces';
import type { AccessQuestion, AccessState, UserState } from './permissions';
import type { ApiResourceInfo, ClusterProblem, Disposable, LiveObjectState } from './types';
import { loadManagerVersions, peekManagerVersions, type ManagerVersions } from './versions';

/**
 * The facts once every answer is in, or the problem that leaves them unknowable (unreachable,
 * forbidden, a schema that could not be read): a judgement on half the facts would be a guess.
 */
export type LoadedFacts =
  | {
      ok: true;
      facts: ResourceFacts;
      /** The kind as the cluster serves it; undefined when it is not served. */
      served?: ApiResourceInfo;
      /** Where the object lands: its own namespace, else the default one; '' for cluster-scoped kinds. */
      namespace: string;
      /** What the facts lack and why (a group-version without a published schema). */
      notes: string[];
    }
  | { ok: false; problem: ClusterProblem };

export interface FactsSource {
  /** Synchronous: what is known now. Starts the reads that are missing; `onChange` tells when they land. */
  peek(ref: NamedObjectTarget): ResourceFacts;
  /**
   * Waits for the kind, then the live object (none is asked for an object without a name: it is
   * always a new one) and the schema. A group-version the cluster publishes no schema for (an old
   * aggregated API) is a note and no schema; a schema that could not be read is a problem.
   */
  read(target: ObjectTarget): Promise<LoadedFacts>;
  /** `read` as plain facts: a problem becomes an unavailable kind. */
  load(ref: NamedObjectTarget): Promise<ResourceFacts>;
  /**
   * The targets about to be read, all of them: the live objects are then read by name or by
   * listing their collection from the number wanted of each (live-objects.ts), not one at a time.
   */
  expect(targets: readonly ObjectTarget[]): Promise<void>;
  /** Something that a `peek` may answer differently has arrived (an object, a schema). */
  onChange(listener: () => void): Disposable;
  /**
   * Changes whenever something a `peek` may answer differently may have arrived: an announced
   * change (onChange), a discovery or OpenAPI index that now answers a kind or a schema peeked
   * before otherwise (a refresh, a kind looked for again), and at least every `REPEEK_MS`. While it
   * stands still, a settled answer (`settledFacts`) is what `peek` would answer again, and a caller
   * that peeks many objects on every keystroke (the editor) may keep it instead.
   */
  revision(): number;
  dispose(): void;
}

/**
 * How long a settled answer may be kept without a peek (FactsSource.revision): what is peeked is
 * what the caches keep reading (a name read on its own, a missing namespace, live-objects.ts and
 * namespaces.ts follow what was asked about in the last ten minutes), and whatever could change
 * without an announcement is looked at again within this time.
 */
const REPEEK_MS = 10_000;

/**
 * Whether these facts can change only by an announced arrival (FactsSource.revision): the kind
 * served, its schema known, the object's existence known, its namespace's too. Anything still
 * pending or failed is peeked each time: a peek is what starts its read again, or looks again
 * for a kind that was not served.
 */
export function settledFacts(facts: ResourceFacts): boolean {
  return (
    facts.kind.state === 'served' &&
    facts.schema !== undefined &&
    (facts.live.state === 'exists' || facts.live.state === 'absent') &&
    facts.namespace?.state !== 'unknown' &&
    (facts.permission?.answers.every((a) => a.state !== 'pending') ?? true)
  );
}

/** Revisions are numbered across sources: a session made again never answers one an earlier source gave. */
let revisions = 0;

export function createFactsSource(connection: ClusterConnection): FactsSource {
  const listeners = new Set<() => void>();
  let revision = ++revisions;
  let revisedAt = Date.now();
  const notify = () => {
    revision = ++revisions;
    listeners.forEach((l) => l());
  };
  /**
   * The discovery entry and the OpenAPI document each peeked kind was answered from: an index
   * replaced by a later read answers them anew without an event (revision).
   */
  const answeredFrom = new Map<
    string,
    { apiVersion: string; kind: string; resource: ApiResourceInfo | undefined; doc: JsonObject | undefined }
  >();
  const schemaLoads = new Map<string, Promise<void>>();
  const objectSubscription = connection.onObjectChange(notify);
  // A schema whose fetch failed arrives later (the connection retries it with backoff).
  const schemaSubscription = connection.onSchemaChange(notify);
  const namespaceSubscription = connection.namespaces.onChange(notify);
  const permissionSubscription = connection.permissions.onChange(notify);
  // The policy of an Argo CD Application or Flux Kustomization that applies an object, when its read lands.
  const policySubscription = connection.gitopsPolicies.onChange(notify);
  const admissionSubscription = connection.admission?.onChange(notify);
  // The ValidatingAdmissionPolicies that may judge each object, per namespace (admission-policies.ts).
  const policies = new AdmissionPolicies(connection, notify);
  // What is made of a collection read whole is made again when it changes: the policies (a policy, a
  // binding, a param) and a namespace's autoscalers.
  const collectionSubscription = connection.onCollectionChange((change) => {
    policies.readAgain();
    if (change.kind === 'HorizontalPodAutoscaler') autoscalerReads.get(change.namespace)?.readAgain();
  });

  // Schemas and validation rules are built once per document and kept with it (share.ts): with the
  // documents of the versions other managers wrote at (versions.ts), and for every connection of the
  // process that was given the same document (the same content, named by the same hash).
  const share = connection.share ?? createClusterShare();
  function schemaFromDocument(doc: JsonObject, others: readonly JsonObject[] = []): SchemaModel {
    return share.schema(doc, others);
  }

  // A custom kind's validation rules come in the same document (x-kubernetes-validations), read once
  // per document and kind: the same document gives the same rules, so cached analyses stay valid.
  function rulesOf(doc: JsonObject | undefined, apiVersion: string, kind: string): { rules?: CelNode } {
    if (!doc) return {};
    const rules = share.rules(doc, apiVersion, kind);
    return rules ? { rules } : {};
  }

  function loadSchema(apiVersion: string): Promise<void> {
    let pending = schemaLoads.get(apiVersion);
    if (!pending) {
      pending = connection.openApiDocument(apiVersion).then((result) => {
        schemaLoads.delete(apiVersion);
        // A failure changes nothing a peek answers; the connection remembers it (asking again costs
        // no request) and announces the schema when a retry gets it.
        if (result.ok) notify();
      });
      schemaLoads.set(apiVersion, pending);
    }
    return pending;
  }

  // The schema is asked for as soon as discovery says the kind is served, beside the live objects'
  // list rather than after it: both then land together, and the editor judges the file once.
  const awaitingKind = new Set<string>();
  function schemaOnceServed(apiVersion: string, kind: string): void {
    const key = `${apiVersion}\u0000${kind}`;
    if (awaitingKind.has(key)) return;
    awaitingKind.add(key);
    void connection.resolveKind(apiVersion, kind).then((resolved) => {
      awaitingKind.delete(key);
      if (resolved.ok && !connection.cachedOpenApiDocument(apiVersion)) void loadSchema(apiVersion);
    });
  }

  function facts(
    ref: NamedObjectTarget,
    live: LiveObjectState,
    versions: ManagerVersions | undefined,
    namespace: NamespaceFacts | undefined,
    permission: PermissionFacts | undefined,
  ): ResourceFacts {
    const resource = connection.cachedResource(ref.apiVersion, ref.kind);
    let kind: KindFacts;
    if (resource)
      kind = { state: 'served', group: resource.group, resource: resource.resource, namespaced: resource.namespaced };
    else if (live.state === 'failed' && live.problem.kind === 'kindNotServed') kind = notServedKindFacts(live.problem);
    else if (live.state === 'failed') kind = { state: 'unavailable', message: live.problem.message };
    else kind = { state: 'pending' };
    const doc = resource ? connection.cachedOpenApiDocument(ref.apiVersion) : undefined;
    const admissionPolicies = resource ? policies.peek(connection.resolveRef(ref)?.namespace ?? '') : undefined;
    answered(ref.apiVersion, ref.kind, resource, doc);
    return {
      kind,
      live: liveFacts(live),
      ...(namespace ? { namespace } : {}),
      ...(admissionPolicies ? { admissionPolicies } : {}),
      ...(permission ? { permission } : {}),
      schema: doc ? schemaFromDocument(doc, versions?.documents) : undefined,
      ...(versions?.versions ? { versions: versions.versions } : {}),
      ...rulesOf(doc, ref.apiVersion, ref.kind),
      ...withAutoscalers(
        appliersOf(live, (sighting) => connection.gitopsPolicies.peek(sighting)),
        resource,
        live,
        (namespace) => peekAutoscalers(namespace),
      ),
    };
  }

  /**
   * The autoscalers of a namespace as last read (from the watched cache of live objects, so a read
   * after the first costs no request); a read whose answer differs from the last tells the listeners.
   */
  const autoscalerReads = new Map<string, KeptAnswer<AutoscalerFacts>>();
  function peekAutoscalers(namespace: string): AutoscalerFacts | undefined {
    let kept = autoscalerReads.get(namespace);
    if (!kept)
      autoscalerReads.set(
        namespace,
        (kept = new KeptAnswer(() => readAutoscalers(connection, namespace), autoscalersSignature, notify)),
      );
    if (!kept.busy) void kept.fresh();
    return kept.known;
  }

  /** Managers recorded at other versions: their documents and the kind's versions (versions.ts). */
  function peekVersions(ref: NamedObjectTarget, live: LiveObjectState): ManagerVersions | undefined {
    const resource = connection.cachedResource(ref.apiVersion, ref.kind);
    if (!resource || live.state !== 'exists') return undefined;
    const known = peekManagerVersions(connection, ref, resource, live.object, (v) =>
      connection.cachedOpenApiDocument(v),
    );
    for (const v of known.missing) void loadSchema(v);
    return known;
  }

  async function read(target: ObjectTarget): Promise<LoadedFacts> {
    // The schema is asked for beside the kind, not after it: its index, read in every process, goes
    // out with discovery, and a document kept on disk (api-cache.ts) is then read without a request.
    const schemaRead = connection.openApiDocument(target.apiVersion);
    const kind = await connection.resolveKind(target.apiVersion, target.kind);
    if (!kind.ok) {
      if (kind.problem.kind !== 'kindNotServed') return { ok: false, problem: kind.problem };
      return {
        ok: true,
        facts: { kind: notServedKindFacts(kind.problem), live: { state: 'absent' }, schema: undefined },
        namespace: target.namespace ?? '',
        notes: [],
      };
    }
    const served = kind.value;
    const { namespace } = placeInNamespace(served.namespaced, target.namespace, connection.defaultNamespace);
    // The webhooks and admission policies go out beside the object, not after it: they do not depend
    // on it, and whether one selects by namespace decides whether the namespace is read below.
    const admissionRead = Promise.all([connection.admission?.webhooks(), policies.load(namespace)]);
    admissionRead.catch(() => undefined); // awaited below; an early return must not leave it unhandled
    const [live, schema] = await Promise.all([
      target.name === undefined
        ? Promise.resolve<LiveObjectState>({ state: 'absent', observedAt: 0 })
        : // The manifest's own namespace, as peek asks: a default one is placed (and named, if refused) as the default.
          connection.getObject({
            apiVersion: target.apiVersion,
            kind: target.kind,
            name: target.name,
            ...(target.namespace ? { namespace: target.namespace } : {}),
          }),
      schemaRead,
    ]);
    if (live.state === 'failed' && live.problem.kind !== 'invalidName') return { ok: false, problem: live.problem };
    if (live.state === 'pending')
      return {
        ok: false,
        problem: {
          kind: 'unreachable',
          message: `no answer from the cluster for ${served.resource} ${target.name ?? ''}`.trim(),
        },
      };
    const notes: string[] = [];
    if (!schema.ok) {
      if (schema.problem.kind !== 'kindNotServed' && schema.problem.kind !== 'notFound')
        return { ok: false, problem: schema.problem };
      notes.push(`${schema.problem.message} Field conflicts are not predicted without it.`);
    }
    // Managers recorded at other versions are compared in their own (versions.ts), as the server
    // does: the documents of those versions join the schema, and the kind's versions come along.
    // A version whose document cannot be read leaves its managers uncompared, which the analysis says.
    // Beside them, asked at once: a new object's namespace must exist (namespaces.ts: the server
    // answers 404 otherwise), whether the user may send the apply's requests (permissions.ts), and
    // who applies the object (gitops.ts).
    const named = {
      apiVersion: target.apiVersion,
      kind: target.kind,
      name: target.name ?? '',
      ...(target.namespace ? { namespace: target.namespace } : {}),
    };
    const [, admissionPolicies] = await admissionRead;
    const [versions, namespaceFacts, permission, appliers, admissionFacts] = await Promise.all([
      live.state === 'exists'
        ? loadManagerVersions(connection, target, served, live.object, async (v) => {
            const doc = await connection.openApiDocument(v);
            return doc.ok ? doc.value : undefined;
          })
        : undefined,
      loadNamespaceFacts(connection, named, live, policiesReadNamespace(admissionPolicies)),
      loadPermissionFacts(connection, served, namespace, target.name, live),
      loadAppliers(live, (sighting) => connection.gitopsPolicies.get(sighting)),
      loadAdmissionFacts(connection, named, live),
    ]);
    const autoscalers =
      appliers.appliers && live.state === 'exists' && served.subresources.includes('scale')
        ? { autoscalers: await readAutoscalers(connection, namespace) }
        : {};
    return {
      ok: true,
      facts: {
        kind: { state: 'served', group: served.group, resource: served.resource, namespaced: served.namespaced },
        live: liveFacts(live),
        ...(namespaceFacts ? { namespace: namespaceFacts } : {}),
        ...(permission ? { permission } : {}),
        admissionPolicies,
        schema: schema.ok ? schemaFromDocument(schema.value, versions?.documents) : undefined,
        ...(versions?.versions ? { versions: versions.versions } : {}),
        ...rulesOf(schema.ok ? schema.value : undefined, target.apiVersion, target.kind),
        ...appliers,
        ...autoscalers,
        ...admissionFacts,
      },
      served,
      namespace,
      notes,
    };
  }

  /** Notes what this kind's peek was answered from (revision). */
  function answered(
    apiVersion: string,
    kind: string,
    resource = connection.cachedResource(apiVersion, kind),
    doc = resource ? connection.cachedOpenApiDocument(apiVersion) : undefined,
  ): void {
    const key = `${apiVersion}\u0000${kind}`;
    const known = answeredFrom.get(key);
    if (known && known.resource === resource && known.doc === doc) return;
    answeredFrom.set(key, { apiVersion, kind, resource, doc });
    // Another object of the same kind may have been peeked on the answer noted before.
    if (known) revision = ++revisions;
  }

  return {
    peek(ref) {
      const live = connection.peekObject(ref);
      const resolved = connection.cachedResource(ref.apiVersion, ref.kind)
        ? policies.peek(connection.resolveRef(ref)?.namespace ?? '')
        : undefined;
      const result = withAdmission(
        facts(
          ref,
          live,
          peekVersions(ref, live),
          peekNamespaceFacts(connection, ref, live, policiesReadNamespace(resolved)),
          peekPermissionFacts(connection, ref, live),
        ),
        peekAdmissionFacts(connection, ref, live),
      );
      if (result.kind.state === 'served' && !result.schema) void loadSchema(ref.apiVersion);
      else if (result.kind.state === 'pending') schemaOnceServed(ref.apiVersion, ref.kind);
      return result;
    },
    revision() {
      const now = Date.now();
      // A clock set back counts as time passed too.
      if (now - revisedAt >= REPEEK_MS || now < revisedAt) {
        revisedAt = now;
        revision = ++revisions;
      }
      for (const seen of answeredFrom.values()) answered(seen.apiVersion, seen.kind);
      return revision;
    },
    read,
    expect: (targets) =>
      connection.expectObjects(
        targets.flatMap((t) =>
          t.name === undefined
            ? []
            : [
                {
                  apiVersion: t.apiVersion,
                  kind: t.kind,
                  name: t.name,
                  ...(t.namespace ? { namespace: t.namespace } : {}),
                },
              ],
        ),
      ),
    async load(ref) {
      const answer = await read(ref);
      return answer.ok
        ? answer.facts
        : {
            kind: { state: 'unavailable', message: answer.problem.message },
            live: { state: 'unavailable', message: answer.problem.message },
            schema: undefined,
          };
    },
    onChange(listener) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    dispose() {
      objectSubscription.dispose();
      schemaSubscription.dispose();
      namespaceSubscription.dispose();
      permissionSubscription.dispose();
      policySubscription.dispose();
      collectionSubscription.dispose();
      admissionSubscription?.dispose();
      listeners.clear();
    },
  };
}

/** What a live-object state means for the analysis (the editor and the command line share it). */
export function liveFacts(live: LiveObjectState): LiveFacts {
  switch (live.state) {
    case 'pending':
      return { state: 'pending' };
    case 'exists':
      return { state: 'exists', object: live.object };
    case 'absent':
      return { state: 'absent' };
    case 'failed':
      if (live.problem.kind === 'invalidName' && live.problem.field)
        return { state: 'invalidName', field: live.problem.field, message: live.problem.message };
      return { state: 'unavailable', message: live.problem.message };
  }
}

/**
 * The autoscalers beside the appliers of an object a GitOps controller applies, when its kind scales
 * (only an autoscaler that targets it through /scale can fight the controller over replicas).
 */
function withAutoscalers(
  appliers: { appliers?: ApplierFacts },
  resource: ApiResourceInfo | undefined,
  live: LiveObjectState,
  peek: (namespace: string) => AutoscalerFacts | undefined,
): { appliers?: ApplierFacts; autoscalers?: AutoscalerFacts } {
  if (!appliers.appliers || !resource?.subresources.includes('scale') || live.state !== 'exists') return appliers;
  const metadata = live.object.metadata;
  const namespace =
    metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata.namespace : undefined;
  const autoscalers = typeof namespace === 'string' ? peek(namespace) : undefined;
  return autoscalers ? { ...appliers, autoscalers } : appliers;
}

/**
 * Who applies an existing object and the policies its marks name (core/findings applierFacts), from
 * the policy lookup's cache (never waits: a policy not read yet is unknown until its read lands);
 * nothing when no mark or manager names a tool. The editor and the command line (loadAppliers) give
 * the same facts.
 */
function appliersOf(
  live: LiveObjectState,
  policy: (sighting: ApplierSighting) => PolicyFacts | undefined,
): { appliers?: ApplierFacts } {
  const appliers = live.state === 'exists' ? applierFacts(live.object, policy) : undefined;
  return appliers ? { appliers } : {};
}

/** The same, once each policy's read has an answer (the command line, the dry-run confirmation). */
async function loadAppliers(
  live: LiveObjectState,
  policy: (sighting: ApplierSighting) => Promise<PolicyFacts | undefined>,
): Promise<{ appliers?: ApplierFacts }> {
  if (live.state !== 'exists') return {};
  const asked: Promise<unknown>[] = [];
  const answers = new Map<string, PolicyFacts | undefined>();
  const key = (s: ApplierSighting) => JSON.stringify([s.kind, s.namespace ?? '', s.name]);
  // Each GitOps object named, read side by side; then the facts composed from the answers.
  applierFacts(live.object, (sighting) => {
    asked.push(policy(sighting).then((answer) => answers.set(key(sighting), answer)));
    return undefined;
  });
  await Promise.all(asked);
  return appliersOf(live, (sighting) => answers.get(key(sighting)));
}

/**
 * The namespace to ask about for a ref: for a namespaced object that does not exist (an object
 * that exists proves its namespace), and for an object with a pod template whether it exists or
 * not (its namespace's labels choose Pod Security admission), once discovery placed it.
 */
function namespaceToAsk(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
  policiesAsk: boolean,
): string | undefined {
  const webhooks = connection.admission?.peekWebhooks();
  // A webhook's namespaceSelector reads the labels of the namespace of any object the webhooks may
  // judge; so does an admission policy that selects namespaces or reads namespaceObject.
  const selects =
    policiesAsk ||
    (webhooks?.state === 'known' && webhooks.webhooks.some((w) => w.spec.namespaceSelector !== undefined));
  if (live.state !== 'absent' && !(live.state === 'exists' && (selects || podSpecPath(ref.apiVersion, ref.kind))))
    return undefined;
  const resolved = connection.resolveRef(ref);
  return resolved?.resource.namespaced && resolved.namespace ? resolved.namespace : undefined;
}

function factsOf(name: string, state: NamespaceState): NamespaceFacts {
  return {
    state: state.state === 'exists' ? 'exists' : state.state === 'absent' ? 'missing' : 'unknown',
    name,
    ...(state.state === 'exists' && state.labels ? { labels: state.labels } : {}),
  };
}

/** What the analysis needs to know of the ref's namespace, from the cache (never waits); undefined when there is nothing to ask. */
function peekNamespaceFacts(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
  policiesAsk: boolean,
): NamespaceFacts | undefined {
  const name = namespaceToAsk(connection, ref, live, policiesAsk);
  return name === undefined ? undefined : factsOf(name, connection.namespaces.peek(name));
}

/** The same, once the namespace's first read has an answer (the command line). */
async function loadNamespaceFacts(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
  policiesAsk: boolean,
): Promise<NamespaceFacts | undefined> {
  const name = namespaceToAsk(connection, ref, live, policiesAsk);
  return name === undefined ? undefined : factsOf(name, await connection.namespaces.get(name));
}

/**
 * The reviews an object needs: every request any mode sends of it (core/findings/permission.ts),
 * in its namespace, by its name where the request names it. None until its existence is known.
 */
function permissionQuestionsOf(
  served: Pick<ApiResourceInfo, 'group' | 'resource' | 'namespaced'>,
  namespace: string,
  name: string | undefined,
  live: LiveObjectState,
): { namespace: string; questions: { question: AccessQuestion; named: boolean }[] } | undefined {
  if (live.state !== 'exists' && live.state !== 'absent') return undefined;
  const where = served.namespaced ? namespace : '';
  return {
    namespace: where,
    questions: permissionQuestions(live.state === 'exists').map((r) => ({
      named: r.named,
      question: {
        verb: r.verb,
        group: served.group,
        resource: served.resource,
        namespace: where,
        ...(r.named && name !== undefined ? { name } : {}),
      },
    })),
  };
}

function permissionFactsOf(
  namespace: string,
  questions: readonly { question: AccessQuestion; named: boolean }[],
  states: readonly AccessState[],
  user: UserState,
): PermissionFacts {
  const answers = questions.map(({ question, named }, i): PermissionAnswer => {
    const state = states[i]!;
    return {
      verb: question.verb,
      named,
      state: state.state,
      ...(state.state === 'denied' && state.reason ? { reason: state.reason } : {}),
      ...(state.state === 'unknown' ? { reason: state.problem.message } : {}),
    };
  });
  return { ...(user.state === 'known' ? { user: user.name } : {}), namespace, answers };
}

/** What the analysis needs to know of the user's permissions, from the cache (never waits). */
function peekPermissionFacts(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
): PermissionFacts | undefined {
  const resolved = connection.resolveRef(ref);
  if (!resolved) return undefined;
  const asked = permissionQuestionsOf(resolved.resource, resolved.namespace ?? '', ref.name, live);
  if (!asked) return undefined;
  const states = asked.questions.map((q) => connection.permissions.peek(q.question));
  return permissionFactsOf(asked.namespace, asked.questions, states, connection.permissions.peekUser());
}

/** The same, once every review has an answer (the command line, a dry run's facts). */
async function loadPermissionFacts(
  connection: ClusterConnection,
  served: ApiResourceInfo,
  namespace: string,
  name: string | undefined,
  live: LiveObjectState,
): Promise<PermissionFacts | undefined> {
  const asked = permissionQuestionsOf(served, namespace, name, live);
  if (!asked) return undefined;
  const [states, user] = await Promise.all([
    Promise.all(asked.questions.map((q) => connection.permissions.get(q.question))),
    connection.permissions.getUser(),
  ]);
  return permissionFactsOf(asked.namespace, asked.questions, states, user);
}

/** The admission facts of a ref: the cluster's webhooks, and the LimitRanges and ResourceQuotas of a pod-creating object's namespace. */
type AdmissionPart = Pick<ResourceFacts, 'webhooks' | 'namespacePolicies'>;

function withAdmission(facts: ResourceFacts, admission: AdmissionPart): ResourceFacts {
  return admission.webhooks || admission.namespacePolicies ? { ...facts, ...admission } : facts;
}

/** The namespace whose LimitRanges and ResourceQuotas judge the Pods a ref creates. */
function policyNamespace(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
): string | undefined {
  if (live.state !== 'absent' && live.state !== 'exists') return undefined;
  if (!podSpecPath(ref.apiVersion, ref.kind)) return undefined;
  const resolved = connection.resolveRef(ref);
  return resolved?.resource.namespaced && resolved.namespace ? resolved.namespace : undefined;
}

function peekAdmissionFacts(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
): AdmissionPart {
  const admission = connection.admission;
  if (!admission) return {};
  const webhooks = admission.peekWebhooks();
  const ns = policyNamespace(connection, ref, live);
  const policies = ns === undefined ? undefined : admission.peekPolicies(ns);
  return { ...(webhooks ? { webhooks } : {}), ...(policies ? { namespacePolicies: policies } : {}) };
}

async function loadAdmissionFacts(
  connection: ClusterConnection,
  ref: NamedObjectTarget,
  live: LiveObjectState,
): Promise<AdmissionPart> {
  const admission = connection.admission;
  if (!admission) return {};
  const ns = policyNamespace(connection, ref, live);
  const [webhooks, policies] = await Promise.all([
    admission.webhooks(),
    ns === undefined ? Promise.resolve(undefined) : admission.policies(ns),
  ]);
  return { webhooks, ...(policies ? { namespacePolicies: policies } : {}) };
}

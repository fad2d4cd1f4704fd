// What the cluster says about the objects a manifest names, shaped as core/findings/analysis.ts wants it:
// is the kind served, does the object exist (with its managedFields), what is the schema of its
// group-version. `peek` answers from the caches without waiting (the editor, on every keystroke);
// `read` waits for the answers: the command line's facts and the dry-run confirmation of both the
// editor and the command line, so both judge an object on the same facts.
import type { KindFacts, LiveFacts, ResourceFacts } from '../core/findings/analysis';
import type { JsonObject } from '../core/json';
import { schemaFromOpenApi, type SchemaModel } from '../core/ssa/schema';
import type { ClusterConnection } from './connection';
import type { ApiResourceInfo, ClusterProblem, Disposable, LiveObjectState, ObjectRef } from './types';

/** What `read` is asked: an object as a manifest names it (without a name: a generateName object). */
export interface FactsTarget {
  apiVersion: string;
  kind: string;
  name?: string;
  namespace?: string;
}

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
  peek(ref: ObjectRef): ResourceFacts;
  /**
   * Waits for the kind, then the live object (none is asked for an object without a name: it is
   * always a new one) and the schema. A group-version the cluster publishes no schema for (an old
   * aggregated API) is a note and no schema; a schema that could not be read is a problem.
   */
  read(target: FactsTarget): Promise<LoadedFacts>;
  /** `read` as plain facts: a problem becomes an unavailable kind. */
  load(ref: ObjectRef): Promise<ResourceFacts>;
  /** Something that a `peek` may answer differently has arrived (an object, a schema). */
  onChange(listener: () => void): Disposable;
  dispose(): void;
}

export function createFactsSource(connection: ClusterConnection): FactsSource {
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  const schemas = new WeakMap<JsonObject, SchemaModel>();
  const schemaLoads = new Map<string, Promise<void>>();
  const objectSubscription = connection.onObjectChange(notify);
  // A schema whose fetch failed arrives later (the connection retries it with backoff).
  const schemaSubscription = connection.onSchemaChange(notify);

  function schemaFromDocument(doc: JsonObject): SchemaModel {
    let schema = schemas.get(doc);
    if (!schema) {
      schema = schemaFromOpenApi([doc]).schema;
      schemas.set(doc, schema);
    }
    return schema;
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

  function cachedSchema(apiVersion: string): SchemaModel | undefined {
    const doc = connection.cachedOpenApiDocument(apiVersion);
    return doc ? schemaFromDocument(doc) : undefined;
  }

  function facts(ref: ObjectRef, live: LiveObjectState): ResourceFacts {
    const resource = connection.cachedResource(ref.apiVersion, ref.kind);
    let kind: KindFacts;
    if (resource) kind = { state: 'served', group: resource.group, resource: resource.resource, namespaced: resource.namespaced };
    else if (live.state === 'failed' && live.problem.kind === 'kindNotServed') kind = { state: 'notServed', message: live.problem.message };
    else if (live.state === 'failed') kind = { state: 'unavailable', message: live.problem.message };
    else kind = { state: 'pending' };
    return { kind, live: liveFacts(live), schema: resource ? cachedSchema(ref.apiVersion) : undefined };
  }

  async function read(target: FactsTarget): Promise<LoadedFacts> {
    const kind = await connection.resolveKind(target.apiVersion, target.kind);
    if (!kind.ok) {
      if (kind.problem.kind !== 'kindNotServed') return { ok: false, problem: kind.problem };
      return { ok: true, facts: { kind: { state: 'notServed', message: kind.problem.message }, live: { state: 'absent' }, schema: undefined }, namespace: target.namespace ?? '', notes: [] };
    }
    const served = kind.value;
    const namespace = served.namespaced ? target.namespace || connection.defaultNamespace : '';
    const [live, schema] = await Promise.all([
      target.name === undefined
        ? Promise.resolve<LiveObjectState>({ state: 'absent', observedAt: 0 })
        : // The manifest's own namespace, as peek asks: a default one is placed (and named, if refused) as the default.
          connection.getObject({ apiVersion: target.apiVersion, kind: target.kind, name: target.name, ...(target.namespace ? { namespace: target.namespace } : {}) }),
      connection.openApiDocument(target.apiVersion),
    ]);
    if (live.state === 'failed' && live.problem.kind !== 'invalidName') return { ok: false, problem: live.problem };
    if (live.state === 'pending') return { ok: false, problem: { kind: 'unreachable', message: `no answer from the cluster for ${served.resource} ${target.name ?? ''}`.trim() } };
    const notes: string[] = [];
    if (!schema.ok) {
      if (schema.problem.kind !== 'kindNotServed' && schema.problem.kind !== 'notFound') return { ok: false, problem: schema.problem };
      notes.push(`${schema.problem.message} Field conflicts are not predicted without it.`);
    }
    return {
      ok: true,
      facts: {
        kind: { state: 'served', group: served.group, resource: served.resource, namespaced: served.namespaced },
        live: liveFacts(live),
        schema: schema.ok ? schemaFromDocument(schema.value) : undefined,
      },
      served,
      namespace,
      notes,
    };
  }

  return {
    peek(ref) {
      const live = connection.peekObject(ref);
      const result = facts(ref, live);
      if (result.kind.state === 'served' && !result.schema) void loadSchema(ref.apiVersion);
      return result;
    },
    read,
    async load(ref) {
      const answer = await read(ref);
      return answer.ok ? answer.facts : { kind: { state: 'unavailable', message: answer.problem.message }, live: { state: 'unavailable', message: answer.problem.message }, schema: undefined };
    },
    onChange(listener) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    dispose() {
      objectSubscription.dispose();
      schemaSubscription.dispose();
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
      if (live.problem.kind === 'invalidName' && live.problem.field) return { state: 'invalidName', field: live.problem.field, message: live.problem.message };
      return { state: 'unavailable', message: live.problem.message };
  }
}

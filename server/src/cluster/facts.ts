// What the cluster says about the objects a manifest names, shaped as core/findings/analysis.ts wants it:
// is the kind served, does the object exist (with its managedFields), what is the schema of its
// group-version. `peek` answers from the caches without waiting (the editor, on every keystroke);
// `load` waits for the answers (the command line, the verifier).
import type { KindFacts, LiveFacts, NamespaceFacts, ResourceFacts } from '../core/findings/analysis';
import type { JsonObject } from '../core/json';
import { schemaFromOpenApi, type SchemaModel } from '../core/ssa/schema';
import type { ClusterConnection } from './connection';
import { notServedKindFacts } from './discovery';
import { loadNamespaceFacts, peekNamespaceFacts } from './namespaces';
import type { Disposable, LiveObjectState, ObjectRef } from './types';
import { loadManagerVersions, peekManagerVersions, type ManagerVersions } from './versions';

export interface FactsSource {
  /** Synchronous: what is known now. Starts the reads that are missing; `onChange` tells when they land. */
  peek(ref: ObjectRef): ResourceFacts;
  /** Waits for the kind, the live object and the schema. */
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
  const namespaceSubscription = connection.namespaces.onChange(notify);

  // With the documents of the versions other managers wrote at (versions.ts), keyed by their URLs' documents.
  const combined = new WeakMap<JsonObject, { others: readonly JsonObject[]; schema: SchemaModel }>();
  function schemaFromDocument(doc: JsonObject, others: readonly JsonObject[] = []): SchemaModel {
    if (others.length > 0) {
      const known = combined.get(doc);
      if (known && known.others.length === others.length && known.others.every((d, i) => d === others[i])) return known.schema;
      const schema = schemaFromOpenApi([doc, ...others]).schema;
      combined.set(doc, { others, schema });
      return schema;
    }
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

  function facts(ref: ObjectRef, live: LiveObjectState, versions: ManagerVersions | undefined, namespace: NamespaceFacts | undefined): ResourceFacts {
    const resource = connection.cachedResource(ref.apiVersion, ref.kind);
    let kind: KindFacts;
    if (resource) kind = { state: 'served', group: resource.group, resource: resource.resource, namespaced: resource.namespaced };
    else if (live.state === 'failed' && live.problem.kind === 'kindNotServed') kind = notServedKindFacts(live.problem);
    else if (live.state === 'failed') kind = { state: 'unavailable', message: live.problem.message };
    else kind = { state: 'pending' };
    const doc = resource ? connection.cachedOpenApiDocument(ref.apiVersion) : undefined;
    return {
      kind,
      live: liveFacts(live),
      ...(namespace ? { namespace } : {}),
      schema: doc ? schemaFromDocument(doc, versions?.documents) : undefined,
      ...(versions?.versions ? { versions: versions.versions } : {}),
    };
  }

  /** Managers recorded at other versions: their documents and the kind's versions (versions.ts). */
  function peekVersions(ref: ObjectRef, live: LiveObjectState): ManagerVersions | undefined {
    const resource = connection.cachedResource(ref.apiVersion, ref.kind);
    if (!resource || live.state !== 'exists') return undefined;
    const known = peekManagerVersions(connection, ref, resource, live.object, (v) => connection.cachedOpenApiDocument(v));
    for (const v of known.missing) void loadSchema(v);
    return known;
  }

  return {
    peek(ref) {
      const live = connection.peekObject(ref);
      const result = facts(ref, live, peekVersions(ref, live), peekNamespaceFacts(connection, ref, live));
      if (result.kind.state === 'served' && !result.schema) void loadSchema(ref.apiVersion);
      return result;
    },
    async load(ref) {
      const live = await connection.getObject(ref);
      const resource = connection.cachedResource(ref.apiVersion, ref.kind);
      if (resource && !connection.cachedOpenApiDocument(ref.apiVersion)) await loadSchema(ref.apiVersion);
      const versions = resource && live.state === 'exists'
        ? await loadManagerVersions(connection, ref, resource, live.object, async (v) => {
          if (!connection.cachedOpenApiDocument(v)) await loadSchema(v);
          return connection.cachedOpenApiDocument(v);
        })
        : undefined;
      return facts(ref, live, versions, await loadNamespaceFacts(connection, ref, live));
    },
    onChange(listener) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    dispose() {
      objectSubscription.dispose();
      schemaSubscription.dispose();
      namespaceSubscription.dispose();
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

// OpenAPI v3 documents, one per group-version, as plain JSON for core/ssa/schema.ts and
// core/cel/schema.ts, in their compact form (compactOpenApiDocument: only the parts those read).
// The index (/openapi/v3) gives each group-version a URL carrying a content hash
// (`/openapi/v3/apis/apps/v1?hash=...`); a document is cached under that URL, so it is fetched again
// only when the server's schema for that group-version changed (a CRD was updated, the server upgraded),
// and its compact form kept on disk under it for the next process (api-cache.ts). The index itself
// carries no validator (kube-apiserver v1.34 sends no ETag, and a Last-Modified of the moment it
// answers), so it is read in every process: it is small, and a check asks for it beside discovery.
//
// A failed fetch (a 500, a timeout, a throttled server) is remembered for a while so that typing does
// not resend it, and retried in the background with exponential backoff; when the document finally
// arrives, onChange tells the editor to analyse again. Without a schema no field conflict can be
// predicted, so one bad moment of the server must not switch prediction off for the session.
import { SharedLoad } from './shared-load';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json';
import type { ApiCache } from './api-cache';
import { namesContent, type ClusterShare } from './share';
import type { ClusterTransport } from './http';
import { checkServerRelativePath } from './names';
import { classifyFailure, parseJson } from './problems';
import type { ClusterProblem, ClusterResult, Disposable } from './types';

export interface OpenApiRetry {
  /** Delay before the first retry of a failed fetch; doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_OPENAPI_RETRY: OpenApiRetry = { initialBackoffMs: 1_000, maxBackoffMs: 60_000 };

interface Failure {
  apiVersion: string;
  problem: ClusterProblem;
  attempts: number;
  /** Date.now() from which a fetch is tried again. */
  retryAt: number;
  timer?: NodeJS.Timeout;
}

export interface OpenApiIndex {
  /** `apis/apps/v1` → `/openapi/v3/apis/apps/v1?hash=...` */
  paths: Record<string, string>;
  fetchedAt: number;
}

/** The index key of a group-version: `v1` → `api/v1`, `apps/v1` → `apis/apps/v1`. */
export function openApiPathKey(apiVersion: string): string {
  return apiVersion.includes('/') ? `apis/${apiVersion}` : `api/${apiVersion}`;
}

export function parseOpenApiIndex(body: unknown): OpenApiIndex | undefined {
  if (!isJsonObject(body) || !isJsonObject(body.paths)) return undefined;
  const paths: Record<string, string> = {};
  for (const [key, entry] of Object.entries(body.paths)) {
    // Each URL is requested later: only paths under /openapi/v3/ are taken (see names.ts).
    if (
      isJsonObject(entry) &&
      typeof entry.serverRelativeURL === 'string' &&
      checkServerRelativePath(entry.serverRelativeURL.split('?', 1)[0]!, '/openapi/v3/')
    ) {
      paths[key] = entry.serverRelativeURL;
    }
  }
  return { paths, fetchedAt: Date.now() };
}

export class OpenApi {
  private readonly index = new SharedLoad<OpenApiIndex>(() => this.fetchIndex());
  /** Keyed by the hashed URL: a changed hash is a different key. */
  private readonly documents = new Map<string, JsonObject>();
  private readonly documentLoading = new Map<string, Promise<ClusterResult<JsonObject>>>();
  /** Failed fetches by index key, until a retry succeeds or the user refreshes. */
  private readonly failures = new Map<string, Failure>();
  /** One attempt per group-version at a time (the editor's peek and a background retry share it). */
  private readonly attempts = new Map<string, Promise<ClusterResult<JsonObject>>>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(
    private readonly transport: ClusterTransport,
    /** A group-version missing from the index triggers a fresh index at most this often (new CRDs). */
    private readonly refreshForMissingMs = 10_000,
    private readonly retry: OpenApiRetry = DEFAULT_OPENAPI_RETRY,
    /** Documents earlier processes fetched (api-cache.ts), by their hashed URLs. */
    private readonly disk?: ApiCache,
    /** Documents other connections of this process read, by the URLs that name their content (share.ts). */
    private readonly share?: ClusterShare,
  ) {}

  loadIndex(force = false): Promise<ClusterResult<OpenApiIndex>> {
    return this.index.load(force);
  }

  /** A document arrived after a failure: what a peek answers has changed. */
  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Forget every failure and the index (the user asked to refresh): the next ask fetches. */
  refresh(): Promise<ClusterResult<OpenApiIndex>> {
    for (const failure of this.failures.values()) clearTimeout(failure.timer);
    this.failures.clear();
    return this.loadIndex(true);
  }

  /** The cluster answers again: retry every failed group-version now instead of at its backoff time. */
  retryNow(): void {
    for (const [key, failure] of this.failures) {
      if (this.attempts.has(key)) continue;
      clearTimeout(failure.timer);
      failure.retryAt = 0;
      void this.document(failure.apiVersion);
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const failure of this.failures.values()) clearTimeout(failure.timer);
    this.failures.clear();
    this.listeners.clear();
  }

  /** The document of a group-version if it is already cached under the current index. */
  cachedDocument(apiVersion: string): JsonObject | undefined {
    const url = this.index.cached()?.paths[openApiPathKey(apiVersion)];
    return url ? this.documents.get(url) : undefined;
  }

  /**
   * The OpenAPI v3 document for `apps/v1`, `v1`, `example.com/v1alpha1`. A recent failure is answered
   * from memory until its retry time.
   */
  document(apiVersion: string): Promise<ClusterResult<JsonObject>> {
    const key = openApiPathKey(apiVersion);
    const failed = this.failures.get(key);
    if (failed && Date.now() < failed.retryAt) return Promise.resolve({ ok: false, problem: failed.problem });
    let attempt = this.attempts.get(key);
    if (!attempt) {
      attempt = this.fetchDocument(apiVersion).then((result) => {
        this.attempts.delete(key);
        this.settle(key, apiVersion, result);
        return result;
      });
      this.attempts.set(key, attempt);
    }
    return attempt;
  }

  private settle(key: string, apiVersion: string, result: ClusterResult<JsonObject>): void {
    if (this.disposed) return;
    const failed = this.failures.get(key);
    if (result.ok || result.problem.kind === 'kindNotServed') {
      // Not published is an answer, not a failure: the index is looked at again for new CRDs anyway.
      if (!failed) return;
      clearTimeout(failed.timer);
      this.failures.delete(key);
      if (result.ok) for (const listener of [...this.listeners]) listener();
      return;
    }
    const attempts = (failed?.attempts ?? 0) + 1;
    const delay = Math.min(this.retry.initialBackoffMs * 2 ** (attempts - 1), this.retry.maxBackoffMs);
    if (failed) clearTimeout(failed.timer);
    const failure: Failure = { apiVersion, problem: result.problem, attempts, retryAt: Date.now() + delay };
    failure.timer = setTimeout(() => {
      if (this.failures.get(key) !== failure) return;
      failure.retryAt = 0;
      void this.document(apiVersion);
    }, delay);
    failure.timer.unref?.();
    this.failures.set(key, failure);
  }

  private async fetchDocument(apiVersion: string, reindexed = false): Promise<ClusterResult<JsonObject>> {
    const key = openApiPathKey(apiVersion);
    let index = await this.loadIndex(reindexed);
    if (!index.ok) return index;
    if (!index.value.paths[key] && Date.now() - index.value.fetchedAt >= this.refreshForMissingMs) {
      index = await this.loadIndex(true);
      if (!index.ok) return index;
    }
    const url = Object.hasOwn(index.value.paths, key) ? index.value.paths[key] : undefined;
    if (!url) {
      return {
        ok: false,
        problem: { kind: 'kindNotServed', message: `The cluster publishes no OpenAPI v3 schema for ${apiVersion}.` },
      };
    }
    const cached = this.documents.get(url);
    if (cached) return { ok: true, value: cached };
    // Another connection of this process read the content this URL names (share.ts): that document.
    const shared = this.share?.document(url);
    if (shared) {
      this.documents.set(url, shared);
      return { ok: true, value: shared };
    }
    // The URL names the content (its hash): a document kept under it is that document.
    const kept = this.disk?.document(key, url);
    if (kept) {
      if (kept.hashChecked) this.share?.keep(url, kept.document);
      this.documents.set(url, kept.document);
      return { ok: true, value: kept.document };
    }
    let loading = this.documentLoading.get(url);
    if (!loading) {
      loading = this.fetchText(url).then((result): ClusterResult<JsonObject> => {
        this.documentLoading.delete(url);
        if (!result.ok) return result;
        // Shared with other connections only when the text is the content its URL's hash names.
        const hashChecked = namesContent(url, result.value.text);
        // Another connection read the same content while this one waited (contexts start together,
        // and none waits on another's cluster): its document, not a second parse of the same text.
        const meanwhile = hashChecked ? this.share?.document(url) : undefined;
        const parsed = meanwhile ?? parseJson(result.value.text);
        if (!isJsonObject(parsed))
          return {
            ok: false,
            problem: { kind: 'other', message: `GET ${result.value.path} did not answer a JSON object.` },
          };
        // What is judged is the compact form, here as in every later process that reads it from disk.
        const compact = meanwhile ?? compactOpenApiDocument(parsed);
        this.disk?.saveDocument(key, url, compact, hashChecked);
        if (hashChecked) this.share?.keep(url, compact);
        this.documents.set(url, compact);
        return { ok: true, value: compact };
      });
      this.documentLoading.set(url, loading);
    }
    const result = await loading;
    // The group's document changed since the index was read (a CRD installed or upgraded): the server
    // redirects the old hash (301). The index is read again, once, and the current document asked for.
    if (!result.ok && result.problem.httpStatus === 301 && !reindexed) return this.fetchDocument(apiVersion, true);
    return result;
  }

  private async fetchIndex(): Promise<ClusterResult<OpenApiIndex>> {
    const body = await this.fetchJson('/openapi/v3');
    if (!body.ok) return body;
    const index = parseOpenApiIndex(body.value);
    return index
      ? { ok: true, value: index }
      : { ok: false, problem: { kind: 'other', message: 'GET /openapi/v3 did not answer an OpenAPI v3 index.' } };
  }

  private async fetchJson(relativeUrl: string): Promise<ClusterResult<JsonObject>> {
    const fetched = await this.fetchText(relativeUrl);
    if (!fetched.ok) return fetched;
    const parsed = parseJson(fetched.value.text);
    if (isJsonObject(parsed)) return { ok: true, value: parsed };
    return {
      ok: false,
      problem: { kind: 'other', message: `GET ${fetched.value.path} did not answer a JSON object.` },
    };
  }

  /** A 200's text as served (a document's hash is of that text), with the path asked. */
  private async fetchText(relativeUrl: string): Promise<ClusterResult<{ text: string; path: string }>> {
    const [path, search] = relativeUrl.split('?', 2) as [string, string | undefined];
    const query = Object.fromEntries(new URLSearchParams(search ?? ''));
    const outcome = await this.transport.send({ method: 'GET', path, query, purpose: { verb: 'get' } });
    if (outcome.kind === 'response' && outcome.status === 200) return { ok: true, value: { text: outcome.body, path } };
    return { ok: false, problem: classifyFailure(outcome, { method: 'GET', path, verb: 'get' }) };
  }
}

// ---------------------------------------------------------------------------------------------
// The compact document: what the judgements read of a document, and nothing else.

/** Keys of a schema node kept as they are: what core/ssa/schema.ts and core/cel/schema.ts read. */
const KEPT = new Set([
  '$ref',
  'type',
  'format',
  'nullable',
  'default',
  'x-kubernetes-group-version-kind',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-validations',
]);

/**
 * A document with only the schemas' parts that the prediction and the validation rules read
 * (`components.schemas`: types, formats, defaults, references, the Kubernetes extensions): no
 * descriptions, no paths. Both read it exactly as they read the whole document — every process
 * judges with this form, whether the document came from the server or from the disk cache — and
 * api/v1 shrinks from 1.45 MB to 110 KB, all ASCII. Names from the document (types, fields) are
 * set as own keys whatever they are (`__proto__` too), as JSON.parse sets them.
 */
export function compactOpenApiDocument(document: JsonObject): JsonObject {
  const schemas =
    isJsonObject(document.components) && isJsonObject(document.components.schemas)
      ? document.components.schemas
      : undefined;
  if (!schemas) return {};
  const out = Object.fromEntries(
    Object.entries(schemas).map(([name, spec]) => [name, isJsonObject(spec) ? compactSchema(spec) : spec]),
  );
  return { components: { schemas: out } };
}

function compactSchema(spec: JsonObject): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(spec)) {
    if (KEPT.has(key)) out[key] = value;
    else if (key === 'properties' && isJsonObject(value))
      out[key] = Object.fromEntries(
        Object.entries(value).map(([field, member]) => [field, isJsonObject(member) ? compactSchema(member) : member]),
      );
    else if (key === 'additionalProperties' || key === 'items' || key === 'properties')
      out[key] = isJsonObject(value) ? compactSchema(value) : value;
    else if (key === 'allOf')
      out[key] = Array.isArray(value) ? value.map((v) => (isJsonObject(v) ? compactSchema(v) : v)) : value;
  }
  return out;
}

// OpenAPI v3 documents, one per group-version, as plain JSON for core/schema.ts.
// The index (/openapi/v3) gives each group-version a URL carrying a content hash
// (`/openapi/v3/apis/apps/v1?hash=...`); a document is cached under that URL, so it is fetched again
// only when the server's schema for that group-version changed (a CRD was updated, the server upgraded).
import { SharedLoad } from './shared-load';
import { isJsonObject, type JsonObject } from '../core/json';
import type { ClusterTransport } from './http';
import { checkServerRelativePath } from './names';
import { classifyFailure, parseJson } from './problems';
import type { ClusterResult } from './types';

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
    if (isJsonObject(entry) && typeof entry.serverRelativeURL === 'string' && checkServerRelativePath(entry.serverRelativeURL.split('?', 1)[0]!, '/openapi/v3/')) {
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

  constructor(
    private readonly transport: ClusterTransport,
    /** A group-version missing from the index triggers a fresh index at most this often (new CRDs). */
    private readonly refreshForMissingMs = 10_000,
  ) {}

  loadIndex(force = false): Promise<ClusterResult<OpenApiIndex>> {
    return this.index.load(force);
  }

  /** The document of a group-version if it is already cached under the current index. */
  cachedDocument(apiVersion: string): JsonObject | undefined {
    const url = this.index.cached()?.paths[openApiPathKey(apiVersion)];
    return url ? this.documents.get(url) : undefined;
  }

  /** The OpenAPI v3 document for `apps/v1`, `v1`, `example.com/v1alpha1`. */
  async document(apiVersion: string): Promise<ClusterResult<JsonObject>> {
    const key = openApiPathKey(apiVersion);
    let index = await this.loadIndex();
    if (!index.ok) return index;
    if (!index.value.paths[key] && Date.now() - index.value.fetchedAt >= this.refreshForMissingMs) {
      index = await this.loadIndex(true);
      if (!index.ok) return index;
    }
    const url = Object.hasOwn(index.value.paths, key) ? index.value.paths[key] : undefined;
    if (!url) {
      return { ok: false, problem: { kind: 'kindNotServed', message: `The cluster publishes no OpenAPI v3 schema for ${apiVersion}.` } };
    }
    const cached = this.documents.get(url);
    if (cached) return { ok: true, value: cached };
    let loading = this.documentLoading.get(url);
    if (!loading) {
      loading = this.fetchJson(url).then((result) => {
        this.documentLoading.delete(url);
        if (result.ok) this.documents.set(url, result.value);
        return result;
      });
      this.documentLoading.set(url, loading);
    }
    return loading;
  }

  private async fetchIndex(): Promise<ClusterResult<OpenApiIndex>> {
    const body = await this.fetchJson('/openapi/v3');
    if (!body.ok) return body;
    const index = parseOpenApiIndex(body.value);
    return index ? { ok: true, value: index } : { ok: false, problem: { kind: 'other', message: 'GET /openapi/v3 did not answer an OpenAPI v3 index.' } };
  }

  private async fetchJson(relativeUrl: string): Promise<ClusterResult<JsonObject>> {
    const [path, search] = relativeUrl.split('?', 2) as [string, string | undefined];
    const query = Object.fromEntries(new URLSearchParams(search ?? ''));
    const outcome = await this.transport.send({ method: 'GET', path, query, purpose: { verb: 'get' } });
    if (outcome.kind === 'response' && outcome.status === 200) {
      const parsed = parseJson(outcome.body);
      if (isJsonObject(parsed)) return { ok: true, value: parsed };
      return { ok: false, problem: { kind: 'other', message: `GET ${path} did not answer a JSON object.` } };
    }
    return { ok: false, problem: classifyFailure(outcome, { method: 'GET', path, verb: 'get' }) };
  }
}

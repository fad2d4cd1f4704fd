// Discovery and OpenAPI v3 documents kept on disk between processes, one directory per API server,
// so that a process learns nothing twice: a `check` after the first, or a language server started
// in a new window, asks the server only whether what it knows is still so.
//
// - Aggregated discovery (/api, /apis) answers an ETag, a hash of its content, and a 304 to a
//   request that names it in If-None-Match (kube-apiserver's discovery/aggregated handler): the
//   kept answer is sent back as the validator, and used only once the server says it is current.
// - An OpenAPI v3 document is named by its content's hash (`/openapi/v3/apis/apps/v1?hash=...`,
//   from the index /openapi/v3, which carries no validator and is read every time): a document
//   kept under that URL is that document, read from disk with no request at all. What is kept is
//   its compact form (openapi.ts compactOpenApiDocument: the schemas' types, references, defaults
//   and Kubernetes extensions, no descriptions or paths), the form every process judges with.
//
// Both are what any user the server lets in is told, the same for every user: no credential, user
// name, token or object is ever written here (the kubeconfig's server URL is not written either,
// only a hash of what identifies the server). Because both validators are hashes of the content,
// a kept answer cannot pass for another server's: the worst a wrong directory can do is cost a
// fetch. Still, a file records the server it was written for and is ignored anywhere else.
//
// Where and how files are kept safely is launch/user-cache.ts's (shared with the compile cache);
// anything odd (unreadable, malformed, another format, another server, too large, another user's)
// is no cache, and a write that fails changes nothing. KCH_API_CACHE=off turns it off.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json';
import { ownDirectory, readOwnFile, userCacheDirectory, writeOwnFile } from '../launch/user-cache';
import { parseJson } from './problems';
import { withoutUserinfo } from './redact';
import type { ApiGroupInfo, ApiResourceInfo } from './types';

/** What aggregated discovery answered at one of its two URLs, with the ETag it came with. */
export interface KeptDiscoveryPart {
  etag: string;
  groups: ApiGroupInfo[];
  resources: ApiResourceInfo[];
}

/** Aggregated discovery's two answers: `/api` (the core group) and `/apis` (every other). */
export interface KeptDiscovery {
  core: KeptDiscoveryPart;
  named: KeptDiscoveryPart;
}

/** The disk cache of one API server. */
export interface ApiCache {
  discovery(): KeptDiscovery | undefined;
  saveDiscovery(discovery: KeptDiscovery): void;
  /** The document kept for an index key (`apis/apps/v1`) if it is the one at `url` (its hash). */
  document(pathKey: string, url: string): KeptDocument | undefined;
  /**
   * `document`: the compact form of the document at `url` (openapi.ts compactOpenApiDocument), what
   * every process judges with: derived from the content the URL's hash names, so just as immutable.
   * `hashChecked`: the text as served was found to hash to the URL's hash (share.ts namesContent).
   */
  saveDocument(pathKey: string, url: string, document: JsonObject, hashChecked?: boolean): void;
}

/** A document read back, and whether its text was checked against its URL's hash when it was fetched. */
export interface KeptDocument {
  document: JsonObject;
  hashChecked: boolean;
}

/** What makes two kubeconfig clusters the same server: where requests go, and whom they trust there. */
export interface ServerIdentity {
  server: string;
  caData?: string | undefined;
  tlsServerName?: string | undefined;
  skipTLSVerify?: boolean | undefined;
  proxyUrl?: string | undefined;
}

/**
 * The key of a server's cache: a hash of its URL (without the userinfo a URL may carry), the
 * certificate authority it is trusted by, the TLS server name it is asked for, and the proxy in
 * between. Two contexts (two users) of one cluster share it.
 */
export function serverKey(identity: ServerIdentity): string {
  const { server, caData, tlsServerName, skipTLSVerify, proxyUrl } = identity;
  return createHash('sha256')
    .update(
      JSON.stringify([
        withoutUserinfo(server).replace(/\/+$/, ''),
        caData ? createHash('sha256').update(caData.trim()).digest('hex') : '',
        tlsServerName ?? '',
        skipTLSVerify === true,
        proxyUrl ? withoutUserinfo(proxyUrl) : '',
      ]),
    )
    .digest('hex');
}

/**
 * Bumped when what a file holds changes shape: a file of another format is no cache. 2: a document
 * is kept in its compact form (openapi.ts), which every process reads: api/v1 is 110 KB, not 1.45 MB.
 */
const FORMAT = 2;
/** Far above a real answer (a large cluster's /apis is a few MB, its largest document tens of MB). */
const MAX_DISCOVERY_BYTES = 32 << 20;
const MAX_DOCUMENT_BYTES = 64 << 20;
/** Servers kept: the least recently used beyond these are removed when a new one is added. */
export const MAX_SERVERS = 8;
/** A server's documents beyond this size are removed, the least recently written first. */
const MAX_SERVER_BYTES = 256 << 20;

/** The cache of the server `identity`, or undefined when it is turned off or no safe place exists. */
export function openApiCache(env: NodeJS.ProcessEnv, identity: ServerIdentity): ApiCache | undefined {
  if (env.KCH_API_CACHE === 'off') return undefined;
  const root = userCacheDirectory(env, 'api-cache');
  if (!root) return undefined;
  const key = serverKey(identity);
  const name = key.slice(0, 32);
  const isNew = !fs.existsSync(path.join(root, name));
  const dir = ownDirectory(root, [name]);
  if (!dir) return undefined;
  try {
    // Used now: the pruning below removes the servers used least recently.
    const now = new Date();
    fs.utimesSync(dir, now, now);
  } catch {
    // only its place in the pruning order is lost
  }
  if (isNew) pruneServers(root, name);
  return new DiskApiCache(dir, key);
}

class DiskApiCache implements ApiCache {
  constructor(
    private readonly dir: string,
    private readonly key: string,
  ) {}

  discovery(): KeptDiscovery | undefined {
    const file = this.read('discovery.json', MAX_DISCOVERY_BYTES);
    if (!file) return undefined;
    const core = discoveryPart(file.core);
    const named = discoveryPart(file.named);
    return core && named ? { core, named } : undefined;
  }

  saveDiscovery(discovery: KeptDiscovery): void {
    writeOwnFile(
      path.join(this.dir, 'discovery.json'),
      JSON.stringify({ format: FORMAT, server: this.key, core: discovery.core, named: discovery.named }),
    );
  }

  document(pathKey: string, url: string): KeptDocument | undefined {
    // A line that says what the file is, then the document: the line is read first, and the
    // document parsed only if its bytes are the ones written (their digest), for this server and URL.
    const data = readOwnFile(path.join(this.dir, documentFile(pathKey)), MAX_DOCUMENT_BYTES);
    const newline = data ? data.indexOf(0x0a) : -1;
    if (!data || newline < 0) return undefined;
    const head = parseJson(data.subarray(0, newline).toString('utf8'));
    const body = data.subarray(newline + 1);
    if (!isJsonObject(head) || head.format !== FORMAT || head.server !== this.key || head.url !== url) return undefined;
    if (head.sha256 !== createHash('sha256').update(body).digest('hex')) return undefined;
    const document = parseJson(body.toString('utf8'));
    return isJsonObject(document) ? { document, hashChecked: head.hashChecked === true } : undefined;
  }

  saveDocument(pathKey: string, url: string, document: JsonObject, hashChecked = false): void {
    const body = JSON.stringify(document);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const head = JSON.stringify({
      format: FORMAT,
      server: this.key,
      url,
      sha256,
      ...(hashChecked ? { hashChecked } : {}),
    });
    if (writeOwnFile(path.join(this.dir, documentFile(pathKey)), `${head}\n${body}`)) this.bound();
  }

  /** A file of this cache, if it is one: its format, and written for this server. */
  private read(name: string, maxBytes: number): JsonObject | undefined {
    const data = readOwnFile(path.join(this.dir, name), maxBytes);
    if (!data) return undefined;
    const file = parseJson(data.toString('utf8'));
    return isJsonObject(file) && file.format === FORMAT && file.server === this.key ? file : undefined;
  }

  /** Keeps the server's documents under MAX_SERVER_BYTES (a server with very many large CRDs). */
  private bound(): void {
    try {
      const files = fs
        .readdirSync(this.dir)
        .filter((f) => f.startsWith('openapi-'))
        .map((f) => ({ file: path.join(this.dir, f), stat: fs.lstatSync(path.join(this.dir, f)) }))
        .sort((a, b) => b.stat.mtimeMs - a.stat.mtimeMs);
      let total = 0;
      for (const { file, stat } of files) {
        total += stat.size;
        if (total > MAX_SERVER_BYTES) fs.rmSync(file, { force: true });
      }
    } catch {
      // another process is at it too: the next write bounds it again
    }
  }
}

/** One file per group-version: a new hash replaces the old document. */
function documentFile(pathKey: string): string {
  return `openapi-${createHash('sha256').update(pathKey).digest('hex').slice(0, 32)}.json`;
}

/** Removes the directories of the servers used least recently beyond MAX_SERVERS (`keep` stays). */
function pruneServers(root: string, keep: string): void {
  try {
    const servers = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9a-f]{32}$/.test(e.name) && e.name !== keep)
      .map((e) => ({ dir: path.join(root, e.name), at: fs.lstatSync(path.join(root, e.name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const { dir } of servers.slice(MAX_SERVERS - 1)) fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // another process may be pruning too
  }
}

function discoveryPart(value: JsonValue | undefined): KeptDiscoveryPart | undefined {
  if (!isJsonObject(value) || typeof value.etag !== 'string' || !value.etag) return undefined;
  if (!Array.isArray(value.groups) || !Array.isArray(value.resources)) return undefined;
  const groups: ApiGroupInfo[] = [];
  for (const g of value.groups) {
    if (!isJsonObject(g) || typeof g.name !== 'string' || !isStrings(g.versions)) return undefined;
    groups.push({ name: g.name, versions: g.versions });
  }
  const resources: ApiResourceInfo[] = [];
  for (const r of value.resources) {
    const resource = resourceInfo(r);
    if (!resource) return undefined;
    resources.push(resource);
  }
  return { etag: value.etag, groups, resources };
}

function resourceInfo(r: JsonValue): ApiResourceInfo | undefined {
  if (!isJsonObject(r)) return undefined;
  const { group, version, apiVersion, kind, resource, singular, namespaced, verbs, subresources, shortNames } = r;
  if (
    typeof group !== 'string' ||
    typeof version !== 'string' ||
    typeof apiVersion !== 'string' ||
    typeof kind !== 'string' ||
    typeof resource !== 'string' ||
    (singular !== undefined && typeof singular !== 'string') ||
    typeof namespaced !== 'boolean' ||
    !isStrings(verbs) ||
    !isStrings(subresources) ||
    !isStrings(shortNames)
  )
    return undefined;
  return {
    group,
    version,
    apiVersion,
    kind,
    resource,
    ...(singular !== undefined ? { singular } : {}),
    namespaced,
    verbs,
    subresources,
    shortNames,
  };
}

function isStrings(value: JsonValue | undefined): value is string[] {
  return Array.isArray(value) && value.every((s) => typeof s === 'string');
}

// Discovery: which kinds the cluster serves, under which resource name, namespaced or not.
// Aggregated discovery (one request each for /api and /apis, apidiscovery.k8s.io/v2, GA in 1.30)
// with a fallback to the classic per-group-version lists for older servers and proxies.
import { SharedLoad } from './shared-load';
import type { KindFacts } from '../core/findings';
import { isJsonObject, type JsonValue } from '../core/json';
import type { ApiCache, KeptDiscovery, KeptDiscoveryPart } from './api-cache';
import type { ClusterTransport } from './http';
import { nameProblems } from './names';
import { classifyFailure, parseJson, type HttpOutcome } from './problems';
import type { ApiGroupInfo, ApiResourceInfo, ClusterProblem, ClusterResult, DiscoveryIndex } from './types';

// Servers that do not know the aggregated format ignore the first two and answer the classic list.
const AGGREGATED_ACCEPT = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList;q=0.9',
  'application/json;q=0.8',
].join(',');

/** Resources and groups from an APIGroupDiscoveryList body, or undefined when it is not one. */
export function parseAggregatedDiscovery(
  body: JsonValue | undefined,
): { groups: ApiGroupInfo[]; resources: ApiResourceInfo[] } | undefined {
  if (!isJsonObject(body) || body.kind !== 'APIGroupDiscoveryList' || !Array.isArray(body.items)) return undefined;
  const groups: ApiGroupInfo[] = [];
  const resources: ApiResourceInfo[] = [];
  for (const item of body.items) {
    if (!isJsonObject(item)) continue;
    const group = isJsonObject(item.metadata) && typeof item.metadata.name === 'string' ? item.metadata.name : '';
    const versions: string[] = [];
    // Versions come in order of preference (apidiscovery/v2 types.go: "sorted by preference").
    for (const entry of asArray(item.versions)) {
      if (!isJsonObject(entry) || typeof entry.version !== 'string') continue;
      versions.push(entry.version);
      for (const r of asArray(entry.resources)) {
        if (!isJsonObject(r) || typeof r.resource !== 'string') continue;
        const kind = isJsonObject(r.responseKind) && typeof r.responseKind.kind === 'string' ? r.responseKind.kind : '';
        if (!kind) continue;
        resources.push({
          group,
          version: entry.version,
          apiVersion: group ? `${group}/${entry.version}` : entry.version,
          kind,
          resource: r.resource,
          ...(typeof r.singularResource === 'string' && r.singularResource ? { singular: r.singularResource } : {}),
          namespaced: r.scope === 'Namespaced',
          verbs: strings(r.verbs),
          subresources: asArray(r.subresources).flatMap((s) =>
            isJsonObject(s) && typeof s.subresource === 'string' ? [s.subresource] : [],
          ),
          shortNames: strings(r.shortNames),
        });
      }
    }
    groups.push({ name: group, versions });
  }
  return { groups, resources };
}

/** Resources from a classic APIResourceList (GET /api/v1, /apis/apps/v1). */
export function parseResourceList(body: JsonValue | undefined, groupVersion: string): ApiResourceInfo[] {
  if (!isJsonObject(body) || !Array.isArray(body.resources)) return [];
  const [group, version] = splitApiVersion(groupVersion);
  const entries = body.resources.filter(isJsonObject);
  const subresources = new Map<string, string[]>();
  for (const r of entries) {
    if (typeof r.name !== 'string' || !r.name.includes('/')) continue;
    const [parent, sub] = r.name.split('/', 2) as [string, string];
    subresources.set(parent, [...(subresources.get(parent) ?? []), sub]);
  }
  return entries.flatMap((r): ApiResourceInfo[] => {
    if (typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') return [];
    return [
      {
        group,
        version,
        apiVersion: groupVersion,
        kind: r.kind,
        resource: r.name,
        ...(typeof r.singularName === 'string' && r.singularName ? { singular: r.singularName } : {}),
        namespaced: r.namespaced === true,
        verbs: strings(r.verbs),
        subresources: subresources.get(r.name) ?? [],
        shortNames: strings(r.shortNames),
      },
    ];
  });
}

/** `apps/v1` → ['apps', 'v1'], `v1` → ['', 'v1']. */
export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/**
 * The resource serving apiVersion+kind, or a kindNotServed problem naming the versions that are
 * served, with what discovery says around the kind (the analysis tells a removed version from a
 * CRD that is not installed by it).
 */
export function findResource(index: DiscoveryIndex, apiVersion: string, kind: string): ClusterResult<ApiResourceInfo> {
  const found = byKind(index).get(`${apiVersion}\u0000${kind}`);
  if (found) return { ok: true, value: found };
  const [group] = splitApiVersion(apiVersion);
  const elsewhere = [
    ...new Set(index.resources.filter((r) => r.kind === kind && r.group === group).map((r) => r.apiVersion)),
  ];
  const hint = elsewhere.length ? ` (served: ${elsewhere.join(', ')})` : '';
  // A group is served when discovery lists it or any resource of it (an index saved by an older snapshot may lack groups).
  const groupVersions = (index.groups ?? []).find((g) => g.name === group)?.versions ?? [
    ...new Set(index.resources.filter((r) => r.group === group).map((r) => r.version)),
  ];
  const otherGroups = [
    ...new Set(index.resources.filter((r) => r.kind === kind && r.group !== group).map((r) => r.apiVersion)),
  ];
  return {
    ok: false,
    problem: {
      kind: 'kindNotServed',
      message: `The cluster does not serve ${kind} in ${apiVersion}${hint}.`,
      notServed: { groupVersions: [...groupVersions], kindServedIn: elsewhere, kindServedElsewhere: otherGroups },
    },
  };
}

/**
 * The index's resources by apiVersion and kind (the first of each, as a search in order finds):
 * every object of every open file looks its kind up, several times per judgement.
 */
const kindIndexes = new WeakMap<DiscoveryIndex, Map<string, ApiResourceInfo>>();
function byKind(index: DiscoveryIndex): Map<string, ApiResourceInfo> {
  let map = kindIndexes.get(index);
  if (!map) {
    map = new Map();
    for (const r of index.resources) {
      const key = `${r.apiVersion}\u0000${r.kind}`;
      if (!map.has(key)) map.set(key, r);
    }
    kindIndexes.set(index, map);
  }
  return map;
}

/** The facts of a kind the cluster does not serve, from discovery's problem: one shape for the editor, the check and snapshots. */
export function notServedKindFacts(problem: ClusterProblem): Extract<KindFacts, { state: 'notServed' }> {
  return {
    state: 'notServed',
    message: problem.message,
    ...(problem.notServed ? { discovery: problem.notServed } : {}),
  };
}

/** Fetches discovery once per connection (i.e. per context) and again on demand. */
export class Discovery {
  private readonly index = new SharedLoad<DiscoveryIndex>(() => this.fetch());
  /** The answers this process has with their ETags, once it has them (only with a disk cache). */
  private held: KeptDiscovery | undefined;

  constructor(
    private readonly transport: ClusterTransport,
    /** A kind missing from the cache triggers a fresh discovery at most this often (new CRDs). */
    private readonly refreshForMissingKindMs = 10_000,
    /** What an earlier process learned of this server (api-cache.ts), revalidated before use. */
    private readonly disk?: ApiCache,
  ) {}

  cached(): DiscoveryIndex | undefined {
    return this.index.cached();
  }

  /** The cached index, or a fetch (concurrent callers share one). `force` refetches. */
  load(force = false): Promise<ClusterResult<DiscoveryIndex>> {
    return this.index.load(force);
  }

  /** Synchronous lookup in what is already known. */
  resolveCached(apiVersion: string, kind: string): ApiResourceInfo | undefined {
    const index = this.index.cached();
    if (!index) return undefined;
    const found = findResource(index, apiVersion, kind);
    return found.ok ? found.value : undefined;
  }

  async resolve(apiVersion: string, kind: string): Promise<ClusterResult<ApiResourceInfo>> {
    const loaded = await this.load();
    if (!loaded.ok) return loaded;
    const found = findResource(loaded.value, apiVersion, kind);
    if (found.ok || Date.now() - loaded.value.fetchedAt < this.refreshForMissingKindMs) return found;
    // A CRD may have been installed since: look again before saying "not served".
    const fresh = await this.load(true);
    return fresh.ok ? findResource(fresh.value, apiVersion, kind) : fresh;
  }

  /**
   * Aggregated discovery, from the disk cache when the server answers 304 to its ETags. A process
   * waits for that answer before it uses what is kept, rather than starting on it and correcting
   * itself. Waiting costs the object's read one round trip, a 304 on a connection that is open by
   * then (the schema's side costs nothing: the OpenAPI index, which has no validator, is read
   * beside it anyway). Starting at once would save that round trip, but every read made on kept
   * discovery would have to be checked against the answer and made again when it changed, and an
   * answer could be given on another cluster's kinds meanwhile: two clusters can share a URL, a CA
   * and a TLS name behind a gateway that routes by credential, and the cache is keyed by server,
   * not by user. Measured on a one-object check, the 304s answered as the index did.
   */
  private async fetch(useDisk = true): Promise<ClusterResult<DiscoveryIndex>> {
    // The disk is read once; a later fetch (a refresh, a kind missing) names what this process holds.
    const kept = useDisk && this.disk ? (this.held ?? this.disk.discovery()) : undefined;
    const [core, named] = await Promise.all([
      this.getAggregated('/api', kept?.core),
      this.getAggregated('/apis', kept?.named),
    ]);
    if (!core.ok) return core;
    if (!named.ok) return named;
    if (core.value.part && named.value.part) {
      const [c, n] = [core.value.part, named.value.part];
      if (this.disk && c.etag && n.etag) {
        this.held = { core: c, named: n };
        if (c !== kept?.core || n !== kept?.named) this.disk.saveDiscovery(this.held);
      }
      return {
        ok: true,
        value: {
          groups: [...c.groups, ...n.groups],
          resources: [...c.resources, ...n.resources],
          source: 'aggregated',
          fetchedAt: Date.now(),
        },
      };
    }
    // A server that answered one URL from what is kept and the other in the classic format (it
    // changed in between): ask both again, plainly.
    if (core.value.body === undefined || named.value.body === undefined)
      return useDisk ? this.fetch(false) : { ok: false, problem: otherProblem('discovery answered 304 to nothing') };
    return this.fetchClassic(core.value.body, named.value.body);
  }

  /** One aggregated discovery URL: its answer (`part` when aggregated; `body` for the classic fallback). */
  private async getAggregated(
    path: string,
    kept: KeptDiscoveryPart | undefined,
  ): Promise<ClusterResult<{ part?: KeptDiscoveryPart; body?: JsonValue }>> {
    const outcome = await this.transport.send({
      method: 'GET',
      path,
      accept: AGGREGATED_ACCEPT,
      ...(kept ? { ifNoneMatch: kept.etag } : {}),
      purpose: { verb: 'get' },
    });
    if (outcome.kind === 'response' && outcome.status === 304 && kept) return { ok: true, value: { part: kept } };
    if (outcome.kind === 'response' && outcome.status === 200) {
      const body = parseJson(outcome.body);
      if (body === undefined) return { ok: false, problem: otherProblem(`GET ${path} did not answer JSON`) };
      const aggregated = parseAggregatedDiscovery(body);
      return {
        ok: true,
        value: { body, ...(aggregated ? { part: { etag: outcome.etag ?? '', ...aggregated } } : {}) },
      };
    }
    return { ok: false, problem: classifyFailure(outcome, { method: 'GET', path, verb: 'get' }) };
  }

  private async fetchClassic(core: JsonValue, named: JsonValue): Promise<ClusterResult<DiscoveryIndex>> {
    const groups: ApiGroupInfo[] = [];
    if (isJsonObject(core)) groups.push({ name: '', versions: strings(core.versions) });
    if (isJsonObject(named)) {
      for (const g of asArray(named.groups)) {
        if (!isJsonObject(g) || typeof g.name !== 'string') continue;
        const preferred =
          isJsonObject(g.preferredVersion) && typeof g.preferredVersion.version === 'string'
            ? g.preferredVersion.version
            : undefined;
        const versions = asArray(g.versions).flatMap((v) =>
          isJsonObject(v) && typeof v.version === 'string' ? [v.version] : [],
        );
        groups.push({
          name: g.name,
          versions: preferred ? [preferred, ...versions.filter((v) => v !== preferred)] : versions,
        });
      }
    }
    // Group and version names become path segments: only names the API server itself accepts do.
    const groupVersions = groups.flatMap((g) =>
      g.versions
        .filter(
          (v) =>
            nameProblems(v, 'dns1123Label').length === 0 &&
            (g.name === '' || nameProblems(g.name, 'dns1123Subdomain').length === 0),
        )
        .map((v) => (g.name ? `${g.name}/${v}` : v)),
    );
    const lists = await Promise.all(
      groupVersions.map(async (gv) => ({
        gv,
        result: await this.get(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`, 'application/json'),
      })),
    );
    const resources: ApiResourceInfo[] = [];
    for (const { gv, result } of lists) {
      // One broken aggregated API (a metrics server that is down) must not hide the rest.
      if (result.ok) resources.push(...parseResourceList(result.value, gv));
      else if (result.problem.kind === 'unreachable' || result.problem.kind === 'unauthenticated') return result;
    }
    return { ok: true, value: { groups, resources, source: 'classic', fetchedAt: Date.now() } };
  }

  private async get(path: string, accept: string): Promise<ClusterResult<JsonValue>> {
    const outcome: HttpOutcome = await this.transport.send({ method: 'GET', path, accept, purpose: { verb: 'get' } });
    if (outcome.kind === 'response' && outcome.status === 200) {
      const body = parseJson(outcome.body);
      if (body !== undefined) return { ok: true, value: body };
      return { ok: false, problem: otherProblem(`GET ${path} did not answer JSON`) };
    }
    return { ok: false, problem: classifyFailure(outcome, { method: 'GET', path, verb: 'get' }) };
  }
}

function otherProblem(message: string): ClusterProblem {
  return { kind: 'other', message };
}

function asArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

function strings(value: JsonValue | undefined): string[] {
  return asArray(value).filter((s): s is string => typeof s === 'string');
}

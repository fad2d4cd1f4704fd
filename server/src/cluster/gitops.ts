// The policy of the GitOps object that applies a live object (core/gitops/appliers.ts says which one
// its marks name): the Argo CD Application, Flux Kustomization or Flux HelmRelease, read by name.
//
// Reads only, and only the object named: one GET per name (the path built by names.ts after the API
// server's own name check), never a LIST of a namespace's Applications or Kustomizations. Argo CD's
// tracking id leaves out the Application's namespace when it is the controller's own
// (argo-cd util/argo/argo.go AppInstanceName); the controller's namespace is written nowhere a
// reader can see but in each Application's `status.controllerNamespace`, so a bare name is looked up
// with one LIST across namespaces that selects that name alone (`fieldSelector=metadata.name=`),
// and counts only where the Application says it lives in the controller's namespace: anything else
// is unknown, never a guess. A kind the cluster does not serve (the controller's CRD is absent) or a
// read the user may not make (403) is unknown too, with the reason.
//
// Which controller applies a file of a repository (`--applier auto`, the editor's applier setting)
// is the one read that lists: every Argo CD Application and Flux Kustomization the user may list,
// one LIST of each across namespaces (and of Flux's GitRepositories, for their URLs), bounded,
// once per connection and again after a refresh; a kind not served is no source, a refused list is
// said (`unread`).
//
// Answers are cached per name for the connection: typing sends nothing. A policy read is read again
// when peeked after `POLICY_FRESH_MS` (someone may turn self-heal on), a failed read (not a 403 or
// a 404) after a backoff, and everything on refresh.
import type { ApplierSighting, ApplierPolicy, PolicyFacts } from '../core/gitops/model';
import { applicationPolicy, helmReleasePolicy, kustomizationPolicy, policyKinds } from '../core/gitops/policy';
import { applicationSources, kustomizationSource, type RepositorySource } from '../core/gitops/repository';
import { isJsonObject, type JsonObject } from '../core/json';
import type { Discovery } from './discovery';
import type { ClusterTransport } from './http';
import { allNamespacesPath, nameSelector, objectPath } from './names';
import { classifyFailure } from './problems';
import { redactText } from './redact';
import type { ApiResourceInfo, ClusterProblem, ClusterResult, Disposable } from './types';
import { tell } from './listeners';

/** The kinds of applier whose object holds a policy (a Helm release has none to read). */
type PolicyKind = keyof typeof policyKinds;

/** The versions each kind is asked at, newest first (an older Flux serves only its beta versions). */
const versionsOf: Record<PolicyKind, readonly string[]> = {
  argocd: ['argoproj.io/v1alpha1'],
  'flux-kustomize': ['kustomize.toolkit.fluxcd.io/v1', 'kustomize.toolkit.fluxcd.io/v1beta2'],
  'flux-helm': ['helm.toolkit.fluxcd.io/v2', 'helm.toolkit.fluxcd.io/v2beta2', 'helm.toolkit.fluxcd.io/v2beta1'],
};

/** How long a policy read is used before a peek reads it again. */
export const POLICY_FRESH_MS = 60_000;

export interface GitopsPolicyOptions {
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** What the facts need of a connection's policy reads. */
export interface PolicyLookup {
  /** Synchronous: what is known now (a read not answered yet is `unknown`, "not read yet"); starts the read. */
  peek(sighting: ApplierSighting): PolicyFacts | undefined;
  /** Waits for the read. Undefined for a sighting that has no policy to read (a Helm release). */
  get(sighting: ApplierSighting): Promise<PolicyFacts | undefined>;
  /** What a peek answers changed. */
  onChange(listener: () => void): Disposable;
  /**
   * Every Argo CD Application and Flux Kustomization the user may list, across namespaces, as the
   * repository folders they apply (with the Flux GitRepositories' URLs): which controller applies
   * a file of a repository (`--applier auto`). Read once, again after a refresh.
   */
  repositorySources(): Promise<RepositorySources>;
  /** Synchronous: the sources when read (undefined until then; the read is started and its arrival announced). */
  peekRepositorySources(): RepositorySources | undefined;
}

/** The controllers' sources, their objects' policies, and what could not be read (why). */
export interface RepositorySources {
  readonly sources: readonly RepositorySource[];
  readonly policies: readonly ApplierPolicy[];
  readonly unread: readonly string[];
}

/** At most this many objects of a kind are read for the sources (one LIST each). */
const MAX_SOURCE_OBJECTS = 2000;

interface Entry {
  facts: PolicyFacts | undefined;
  reading: Promise<void> | undefined;
  readAt: number;
  attempts: number;
  retryAt: number;
}

export class GitopsPolicies implements PolicyLookup {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;
  private sources: Promise<RepositorySources> | undefined;
  private sourcesRead: RepositorySources | undefined;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly discovery: Discovery,
    private readonly options: GitopsPolicyOptions,
  ) {}

  peek(sighting: ApplierSighting): PolicyFacts | undefined {
    if (!hasPolicy(sighting)) return undefined;
    const named = unnamed(sighting);
    if (named) return named;
    const entry = this.entryFor(sighting);
    if (due(entry) && !entry.reading) void this.read(sighting, entry);
    return entry.facts ?? { state: 'unknown', sighting, reason: 'not read yet' };
  }

  async get(sighting: ApplierSighting): Promise<PolicyFacts | undefined> {
    if (!hasPolicy(sighting)) return undefined;
    const named = unnamed(sighting);
    if (named) return named;
    const entry = this.entryFor(sighting);
    if (entry.reading) await entry.reading;
    else if (due(entry)) await this.read(sighting, entry);
    return entry.facts ?? { state: 'unknown', sighting, reason: 'not read' };
  }

  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  repositorySources(): Promise<RepositorySources> {
    if (!this.sources) {
      const reading = this.readSources().then((read) => {
        if (this.sources === reading && !this.disposed) {
          this.sourcesRead = read;
          this.announce();
        }
        return read;
      });
      this.sources = reading;
    }
    return this.sources;
  }

  peekRepositorySources(): RepositorySources | undefined {
    if (!this.sources) void this.repositorySources();
    return this.sourcesRead;
  }

  private async readSources(): Promise<RepositorySources> {
    const unread: string[] = [];
    const apps = await this.listAll('argocd', ['argoproj.io/v1alpha1'], 'Application', unread);
    const kustomizations = await this.listAll('flux-kustomize', versionsOf['flux-kustomize'], 'Kustomization', unread);
    const repositories =
      kustomizations.length > 0
        ? await this.listAll(
            'flux-source',
            ['source.toolkit.fluxcd.io/v1', 'source.toolkit.fluxcd.io/v1beta2'],
            'GitRepository',
            unread,
          )
        : [];
    const sources: RepositorySource[] = [
      ...apps.flatMap((a) => applicationSources(a)),
      ...kustomizations.flatMap((k) => {
        const source = kustomizationSource(k, repositories);
        return source ? [source] : [];
      }),
    ];
    const policies: ApplierPolicy[] = [
      ...apps.flatMap((a) => applicationPolicy(a) ?? []),
      ...kustomizations.flatMap((k) => kustomizationPolicy(k) ?? []),
    ];
    return { sources, policies, unread };
  }

  /** One LIST of a kind across namespaces, at the first version served; [] with the reason where it cannot be read. */
  private async listAll(
    what: string,
    apiVersions: readonly string[],
    kind: string,
    unread: string[],
  ): Promise<JsonObject[]> {
    let resource: ApiResourceInfo | undefined;
    for (const apiVersion of apiVersions) {
      const found = await this.discovery.resolve(apiVersion, kind);
      if (found.ok) {
        resource = found.value;
        break;
      }
      if (found.problem.kind !== 'kindNotServed') {
        unread.push(`${kind}s: ${said(found.problem)}`);
        return [];
      }
    }
    // The controller is not installed here: nothing of it applies the file.
    if (!resource) return [];
    const path = allNamespacesPath(resource);
    if (!path.ok) return [];
    const purpose = { verb: 'list', resource: qualified(resource), optional: true };
    const outcome = await this.transport.send({
      method: 'GET',
      path: path.value,
      query: { limit: String(MAX_SOURCE_OBJECTS) },
      purpose,
    });
    if (outcome.kind === 'response' && outcome.status === 200) {
      const answer = parseObject(outcome.body);
      return answer && Array.isArray(answer.items)
        ? answer.items
            .filter(isJsonObject)
            .slice(0, MAX_SOURCE_OBJECTS)
            .map((item) => ({ apiVersion: resource.apiVersion, kind, ...item }))
        : [];
    }
    const problem = classifyFailure(outcome, { method: 'GET', path: path.value, ...purpose });
    unread.push(`${kind}s (${what}) may not be listed across namespaces: ${said(problem)}`);
    return [];
  }

  /** The user asked to refresh: every policy is read again at its next peek. */
  refresh(): void {
    // Read again at the next peek; what was read stands until the new answer comes.
    this.sources = undefined;
    for (const entry of this.entries.values()) {
      entry.readAt = 0;
      entry.attempts = 0;
      entry.retryAt = 1;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.entries.clear();
    this.listeners.clear();
  }

  private entryFor(sighting: ApplierSighting): Entry {
    const key = `${sighting.kind}\u0000${sighting.namespace ?? ''}\u0000${sighting.name}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { facts: undefined, reading: undefined, readAt: 0, attempts: 0, retryAt: 0 };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private read(sighting: ApplierSighting & { kind: PolicyKind }, entry: Entry): Promise<void> {
    if (entry.reading) return entry.reading;
    const reading = this.readOnce(sighting).then(({ facts, retry }) => {
      entry.reading = undefined;
      if (this.disposed) return;
      const before = JSON.stringify(entry.facts);
      entry.facts = facts;
      entry.readAt = Date.now();
      if (retry) {
        entry.retryAt =
          Date.now() + Math.min(this.options.initialBackoffMs * 2 ** entry.attempts, this.options.maxBackoffMs);
        entry.attempts++;
      } else {
        entry.retryAt = 0;
        entry.attempts = 0;
      }
      if (JSON.stringify(facts) !== before) this.announce();
    });
    entry.reading = reading;
    return reading;
  }

  private async readOnce(
    sighting: ApplierSighting & { kind: PolicyKind },
  ): Promise<{ facts: PolicyFacts; retry: boolean }> {
    const unknown = (reason: string, retry = false) => ({
      facts: { state: 'unknown' as const, sighting, reason },
      retry,
    });
    const label = policyKinds[sighting.kind].label;
    const resource = await this.served(sighting.kind);
    if (!resource.ok) {
      if (resource.problem.kind === 'kindNotServed')
        return unknown(
          `the cluster does not serve ${label}s (${policyKinds[sighting.kind].apiVersion}): the controller's CustomResourceDefinition is not installed here`,
        );
      return unknown(said(resource.problem), true);
    }
    if (sighting.namespace === undefined) return this.controllerNamespaceApplication(sighting, resource.value);
    const path = objectPath(resource.value, sighting.namespace, sighting.name);
    if (!path.ok) return unknown(said(path.problem));
    const purpose = { verb: 'get', resource: qualified(resource.value), namespace: sighting.namespace, optional: true };
    const outcome = await this.transport.send({ method: 'GET', path: path.value, purpose });
    const shown = `${label} ${sighting.namespace}/${sighting.name}`;
    if (outcome.kind === 'response' && outcome.status === 200) {
      const policy = parsePolicy(sighting.kind, parseObject(outcome.body));
      return policy ? { facts: { state: 'read', policy }, retry: false } : unknown(`${shown} could not be read as one`);
    }
    if (outcome.kind === 'response' && outcome.status === 404)
      return unknown(`${shown} does not exist (it was deleted, or the mark was copied from another object)`);
    const problem = classifyFailure(outcome, { method: 'GET', path: path.value, ...purpose });
    if (problem.kind === 'forbidden') return unknown(`${shown} may not be read: ${said(problem)}`);
    return unknown(said(problem), true);
  }

  /**
   * An Application named without its namespace: the one of that name that lives in the namespace
   * of the controller that reconciles it (its `status.controllerNamespace`), found by one LIST
   * across namespaces selecting the name alone.
   */
  private async controllerNamespaceApplication(
    sighting: ApplierSighting & { kind: PolicyKind },
    resource: ApiResourceInfo,
  ): Promise<{ facts: PolicyFacts; retry: boolean }> {
    const unknown = (reason: string, retry = false) => ({
      facts: { state: 'unknown' as const, sighting, reason },
      retry,
    });
    const why = `the tracking id names Application ${sighting.name} without its namespace (Argo CD leaves out the controller's own)`;
    const path = allNamespacesPath(resource);
    const selector = nameSelector(resource, sighting.name);
    if (!path.ok) return unknown(said(path.problem));
    if (!selector.ok) return unknown(said(selector.problem));
    const purpose = { verb: 'list', resource: qualified(resource), optional: true };
    const outcome = await this.transport.send({
      method: 'GET',
      path: path.value,
      query: { fieldSelector: selector.value },
      purpose,
    });
    if (!(outcome.kind === 'response' && outcome.status === 200)) {
      const problem =
        outcome.kind === 'response' && outcome.status === 404
          ? undefined
          : classifyFailure(outcome, { method: 'GET', path: path.value, ...purpose });
      if (!problem) return unknown(`${why}, and the cluster answered no Applications`);
      if (problem.kind === 'forbidden')
        return unknown(`${why}, and Applications may not be listed across namespaces to find it: ${said(problem)}`);
      return unknown(said(problem), true);
    }
    const answer = parseObject(outcome.body);
    const items = answer && Array.isArray(answer.items) ? answer.items.filter(isJsonObject) : [];
    const inControllerNamespace = items.filter((item) => {
      const metadata = isJsonObject(item.metadata) ? item.metadata : {};
      const status = isJsonObject(item.status) ? item.status : {};
      return (
        metadata.name === sighting.name &&
        typeof metadata.namespace === 'string' &&
        status.controllerNamespace === metadata.namespace
      );
    });
    if (inControllerNamespace.length === 1) {
      const policy = applicationPolicy(inControllerNamespace[0]);
      if (policy) return { facts: { state: 'read', policy }, retry: false };
    }
    if (inControllerNamespace.length > 1)
      return unknown(`${why}, and ${inControllerNamespace.length} controllers' namespaces hold one of that name`);
    if (items.length === 0) return unknown(`${why}, and no Application of that name exists`);
    const where = items
      .map((item) => (isJsonObject(item.metadata) ? item.metadata.namespace : undefined))
      .filter((n): n is string => typeof n === 'string');
    return unknown(
      `${why}, and no Application of that name says it lives in its controller's namespace (found in ${where.join(', ')}, without status.controllerNamespace)`,
    );
  }

  /** The kind at the first version the cluster serves. */
  private async served(kind: PolicyKind): Promise<ClusterResult<ApiResourceInfo>> {
    let first: ClusterResult<ApiResourceInfo> | undefined;
    for (const apiVersion of versionsOf[kind]) {
      const found = await this.discovery.resolve(apiVersion, policyKinds[kind].kind);
      if (found.ok || found.problem.kind !== 'kindNotServed') return found;
      first ??= found;
    }
    return first!;
  }

  private announce(): void {
    tell(this.listeners, undefined);
  }
}

/** Whether an entry is to be read (again): never read, a policy read too long ago, a failure whose backoff has passed. */
function due(entry: Entry): boolean {
  const now = Date.now();
  return (
    entry.facts === undefined ||
    (entry.facts.state === 'read' && now - entry.readAt >= POLICY_FRESH_MS) ||
    (entry.retryAt > 0 && now >= entry.retryAt)
  );
}

function hasPolicy(sighting: ApplierSighting): sighting is ApplierSighting & { kind: PolicyKind } {
  return sighting.kind !== 'helm';
}

/** A controller seen by its manager alone: no object is named, so there is nothing to read. */
function unnamed(sighting: ApplierSighting & { kind: PolicyKind }): PolicyFacts | undefined {
  if (sighting.name !== '') return undefined;
  return {
    state: 'unknown',
    sighting,
    reason: `no label or annotation on the object names the ${policyKinds[sighting.kind].label} that applies it`,
  };
}

function parsePolicy(kind: PolicyKind, object: JsonObject | undefined): ApplierPolicy | undefined {
  switch (kind) {
    case 'argocd':
      return applicationPolicy(object);
    case 'flux-kustomize':
      return kustomizationPolicy(object);
    case 'flux-helm':
      return helmReleasePolicy(object);
  }
}

function parseObject(body: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function qualified(resource: ApiResourceInfo): string {
  return resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
}

/** A problem's message as a reason: what the server said passes the redaction every message passes. */
function said(problem: ClusterProblem): string {
  return redactText(problem.message);
}

/** A lookup for a connection that cannot read anything (no kubeconfig, no context). */
export function unknownPolicies(problem: ClusterProblem): PolicyLookup {
  const facts = (sighting: ApplierSighting): PolicyFacts | undefined =>
    hasPolicy(sighting) ? { state: 'unknown', sighting, reason: said(problem) } : undefined;
  return {
    peek: facts,
    get: (sighting) => Promise.resolve(facts(sighting)),
    onChange: () => ({ dispose: () => {} }),
    repositorySources: () => Promise.resolve({ sources: [], policies: [], unread: [said(problem)] }),
    peekRepositorySources: () => ({ sources: [], policies: [], unread: [said(problem)] }),
  };
}

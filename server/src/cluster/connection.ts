// A connection to the cluster of one kubeconfig context: discovery, OpenAPI, live objects, the
// verifier and the health summary, all cached for that context. A different context is a
// different connection; the caller keeps one per context it uses.
//
// Nothing here throws to the caller: a kubeconfig that cannot be read gives a connection whose
// every answer is that configuration problem. Creating a connection reads the kubeconfig, so it is
// asynchronous: the file is read without blocking and never beyond a size limit (kubeconfig.ts).
import type { JsonObject } from '../core/json';
import type { HelmReleaseSightings } from '../core/sources/helm-release';
import { openApiCache } from './api-cache';
import { readHelmSightings } from './helm-releases';
import { Discovery } from './discovery';
import { GitopsPolicies, unknownPolicies, type PolicyLookup } from './gitops';
import { HealthTracker, needsProbe } from './health';
import { ClusterTransport } from './http';
import {
  copyLoadedKubeconfig,
  loadKubeconfig,
  selectLoadedContext,
  type LoadedKubeconfig,
  type SelectedContext,
} from './kubeconfig';
import {
  DEFAULT_LIVE_OBJECT_OPTIONS,
  LiveObjects,
  readsMetadataOnly,
  type CollectionChange,
  type LiveObjectOptions,
} from './live-objects';
import { Namespaces, unknownNamespaces, type NamespaceLookup } from './namespaces';
import { Permissions, unknownPermissions, type PermissionLookup } from './permissions';
import { AdmissionReads, type AdmissionLookup } from './admission-reads';
import { SecretFields } from './secret-fields';
import { DEFAULT_OPENAPI_RETRY, OpenApi, type OpenApiRetry } from './openapi';
import { redactProblem, rememberSecrets } from './redact';
import { createClusterShare, type ClusterShare } from './share';
import type {
  ApiResourceInfo,
  ClusterHealthReport,
  ClusterProblem,
  ClusterResult,
  ClusterSettings,
  ContextSummary,
  DiscoveryIndex,
  Disposable,
  DryRunOutcome,
  KubeconfigSummary,
  LiveObjectChange,
  LiveObjectState,
  ResolvedObjectRef,
} from './types';
import type { NamedObjectTarget } from '../core/manifest/manifest';
import { Verifier, type DryRunManifest } from './verifier';

export interface ClusterConnectionOptions {
  /** Idle time after which a request counts as unreachable. */
  requestTimeoutMs?: number;
  userAgent?: string;
  liveObjects?: Partial<LiveObjectOptions>;
  /** Backoff of the retries of a failed OpenAPI fetch. */
  openApiRetry?: Partial<OpenApiRetry>;
  /** Backoff of the probe (GET /api) sent while the cluster is unreachable, throttling or failing. */
  probe?: { initialBackoffMs?: number; maxBackoffMs?: number };
  /** Environment to read KUBECONFIG from (tests pass their own), and KCH_API_CACHE and the cache's place. */
  env?: NodeJS.ProcessEnv;
  /**
   * Keep discovery and OpenAPI documents on disk for the next process, and start from what an
   * earlier one kept (api-cache.ts): the command line and the language server do.
   */
  diskCache?: boolean;
  /**
   * What this connection shares with the process's other connections (share.ts): the OpenAPI
   * documents that name their content, and the schemas and rules built from them. Without it the
   * connection keeps its own.
   */
  share?: ClusterShare;
  /**
   * The kubeconfig as read once for the connections of several of its contexts (a fleet's), in
   * place of reading `settings.kubeconfig` again: each connection selects its context in a copy.
   */
  kubeconfig?: KubeconfigOnce;
}

/**
 * A kubeconfig read once for the connections of several contexts (`check --context a --context b`):
 * the same file of the same machine, parsed once, whichever clusters its contexts name. Nothing read
 * from a cluster is in it. Made for one command; the editor reads the file again for each connection
 * (a token file rotates, the file changes).
 */
export class KubeconfigOnce {
  private loaded?: Promise<ClusterResult<LoadedKubeconfig>>;

  constructor(
    readonly path: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The kubeconfig's contexts (for choosing them), as readKubeconfig gives them. */
  async summary(): Promise<ClusterResult<KubeconfigSummary>> {
    const loaded = await this.load();
    return loaded.ok
      ? { ok: true, value: loaded.value.summary }
      : { ok: false, problem: redactProblem(loaded.problem) };
  }

  /** A copy of the loaded kubeconfig, for one connection to select its context in. */
  async copy(): Promise<ClusterResult<LoadedKubeconfig>> {
    const loaded = await this.load();
    return loaded.ok ? { ok: true, value: copyLoadedKubeconfig(loaded.value) } : loaded;
  }

  private load(): Promise<ClusterResult<LoadedKubeconfig>> {
    return (this.loaded ??= loadKubeconfig(this.path || undefined, this.env));
  }
}

export interface DryRunRequestOptions {
  fieldManager: string;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface ClusterConnection {
  readonly settings: ClusterSettings;
  /** The kubeconfig's files and contexts; undefined when it could not be read. */
  readonly kubeconfig: KubeconfigSummary | undefined;
  /** The context in use; undefined when none could be selected (see health().problem). */
  readonly context: ContextSummary | undefined;
  /** settings.namespace, else the context's namespace, else "default". */
  readonly defaultNamespace: string;
  /** The documents, schemas and rules this connection shares with others (share.ts); none when unconfigured. */
  readonly share?: ClusterShare;

  health(): ClusterHealthReport;
  onHealthChange(listener: (health: ClusterHealthReport) => void): Disposable;
  /** One cheap read (GET /api) to learn the health now. */
  checkHealth(): Promise<ClusterHealthReport>;
  /** A schema arrived after its fetch had failed: what cachedOpenApiDocument answers changed. */
  onSchemaChange(listener: () => void): Disposable;

  discovery(): Promise<ClusterResult<DiscoveryIndex>>;
  resolveKind(apiVersion: string, kind: string): Promise<ClusterResult<ApiResourceInfo>>;
  /** Synchronous: the resource if discovery already ran and knows the kind. */
  cachedResource(apiVersion: string, kind: string): ApiResourceInfo | undefined;

  /** OpenAPI v3 document of a group-version (`apps/v1`, `v1`), plain JSON. */
  openApiDocument(apiVersion: string): Promise<ClusterResult<JsonObject>>;
  cachedOpenApiDocument(apiVersion: string): JsonObject | undefined;

  /** Synchronous cache lookup; starts the fill and the watch when needed. Never waits. */
  peekObject(ref: NamedObjectTarget): LiveObjectState;
  /** The object once the cache has an answer for it. */
  getObject(ref: NamedObjectTarget): Promise<LiveObjectState>;
  /**
   * The objects about to be read (the command line's every object): each collection reads its
   * names one by one or lists itself, decided from all of them. Resolves when they are registered.
   */
  expectObjects(refs: readonly NamedObjectTarget[]): Promise<void>;
  /** The ref with its namespace settled, when discovery knows the kind. */
  resolveRef(ref: NamedObjectTarget): ResolvedObjectRef | undefined;
  onObjectChange(listener: (change: LiveObjectChange) => void): Disposable;
  /**
   * A kind read whole with listObjects changed after its first list (a watch event, a list again):
   * what was made of it may be made again, from the same cache.
   */
  onCollectionChange(listener: (change: CollectionChange) => void): Disposable;
  /** Every object of a kind in a namespace ('' for the default one), from the same watched cache. */
  listObjects(apiVersion: string, kind: string, namespace: string): Promise<ClusterResult<JsonObject[]>>;
  /**
   * Helm's release records and the objects Helm sent of these kinds, in every namespace, as metadata
   * only (helm-releases.ts): where a chart is installed. Read when asked, never watched.
   */
  helmSightings(kinds: readonly { apiVersion: string; kind: string }[]): Promise<ClusterResult<HelmReleaseSightings>>;
  /** Whether namespaces exist (namespaces.ts), cached and re-read like the live objects. */
  readonly namespaces: NamespaceLookup;
  /** Whether the user may send a request, and who the user is (permissions.ts), cached. */
  readonly permissions: PermissionLookup;
  /** The admission webhooks and a namespace's LimitRanges and ResourceQuotas (admission-reads.ts); absent where nothing can be read. */
  readonly admission?: AdmissionLookup;
  /** The Argo CD Application, Flux Kustomization or HelmRelease that applies an object, read by name (gitops.ts). */
  readonly gitopsPolicies: PolicyLookup;

  /** Server-side dry-run apply (PATCH, dryRun=All, force=false). */
  dryRunApply(manifest: DryRunManifest, options: DryRunRequestOptions): Promise<DryRunOutcome>;
  /** Dry-run create (POST, dryRun=All): AlreadyExists as a conflict. */
  dryRunCreate(manifest: DryRunManifest, options: DryRunRequestOptions): Promise<DryRunOutcome>;
  /** Dry-run update of an existing object as client-side apply and Helm 3 send it (PATCH, dryRun=All). */
  dryRunPatch(manifest: DryRunManifest, options: DryRunRequestOptions): Promise<DryRunOutcome>;

  /** Rediscover and relist, forgetting every remembered failure: what the "refresh" command does. */
  refresh(): void;
  /** Requests sent so far (watch connections included); the benchmark checks edits add none. */
  requestsSent(): number;
  /** Whether a request (not a watch) is waiting for its answer: more facts are on their way. */
  busy(): boolean;
  /** Called when the last request waiting for an answer has it and its answer has been taken in. */
  onQuiet(listener: () => void): Disposable;
  /** Stop every watch and timer. */
  dispose(): void;
}

/** The kubeconfig's contexts without connecting anywhere (for a context picker). */
export async function readKubeconfig(
  settings: Pick<ClusterSettings, 'kubeconfig'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClusterResult<KubeconfigSummary>> {
  const loaded = await loadKubeconfig(settings.kubeconfig || undefined, env);
  // A parse error may quote the line it stopped at: a token, a client key.
  return loaded.ok ? { ok: true, value: loaded.value.summary } : { ok: false, problem: redactProblem(loaded.problem) };
}

export async function createClusterConnection(
  settings: ClusterSettings,
  options: ClusterConnectionOptions = {},
): Promise<ClusterConnection> {
  const env = options.env ?? process.env;
  const loaded = options.kubeconfig
    ? await options.kubeconfig.copy()
    : await loadKubeconfig(settings.kubeconfig || undefined, env);
  if (!loaded.ok) return unconfiguredConnection(settings, undefined, redactProblem(loaded.problem));
  const selected = await selectLoadedContext(loaded.value, settings.context || undefined);
  if (!selected.ok) return unconfiguredConnection(settings, loaded.value.summary, redactProblem(selected.problem));
  return connectedConnection(settings, selected.value, options);
}

function connectedConnection(
  settings: ClusterSettings,
  selected: SelectedContext,
  options: ClusterConnectionOptions,
): ClusterConnection {
  // What the kubeconfig holds as credentials never appears in a message, whoever quotes it.
  for (const user of selected.config.getUsers()) rememberSecrets(user.token, user.password, user.keyData);
  rememberSecrets(...userinfoOf(selected.server));
  const share = options.share ?? createClusterShare();
  const transport = new ClusterTransport(selected.config, selected.server, {
    requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
    userAgent: options.userAgent ?? 'kube-conflict-hints',
    secureContexts: share.secureContexts,
  });
  const health = new HealthTracker(selected.context.name, selected.context.server);
  transport.observe((request, outcome) => health.record(request, outcome));
  const cluster = selected.config.getCluster(selected.context.cluster);
  // What identifies the server, never the user: every user of a cluster is told the same discovery and documents.
  const disk = options.diskCache
    ? openApiCache(options.env ?? process.env, {
        server: selected.server,
        caData: cluster?.caData,
        tlsServerName: cluster?.tlsServerName,
        skipTLSVerify: cluster?.skipTLSVerify,
        proxyUrl: cluster?.proxyUrl,
      })
    : undefined;
  const discovery = new Discovery(transport, undefined, disk);
  const openApi = new OpenApi(transport, undefined, { ...DEFAULT_OPENAPI_RETRY, ...options.openApiRetry }, disk, share);
  const defaultNamespace = settings.namespace || selected.contextNamespace;
  const liveObjects = new LiveObjects(transport, discovery, defaultNamespace, {
    ...DEFAULT_LIVE_OBJECT_OPTIONS,
    ...options.liveObjects,
  });
  const verifier = new Verifier(transport, discovery);
  const namespaces = new Namespaces(transport, { ...DEFAULT_LIVE_OBJECT_OPTIONS, ...options.liveObjects });
  const permissions = new Permissions(transport);
  // Read whole from the cache, as optional reads; made again when the cache's watch changes them.
  const admission = new AdmissionReads((apiVersion, kind, namespace) =>
    liveObjects.list(apiVersion, kind, namespace, { optional: true }),
  );
  liveObjects.onCollectionChange((change) => admission.collectionChanged(change));
  const gitopsPolicies = new GitopsPolicies(transport, discovery, {
    ...DEFAULT_LIVE_OBJECT_OPTIONS,
    ...options.liveObjects,
  });
  // A Secret's type and immutable, which its metadata-only read lacks (secret-fields.ts), join the live object.
  const secretFields = new SecretFields(transport);
  // The kind of an existing object that is read as metadata only (a Secret): its fields come from secretFields.
  const metadataOnlyKind = (ref: NamedObjectTarget, live: LiveObjectState): ApiResourceInfo | undefined => {
    if (live.state !== 'exists') return undefined;
    const resource = discovery.resolveCached(ref.apiVersion, ref.kind);
    return resource && readsMetadataOnly(resource) ? resource : undefined;
  };
  const withSecretFields = (ref: NamedObjectTarget, live: LiveObjectState): LiveObjectState => {
    const resource = metadataOnlyKind(ref, live);
    return resource && live.state === 'exists' ? { ...live, object: secretFields.peek(resource, live.object) } : live;
  };
  const secretsResource = () => discovery.resolveCached('v1', 'Secret');
  // A watched Namespace (an open Namespace manifest) says at once that a namespace appeared.
  liveObjects.onChange(
    (change) =>
      change.apiVersion === 'v1' && change.kind === 'Namespace' && namespaces.observed(change.name, change.state),
  );

  // While the cluster is unreachable, throttling or failing, ask it now and then (GET /api), so the
  // status recovers even when no watch or retry is asking; Retry-After holds the probe too.
  const probeInitialMs = options.probe?.initialBackoffMs ?? 1_000;
  const probeMaxMs = options.probe?.maxBackoffMs ?? 30_000;
  let probeTimer: NodeJS.Timeout | undefined;
  let probeAttempts = 0;
  let disposed = false;
  const scheduleProbe = () => {
    if (probeTimer || disposed) return;
    const delay = Math.min(probeInitialMs * 2 ** probeAttempts, probeMaxMs);
    probeAttempts++;
    probeTimer = setTimeout(() => {
      void transport.send({ method: 'GET', path: '/api', purpose: { verb: 'get' } }).then(() => {
        probeTimer = undefined;
        if (needsProbe(health.current().state)) scheduleProbe();
      });
    }, delay);
    probeTimer.unref?.();
  };
  health.onChange((current) => {
    if (needsProbe(current.state)) scheduleProbe();
  });
  // The first answer after an outage: everything waiting on a backoff goes now, not at its next turn.
  health.onRecovered(() => {
    probeAttempts = 0;
    liveObjects.retryNow();
    openApi.retryNow();
    namespaces.retryNow();
    permissions.retryNow();
  });

  return {
    settings,
    kubeconfig: selected.summary,
    context: selected.context,
    defaultNamespace,
    share,
    health: () => health.current(),
    onHealthChange: (listener) => health.onChange(listener),
    checkHealth: async () => {
      await transport.send({ method: 'GET', path: '/api', purpose: { verb: 'get' } });
      return health.current();
    },
    onSchemaChange: (listener) => openApi.onChange(listener),
    discovery: () => discovery.load(),
    resolveKind: (apiVersion, kind) => discovery.resolve(apiVersion, kind),
    cachedResource: (apiVersion, kind) => discovery.resolveCached(apiVersion, kind),
    openApiDocument: (apiVersion) => openApi.document(apiVersion),
    cachedOpenApiDocument: (apiVersion) => openApi.cachedDocument(apiVersion),
    peekObject: (ref) => withSecretFields(ref, liveObjects.peek(ref)),
    getObject: async (ref) => {
      const live = await liveObjects.get(ref);
      const resource = metadataOnlyKind(ref, live);
      return resource && live.state === 'exists'
        ? { ...live, object: await secretFields.get(resource, live.object) }
        : live;
    },
    expectObjects: (refs) => liveObjects.expect(refs),
    resolveRef: (ref) => liveObjects.resolveCached(ref),
    onObjectChange: (listener) => {
      const objects = liveObjects.onChange(listener);
      const secrets = secretFields.onChange(({ namespace, name }) => {
        const resource = secretsResource();
        if (!resource) return;
        const ref = { apiVersion: resource.apiVersion, kind: resource.kind, namespace, name };
        listener({ ...ref, state: withSecretFields(ref, liveObjects.peek(ref)) });
      });
      return { dispose: () => (objects.dispose(), secrets.dispose()) };
    },
    onCollectionChange: (listener) => liveObjects.onCollectionChange(listener),
    listObjects: (apiVersion, kind, namespace) => liveObjects.list(apiVersion, kind, namespace),
    helmSightings: (kinds) => readHelmSightings(transport, discovery, kinds),
    namespaces,
    permissions,
    admission,
    gitopsPolicies,
    dryRunApply: (manifest, opts) => verifier.dryRunApply(manifest, { ...opts, defaultNamespace }),
    dryRunCreate: (manifest, opts) => verifier.dryRunCreate(manifest, { ...opts, defaultNamespace }),
    dryRunPatch: (manifest, opts) => verifier.dryRunPatch(manifest, { ...opts, defaultNamespace }),
    refresh: () => {
      void discovery.load(true);
      void openApi.refresh();
      liveObjects.refresh();
      namespaces.refresh();
      permissions.refresh();
      admission.refresh();
      gitopsPolicies.refresh();
      secretFields.refresh();
    },
    requestsSent: () => transport.requestsSent,
    busy: () => transport.busy(),
    onQuiet: (listener) => transport.onQuiet(listener),
    dispose: () => {
      disposed = true;
      if (probeTimer) clearTimeout(probeTimer);
      permissions.dispose();
      admission.dispose();
      gitopsPolicies.dispose();
      liveObjects.dispose();
      namespaces.dispose();
      secretFields.dispose();
      openApi.dispose();
      transport.dispose();
    },
  };
}

/** The user name and password a URL carries (a token may stand as the user name), as written and decoded. */
function userinfoOf(url: string): string[] {
  const { username, password } = new URL(url);
  const decoded = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part; // a stray `%`: the part as written is what a message could repeat
    }
  };
  return [username, password].filter((part) => part !== '').flatMap((part) => [part, decoded(part)]);
}

function unconfiguredConnection(
  settings: ClusterSettings,
  kubeconfig: KubeconfigSummary | undefined,
  problem: ClusterProblem,
): ClusterConnection {
  const health = new HealthTracker(settings.context || kubeconfig?.currentContext, undefined, problem);
  const failed = <T>(): Promise<ClusterResult<T>> => Promise.resolve({ ok: false, problem });
  const rejected = (): Promise<DryRunOutcome> => Promise.resolve({ outcome: 'rejected', problem, causes: [] });
  return {
    settings,
    kubeconfig,
    context: undefined,
    defaultNamespace: settings.namespace || 'default',
    health: () => health.current(),
    onHealthChange: (listener) => health.onChange(listener),
    checkHealth: () => Promise.resolve(health.current()),
    onSchemaChange: () => ({ dispose: () => {} }),
    discovery: failed,
    resolveKind: failed,
    cachedResource: () => undefined,
    openApiDocument: failed,
    cachedOpenApiDocument: () => undefined,
    peekObject: () => ({ state: 'failed', problem }),
    getObject: () => Promise.resolve({ state: 'failed', problem }),
    expectObjects: () => Promise.resolve(),
    resolveRef: () => undefined,
    onObjectChange: () => ({ dispose: () => {} }),
    onCollectionChange: () => ({ dispose: () => {} }),
    listObjects: failed,
    helmSightings: failed,
    namespaces: unknownNamespaces(problem),
    permissions: unknownPermissions(problem),
    gitopsPolicies: unknownPolicies(problem),
    dryRunApply: rejected,
    dryRunCreate: rejected,
    dryRunPatch: rejected,
    refresh: () => {},
    requestsSent: () => 0,
    busy: () => false,
    onQuiet: () => ({ dispose: () => {} }),
    dispose: () => {},
  };
}

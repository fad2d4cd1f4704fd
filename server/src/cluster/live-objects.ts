// Live objects, answered synchronously from a cache that reads cost in proportion to the objects
// asked about, not to the cluster.
//
// One collection per (group-version resource, namespace) that was asked about. While it is asked
// for a few names (NAME_READS_UP_TO), each is read on its own: the command line GETs it; the editor
// LISTs it with `fieldSelector=metadata.name=NAME` (a read of one object that also gives a
// resourceVersion) and WATCHes it with the same selector from there, so a `kubectl edit` elsewhere
// reaches the editor within a second or two. A few reads run at once and a bounded number of names
// are watched per connection (NameReadLimits); a name past that is read again every poll interval.
// Asked for more names, the collection is listed (paged) and watched as a whole, and a name missing
// from it is known to be absent without a request; unless the list's first page shows the
// collection to hold far more than the names wanted (remainingItemCount), in which case the list
// ends there and the names are read on their own. A one-object read in a namespace of twenty
// thousand objects is then one small request, not twenty thousand objects. Each read and watch
// follows the reflector rules of client-go (tools/cache/reflector.go): read again on 410 Gone,
// resume from the last resourceVersion after a dropped connection, back off exponentially while
// the server is unreachable, keep serving what is known meanwhile.
//
// A user allowed to `get` but not `list`/`watch` (common for Secrets) still gets answers: the names
// are read by GET, again every poll interval.
//
// Secrets are read as metadata only (PartialObjectMetadata): managedFields, labels and annotations
// arrive, `data` and `stringData` never leave the server, and the copy of them that kubectl's
// last-applied annotation holds is taken out by the transport before the answer is parsed.
import { isJsonObject, type JsonObject } from '../core/json';
import { placeInNamespace, type NamedObjectTarget, type NamespaceOrigin } from '../core/manifest/manifest';
import type { Discovery } from './discovery';
import type { ClusterTransport, ReadRequest } from './http';
import { checkObjectName, collectionPath, nameSelector, objectPath } from './names';
import { classifyFailure, parseJson, type HttpOutcome } from './problems';
import { qualifiedResource } from '../core/ssa/messages';
import { isSecretResource, redactSecret } from './redact';
import type {
  ApiResourceInfo,
  ClusterProblem,
  ClusterResult,
  Disposable,
  LiveObjectChange,
  LiveObjectState,
  ResolvedObjectRef,
} from './types';
import { tell } from './listeners';

export interface LiveObjectOptions {
  /** Period of the reads of a name that is not watched (list or watch forbidden, or every watch in use). */
  pollIntervalMs: number;
  /** First retry delay after a failure; doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** How long get() waits for a first answer before returning what is known. */
  fillTimeoutMs: number;
  /**
   * Whether a listed collection is then kept current by a watch (the editor's cache). A one-shot
   * check judges what one list answered and opens no watch.
   */
  follow: boolean;
}

export const DEFAULT_LIVE_OBJECT_OPTIONS: LiveObjectOptions = {
  pollIntervalMs: 10_000,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  fillTimeoutMs: 15_000,
  follow: true,
};

type Listener = (change: LiveObjectChange) => void;

/** A collection read whole that changed (LiveObjects.onCollectionChange). */
export interface CollectionChange {
  readonly apiVersion: string;
  readonly kind: string;
  /** '' for a cluster-scoped kind. */
  readonly namespace: string;
}

/**
 * Accept headers that make the server answer metadata only (apimachinery meta.k8s.io/v1
 * PartialObjectMetadata, served since Kubernetes 1.15). There is deliberately no fallback to full
 * objects: a server that cannot answer metadata only gets no request for the object's values.
 */
export const metadataOnly = {
  object: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
} as const;

/** Whether objects of this resource are read as metadata only: their values are not for us to read. */
export function readsMetadataOnly(resource: Pick<ApiResourceInfo, 'group' | 'resource'>): boolean {
  return isSecretResource(resource.group, resource.resource);
}

export class LiveObjects {
  private readonly collections = new Map<string, Collection>();
  private readonly listeners = new Set<Listener>();
  /** Told when a collection someone reads whole (list()) changes after its first list. */
  private readonly collectionListeners = new Set<(change: CollectionChange) => void>();
  /** Refs asked for before discovery could place them; answered by a change event later. */
  private readonly unresolved = new Map<string, Unresolved>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Collection paths by kind, then by namespace and where it came from (collectionOf). */
  private readonly collectionPaths = new WeakMap<ApiResourceInfo, Map<string, ClusterResult<string>>>();
  private readonly limits = new NameReadLimits(DEFAULT_NAME_READ_LIMITS.reads, DEFAULT_NAME_READ_LIMITS.watches);
  private disposed = false;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly discovery: Discovery,
    private readonly defaultNamespace: string,
    private readonly options: LiveObjectOptions = DEFAULT_LIVE_OBJECT_OPTIONS,
  ) {}

  onChange(listener: Listener): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * A collection read whole (list(): the policies, their bindings, the autoscalers of a namespace)
   * changed after its first list: a watch event, or a list again. Its readers read it again (no
   * request: the cache follows it) and say whether what they make of it changed.
   */
  onCollectionChange(listener: (change: CollectionChange) => void): Disposable {
    this.collectionListeners.add(listener);
    return { dispose: () => this.collectionListeners.delete(listener) };
  }

  /** Where a ref lives, if discovery already knows its kind. */
  resolveCached(ref: NamedObjectTarget): ResolvedObjectRef | undefined {
    const resource = this.discovery.resolveCached(ref.apiVersion, ref.kind);
    return resource ? this.place(ref, resource).ref : undefined;
  }

  /** What is known now, without waiting; starts whatever fill is needed (never blocks on the network). */
  peek(ref: NamedObjectTarget): LiveObjectState {
    if (this.disposed) return { state: 'pending' };
    const resource = this.discovery.resolveCached(ref.apiVersion, ref.kind);
    if (resource) {
      const placed = this.locate(ref, resource);
      return placed.ok
        ? this.collectionFor(placed.value).lookup(placed.value.ref.name)
        : { state: 'failed', problem: placed.problem };
    }
    const key = unresolvedKey(ref);
    const known = this.unresolved.get(key);
    if (!known) {
      const entry: Unresolved = { ref, attempts: 0, at: Date.now(), resolving: false };
      this.unresolved.set(key, entry);
      void this.resolveLater(key, entry);
      return { state: 'pending' };
    }
    if (!known.problem) return { state: 'pending' };
    // A kind that was not served may be served now (a CRD was installed): look again now and then.
    if (known.problem.kind === 'kindNotServed' && !known.resolving && Date.now() - known.at > NOT_SERVED_RECHECK_MS)
      void this.resolveLater(key, known);
    return { state: 'failed', problem: known.problem };
  }

  /** The state once a first answer is in (or fillTimeoutMs passed). */
  async get(ref: NamedObjectTarget): Promise<LiveObjectState> {
    const resource = await this.discovery.resolve(ref.apiVersion, ref.kind);
    if (!resource.ok) return { state: 'failed', problem: resource.problem };
    const placed = this.locate(ref, resource.value);
    if (!placed.ok) return { state: 'failed', problem: placed.problem };
    return this.collectionFor(placed.value).settled(placed.value.ref.name, this.options.fillTimeoutMs);
  }

  /**
   * Every object of a kind in one namespace, once its collection has listed them (or fillTimeoutMs
   * passed): for judgements about the objects around one, such as the autoscalers that target it.
   * The collection is the one the cache keeps (list+watch), so asking again costs no request. A
   * user who may not list the kind gets the problem, never a guess.
   */
  async list(
    apiVersion: string,
    kind: string,
    namespace: string,
    options: { optional?: boolean } = {},
  ): Promise<ClusterResult<JsonObject[]>> {
    const resource = await this.discovery.resolve(apiVersion, kind);
    if (!resource.ok) return resource;
    const { namespace: placedNamespace, origin } = placeInNamespace(
      resource.value.namespaced,
      namespace,
      this.defaultNamespace,
    );
    const path = collectionPath(resource.value, placedNamespace, origin);
    if (!path.ok) return path;
    const ref: ResolvedObjectRef = { apiVersion, kind, name: '', namespace: placedNamespace, resource: resource.value };
    const collection = this.collectionFor({ ref, collectionPath: path.value });
    collection.wantWhole(options.optional);
    return collection.listed(this.options.fillTimeoutMs);
  }

  /**
   * The objects about to be asked for, all at once (the command line knows every object before it
   * reads one): each collection then chooses between reading its names one by one and listing it
   * from every name wanted of it, not from the first. Resolves once each is registered, not read.
   */
  async expect(refs: readonly NamedObjectTarget[]): Promise<void> {
    const kinds = new Map<string, Promise<ClusterResult<ApiResourceInfo>>>();
    for (const ref of refs) {
      const key = `${ref.apiVersion}\u0000${ref.kind}`;
      if (!kinds.has(key)) kinds.set(key, this.discovery.resolve(ref.apiVersion, ref.kind));
    }
    const resolved = new Map<string, ClusterResult<ApiResourceInfo>>();
    for (const [key, pending] of kinds) resolved.set(key, await pending);
    if (this.disposed) return;
    // In one synchronous pass: no collection starts before every name of it has joined.
    for (const ref of refs) {
      const resource = resolved.get(`${ref.apiVersion}\u0000${ref.kind}`);
      if (!resource?.ok) continue;
      const placed = this.locate(ref, resource.value);
      if (placed.ok) this.collectionFor(placed.value).lookup(placed.value.ref.name);
    }
  }

  /** Forget the resourceVersions and relist everything (the user asked to refresh). */
  refresh(): void {
    this.unresolved.clear();
    this.clearRetries();
    for (const collection of this.collections.values()) collection.restart();
  }

  /** The cluster answers again: every collection and lookup waiting on a backoff tries now. */
  retryNow(): void {
    if (this.disposed) return;
    for (const collection of this.collections.values()) collection.wakeUp();
    if (this.retryTimers.size === 0) return;
    this.clearRetries();
    for (const [key, entry] of this.unresolved)
      if (entry.problem && entry.problem.kind !== 'kindNotServed' && !entry.resolving)
        void this.resolveLater(key, entry);
  }

  dispose(): void {
    this.disposed = true;
    this.clearRetries();
    for (const collection of this.collections.values()) collection.stop();
    this.collections.clear();
    this.listeners.clear();
  }

  /** Collections and their modes, for logs and tests. */
  describe(): { path: string; mode: string; synced: boolean; objects: number }[] {
    return [...this.collections.values()].map((c) => c.describe());
  }

  private place(
    ref: NamedObjectTarget,
    resource: ApiResourceInfo,
  ): { ref: ResolvedObjectRef; origin: NamespaceOrigin } {
    const { namespace, origin } = placeInNamespace(resource.namespaced, ref.namespace, this.defaultNamespace);
    return { ref: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, namespace, resource }, origin };
  }

  /**
   * The ref placed, with the path of its collection; or why the API server would refuse its name
   * or namespace, in which case nothing is requested for it.
   */
  private locate(ref: NamedObjectTarget, resource: ApiResourceInfo): ClusterResult<Located> {
    const placed = this.place(ref, resource);
    // objectPath's checks, in its order: the collection (the served segments, the namespace), then the name.
    const collection = this.collectionOf(resource, placed.ref.namespace, placed.origin);
    if (!collection.ok) return collection;
    const problem = checkObjectName(resource, placed.ref.name);
    if (problem) return { ok: false, problem };
    return { ok: true, value: { ref: placed.ref, collectionPath: collection.value } };
  }

  /** collectionPath, worked out once per kind, namespace and where the namespace came from: every peek of every object asks. */
  private collectionOf(resource: ApiResourceInfo, namespace: string, origin: NamespaceOrigin): ClusterResult<string> {
    let byNamespace = this.collectionPaths.get(resource);
    if (!byNamespace) this.collectionPaths.set(resource, (byNamespace = new Map()));
    const key = `${origin}\u0000${namespace}`;
    let path = byNamespace.get(key);
    if (!path) byNamespace.set(key, (path = collectionPath(resource, namespace, origin)));
    return path;
  }

  private clearRetries(): void {
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
  }

  private async resolveLater(key: string, entry: Unresolved): Promise<void> {
    const ref = entry.ref;
    entry.resolving = true;
    const resource = await this.discovery.resolve(ref.apiVersion, ref.kind);
    entry.resolving = false;
    if (this.disposed || this.unresolved.get(key) !== entry) return;
    const failed = (problem: ClusterProblem): void =>
      this.emit({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: ref.namespace ?? '',
        name: ref.name,
        state: { state: 'failed', problem },
      });
    if (!resource.ok) {
      const unchanged =
        entry.problem?.kind === resource.problem.kind && entry.problem.message === resource.problem.message;
      entry.problem = resource.problem;
      entry.at = Date.now();
      if (resource.problem.kind !== 'kindNotServed') {
        // Discovery failed (unreachable, unauthenticated, ...): try again with backoff so that the
        // editor learns about the object when the cluster is back, without anyone asking again.
        const delay = Math.min(this.options.initialBackoffMs * 2 ** entry.attempts, this.options.maxBackoffMs);
        entry.attempts++;
        const timer = setTimeout(() => {
          this.retryTimers.delete(timer);
          void this.resolveLater(key, entry);
        }, delay);
        timer.unref?.();
        this.retryTimers.add(timer);
      }
      if (!unchanged) failed(resource.problem);
      return;
    }
    const placed = this.locate(ref, resource.value);
    if (!placed.ok) {
      // Kept as unresolved with its problem: asking again answers at once, without a request.
      entry.problem = placed.problem;
      entry.at = Date.now();
      failed(placed.problem);
      return;
    }
    this.unresolved.delete(key);
    const collection = this.collectionFor(placed.value);
    const state = collection.lookup(placed.value.ref.name);
    // When the collection was already synced, no fill will announce this ref: announce it here.
    if (state.state !== 'pending') collection.announce(placed.value.ref.name, state);
  }

  private collectionFor({ ref, collectionPath: path }: Located): Collection {
    let collection = this.collections.get(path);
    if (!collection) {
      const created = new Collection(
        this.transport,
        ref.resource,
        ref.namespace,
        path,
        this.options,
        this.limits,
        (change) => this.emit(change),
        () => this.emitCollection({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace }),
      );
      this.collections.set(path, (collection = created));
      // Started once the pass that asked has run: every name it asks joins before the collection
      // chooses between reading names and listing (an editor's analysis peeks a file's objects in one pass).
      queueMicrotask(() => created.start());
    }
    return collection;
  }

  private emitCollection(change: CollectionChange): void {
    tell(this.collectionListeners, change);
  }

  private emit(change: LiveObjectChange): void {
    tell(this.listeners, change);
  }
}

const NOT_SERVED_RECHECK_MS = 30_000;
/** How often a read answered "ask again later" is asked again before its answer is a problem. */
const RETRY_AFTER_READS = 10;
const POLL_INTEREST_MS = 10 * 60_000;

/** A ref whose name and namespace passed the API server's rules, with its collection's path. */
interface Located {
  ref: ResolvedObjectRef;
  collectionPath: string;
}

interface Unresolved {
  ref: NamedObjectTarget;
  problem?: ClusterProblem;
  /** When the problem was learnt. */
  at: number;
  attempts: number;
  resolving: boolean;
}

function unresolvedKey(ref: NamedObjectTarget): string {
  return JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
}

type CollectionMode = 'listWatch' | 'relist';

/**
 * How one name is read on its own: a LIST that selects it (`fieldSelector=metadata.name=NAME`), whose
 * resourceVersion its watch starts from (the editor); or a GET (the command line, which watches
 * nothing, and a user who may get but not list).
 */
type NameMethod = 'select' | 'get';

/** Where a watch stands: the whole collection's, or one name's. */
interface WatchCursor {
  /** Where the watch resumes; undefined when it must be listed (or read) again first. */
  resourceVersion: string | undefined;
  /** The open watch, for a stop or a restart to cut. */
  stream: { abort(): void } | undefined;
}

/** One name read on its own, with its answer and, in the editor, the watch that keeps it current. */
interface NameRead extends WatchCursor {
  state: LiveObjectState;
  running: boolean;
  timer: NodeJS.Timeout | undefined;
  wake: (() => void) | undefined;
}

/**
 * A collection reads each name it is asked about on its own up to this many names; more, and one
 * LIST (then one WATCH) costs less than a request and a watch per name: a dozen GETs cost more than
 * a LIST of a small collection, and the first page of a large one (FIRST_PAGE_PER_NAME) is all a
 * list costs before it ends.
 */
export const NAME_READS_UP_TO = 4;
/**
 * ...unless the collection is known (a first page's remainingItemCount) to hold more than this many
 * times the names wanted: then a whole list would read mostly objects nobody asked about.
 */
const WHOLE_LIST_SHARE = 4;
/**
 * The first page of a list asks for this many objects per name wanted (at least 100, at most a
 * page): enough for a small collection to come whole, few enough that a large one costs little.
 */
const FIRST_PAGE_PER_NAME = WHOLE_LIST_SHARE;
const PAGE = 500;

/**
 * What the collections of one connection share: how many names are read at once (each a request of
 * its own), and how many are watched (each watch holds a connection for minutes). A name past the
 * watch limit is read again every poll interval instead.
 */
export class NameReadLimits {
  private reading = 0;
  private readonly queue: (() => void)[] = [];
  private watching = 0;

  constructor(
    readonly reads: number,
    readonly watches: number,
  ) {}

  async read<T>(work: () => Promise<T>): Promise<T> {
    if (this.reading < this.reads) this.reading++;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes to the next read waiting, if any.
      const next = this.queue.shift();
      if (next) next();
      else this.reading--;
    }
  }

  takeWatch(): boolean {
    if (this.watching >= this.watches) return false;
    this.watching++;
    return true;
  }

  giveWatch(): void {
    this.watching--;
  }
}

export const DEFAULT_NAME_READ_LIMITS = { reads: 8, watches: 64 } as const;

/**
 * One resource in one namespace (or cluster-wide for cluster-scoped kinds). Its names are read one
 * by one (a GET, or a LIST selecting the name, then a WATCH selecting it) while few are wanted, and
 * the collection is listed and watched as a whole when many are: a ConfigMap in a namespace of
 * twenty thousand costs one small read, two hundred Deployments one LIST. Which of the two is
 * decided when the collection starts, from the names wanted by then (the command line names every
 * object first), and again as names are added; a first page that shows the collection to be far
 * larger than the names wanted ends the list, and its names are read on their own.
 */
class Collection {
  private strategy: 'names' | 'whole' = 'names';
  private started = false;
  private mode: CollectionMode = 'listWatch';
  private nameMethod: NameMethod;
  /** The list (whole or by name) was refused: names are read by GET, and listed() says so. */
  private listRefused = false;
  /** A watch by name was refused: names are read again every poll interval. */
  private nameWatchRefused = false;
  /** Someone wants every object of the collection (list()): it is listed whatever it holds. */
  private wholeWanted = false;
  /** The collection's size, as a first page's remainingItemCount told it. */
  private knownSize: number | undefined;
  private synced = false;
  private stopped = false;
  private readonly cursor: WatchCursor = { resourceVersion: undefined, stream: undefined };
  /** By name, with the time each version arrived. */
  private readonly objects = new Map<string, { object: JsonObject; observedAt: number }>();
  /** When the collection last learnt something (a list, an event): the time of an `absent`. */
  private observedAt = 0;
  /** Names read on their own: while the collection is not listed, and until a list of it is in. */
  private readonly byName = new Map<string, NameRead>();
  private problem: ClusterProblem | undefined;
  /** Names the editor asked about: only these produce change events. */
  private readonly interest = new Set<string>();
  /** A reader of the whole collection needs it (wantWhole, not optional). */
  private wholeRequired = false;
  /** When each name was last looked up: names nobody asked about lately are no longer followed. */
  private readonly lastAsked = new Map<string, number>();
  private readonly announced = new Map<string, string>();
  /** Names asked for in this pass, read when it has run (joinNames). */
  private readonly joining = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private generation = 0;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly resource: ApiResourceInfo,
    private readonly namespace: string,
    private readonly path: string,
    private readonly options: LiveObjectOptions,
    private readonly limits: NameReadLimits,
    private readonly emit: (change: LiveObjectChange) => void,
    /** The collection, read whole, changed after its first list. */
    private readonly changedWhole: () => void = () => {},
  ) {
    this.nameMethod = options.follow ? 'select' : 'get';
  }

  describe(): { path: string; mode: string; synced: boolean; objects: number } {
    const names = this.strategy === 'names';
    return {
      path: this.path,
      mode: names ? `byName:${this.nameMethod}` : this.mode,
      synced: names ? false : this.synced,
      objects: names ? this.byName.size : this.objects.size,
    };
  }

  /** Begin reading, with the names asked for so far (a collection is started after the names of one pass joined it). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.begin();
  }

  restart(): void {
    this.generation++;
    this.cursor.resourceVersion = undefined;
    this.mode = 'listWatch';
    this.listRefused = false;
    this.nameWatchRefused = false;
    this.knownSize = undefined;
    this.nameMethod = this.options.follow ? 'select' : 'get';
    this.cursor.stream?.abort();
    this.cursor.stream = undefined;
    this.wake?.();
    // Every name is read again; what it answered stays known until then.
    for (const [name, read] of this.byName) {
      this.endName(read);
      this.byName.set(name, newNameRead(read.state));
    }
    if (this.started) this.begin();
  }

  /** Cut short a backoff (or poll) sleep. */
  wakeUp(): void {
    this.wake?.();
    for (const read of this.byName.values()) read.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    this.cursor.stream?.abort();
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    for (const read of this.byName.values()) this.endName(read);
    for (const wake of this.waiters) wake();
  }

  lookup(name: string): LiveObjectState {
    const isNew = !this.interest.has(name);
    this.interest.add(name);
    this.lastAsked.set(name, Date.now());
    const state = this.current(name);
    if (isNew) this.announced.set(name, signature(state));
    if (this.started && this.strategy === 'names') {
      if (isNew) this.joinNames(name);
      else this.followName(name);
    }
    return state;
  }

  /**
   * A new name for a collection read by name: it is read once the pass that asked for it has run, so
   * that the names of one pass together decide whether the collection is listed instead.
   */
  private joinNames(name: string): void {
    const first = this.joining.size === 0;
    this.joining.add(name);
    if (!first) return;
    queueMicrotask(() => {
      const joined = [...this.joining];
      this.joining.clear();
      if (this.stopped || this.strategy !== 'names') return;
      if (this.listWanted()) this.toWhole();
      else for (const n of joined) this.followName(n);
    });
  }

  /**
   * Every object of the collection is wanted (list()): it is listed, whatever it holds. `optional`:
   * wanted for a judgement that says "unknown" when refused (the admission webhooks, quotas), so a
   * refusal is no health problem of the connection, unless another reader or a name needs it.
   */
  wantWhole(optional = false): void {
    if (!optional) this.wholeRequired = true;
    if (this.wholeWanted) return;
    this.wholeWanted = true;
    if (this.started && this.strategy === 'names' && !this.listRefused) this.toWhole();
  }

  /** Resolve when `name` has an answer other than pending (or the timeout passes). */
  settled(name: string, timeoutMs: number): Promise<LiveObjectState> {
    const first = this.lookup(name);
    if (first.state !== 'pending') return Promise.resolve(first);
    return new Promise((resolve) => {
      const check = (): void => {
        const state = this.current(name);
        if (state.state !== 'pending' || this.stopped) finish(state);
      };
      const finish = (state: LiveObjectState): void => {
        clearTimeout(timeout);
        this.waiters.delete(check);
        resolve(state);
      };
      const timeout = setTimeout(() => finish(this.current(name)), timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Every object, once listed; the problem when the list failed or is not allowed. */
  listed(timeoutMs: number): Promise<ClusterResult<JsonObject[]>> {
    const answer = (): ClusterResult<JsonObject[]> | undefined => {
      if (this.listRefused)
        return {
          ok: false,
          problem: {
            kind: 'forbidden',
            message: `listing ${qualifiedResource(this.resource)} is not allowed`,
            verb: 'list',
            resource: qualifiedResource(this.resource),
            ...(this.namespace ? { namespace: this.namespace } : {}),
          },
        };
      if (this.synced) return { ok: true, value: [...this.objects.values()].map((o) => o.object) };
      if (this.problem) return { ok: false, problem: this.problem };
      if (this.stopped) return { ok: false, problem: { kind: 'other', message: 'the connection was closed' } };
      return undefined;
    };
    const now = answer();
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const check = (): void => {
        const known = answer();
        if (known) finish(known);
      };
      const finish = (known: ClusterResult<JsonObject[]>): void => {
        clearTimeout(timeout);
        this.waiters.delete(check);
        resolve(known);
      };
      const timeout = setTimeout(
        () =>
          finish(
            answer() ?? {
              ok: false,
              problem: {
                kind: 'unreachable',
                message: `no answer from the cluster for ${qualifiedResource(this.resource)}`,
              },
            },
          ),
        timeoutMs,
      );
      this.waiters.add(check);
    });
  }

  announce(name: string, state: LiveObjectState): void {
    this.announced.set(name, signature(state));
    this.emit({
      apiVersion: this.resource.apiVersion,
      kind: this.resource.kind,
      namespace: this.namespace,
      name,
      state,
    });
  }

  /**
   * While the collection is being listed, a name read on its own keeps its answer (no flash of
   * pending or absent while the editor's interest grows past the names read one by one).
   */
  private current(name: string): LiveObjectState {
    const read = this.byName.get(name);
    const known = read && read.state.state !== 'pending' ? read.state : undefined;
    if (this.strategy === 'names' && known) return known;
    if (this.synced) {
      const listed = this.objects.get(name);
      return listed
        ? { state: 'exists', object: listed.object, observedAt: listed.observedAt }
        : { state: 'absent', observedAt: this.observedAt };
    }
    if (known) return known;
    if (this.problem && this.strategy === 'whole') return { state: 'failed', problem: this.problem };
    return { state: 'pending' };
  }

  /** Tell listeners about every interesting name whose state changed since it was last told. */
  private notify(names: Iterable<string> = this.interest): void {
    for (const name of names) {
      if (!this.interest.has(name)) continue;
      const state = this.current(name);
      const sig = signature(state);
      if (this.announced.get(name) === sig) continue;
      this.announce(name, state);
    }
    for (const check of [...this.waiters]) check();
  }

  /** Whether to list the whole collection rather than read its names one by one. */
  private listWanted(): boolean {
    if (this.listRefused) return false;
    if (this.wholeWanted) return true;
    const wanted = this.interest.size;
    return wanted > NAME_READS_UP_TO && (this.knownSize === undefined || this.knownSize <= wanted * WHOLE_LIST_SHARE);
  }

  private begin(): void {
    if (this.listWanted()) {
      this.strategy = 'whole';
      void this.run(this.generation);
    } else this.toNames();
  }

  private toWhole(): void {
    this.strategy = 'whole';
    void this.run(this.generation);
  }

  /**
   * Read each name wanted on its own. After a first page that ended a list, the objects it held are
   * known at its resourceVersion (the editor watches them from there); the other names are read.
   */
  private toNames(page?: { objects: Map<string, JsonObject>; resourceVersion: string }): void {
    this.strategy = 'names';
    this.problem = undefined;
    const now = Date.now();
    for (const name of this.interest) {
      const read = this.nameRead(name);
      // A name the page did not hold may be on a later page: it is read like the rest.
      const object = page?.objects.get(name);
      if (page && object && read.state.state === 'pending') {
        read.state = { state: 'exists', object, observedAt: now };
        read.resourceVersion = page.resourceVersion || undefined;
      }
      this.followName(name);
    }
    this.notify();
  }

  private nameRead(name: string): NameRead {
    let read = this.byName.get(name);
    if (!read) this.byName.set(name, (read = newNameRead({ state: 'pending' })));
    return read;
  }

  /** Start the name's own reads, unless they run (or, for a one-shot check, already answered). */
  private followName(name: string): void {
    const read = this.nameRead(name);
    if (read.running || this.stopped) return;
    if (!this.options.follow && read.state.state !== 'pending') return;
    read.running = true;
    void this.runName(name, read).finally(() => (read.running = false));
  }

  private endName(read: NameRead): void {
    read.stream?.abort();
    read.stream = undefined;
    if (read.timer) clearTimeout(read.timer);
    read.wake?.();
  }

  /** The collection is listed: its names stop being read on their own. */
  private stopNames(): void {
    for (const read of this.byName.values()) this.endName(read);
    this.byName.clear();
  }

  private recentlyAsked(name: string): boolean {
    // Names typed on the way to another (`w`, `we`, `web`) stop being followed after a while.
    return Date.now() - (this.lastAsked.get(name) ?? 0) < POLL_INTEREST_MS;
  }

  /** One name's reflector: read it, then (the editor) watch it from the read's resourceVersion. */
  private async runName(name: string, read: NameRead): Promise<void> {
    let backoff = this.options.initialBackoffMs;
    const live = (): boolean => !this.stopped && this.byName.get(name) === read;
    while (live()) {
      if (read.resourceVersion === undefined || this.nameMethod === 'get') {
        const outcome = await this.limits.read(() => (live() ? this.readName(name, read) : Promise.resolve('ok')));
        if (!live() || outcome === 'invalid') return;
        if (outcome === 'forbidden') {
          // May get but not list: one GET per name, polled (a watch needs the list permission).
          this.listRefused = true;
          this.nameMethod = 'get';
          for (const check of [...this.waiters]) check();
          continue;
        }
        if (outcome === 'failed') {
          await this.sleepName(read, backoff);
          backoff = Math.min(backoff * 2, this.options.maxBackoffMs);
          continue;
        }
        backoff = this.options.initialBackoffMs;
        if (!this.options.follow || !this.recentlyAsked(name)) return;
      }
      if (this.nameMethod === 'get' || this.nameWatchRefused || !this.limits.takeWatch()) {
        await this.sleepName(read, this.options.pollIntervalMs);
        read.resourceVersion = undefined;
        continue;
      }
      const openedAt = Date.now();
      let watched: 'ended' | 'forbidden' | 'failed';
      try {
        watched = await this.watchName(name, read);
      } finally {
        this.limits.giveWatch();
      }
      if (!live()) return;
      if (watched === 'forbidden') {
        this.nameWatchRefused = true;
        continue;
      }
      if (watched === 'ended' && Date.now() - openedAt > 1_000) {
        backoff = this.options.initialBackoffMs;
        if (!this.recentlyAsked(name)) return;
        continue;
      }
      await this.sleepName(read, backoff);
      backoff = Math.min(backoff * 2, this.options.maxBackoffMs);
    }
  }

  /**
   * A read, asked again while the server answers that it should be, later: a 429 or 5xx with a
   * Retry-After (API Priority and Fairness; a custom kind's storage, rebuilt for a moment after its
   * CRD changed, answers "storage is (re)initializing"). The transport holds every request until
   * the delay has passed; client-go's REST client asks such a request again up to ten times.
   */
  private async read(request: ReadRequest): Promise<HttpOutcome> {
    let outcome = await this.transport.send(request);
    for (let again = 0; again < RETRY_AFTER_READS && !this.stopped; again++) {
      if (outcome.kind !== 'response' || outcome.retryAfterMs === undefined) break;
      outcome = await this.transport.send(request);
    }
    return outcome;
  }

  /** Read one name: a LIST selecting it, or a GET. Sets its state and where its watch starts. */
  private async readName(name: string, read: NameRead): Promise<'ok' | 'forbidden' | 'failed' | 'invalid'> {
    const method = this.nameMethod;
    // Names reach a collection only after the same check; kept here so no path or selector is built unchecked.
    const target =
      method === 'get' ? objectPath(this.resource, this.namespace, name) : nameSelector(this.resource, name);
    if (!target.ok) {
      this.settleName(name, read, { state: 'failed', problem: target.problem });
      return 'invalid';
    }
    const request =
      method === 'get'
        ? { method: 'GET' as const, path: target.value, ...this.accept('object'), purpose: this.purpose('get') }
        : {
            method: 'GET' as const,
            path: this.path,
            query: { fieldSelector: target.value },
            ...this.accept('list'),
            purpose: this.purpose('list'),
          };
    const outcome = await this.read(request);
    if (outcome.kind === 'response' && outcome.status === 200) {
      const body = parseJson(outcome.body);
      if (!isJsonObject(body)) {
        const problem: ClusterProblem = { kind: 'other', message: `GET ${request.path} did not answer an object.` };
        this.settleName(name, read, { state: 'failed', problem });
        return 'failed';
      }
      if (method === 'get') {
        this.settleName(name, read, { state: 'exists', object: this.arrived(body), observedAt: Date.now() });
        return 'ok';
      }
      // Only the selected name counts, even from a server that answered more.
      const item = (Array.isArray(body.items) ? body.items : []).find((i) => isJsonObject(i) && nameOf(i) === name);
      const metadata = isJsonObject(body.metadata) ? body.metadata : {};
      read.resourceVersion =
        typeof metadata.resourceVersion === 'string' && metadata.resourceVersion ? metadata.resourceVersion : undefined;
      this.settleName(
        name,
        read,
        isJsonObject(item)
          ? { state: 'exists', object: this.arrived(item), observedAt: Date.now() }
          : { state: 'absent', observedAt: Date.now() },
      );
      return 'ok';
    }
    if (method === 'get' && outcome.kind === 'response' && outcome.status === 404) {
      this.settleName(name, read, { state: 'absent', observedAt: Date.now() });
      return 'ok';
    }
    const problem = classifyFailure(outcome, { method: 'GET', path: request.path, ...request.purpose });
    if (method === 'select' && problem.kind === 'forbidden') return 'forbidden';
    // While unreachable, keep the last known object rather than forgetting it.
    const previous = read.state;
    const keep = problem.kind === 'unreachable' && previous.state !== 'pending' && previous.state !== 'failed';
    this.settleName(name, read, keep ? previous : { state: 'failed', problem });
    return 'failed';
  }

  private settleName(name: string, read: NameRead, state: LiveObjectState): void {
    const before = read.state;
    // An unchanged object keeps the time it was first seen in this version.
    const same =
      before.state === 'exists' &&
      state.state === 'exists' &&
      resourceVersionOf(before.object) === resourceVersionOf(state.object);
    read.state = same ? before : state;
    this.notify([name]);
  }

  /** The WATCH of one name, selected as its read was, from the read's resourceVersion. */
  private async watchName(name: string, read: NameRead): Promise<'ended' | 'forbidden' | 'failed'> {
    const selector = nameSelector(this.resource, name);
    if (!selector.ok || read.resourceVersion === undefined) return 'failed';
    const watched = await this.watchFrom(read, { fieldSelector: selector.value }, (type, object) => {
      if (nameOf(object) !== name) return;
      if (type === 'DELETED') this.settleName(name, read, { state: 'absent', observedAt: Date.now() });
      else if (type === 'ADDED' || type === 'MODIFIED')
        this.settleName(name, read, { state: 'exists', object, observedAt: Date.now() });
    });
    return typeof watched === 'string' ? watched : 'failed';
  }

  private sleepName(read: NameRead, ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        if (read.timer) clearTimeout(read.timer);
        read.timer = undefined;
        read.wake = undefined;
        resolve();
      };
      read.timer = setTimeout(done, ms * (0.8 + Math.random() * 0.4));
      read.timer.unref?.();
      read.wake = done;
    });
  }

  private async run(generation: number): Promise<void> {
    let backoff = this.options.initialBackoffMs;
    const live = (): boolean => !this.stopped && generation === this.generation && this.strategy === 'whole';
    while (live()) {
      if (this.cursor.resourceVersion === undefined || this.mode === 'relist') {
        const listed = await this.list(generation);
        if (!live()) return;
        if (listed === 'forbidden') {
          this.listRefused = true;
          this.nameMethod = 'get';
          // Whoever waits for the whole list learns now that there will be none; each name is read by GET.
          this.toNames();
          return;
        }
        if (listed === 'abandoned') return;
        if (listed !== 'ok') {
          await this.sleep(backoff, generation);
          backoff = Math.min(backoff * 2, this.options.maxBackoffMs);
          continue;
        }
        backoff = this.options.initialBackoffMs;
        if (!this.options.follow) return;
        if (this.mode === 'relist') {
          await this.sleep(this.options.pollIntervalMs, generation);
          continue;
        }
      }
      const openedAt = Date.now();
      const watched = await this.watch();
      if (!live()) return;
      if (watched === 'forbidden') {
        // May list but not watch: relisting periodically is the next best thing.
        this.mode = 'relist';
        continue;
      }
      if (watched === 'ended' && Date.now() - openedAt > 1_000) {
        backoff = this.options.initialBackoffMs;
        continue;
      }
      await this.sleep(backoff, generation);
      backoff = Math.min(backoff * 2, this.options.maxBackoffMs);
    }
  }

  private async list(generation: number): Promise<'ok' | 'forbidden' | 'failed' | 'abandoned'> {
    const fresh = new Map<string, JsonObject>();
    let continueToken: string | undefined;
    let listVersion = '';
    let firstPage = true;
    do {
      const first = this.wholeWanted ? PAGE : Math.max(100, this.interest.size * FIRST_PAGE_PER_NAME);
      const query: Record<string, string> = { limit: String(firstPage ? Math.min(first, PAGE) : PAGE) };
      if (continueToken) query.continue = continueToken;
      const outcome = await this.read({
        method: 'GET',
        path: this.path,
        query,
        ...this.accept('list'),
        purpose: this.purpose('list'),
      });
      if (outcome.kind === 'response' && outcome.status === 200) {
        const body = parseJson(outcome.body);
        if (!isJsonObject(body))
          return this.fail({ kind: 'other', message: `GET ${this.path} did not answer a list.` });
        for (const item of Array.isArray(body.items) ? body.items : []) {
          if (!isJsonObject(item)) continue;
          const object = this.arrived(item);
          const name = nameOf(object);
          if (name) fresh.set(name, object);
        }
        const metadata = isJsonObject(body.metadata) ? body.metadata : {};
        listVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : listVersion;
        continueToken = typeof metadata.continue === 'string' && metadata.continue ? metadata.continue : undefined;
        if (firstPage && continueToken && typeof metadata.remainingItemCount === 'number') {
          // The first page says how large the collection is: when the names wanted are a small
          // part of it, they are read on their own and the rest is never fetched.
          this.knownSize = fresh.size + metadata.remainingItemCount;
          if (!this.listWanted() && generation === this.generation) {
            this.toNames({ objects: fresh, resourceVersion: listVersion });
            return 'abandoned';
          }
        }
        firstPage = false;
        continue;
      }
      const problem = classifyFailure(outcome, { method: 'GET', path: this.path, ...this.purpose('list') });
      if (problem.kind === 'forbidden') return 'forbidden';
      return this.fail(problem);
    } while (continueToken);
    // A refresh started meanwhile: its own list is the one to keep.
    if (generation !== this.generation) return 'failed';
    const changed = new Set<string>([...this.objects.keys(), ...fresh.keys()]);
    const now = Date.now();
    const previous = new Map(this.objects);
    this.objects.clear();
    for (const [name, object] of fresh) {
      // An unchanged object keeps the time it was first seen in this version.
      const before = previous.get(name);
      const same = before && resourceVersionOf(before.object) === resourceVersionOf(object);
      this.objects.set(name, same ? before : { object, observedAt: now });
    }
    this.observedAt = now;
    this.cursor.resourceVersion = listVersion || undefined;
    const relisted = this.synced;
    this.synced = true;
    this.problem = undefined;
    // The list answers every name now: the names read on their own stop.
    this.stopNames();
    this.notify(new Set([...changed, ...this.interest]));
    if (relisted && this.wholeWanted) this.changedWhole();
    return 'ok';
  }

  private fail(problem: ClusterProblem): 'failed' {
    this.problem = problem;
    // Known objects stay known (degrade, don't fail); only names never answered become failed.
    if (!this.synced) this.notify();
    return 'failed';
  }

  private async watch(): Promise<'ended' | 'forbidden' | 'failed'> {
    const watched = await this.watchFrom(this.cursor, {}, (type, object) => {
      const name = nameOf(object);
      if (!name) return;
      this.observedAt = Date.now();
      if (type === 'DELETED') this.objects.delete(name);
      else if (type === 'ADDED' || type === 'MODIFIED') this.objects.set(name, { object, observedAt: this.observedAt });
      this.notify([name]);
      if (this.wholeWanted) this.changedWhole();
    });
    if (typeof watched === 'string') return watched;
    this.problem = watched;
    return 'failed';
  }

  /**
   * One WATCH of the collection, or of the names `selection` selects, from the cursor's
   * resourceVersion (from now when it has none): the whole collection's and each name's watch alike.
   * Each event's object comes to `onEvent` as it arrived(); the cursor follows every event's
   * resourceVersion (bookmarks' too) and holds the open stream. It ends as the server ends it
   * ('ended': resume from the cursor), is refused ('forbidden'), or fails (the problem).
   */
  private async watchFrom(
    cursor: WatchCursor,
    selection: Record<string, string>,
    onEvent: (type: unknown, object: JsonObject) => void,
  ): Promise<'ended' | 'forbidden' | ClusterProblem> {
    const query: Record<string, string> = {
      watch: 'true',
      allowWatchBookmarks: 'true',
      ...selection,
      // Like client-go's reflector: a random 5-10 minute server-side timeout spreads reconnects.
      timeoutSeconds: String(300 + Math.floor(Math.random() * 300)),
    };
    if (cursor.resourceVersion) query.resourceVersion = cursor.resourceVersion;
    let gone = false;
    // Watch events carry single objects: the object form of the metadata-only Accept.
    const handle = this.transport.stream(
      { method: 'GET', path: this.path, query, ...this.accept('object'), purpose: this.purpose('watch') },
      (line) => {
        const event = parseJson(line);
        if (!isJsonObject(event) || !isJsonObject(event.object)) return;
        if (event.type === 'ERROR') {
          // The server ends the watch with a Status: mostly 410 Expired (the resourceVersion left the
          // watch cache), also "Too large resource version" after a restore. A relist is right for both
          // (client-go's reflector relists on these); for a rarer error it costs one list.
          gone = true;
          handle.abort();
          return;
        }
        const raw = event.object;
        const metadata = isJsonObject(raw.metadata) ? raw.metadata : {};
        if (typeof metadata.resourceVersion === 'string') cursor.resourceVersion = metadata.resourceVersion;
        if (event.type !== 'BOOKMARK') onEvent(event.type, this.arrived(raw));
      },
    );
    cursor.stream = handle;
    const outcome = await handle.finished;
    if (cursor.stream === handle) cursor.stream = undefined;
    if (gone) {
      cursor.resourceVersion = undefined;
      return 'ended';
    }
    if (outcome === 'ended') return 'ended';
    const problem = classifyFailure(outcome, { method: 'GET', path: this.path, ...this.purpose('watch') });
    if (problem.kind === 'forbidden') return 'forbidden';
    // A refused watch (410 Gone, 504 "Too large resource version", ...) will not succeed from the
    // same resourceVersion: relist (or read the name again). A dropped connection resumes from it.
    if (outcome.kind === 'response' && problem.kind !== 'unauthenticated') cursor.resourceVersion = undefined;
    return problem;
  }

  /**
   * Every object passes here on arrival: list items get their kind back, and so do metadata-only
   * answers (which say `PartialObjectMetadata`). A Secret's values never arrive, and the transport
   * has taken them out of the last-applied annotation; redactSecret holds to both whatever the
   * server answered.
   */
  private arrived(object: JsonObject): JsonObject {
    if (readsMetadataOnly(this.resource)) {
      return redactSecret({ ...object, apiVersion: this.resource.apiVersion, kind: this.resource.kind });
    }
    return { apiVersion: this.resource.apiVersion, kind: this.resource.kind, ...object };
  }

  /** The Accept header of a read: metadata only for the kinds whose values are not for us. */
  private accept(form: 'object' | 'list'): { accept?: string } {
    return readsMetadataOnly(this.resource) ? { accept: metadataOnly[form] } : {};
  }

  private purpose(verb: string): { verb: string; resource: string; namespace?: string; optional?: boolean } {
    return {
      verb,
      resource: qualifiedResource(this.resource),
      ...(this.namespace ? { namespace: this.namespace } : {}),
      ...(!this.wholeRequired && this.interest.size === 0 ? { optional: true } : {}),
    };
  }

  private sleep(ms: number, generation: number): Promise<void> {
    if (this.stopped || generation !== this.generation) return Promise.resolve();
    return new Promise((resolve) => {
      const jittered = ms * (0.8 + Math.random() * 0.4);
      this.timer = setTimeout(done, jittered);
      this.timer.unref?.();
      this.wake = done;
      function done(): void {
        resolve();
      }
    });
  }
}

function nameOf(object: JsonObject): string | undefined {
  const metadata = object.metadata;
  return isJsonObject(metadata) && typeof metadata.name === 'string' ? metadata.name : undefined;
}

function resourceVersionOf(object: JsonObject): string {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  return typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
}

function newNameRead(state: LiveObjectState): NameRead {
  return { state, resourceVersion: undefined, running: false, stream: undefined, timer: undefined, wake: undefined };
}

function signature(state: LiveObjectState): string {
  switch (state.state) {
    case 'exists':
      return `exists:${resourceVersionOf(state.object)}`;
    case 'failed':
      return `failed:${state.problem.kind}:${state.problem.message}`;
    default:
      return state.state;
  }
}

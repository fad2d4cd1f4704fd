// Whether a namespace exists, for the objects bound for it that do not exist yet: the API server
// refuses to create anything in a namespace that is not there (404, `namespaces "x" not found`),
// while a LIST in that namespace answers an empty list as for any new object.
//
// Reads only, one GET /api/v1/namespaces/NAME per namespace (the path built by names.ts after the
// API server's own name check), cached for the connection: typing sends nothing. A namespace found
// missing is read again every poll interval while someone still asks about it, and at once when a
// watch of Namespaces (an open Namespace manifest) says it appeared; every namespace is read again
// on refresh. A 403 means unknown: nothing is said, and it is no health problem of the connection
// (many users may not read namespaces and work well in theirs).
//
// A namespace that exists comes with its labels (plain strings): Pod Security admission is chosen
// by them (`pod-security.kubernetes.io/enforce` and the others), so objects that carry a pod
// template ask about their namespace even when they exist (facts.ts).
import { isJsonObject, setOwn } from '../core/json';
import type { ClusterTransport } from './http';
import { objectPath } from './names';
import { classifyFailure } from './problems';
import type { ApiResourceInfo, ClusterProblem, Disposable, LiveObjectState } from './types';
import { tell } from './listeners';

export type NamespaceState =
  | { readonly state: 'pending' }
  | { readonly state: 'exists'; readonly labels?: Readonly<Record<string, string>> }
  | { readonly state: 'absent' }
  | { readonly state: 'unknown'; readonly problem: ClusterProblem };

/** What the facts need of a connection's namespace reads. */
export interface NamespaceLookup {
  /** Synchronous: what is known now; starts the read when the namespace was never asked about. */
  peek(name: string): NamespaceState;
  /** Waits for the first answer. */
  get(name: string): Promise<NamespaceState>;
  /** What a peek answers for some namespace changed. */
  onChange(listener: () => void): Disposable;
}

export interface NamespaceReadOptions {
  /** How often a missing namespace is read again while it is asked about. */
  pollIntervalMs: number;
  /** First retry delay after a failed read (not a 403); doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** The core group's Namespace resource: every cluster serves it, so no discovery is needed to read it. */
const namespacesResource: ApiResourceInfo = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  namespaced: false,
  verbs: [],
  subresources: [],
  shortNames: [],
};

/** A missing namespace nobody asked about for this long is no longer read again. */
const POLL_INTEREST_MS = 10 * 60_000;

interface Entry {
  state: NamespaceState;
  reading: Promise<void> | undefined;
  lastAsked: number;
  attempts: number;
  timer: NodeJS.Timeout | undefined;
}

export class Namespaces implements NamespaceLookup {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly options: NamespaceReadOptions,
  ) {}

  peek(name: string): NamespaceState {
    return this.entryFor(name).state;
  }

  async get(name: string): Promise<NamespaceState> {
    const entry = this.entryFor(name);
    while (entry.state.state === 'pending' && entry.reading && !this.disposed) await entry.reading;
    return entry.state;
  }

  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** A watch of Namespaces saw `name` (it exists) or saw it deleted: no need to wait for the next read. */
  observed(name: string, live: LiveObjectState): void {
    const entry = this.entries.get(name);
    if (!entry || (live.state !== 'exists' && live.state !== 'absent')) return;
    this.settle(entry, live.state === 'exists' ? existing(live.object) : { state: 'absent' });
  }

  /** The user asked to refresh: every namespace is read again. */
  refresh(): void {
    for (const [name, entry] of this.entries) {
      entry.attempts = 0;
      void this.read(name, entry);
    }
  }

  /** The cluster answers again: reads that failed for lack of an answer go now. */
  retryNow(): void {
    for (const [name, entry] of this.entries) {
      if (entry.state.state === 'unknown' && entry.state.problem.kind !== 'forbidden') void this.read(name, entry);
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    this.entries.clear();
    this.listeners.clear();
  }

  private entryFor(name: string): Entry {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { state: { state: 'pending' }, reading: undefined, lastAsked: Date.now(), attempts: 0, timer: undefined };
      this.entries.set(name, entry);
      if (!this.disposed) void this.read(name, entry);
    }
    entry.lastAsked = Date.now();
    return entry;
  }

  private read(name: string, entry: Entry): Promise<void> {
    if (entry.reading) return entry.reading;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const reading = this.readOnce(name).then((state) => {
      entry.reading = undefined;
      if (this.disposed || this.entries.get(name) !== entry) return;
      this.settle(entry, state);
      this.scheduleNext(name, entry);
    });
    entry.reading = reading;
    return reading;
  }

  private async readOnce(name: string): Promise<NamespaceState> {
    // Names reach here only after the object's own path passed the same check; kept so no path is built unchecked.
    const path = objectPath(namespacesResource, '', name);
    if (!path.ok) return { state: 'unknown', problem: path.problem };
    const purpose = { verb: 'get', resource: 'namespaces', optional: true };
    const outcome = await this.transport.send({ method: 'GET', path: path.value, purpose });
    if (outcome.kind === 'response' && outcome.status === 200) {
      let object: unknown;
      try {
        object = JSON.parse(outcome.body);
      } catch {
        object = undefined;
      }
      return existing(object);
    }
    if (outcome.kind === 'response' && outcome.status === 404) return { state: 'absent' };
    return { state: 'unknown', problem: classifyFailure(outcome, { method: 'GET', path: path.value, ...purpose }) };
  }

  private settle(entry: Entry, state: NamespaceState): void {
    const before = signature(entry.state);
    entry.state = state;
    if (state.state !== 'unknown') entry.attempts = 0;
    if (signature(state) === before) return;
    tell(this.listeners, undefined);
  }

  /** A missing namespace may be created any time: read it again while asked about. A failed read is retried with backoff; a 403 is not. */
  private scheduleNext(name: string, entry: Entry): void {
    let delay: number | undefined;
    if (entry.state.state === 'absent' && Date.now() - entry.lastAsked < POLL_INTEREST_MS)
      delay = this.options.pollIntervalMs;
    else if (
      entry.state.state === 'unknown' &&
      entry.state.problem.kind !== 'forbidden' &&
      entry.state.problem.kind !== 'invalidName'
    ) {
      delay = Math.min(this.options.initialBackoffMs * 2 ** entry.attempts, this.options.maxBackoffMs);
      entry.attempts++;
    }
    if (delay === undefined) return;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (!this.disposed && this.entries.get(name) === entry) void this.read(name, entry);
    }, delay);
    entry.timer.unref?.();
  }
}

function signature(state: NamespaceState): string {
  if (state.state === 'exists') return `exists:${JSON.stringify(state.labels ?? {})}`;
  return state.state === 'unknown' ? `unknown:${state.problem.kind}` : state.state;
}

/** A namespace that exists, with its labels: only string values, and none on an answer that is not an object. */
function existing(object: unknown): NamespaceState {
  const metadata = isJsonObject(object) && isJsonObject(object.metadata) ? object.metadata : undefined;
  const labels: Record<string, string> = {};
  if (metadata && isJsonObject(metadata.labels))
    for (const [k, v] of Object.entries(metadata.labels)) if (typeof v === 'string') setOwn(labels, k, v);
  return { state: 'exists', labels };
}

/** A lookup for a connection that cannot read anything (no kubeconfig, no context). */
export function unknownNamespaces(problem: ClusterProblem): NamespaceLookup {
  return {
    peek: () => ({ state: 'unknown', problem }),
    get: () => Promise.resolve({ state: 'unknown', problem }),
    onChange: () => ({ dispose: () => {} }),
  };
}

// Whether the current user may send a request, asked the way `kubectl auth can-i` asks it: a
// SelfSubjectAccessReview (authorization.k8s.io/v1) per (verb, group, resource, subresource,
// namespace), answered by the cluster's own authorizers. Never a SelfSubjectRulesReview, whose
// answer the API documents as possibly incomplete. When a review that names no object is refused and
// the request names one, it is asked again with that name: a Role can allow one named object
// (resourceNames). Who the user is, for the server's words, comes once per connection from a
// SelfSubjectReview (authentication.k8s.io/v1).
//
// Both reviews are POSTs the transport sends with dryRun=All, as every write of the product is: the
// server answers them and stores nothing (they are never stored anyway). Answers are kept for the
// connection and asked again on refresh. A review that fails (unreachable, a timeout) or that the
// cluster refuses to answer (403) leaves the answer unknown, never allowed or denied, and is no
// health problem of the connection.
import { isJsonObject } from '../core/json';
import type { ClusterTransport } from './http';
import { classifyFailure, parseJson } from './problems';
import type { ClusterProblem, Disposable } from './types';
import { tell } from './listeners';

export type AccessVerb = 'get' | 'patch' | 'create';

/** One request, as authorization sees it. */
export interface AccessQuestion {
  readonly verb: AccessVerb;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** '' for a cluster-scoped kind. */
  readonly namespace: string;
  /** The object the request names; asked by name only when the review without it is refused. */
  readonly name?: string;
}

export type AccessState =
  | { readonly state: 'pending' }
  | { readonly state: 'allowed' }
  | { readonly state: 'denied'; readonly reason?: string }
  | { readonly state: 'unknown'; readonly problem: ClusterProblem };

export type UserState =
  | { readonly state: 'pending' }
  | { readonly state: 'known'; readonly name: string }
  | { readonly state: 'unknown'; readonly problem: ClusterProblem };

/** What the facts need of a connection's permission reviews. */
export interface PermissionLookup {
  /** Synchronous: what is known now; starts the reviews not asked yet. */
  peek(question: AccessQuestion): AccessState;
  /** Waits for the answer. */
  get(question: AccessQuestion): Promise<AccessState>;
  /** The user the credential is, as the cluster says (peek: starts the review once). */
  peekUser(): UserState;
  getUser(): Promise<UserState>;
  /** What a peek answers changed. */
  onChange(listener: () => void): Disposable;
}

const ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const SELF_REVIEW_PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
/** How many access reviews one connection has out at once. */
const REVIEWS_AT_ONCE = 16;

interface Entry<T> {
  state: T;
  reading: Promise<void> | undefined;
}

export class Permissions implements PermissionLookup {
  private readonly entries = new Map<string, Entry<AccessState>>();
  private user: Entry<UserState> | undefined;
  private readonly listeners = new Set<() => void>();
  private disposed = false;
  /** Reviews sent and not answered, and the ones waiting their turn (bounded). */
  private out = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly transport: ClusterTransport) {}

  peek(question: AccessQuestion): AccessState {
    const { name: _name, ...unnamed } = question;
    const broad = this.entryFor(unnamed).state;
    if (question.name === undefined || broad.state !== 'denied') return broad;
    return this.entryFor(question).state;
  }

  async get(question: AccessQuestion): Promise<AccessState> {
    const { name: _name, ...unnamed } = question;
    const broad = await this.settled(this.entryFor(unnamed));
    if (question.name === undefined || broad.state !== 'denied') return broad;
    return this.settled(this.entryFor(question));
  }

  peekUser(): UserState {
    return this.userEntry().state;
  }

  async getUser(): Promise<UserState> {
    const entry = this.userEntry();
    while (entry.reading && !this.disposed) await entry.reading;
    return entry.state;
  }

  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The user asked to refresh (roles change): every review is asked again. */
  refresh(): void {
    for (const [key, entry] of this.entries) entry.reading ??= this.review(entry, key);
    if (this.user && !this.user.reading) this.user.reading = this.selfReview(this.user);
  }

  /** The cluster answers again: reviews that had no answer are asked now. */
  retryNow(): void {
    for (const [key, entry] of this.entries)
      if (entry.state.state === 'unknown' && !entry.reading) entry.reading = this.review(entry, key);
    if (this.user?.state.state === 'unknown' && !this.user.reading) this.user.reading = this.selfReview(this.user);
  }

  dispose(): void {
    this.disposed = true;
    // Reviews waiting their turn go now, to the closed transport, and end.
    for (const resume of this.waiting.splice(0)) resume();
    this.entries.clear();
    this.listeners.clear();
  }

  /** The answer once no review of it is out (a refresh's too). */
  private async settled(entry: Entry<AccessState>): Promise<AccessState> {
    while (entry.reading && !this.disposed) await entry.reading;
    return entry.state;
  }

  private entryFor(question: AccessQuestion): Entry<AccessState> {
    const key = JSON.stringify([
      question.verb,
      question.group,
      question.resource,
      question.subresource ?? '',
      question.namespace,
      question.name ?? null,
    ]);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { state: { state: 'pending' }, reading: undefined };
      this.entries.set(key, entry);
      if (!this.disposed) entry.reading = this.review(entry, key);
    }
    return entry;
  }

  private userEntry(): Entry<UserState> {
    if (!this.user) {
      this.user = { state: { state: 'pending' }, reading: undefined };
      if (!this.disposed) this.user.reading = this.selfReview(this.user);
    }
    return this.user;
  }

  /**
   * At most REVIEWS_AT_ONCE reviews out at a time: a read-only user's file of thousands of objects
   * asks one by name for each, and the API server charges every request.
   */
  private async bounded<T>(send: () => Promise<T>): Promise<T> {
    while (this.out >= REVIEWS_AT_ONCE && !this.disposed)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.out++;
    try {
      return await send();
    } finally {
      this.out--;
      this.waiting.shift()?.();
    }
  }

  private async review(entry: Entry<AccessState>, key: string): Promise<void> {
    const [verb, group, resource, subresource, namespace, name] = JSON.parse(key) as [
      string,
      string,
      string,
      string,
      string,
      string | null,
    ];
    const body = JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          verb,
          group,
          resource,
          ...(subresource ? { subresource } : {}),
          ...(namespace ? { namespace } : {}),
          ...(name !== null ? { name } : {}),
        },
      },
    });
    const purpose = { verb: 'create', resource: 'selfsubjectaccessreviews.authorization.k8s.io', optional: true };
    const outcome = await this.bounded(() =>
      this.transport.send({
        method: 'POST',
        dryRun: 'All',
        path: ACCESS_REVIEW_PATH,
        contentType: 'application/json',
        body,
        purpose,
      }),
    );
    let state: AccessState;
    const status = outcome.kind === 'response' && outcome.status === 201 ? reviewStatus(outcome.body) : undefined;
    if (status) {
      state = status.allowed
        ? { state: 'allowed' }
        : { state: 'denied', ...(status.reason ? { reason: status.reason } : {}) };
    } else if (outcome.kind === 'response' && (outcome.status === 200 || outcome.status === 201)) {
      state = {
        state: 'unknown',
        problem: { kind: 'other', message: 'the SelfSubjectAccessReview answer has no status.allowed' },
      };
    } else {
      state = {
        state: 'unknown',
        problem: classifyFailure(outcome, { method: 'POST', path: ACCESS_REVIEW_PATH, ...purpose }),
      };
    }
    entry.reading = undefined;
    this.settle(entry, state);
  }

  private async selfReview(entry: Entry<UserState>): Promise<void> {
    const purpose = { verb: 'create', resource: 'selfsubjectreviews.authentication.k8s.io', optional: true };
    const outcome = await this.transport.send({
      method: 'POST',
      dryRun: 'All',
      path: SELF_REVIEW_PATH,
      contentType: 'application/json',
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      purpose,
    });
    let state: UserState;
    const parsed = outcome.kind === 'response' && outcome.status === 201 ? parseJson(outcome.body) : undefined;
    const userInfo =
      isJsonObject(parsed) && isJsonObject(parsed.status) && isJsonObject(parsed.status.userInfo)
        ? parsed.status.userInfo
        : undefined;
    if (userInfo && typeof userInfo.username === 'string') state = { state: 'known', name: userInfo.username };
    else
      state = {
        state: 'unknown',
        problem:
          outcome.kind === 'response' && outcome.status === 201
            ? { kind: 'other', message: 'the SelfSubjectReview answer names no user' }
            : classifyFailure(outcome, { method: 'POST', path: SELF_REVIEW_PATH, ...purpose }),
      };
    entry.reading = undefined;
    this.settle(entry, state);
  }

  private settle<T extends { state: string }>(entry: Entry<T>, state: T): void {
    if (this.disposed) return;
    const before = JSON.stringify(entry.state);
    entry.state = state;
    if (JSON.stringify(state) === before) return;
    tell(this.listeners, undefined);
  }
}

/** status.allowed and status.reason of a SelfSubjectAccessReview answer. */
function reviewStatus(body: string): { allowed: boolean; reason?: string } | undefined {
  const parsed = parseJson(body);
  if (!isJsonObject(parsed) || !isJsonObject(parsed.status)) return undefined;
  const { allowed, reason } = parsed.status;
  if (typeof allowed !== 'boolean') return undefined;
  return { allowed, ...(typeof reason === 'string' && reason ? { reason } : {}) };
}

/** A lookup for a connection that cannot ask anything (no kubeconfig, no context). */
export function unknownPermissions(problem: ClusterProblem): PermissionLookup {
  return {
    peek: () => ({ state: 'unknown', problem }),
    get: () => Promise.resolve({ state: 'unknown', problem }),
    peekUser: () => ({ state: 'unknown', problem }),
    getUser: () => Promise.resolve({ state: 'unknown', problem }),
    onChange: () => ({ dispose: () => {} }),
  };
}

// The plain data that crosses the boundary of the cluster layer. Nothing here is a client-node type:
// callers (lsp/, cli/, tests) see JSON objects and records only.
import type { JsonObject } from '../core/json';
import type { NamedObjectTarget } from '../core/manifest/manifest';
import type { NotServedDiscovery } from '../core/findings';
import type { ConflictCause } from '../core/ssa/messages';

/** What the user configured; both empty means KUBECONFIG (or ~/.kube/config) and its current context. */
export interface ClusterSettings {
  /** Path of one kubeconfig file. Empty/undefined: KUBECONFIG (several paths allowed), then ~/.kube/config. */
  kubeconfig?: string;
  /** Context name. Empty/undefined: the kubeconfig's current-context. */
  context?: string;
  /** Namespace for manifests without metadata.namespace. Empty: the context's namespace, then "default". */
  namespace?: string;
}

export interface ContextSummary {
  name: string;
  cluster: string;
  user: string;
  /** The context's namespace as written in the kubeconfig (undefined when it names none). */
  namespace?: string;
  /** The API server URL of the context's cluster (undefined when the cluster entry is missing). */
  server?: string;
}

/** The kubeconfig as the user sees it: for a context picker and the status bar. */
export interface KubeconfigSummary {
  /** The files that were read, in merge order (the first one wins, as with kubectl). */
  files: string[];
  contexts: ContextSummary[];
  /** The kubeconfig's own current-context (before any override from settings). */
  currentContext?: string;
}

/**
 * Why a request did not give an answer. Problems are returned, never thrown:
 * - unreachable: connection refused, DNS failure, TLS failure, timeout;
 * - unauthenticated: 401, or a credential plugin (exec) that failed;
 * - forbidden: 403 (the verb and resource are filled in when known);
 * - notFound: 404 for something that is not a live object (a live object's 404 is `absent`, not a problem);
 * - kindNotServed: the cluster does not serve this apiVersion/kind;
 * - invalidName: the manifest's name or namespace is one the API server refuses; no request was sent;
 * - configuration: no kubeconfig, unknown context, a cluster entry without server;
 * - other: everything else, with the server's Status message.
 */
export type ClusterProblemKind =
  | 'unreachable'
  | 'unauthenticated'
  | 'forbidden'
  | 'notFound'
  | 'kindNotServed'
  | 'invalidName'
  | 'configuration'
  | 'other';

export interface ClusterProblem {
  kind: ClusterProblemKind;
  /** One sentence for a user: the server's Status message when there is one. */
  message: string;
  /** HTTP status, when a response arrived. */
  httpStatus?: number;
  /** Status.reason from the server (Forbidden, NotFound, Invalid, ...). */
  reason?: string;
  /** For forbidden: the Kubernetes verb (get, list, watch, patch, create). */
  verb?: string;
  /** For forbidden: `deployments.apps`, `secrets` (resource[.group]). */
  resource?: string;
  namespace?: string;
  /** Network error code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, ...). */
  code?: string;
  /** The request that failed, e.g. `GET /apis/apps/v1/namespaces/default/deployments`. */
  request?: string;
  /** For invalidName: which field holds the refused name. */
  field?: 'metadata.name' | 'metadata.namespace';
  /** For kindNotServed: what discovery serves around the kind (is the group served at all, the kind at other versions). */
  notServed?: NotServedDiscovery;
}

export type ClusterResult<T> = { ok: true; value: T } | { ok: false; problem: ClusterProblem };

/**
 * For the status bar. `forbidden` means the cluster answers but refuses something the editor needs;
 * `throttled` that it answers 429 (slow down), `failing` that its reads fail with 5xx.
 */
export type ClusterHealthState =
  'connected' | 'unreachable' | 'unauthenticated' | 'forbidden' | 'throttled' | 'failing' | 'unknown';

/** One observation of a connection's health; protocol.ts's `ClusterHealth` is the state the status bar shows. */
export interface ClusterHealthReport {
  state: ClusterHealthState;
  context?: string;
  server?: string;
  /** The latest problem behind a state other than connected. */
  problem?: ClusterProblem;
  /** Date.now() of the observation. */
  since: number;
  /** Date.now() when the cluster last answered a request: what is known is as of then. */
  answeredAt?: number;
}

/** One resource the cluster serves, from discovery. */
export interface ApiResourceInfo {
  /** '' for the core group. */
  group: string;
  version: string;
  /** `v1`, `apps/v1`. */
  apiVersion: string;
  kind: string;
  /** Plural resource name, as in URLs: `deployments`. */
  resource: string;
  singular?: string;
  namespaced: boolean;
  verbs: string[];
  /** `status`, `scale`, ... */
  subresources: string[];
  shortNames: string[];
}

export interface ApiGroupInfo {
  /** '' for the core group. */
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

export interface DiscoveryIndex {
  groups: ApiGroupInfo[];
  resources: ApiResourceInfo[];
  /** `aggregated` (one request per /api and /apis) or `classic` (one request per group-version). */
  source: 'aggregated' | 'classic';
  fetchedAt: number;
}

/** A NamedObjectTarget after discovery: the namespace is settled ('' for cluster-scoped kinds). */
export interface ResolvedObjectRef extends NamedObjectTarget {
  readonly namespace: string;
  readonly resource: ApiResourceInfo;
}

/**
 * What the cache knows about one live object, answered synchronously.
 * - pending: not known yet; a fill has started and a change event will follow;
 * - exists: the object as the server returned it, managedFields included (a Secret is read as
 *   metadata only: its values never arrive);
 * - absent: the server says it does not exist (a new object);
 * - failed: it could not be read (unreachable, forbidden, kind not served, ...).
 */
export type LiveObjectState =
  | { state: 'pending' }
  | { state: 'exists'; object: JsonObject; observedAt: number }
  | { state: 'absent'; observedAt: number }
  | { state: 'failed'; problem: ClusterProblem };

/** Emitted when what the cache knows about an object changes (fill finished, watch event, deletion). */
export interface LiveObjectChange {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  state: LiveObjectState;
}

/** One cause of a 409 from a dry-run apply: the server's words, as the prediction writes them too. */
export type { ConflictCause };

/**
 * The server's answer to a dry run.
 * - accepted: the would-be object (useful to see which fields an apply would remove); for a Secret
 *   only its name and would-be resourceVersion (its values are never asked for, nor their copies);
 * - conflict: a 409, with `conflict` telling which of the three 409s it is, and the de-duplicated causes;
 * - rejected: anything else (403, 422 Invalid, 400, kind not served, unreachable, ...).
 */
export type DryRunOutcome =
  | { outcome: 'accepted'; object: JsonObject }
  | {
      outcome: 'conflict';
      conflict: 'fieldManager' | 'alreadyExists' | 'resourceVersion' | 'uid' | 'other';
      message: string;
      reason: string;
      causes: ConflictCause[];
    }
  | { outcome: 'rejected'; problem: ClusterProblem; causes: ConflictCause[] };

export interface Disposable {
  dispose(): void;
}

// The cluster's health for the status bar, derived from the outcome of every request. Transport-level
// failures concern every request: unreachable (no connection, no answer in time), unauthenticated,
// throttled (429) and failing (5xx on a read). A 403 concerns one resource in one namespace, and stops
// counting once a read of that resource succeeds (e.g. `list` is forbidden but the GET-per-object
// fallback works).
//
// While the cluster is unreachable, throttling or failing, the connection probes it on a backoff
// schedule (connection.ts), so the status recovers even when nothing else is asking; the first
// answer after a transport problem is announced (onRecovered) so every waiting retry goes at once.
import type { ClusterRequest } from './http';
import { classifyFailure, isServerFailure, isThrottled, type HttpOutcome } from './problems';
import { redactProblem } from './redact';
import type { ClusterHealthReport, ClusterHealthState, ClusterProblem, Disposable } from './types';
import { tell } from './listeners';

type Listener = (health: ClusterHealthReport) => void;

export class HealthTracker {
  private transportProblem: ClusterProblem | undefined;
  private readonly forbidden = new Map<string, ClusterProblem>();
  private observed = false;
  private answeredAt: number | undefined;
  private health: ClusterHealthReport;
  private readonly listeners = new Set<Listener>();
  private readonly recoveryListeners = new Set<() => void>();

  constructor(
    private readonly context: string | undefined,
    private readonly server: string | undefined,
    configurationProblem?: ClusterProblem,
  ) {
    this.transportProblem = configurationProblem && redactProblem(configurationProblem);
    this.observed = configurationProblem !== undefined;
    this.health = this.compute();
  }

  current(): ClusterHealthReport {
    return this.health;
  }

  onChange(listener: Listener): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The cluster answered again after a transport problem (unreachable, throttled, failing, unauthenticated). */
  onRecovered(listener: () => void): Disposable {
    this.recoveryListeners.add(listener);
    return { dispose: () => this.recoveryListeners.delete(listener) };
  }

  /** Feed one request's outcome (wired to ClusterTransport.observe). */
  record(request: ClusterRequest, outcome: HttpOutcome | 'stream-open'): void {
    this.observed = true;
    const key = scopeKey(request);
    const hadTransportProblem = this.transportProblem !== undefined;
    if (outcome === 'stream-open' || outcome.kind === 'response') this.answeredAt = Date.now();
    if (outcome === 'stream-open' || (outcome.kind === 'response' && outcome.status < 400 && outcome.status >= 200)) {
      this.transportProblem = undefined;
      if (request.method === 'GET') this.forbidden.delete(key);
    } else if (
      outcome.kind === 'response' &&
      outcome.status !== 401 &&
      outcome.status !== 403 &&
      outcome.status !== 429 &&
      !(outcome.status >= 500 && request.method === 'GET')
    ) {
      // Answered (404, 409, 410, 422, a dry run's 500 from a webhook): the server works.
      this.transportProblem = undefined;
      if (request.method === 'GET' && outcome.status < 500) this.forbidden.delete(key);
    } else {
      const problem = redactProblem(
        classifyFailure(outcome, { method: request.method, path: request.path, ...request.purpose }),
      );
      if (problem.kind === 'forbidden') {
        this.transportProblem = undefined;
        // A refused dry run is the verifier's answer, not a sign that the editor cannot read; nor is
        // a refused read of something optional (namespaces.ts).
        if (request.method === 'GET' && !request.purpose?.optional) this.forbidden.set(key, problem);
      } else if (
        problem.kind === 'unreachable' ||
        problem.kind === 'unauthenticated' ||
        isThrottled(problem) ||
        isServerFailure(problem)
      ) {
        this.transportProblem = problem;
      }
    }
    this.update();
    if (hadTransportProblem && this.transportProblem === undefined) {
      tell(this.recoveryListeners, undefined);
    }
  }

  private update(): void {
    const next = this.compute();
    const previous = this.health;
    if (next.state === previous.state && next.problem?.message === previous.problem?.message) return;
    this.health = next;
    tell(this.listeners, next);
  }

  private compute(): ClusterHealthReport {
    const base = {
      ...(this.context ? { context: this.context } : {}),
      ...(this.server ? { server: this.server } : {}),
      since: Date.now(),
      ...(this.answeredAt !== undefined ? { answeredAt: this.answeredAt } : {}),
    };
    if (this.transportProblem)
      return { state: transportState(this.transportProblem), problem: this.transportProblem, ...base };
    const forbidden = [...this.forbidden.values()].at(-1);
    if (forbidden) return { state: 'forbidden', problem: forbidden, ...base };
    return { state: this.observed ? 'connected' : 'unknown', ...base };
  }
}

function transportState(problem: ClusterProblem): ClusterHealthState {
  if (problem.kind === 'unauthenticated') return 'unauthenticated';
  if (isThrottled(problem)) return 'throttled';
  if (isServerFailure(problem)) return 'failing';
  return 'unreachable';
}

/** States in which the connection probes the server until it answers. */
export function needsProbe(state: ClusterHealthState): boolean {
  return state === 'unreachable' || state === 'throttled' || state === 'failing';
}

function scopeKey(request: ClusterRequest): string {
  const purpose = request.purpose;
  if (purpose?.resource) return `${purpose.resource}|${purpose.namespace ?? ''}`;
  return request.path;
}

// The cluster's health for the status bar, derived from the outcome of every request: no probe
// traffic of its own. Transport-level failures (unreachable, unauthenticated) concern every
// request; a 403 concerns one resource in one namespace, and stops counting once a read of that
// resource succeeds (e.g. `list` is forbidden but the GET-per-object fallback works).
import type { ClusterRequest } from './http';
import { classifyFailure, type HttpOutcome } from './problems';
import type { ClusterHealth, ClusterProblem, Disposable } from './types';

type Listener = (health: ClusterHealth) => void;

export class HealthTracker {
  private transportProblem: ClusterProblem | undefined;
  private readonly forbidden = new Map<string, ClusterProblem>();
  private observed = false;
  private health: ClusterHealth;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly context: string | undefined,
    private readonly server: string | undefined,
    configurationProblem?: ClusterProblem,
  ) {
    this.transportProblem = configurationProblem;
    this.observed = configurationProblem !== undefined;
    this.health = this.compute();
  }

  current(): ClusterHealth {
    return this.health;
  }

  onChange(listener: Listener): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Feed one request's outcome (wired to ClusterTransport.observe). */
  record(request: ClusterRequest, outcome: HttpOutcome | 'stream-open'): void {
    this.observed = true;
    const key = scopeKey(request);
    if (outcome === 'stream-open' || (outcome.kind === 'response' && outcome.status !== 401 && outcome.status !== 403)) {
      this.transportProblem = undefined;
      if (request.method === 'GET' && outcome !== 'stream-open' && outcome.status < 500) this.forbidden.delete(key);
      if (outcome === 'stream-open') this.forbidden.delete(key);
    } else {
      const problem = classifyFailure(outcome, { method: request.method, path: request.path, ...request.purpose });
      if (problem.kind === 'forbidden') {
        this.transportProblem = undefined;
        // A refused dry run is the verifier's answer, not a sign that the editor cannot read.
        if (request.method === 'GET') this.forbidden.set(key, problem);
      } else if (problem.kind === 'unreachable' || problem.kind === 'unauthenticated') {
        this.transportProblem = problem;
      }
    }
    this.update();
  }

  private update(): void {
    const next = this.compute();
    const previous = this.health;
    if (next.state === previous.state && next.problem?.message === previous.problem?.message) return;
    this.health = next;
    for (const listener of this.listeners) {
      try {
        listener(next);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  private compute(): ClusterHealth {
    const base = { ...(this.context ? { context: this.context } : {}), ...(this.server ? { server: this.server } : {}), since: Date.now() };
    if (this.transportProblem) {
      const state = this.transportProblem.kind === 'unauthenticated' ? 'unauthenticated' : 'unreachable';
      return { state, problem: this.transportProblem, ...base };
    }
    const forbidden = [...this.forbidden.values()].at(-1);
    if (forbidden) return { state: 'forbidden', problem: forbidden, ...base };
    return { state: this.observed ? 'connected' : 'unknown', ...base };
  }
}

function scopeKey(request: ClusterRequest): string {
  const purpose = request.purpose;
  if (purpose?.resource) return `${purpose.resource}|${purpose.namespace ?? ''}`;
  return request.path;
}

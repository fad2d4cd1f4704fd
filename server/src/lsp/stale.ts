// While a cluster does not answer, what the editor shows rests on what it answered last: a finding
// or a hover that reads "live value 5", an ownership hint that names a manager, may no longer be
// true. Such findings, hovers and hints say since when the facts are old, so that they never read
// as live.
import type { ClusterHealthReport } from '../cluster';

const stale: Partial<Record<ClusterHealthReport['state'], string>> = {
  unreachable: 'cluster unreachable',
  unauthenticated: 'credentials refused',
  throttled: 'cluster throttling requests',
  failing: 'cluster failing',
};

/** "as of 12:03:10 — cluster unreachable since 12:05:02", or undefined while the cluster answers. */
export function stalenessOf(health: ClusterHealthReport): string | undefined {
  const why = stale[health.state];
  if (!why) return undefined;
  const since = `${why} since ${clock(health.since)}`;
  return health.answeredAt !== undefined ? `as of ${clock(health.answeredAt)} — ${since}` : since;
}

/** A time of day on the user's clock, to the second. */
export function clock(t: number): string {
  const d = new Date(t);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The first line of a hover or a tooltip on old facts: `**Not live: as of 12:03:10 — ….**`. */
export function notLive(staleness: string, kind: 'markdown' | 'plaintext'): string {
  return kind === 'markdown' ? `**Not live: ${staleness}.**` : `Not live: ${staleness}.`;
}

// The environment the bench's processes run in: a user's shell, not this machine's quirks.
//
// NODE_EXTRA_CA_CERTS names certificates Node adds to its trusted roots; Node 20 reads and parses
// them when it starts, before any JavaScript runs. A user who needs it names one or two company
// certificates. A machine may instead point it at its whole system bundle (over a hundred
// certificates), which adds tens of milliseconds to every Node process, the product's included,
// and nothing to kubectl, which never reads it. The bench removes it from every process it measures
// (KCH_BENCH_KEEP_ENV=1 keeps it) and prints what it costs, so that the ratios compare the product
// and kubectl as a user runs them, and the cost stays visible.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Removes what the bench does not measure from this process's environment, which every process it
 * starts inherits; returns a line saying what was removed and what it costs, or undefined.
 */
export function userEnvironment(): string | undefined {
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (!extra || process.env.KCH_BENCH_KEEP_ENV === '1') return undefined;
  let certificates = 0;
  try {
    certificates = (fs.readFileSync(extra, 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
  } catch {
    // Unreadable: Node warns and goes on; the cost below says the rest.
  }
  const withIt = nodeStartMs();
  delete process.env.NODE_EXTRA_CA_CERTS;
  const without = nodeStartMs();
  return `environment: NODE_EXTRA_CA_CERTS (${extra}, ${certificates} certificates) removed from the measured processes: \`node -e 0\` ${without.toFixed(0)} ms without it, ${withIt.toFixed(0)} ms with it (medians of 5; KCH_BENCH_KEEP_ENV=1 keeps it)`;
}

/** The median wall-clock time of `node -e 0` in this process's environment. */
export function nodeStartMs(runs = 5): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

// Time and memory budgets of the fuzz campaign, relative to what the same machine does in the same
// run: a call may take at most `factor` times a plain `yaml` parse of the same input, plus a floor
// (a garbage collection). An overrun is measured again before it counts, so only a call that is
// slow twice fails: one that is worse than linear is slow every time.
//
// Time is the process's CPU time, not the wall clock: on a machine with more work than cores, a
// call of 50 ms is preempted many times and takes ten times as long on the clock, while the 1 ms
// plain parse it is compared with usually runs within one slice, so wall-clock ratios grow with
// the load. CPU time is what the call itself costs, busy machine or not.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { parseAllDocuments } from 'yaml';

export const budget = {
  /** Times a plain parse of the same input. */
  factor: 50,
  /** Milliseconds on top, for a garbage collection or a busy machine. */
  floorMs: 400,
};

/** A plain parse of the text, as fast as the `yaml` package goes (duplicate keys unchecked: that check is quadratic). */
export function plainParse(text: string): void {
  parseAllDocuments(text, { uniqueKeys: false });
}

/** CPU time of this process so far (user and system, every thread), in milliseconds. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

let tickMs: number | undefined;
/**
 * CPU time of another process (user and system, from /proc/<pid>/stat), in milliseconds, to the
 * kernel's clock tick (10 ms); undefined where there is no /proc.
 */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses: field 3 (state) first, utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    tickMs ??= 1000 / (Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100);
    return (Number(fields[11]) + Number(fields[12])) * tickMs;
  } catch {
    return undefined;
  }
}

/** The quickest of `runs` timings of `f`, in CPU milliseconds. */
export function timeMs(f: () => unknown, runs = 1): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = cpuMs();
    f();
    best = Math.min(best, cpuMs() - start);
  }
  return best;
}

export function allowedMs(baselineMs: number, floorMs = budget.floorMs): number {
  return budget.factor * baselineMs + floorMs;
}

/**
 * Runs the calls of one input and returns the ones over budget after a second measurement.
 * `calls` run in order (later ones may use earlier results through closures); each is a name and
 * a function. Exceptions propagate: the caller reports them with the seed.
 */
export class CallTimer {
  /** Total milliseconds per call name over the whole run: printed at the end, to see where a campaign spends its time. */
  static readonly totals = new Map<string, number>();
  private readonly timings: { name: string; ms: number; run: () => unknown }[] = [];
  constructor(private readonly text: string) {}

  run<T>(name: string, f: () => T): T {
    const start = cpuMs();
    const result = f();
    const ms = cpuMs() - start;
    this.timings.push({ name, ms, run: f });
    CallTimer.totals.set(name, (CallTimer.totals.get(name) ?? 0) + ms);
    return result;
  }

  /** Calls over budget twice, with their timings and the baseline. */
  overruns(): string[] {
    if (this.timings.length === 0) return [];
    let baseline: number | undefined;
    const slow: string[] = [];
    for (const t of this.timings) {
      if (t.ms <= budget.floorMs) continue;
      baseline ??= timeMs(() => plainParse(this.text), 3);
      if (t.ms <= allowedMs(baseline)) continue;
      // Measured again: the first may have met a collection or a busy neighbour.
      const again = timeMs(t.run);
      const baselineAgain = timeMs(() => plainParse(this.text), 3);
      const allowed = allowedMs(Math.max(baseline, baselineAgain));
      if (again > allowed)
        slow.push(
          `${t.name}: ${t.ms.toFixed(0)} ms, then ${again.toFixed(0)} ms; allowed ${allowed.toFixed(0)} ms (plain parse ${baselineAgain.toFixed(1)} ms)`,
        );
    }
    return slow;
  }
}

let gcFunction: (() => void) | undefined;
/** A full garbage collection, without starting node with --expose-gc. */
export function collectGarbage(): void {
  if (!gcFunction) {
    v8.setFlagsFromString('--expose-gc');
    gcFunction = vm.runInNewContext('gc') as () => void;
  }
  gcFunction();
}

/** The process's peak resident memory so far, in bytes (Linux), or undefined where unknown. */
export function peakRss(pid: number | 'self' = 'self'): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Saves a failing input where CI keeps test results, and says how to replay it. */
export function saveFailure(campaign: string, seed: number, index: number, text: string): string {
  const dir = path.join(import.meta.dirname, '..', '..', 'test-results', 'fuzz');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${campaign}-${seed}-${index}.yaml`);
  fs.writeFileSync(file, text);
  return `input saved to ${path.relative(process.cwd(), file)}; replay: KCH_FUZZ_SEED=${seed} KCH_FUZZ_ONLY=${index} npm test -- test/fuzz/${campaign}.test.ts`;
}

export const MiB = 1024 * 1024;

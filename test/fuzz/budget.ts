// Time and memory budgets of the fuzz campaign, relative to what the same machine does in the same
// run: a call may take at most `factor` times a plain `yaml` parse of the same input, plus a floor
// (a busy machine, a garbage collection). An overrun is measured again before it counts, so only a
// call that is slow twice fails: one that is worse than linear is slow every time.
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

/** The quickest of `runs` timings of `f`. */
export function timeMs(f: () => unknown, runs = 1): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    f();
    best = Math.min(best, performance.now() - start);
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
    const start = performance.now();
    const result = f();
    const ms = performance.now() - start;
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
      if (again > allowed) slow.push(`${t.name}: ${t.ms.toFixed(0)} ms, then ${again.toFixed(0)} ms; allowed ${allowed.toFixed(0)} ms (plain parse ${baselineAgain.toFixed(1)} ms)`);
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

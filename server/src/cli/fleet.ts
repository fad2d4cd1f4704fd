// Several kubeconfig contexts in one check (`--context a --context b`, `--contexts 'prod-*'`): the
// same files judged against each cluster by the one check path (check.ts), side by side, bounded
// in parallel, each context with its own time limit, so that one slow or unreachable cluster makes
// its own column unknown and never holds the others back. The result is one report whose entries
// each name their context (report.ts), printed by the same formatters.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { driftFindings, type ContextTrouble } from '../core/findings';
import { globMatch } from '../core/gitops/repository';
import type { ClusterProblem, KubeconfigSummary } from '../cluster';
import type { CheckOutcome } from './check';
import { describeFsError, readTextFile } from './files';
import type { CheckedObject, CheckReport, FleetContext } from './report';

/** The contexts a fleet check asks, in the order given: names first, then each glob's matches in the kubeconfig's order. */
export function resolveContexts(
  summary: KubeconfigSummary,
  names: readonly string[],
  globs: readonly string[],
): { ok: true; contexts: string[] } | { ok: false; message: string } {
  const known = summary.contexts.map((c) => c.name);
  const listed = () => known.join(', ') || 'none';
  const out: string[] = [];
  for (const name of names) {
    if (!known.includes(name))
      return { ok: false, message: `context ${JSON.stringify(name)} is not in the kubeconfig (contexts: ${listed()})` };
    if (!out.includes(name)) out.push(name);
  }
  for (const glob of globs) {
    const matched = known.filter((name) => globMatch(glob, name));
    if (matched.length === 0)
      return { ok: false, message: `--contexts ${JSON.stringify(glob)} matches no context (contexts: ${listed()})` };
    for (const name of matched) if (!out.includes(name)) out.push(name);
  }
  return { ok: true, contexts: out };
}

/** How a cluster problem reads in a table cell. */
export function troubleOf(problem: Pick<ClusterProblem, 'kind'>): ContextTrouble {
  switch (problem.kind) {
    case 'unreachable':
      return 'unreachable';
    case 'unauthenticated':
      return 'unauthenticated';
    case 'forbidden':
      return 'forbidden';
    default:
      return 'failed';
  }
}

/** One context's check as the fleet runs it: what it gave, or why it gave nothing. */
export type ContextRun =
  | { readonly context: string; readonly outcome: Extract<CheckOutcome, { ok: true }> }
  | { readonly context: string; readonly trouble: ContextTrouble; readonly message: string }
  | { readonly context: string; readonly usage: string };

export interface FleetLimits {
  /** How many contexts are checked at once. */
  readonly parallel: number;
  /** How long one context may take, whole, before its column says "timed out". */
  readonly timeoutMs: number;
}

/**
 * Runs `check` for each context, at most `parallel` at once, each within `timeoutMs`: one that
 * takes longer is given up (its `abandon` is called, which closes its connection) and reported as
 * timed out while the others finish.
 */
export async function runContexts(
  contexts: readonly string[],
  limits: FleetLimits,
  check: (context: string) => { result: Promise<ContextRun>; abandon(): void },
): Promise<ContextRun[]> {
  const results: ContextRun[] = new Array(contexts.length);
  let next = 0;
  const worker = async () => {
    while (next < contexts.length) {
      const i = next++;
      const context = contexts[i];
      const started = check(context);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<ContextRun>((resolve) => {
        timer = setTimeout(() => {
          started.abandon();
          resolve({
            context,
            trouble: 'timed out',
            message: `context ${context} gave no answer within ${Math.round(limits.timeoutMs / 1000)} s (--context-timeout)`,
          });
        }, limits.timeoutMs);
      });
      results[i] = await Promise.race([started.result, timedOut]);
      clearTimeout(timer);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limits.parallel, contexts.length)) }, worker));
  return results;
}

/**
 * One report of every context: each entry names its context; a context that gave nothing is one
 * entry, not judged, with why. The entries of one object stay together, in the contexts' order.
 */
export function fleetReport(runs: readonly ContextRun[], files: readonly string[]): CheckReport | undefined {
  const judged = runs.filter((r): r is Extract<ContextRun, { outcome: unknown }> => 'outcome' in r);
  const first = judged[0]?.outcome.report;
  if (!first) return undefined;
  const contexts: FleetContext[] = runs.map((r) =>
    'outcome' in r
      ? { context: r.context, source: singleSource(r.outcome.report) }
      : 'trouble' in r
        ? { context: r.context, problem: { state: r.trouble, message: r.message } }
        : { context: r.context, problem: { state: 'failed', message: r.usage } },
  );
  const entries: CheckedObject[] = [];
  for (const r of runs) {
    if ('outcome' in r) entries.push(...r.outcome.report.objects.map((o) => ({ ...o, context: r.context })));
    else
      entries.push({
        file: files[0] ?? '',
        title: 'every object',
        findings: [],
        notes: [],
        notJudged: 'trouble' in r ? r.message : r.usage,
        context: r.context,
      });
  }
  return {
    mode: first.mode,
    fieldManager: first.fieldManager,
    source: { kind: 'fleet', contexts },
    files: first.files,
    objects: withDrift(groupByObject(entries)),
  };
}

/**
 * After each plain object's entries, one entry of no context with what differs between the
 * clusters that hold it (core/findings/fleet.ts driftFindings), when something does.
 */
function withDrift(entries: readonly CheckedObject[]): CheckedObject[] {
  const out: CheckedObject[] = [];
  for (let i = 0; i < entries.length;) {
    const key = objectKey(entries[i]);
    let j = i;
    while (j < entries.length && objectKey(entries[j]) === key) j++;
    const group = entries.slice(i, j);
    out.push(...group);
    const first = group[0];
    const columns = group.flatMap((o) =>
      o.fields !== undefined && o.context !== undefined ? [{ context: o.context, fields: o.fields }] : [],
    );
    const drift = first.object && !first.rendered ? driftFindings(first.object, columns) : [];
    if (drift.length > 0) out.push({ file: first.file, title: first.title, findings: drift, notes: [] });
    i = j;
  }
  return out;
}

function singleSource(report: CheckReport): NonNullable<FleetContext['source']> {
  if (report.source.kind === 'fleet') throw new Error('a context of a fleet is one cluster or snapshot');
  return report.source;
}

/** The place of an entry across contexts: its file and object (a rendered object by its place in its render). */
export function objectKey(o: CheckedObject): string {
  return JSON.stringify([o.file, o.title, o.rendered ? [o.rendered.root, o.rendered.target, o.rendered.index] : null]);
}

/** Entries in the order of their object's first appearance; within one object, in the contexts' order. */
function groupByObject(entries: readonly CheckedObject[]): CheckedObject[] {
  const groups = new Map<string, CheckedObject[]>();
  for (const e of entries) {
    const key = objectKey(e);
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  return [...groups.values()].flat();
}

// ---------------------------------------------------------------------------------------------
// Snapshots of several contexts: DIR/fleet.json names each context's snapshot, DIR/context-N.

export const fleetSnapshotFormat = 'kube-conflict-hints/fleet-snapshot@1';
const fleetIndexFile = 'fleet.json';
/** The only folder names a fleet snapshot may name: never a path the index could steer elsewhere. */
const contextFolder = /^context-[1-9][0-9]{0,3}$/;

export interface FleetSnapshotIndex {
  readonly format: typeof fleetSnapshotFormat;
  readonly contexts: readonly { readonly context: string; readonly directory: string }[];
}

/** The folder each context's snapshot goes to, in DIR: `context-1`, `context-2`, … (a context's name may be any text). */
export function fleetSnapshotFolders(contexts: readonly string[]): FleetSnapshotIndex {
  return {
    format: fleetSnapshotFormat,
    contexts: contexts.map((context, i) => ({ context, directory: `context-${i + 1}` })),
  };
}

/**
 * Whether DIR can take a fleet snapshot: new, empty, or an earlier fleet snapshot (whose folders
 * the single snapshots then replace as they always do).
 */
export function prepareFleetDirectory(dir: string): { ok: true } | { ok: false; message: string } {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!stat) {
      fs.mkdirSync(dir, { recursive: true });
      return { ok: true };
    }
  } catch (e) {
    return { ok: false, message: `cannot use ${dir}: ${describeFsError(e)}` };
  }
  if (!stat.isDirectory()) return { ok: false, message: `${dir} exists and is not a directory` };
  const entries = fs.readdirSync(dir);
  if (entries.length === 0) return { ok: true };
  const earlier = readFleetIndex(dir);
  if (earlier.state !== 'ok')
    return {
      ok: false,
      message: `${dir} is not empty and holds no fleet snapshot: give an empty or new directory (nothing was removed)`,
    };
  const unknown = entries.filter((e) => e !== fleetIndexFile && !contextFolder.test(e));
  if (unknown.length > 0)
    return {
      ok: false,
      message: `${dir} holds ${unknown[0]}, which is no part of a fleet snapshot: nothing was removed`,
    };
  return { ok: true };
}

export function writeFleetIndex(dir: string, index: FleetSnapshotIndex): { ok: true } | { ok: false; message: string } {
  const file = path.join(dir, fleetIndexFile);
  try {
    const existing = fs.lstatSync(file, { throwIfNoEntry: false });
    if (existing?.isDirectory()) return { ok: false, message: `cannot write ${file}: a directory has its name` };
    if (existing) fs.unlinkSync(file);
    fs.writeFileSync(file, `${JSON.stringify(index, null, 2)}\n`, { flag: 'wx' });
    return { ok: true };
  } catch (e) {
    return { ok: false, message: `cannot write ${file}: ${describeFsError(e)}` };
  }
}

export type FleetIndexRead =
  | { readonly state: 'missing' }
  | { readonly state: 'invalid'; readonly message: string }
  | { readonly state: 'ok'; readonly index: FleetSnapshotIndex };

/** DIR/fleet.json, checked field by field: each folder one of `context-N`, a directory of DIR's own, not a link. */
export function readFleetIndex(dir: string): FleetIndexRead {
  const file = path.join(dir, fleetIndexFile);
  const stat = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!stat) return { state: 'missing' };
  if (!stat.isFile()) return { state: 'invalid', message: `${file} is not a regular file` };
  const read = readTextFile(file);
  if (!read.ok) return { state: 'invalid', message: read.message };
  let value: unknown;
  try {
    value = JSON.parse(read.text);
  } catch {
    return { state: 'invalid', message: `${file} is not JSON` };
  }
  const bad = (why: string): FleetIndexRead => ({
    state: 'invalid',
    message: `${file} is not a fleet snapshot this version can read (format ${fleetSnapshotFormat}): ${why}`,
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('not an object');
  const v = value as Record<string, unknown>;
  if (v.format !== fleetSnapshotFormat) return bad(`format is ${JSON.stringify(v.format)}`);
  if (!Array.isArray(v.contexts) || v.contexts.length === 0 || v.contexts.length > 1000)
    return bad('contexts is not a list of 1 to 1000 entries');
  const contexts: { context: string; directory: string }[] = [];
  for (const entry of v.contexts as unknown[]) {
    if (typeof entry !== 'object' || entry === null) return bad('a context entry is not an object');
    const { context, directory } = entry as Record<string, unknown>;
    if (typeof context !== 'string' || context === '' || context.length > 253) return bad('a context has no name');
    if (typeof directory !== 'string' || !contextFolder.test(directory))
      return bad(`the folder ${JSON.stringify(directory)} is not context-N`);
    const folder = fs.lstatSync(path.join(dir, directory), { throwIfNoEntry: false });
    if (!folder?.isDirectory()) return bad(`${directory} is not a directory of the snapshot's own`);
    if (contexts.some((c) => c.context === context || c.directory === directory))
      return bad(`${context} or ${directory} is listed twice`);
    contexts.push({ context, directory });
  }
  return { state: 'ok', index: { format: fleetSnapshotFormat, contexts } };
}

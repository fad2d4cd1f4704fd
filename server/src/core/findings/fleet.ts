// Several clusters side by side: the same manifest judged against each kubeconfig context, then
// shown together. A finding that is the same in several contexts (its code, place, field and
// words) is told once, naming them; the state of each object in each context fits a table cell.
// Plain data in, plain data out: the command line's report and the editor's view both use it.
import { meansNotJudged } from './catalogue';
import type { Finding } from './finding';

/** What one context said about one object (or one input). */
export interface ContextFindings {
  readonly context: string;
  readonly findings: readonly Finding[];
}

/** One finding told once for the contexts that share it, in the order the contexts were given. */
export interface SharedFinding {
  readonly finding: Finding;
  readonly contexts: readonly string[];
}

/** The same thing said in several contexts: same code, range, field, manager and message. */
function sameness(f: Finding): string {
  return JSON.stringify([
    f.code,
    f.range.start.line,
    f.range.start.character,
    f.range.end.line,
    f.range.end.character,
    f.path ?? null,
    f.manager?.manager ?? null,
    f.message,
  ]);
}

/**
 * Every finding of every context once: where several contexts say the same thing it is one entry
 * naming them all, at the place of its first appearance (the first context's order, then the next's).
 */
export function mergeAcrossContexts(columns: readonly ContextFindings[]): SharedFinding[] {
  const merged = new Map<string, { finding: Finding; contexts: string[] }>();
  for (const { context, findings } of columns) {
    for (const finding of findings) {
      const key = sameness(finding);
      const entry = merged.get(key);
      if (!entry) merged.set(key, { finding, contexts: [context] });
      else if (!entry.contexts.includes(context)) entry.contexts.push(context);
    }
  }
  return [...merged.values()];
}

/** `[prod-eu, prod-us]`: how a message names the contexts it holds in. */
export function contextsLabel(contexts: readonly string[]): string {
  return `[${contexts.join(', ')}]`;
}

/** Why a whole context was not judged (it could not be reached, refused the user, took too long). */
export type ContextTrouble = 'unreachable' | 'unauthenticated' | 'forbidden' | 'timed out' | 'failed';

/**
 * One object in one context, as a table cell says it: what would stop the apply first, else
 * whether the object exists. `absent` means the context's entry for the object is missing (its
 * render or read did not reach it); `trouble` is the whole context's.
 */
export function fleetCell(entry: FleetEntry | 'absent', trouble?: ContextTrouble): string {
  if (trouble) return trouble;
  if (entry === 'absent') return '-';
  const { findings } = entry;
  if (entry.notJudged || findings.some((f) => meansNotJudged(f.code))) return 'not judged';
  const conflicts = findings.filter((f) => f.code === 'field-conflict');
  if (conflicts.length > 0) {
    const managers = [...new Set(conflicts.map((f) => f.manager?.manager ?? '?'))];
    return `conflict with ${managers.join(', ')}`;
  }
  const error = findings.find((f) => f.severity === 'error');
  if (error) return error.code;
  const warning = findings.find((f) => f.severity === 'warning');
  if (warning) return warning.code;
  return entry.live === 'exists' ? 'exists' : entry.live === 'absent' ? 'missing' : 'judged';
}

/** What a table cell is made from: the object's findings in one context and what the cluster said of it. */
export interface FleetEntry {
  readonly findings: readonly Finding[];
  readonly notJudged?: boolean;
  /** Whether the object exists in that cluster; undefined when the facts do not say (a render, an input). */
  readonly live?: 'exists' | 'absent';
}

// Several clusters side by side: the same manifest judged against each kubeconfig context, then
// shown together. A finding that is the same in several contexts (its code, place, field and
// words) is told once, naming them; the state of each object in each context fits a table cell.
// Plain data in, plain data out: the command line's report and the editor's view both use it.
import type { JsonObject, JsonValue } from '../json';
import { absoluteRange, forEachNode, type ManifestResource, type Range } from '../manifest/manifest';
import { formatServerPath, type ManagerIdentity } from '../ssa/messages';
import { valueAtFieldPath, type FieldPath } from '../ssa/path';
import type { SchemaModel } from '../ssa/schema';
import { defaultSeverity, meansNotJudged } from './catalogue';
import type { Finding, ObjectIdentity } from './finding';
import { decodeOwnership, ownersIn, serverPath, type FieldOwner } from './ownership';
import { showValue } from './show-value';

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

/** One field the manifest sets, as one cluster holds it: its live value and who owns it there. */
export interface FieldState {
  /** In the server's notation: `.spec.replicas`. */
  readonly path: string;
  /** Where the manifest sets it (its key), absolute. */
  readonly range: Range;
  /** The live value; undefined where the live object does not have the field. */
  readonly live: JsonValue | undefined;
  /** The value the manifest writes. */
  readonly manifest: JsonValue;
  /** The managers that own exactly this field, as `"name"` with their subresource, sorted. */
  readonly owners: readonly string[];
}

/**
 * The leaves the manifest sets (scalars, and empty maps or lists written as values), each with its
 * live value and owners on the live object: what can differ between clusters. Identity fields
 * (`apiVersion`, `kind`, `metadata.name`, `metadata.namespace`) are the same by construction.
 */
export function fieldStates(
  resource: ManifestResource,
  live: JsonObject,
  schema: SchemaModel | undefined,
): FieldState[] {
  const ownership = decodeOwnership(live);
  const out: FieldState[] = [];
  forEachNode(resource, (visit) => {
    if (
      visit.path.length === 1 &&
      visit.path[0].kind === 'field' &&
      ['apiVersion', 'kind'].includes(visit.path[0].name)
    )
      return false;
    if (visit.node.kind !== 'scalar') return true;
    const written = visit.node.value;
    const path = serverPath(resource, visit.path, schema);
    const shown = formatServerPath(path);
    if (shown === '.metadata.name' || shown === '.metadata.namespace') return false;
    const owners = exactOwners(ownership, path)
      .map((o) => ownerLabel(o.manager))
      .sort();
    out.push({
      path: shown,
      range: absoluteRange(resource, visit.keyRange),
      live: valueAtFieldPath(live, path),
      manifest: written,
      owners: [...new Set(owners)],
    });
    return false;
  });
  return out;
}

/**
 * The managers that own the field exactly, else those that own the nearest ancestor as a whole (an
 * atomic struct or map, such as a label selector, is recorded at its own path, not its leaves').
 */
function exactOwners(ownership: ReturnType<typeof decodeOwnership>, path: FieldPath): FieldOwner[] {
  for (let n = path.length; n > 0; n--) {
    const owners = ownersIn(ownership, path.slice(0, n)).filter((o) => o.exact);
    if (owners.length > 0) return owners;
  }
  return [];
}

function ownerLabel(m: ManagerIdentity): string {
  return m.subresource ? `${m.manager} (${m.subresource})` : m.manager;
}

/** One object's fields in one context, or the object missing there. */
export interface ContextFields {
  readonly context: string;
  readonly fields: readonly FieldState[] | 'missing';
}

/**
 * Where the same object differs between the clusters that hold it — a field's live value or its
 * owners — one information finding on the field's line naming each context's value and owners
 * (`staging 3 (kubectl), prod-eu 5 (kube-controller-manager (scale))`): "works in staging" is
 * then visible before the production apply. Contexts that lack the object are named once.
 */
export function driftFindings(object: ObjectIdentity, columns: readonly ContextFields[]): Finding[] {
  const holding = columns.filter((c): c is ContextFields & { fields: readonly FieldState[] } => c.fields !== 'missing');
  if (holding.length < 2) return [];
  const byPath = new Map<string, { range: Range; states: { context: string; state: FieldState | undefined }[] }>();
  for (const c of holding)
    for (const f of c.fields) if (!byPath.has(f.path)) byPath.set(f.path, { range: f.range, states: [] });
  for (const [path, entry] of byPath)
    for (const c of holding) entry.states.push({ context: c.context, state: c.fields.find((f) => f.path === path) });
  const out: Finding[] = [];
  for (const [path, { range, states }] of byPath) {
    const shown = states.map(({ state }) =>
      JSON.stringify([state?.live === undefined ? null : showValue(state.live), state?.owners ?? []]),
    );
    if (new Set(shown).size < 2) continue;
    const parts = states.map(({ context, state }) => {
      const value = state?.live === undefined ? 'not set' : showValue(state.live);
      const owners = state && state.owners.length > 0 ? ` (${state.owners.join(', ')})` : '';
      return `${context} ${value}${owners}`;
    });
    out.push({
      code: 'context-drift',
      severity: defaultSeverity('context-drift'),
      message: `${path} differs between contexts: ${parts.join('; ')}`,
      range,
      object,
      path,
    });
  }
  return out;
}

// Several clusters side by side: the same manifest judged against each kubeconfig context, then
// shown together. A finding that is the same in several contexts (its code, place, field and
// words) is told once, naming them; the state of each object in each context fits a table cell.
// Plain data in, plain data out: the command line's report and the editor's view both use it.
import type { JsonObject, JsonValue } from '../json';
import { jsonDepthExceeds } from '../json';
import { globMatch } from '../gitops/repository';
import {
  absoluteRange,
  locate,
  locateScalarInText,
  manifestLimits,
  nodeToJson,
  type ManifestNode,
  type ManifestResource,
  type Range,
} from '../manifest/manifest';
import { pathElementKey } from '../ssa/field-set';
import { valueAtPath } from '../ssa/merge';
import { formatServerPath, type ManagerIdentity } from '../ssa/messages';
import { valueAtFieldPath, type FieldPath } from '../ssa/path';
import { rootTypeFor, type SchemaModel } from '../ssa/schema';
import { defaultSeverity, meansNotJudged, restsOnCluster } from './catalogue';
import type { ResourceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import { decodeOwnership, exactOrWholeOwners, ownersOf, serverPath } from './ownership';
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

/**
 * The contexts a list of names and globs selects, in the order given: an entry that names a context
 * is that context, any other is a glob over the kubeconfig's contexts (`prod-*`, `{eu,us}`, as
 * `--contexts` reads them), its matches in the kubeconfig's order. `unmatched`: the entries that
 * select nothing, for the user to be told.
 */
export function contextsNamed(
  known: readonly string[],
  entries: readonly string[],
): { contexts: string[]; unmatched: string[] } {
  const contexts: string[] = [];
  const unmatched: string[] = [];
  for (const entry of entries) {
    const matched = known.includes(entry) ? [entry] : known.filter((name) => globMatch(entry, name));
    if (matched.length === 0) unmatched.push(entry);
    for (const name of matched) if (!contexts.includes(name)) contexts.push(name);
  }
  return { contexts, unmatched };
}

/** A finding told once for the contexts that share it: its message starts with their names. */
export interface FleetFinding extends Finding {
  /** The contexts it holds in, in the order given; the fixes that take a live value take theirs. */
  readonly contexts: readonly string[];
}

/**
 * What the editor shows on a document judged in several contexts: each shared finding once, its
 * message prefixed `[prod-eu, prod-us] `, in the order mergeAcrossContexts gives.
 */
export function fleetFindings(columns: readonly ContextFindings[]): FleetFinding[] {
  return mergeAcrossContexts(columns).map(({ finding, contexts }) => ({
    ...finding,
    // What the text alone says (a generateName kubectl refuses) holds everywhere: said as it is.
    message:
      !restsOnCluster(finding.code) && contexts.length === columns.length
        ? finding.message
        : `${contextsLabel(contexts)} ${finding.message}`,
    contexts,
  }));
}

/** One context's column of a field's hover: what the cluster said of the object, or why nothing. */
export interface FleetHoverColumn {
  readonly context: string;
  readonly facts: ResourceFacts | undefined;
  /** Why the context gave nothing (its cluster unreachable, …), said in the row instead. */
  readonly trouble?: string;
}

/**
 * The hover of a field judged in several contexts: one Markdown table, a row per context, with the
 * live value there (or why there is none) and the managers that own the field. A Secret's values
 * are never read: its rows say so.
 */
export function fleetFieldHover(
  resource: ManifestResource,
  path: FieldPath,
  node: ManifestNode,
  columns: readonly FleetHoverColumn[],
): string {
  const mine = node.kind === 'scalar' ? nodeToJson(node) : undefined;
  const secret =
    resource.kind === 'Secret' &&
    resource.apiVersion === 'v1' &&
    path[0]?.kind === 'field' &&
    !['metadata', 'apiVersion', 'kind'].includes(path[0].name);
  const lines = [
    `**\`${formatServerPath(path)}\`** in ${columns.length} contexts${mine === undefined ? '' : ` (manifest: \`${tableCell(showValue(mine))}\`)`}`,
    '',
    '| context | live value | managers |',
    '|---|---|---|',
  ];
  for (const { context, facts, trouble } of columns) {
    lines.push(
      `| ${tableCell(context)} | ${tableCell(liveCell(resource, path, facts, trouble, secret))} | ${tableCell(managersCell(path, facts))} |`,
    );
  }
  return lines.join('\n');
}

function liveCell(
  resource: ManifestResource,
  path: FieldPath,
  facts: ResourceFacts | undefined,
  trouble: string | undefined,
  secret: boolean,
): string {
  if (trouble) return `_${trouble}_`;
  if (!facts || facts.kind.state === 'pending' || facts.live.state === 'pending') return '_not known yet_';
  if (facts.kind.state === 'notServed') return '_kind not served_';
  if (facts.kind.state === 'unavailable' || facts.live.state === 'unavailable') return '_not known_';
  if (facts.live.state === 'absent' || facts.live.state !== 'exists') return '_no such object_';
  if (secret) return '_not read (Secret)_';
  const root = facts.schema && rootTypeFor(facts.schema, resource.apiVersion, resource.kind);
  const value = valueAtPath(facts.schema, root, facts.live.object, path);
  if (value === undefined) return '_not set_';
  if (jsonDepthExceeds(value, manifestLimits.depth)) return `_nested deeper than ${manifestLimits.depth} levels_`;
  return `\`${showValue(value)}\``;
}

function managersCell(path: FieldPath, facts: ResourceFacts | undefined): string {
  if (facts?.live.state !== 'exists') return '';
  const owners = ownersOf(facts.live.object, path);
  if (owners.length === 0) return 'none';
  return owners
    .map(
      (o) =>
        `${o.manager.manager}${o.manager.subresource ? ` (${o.manager.subresource})` : ''}${o.exact ? '' : ' (below)'}`,
    )
    .join(', ');
}

/** Text inside a Markdown table cell: a bar would end the cell, a line break the row. */
function tableCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/[\r\n]+/g, ' ');
}

/**
 * The hover of an object's identity judged in several contexts: a row per context with its table
 * cell (fleetCell: a conflict and with whom, exists, missing, or why there is no answer).
 */
export function fleetObjectHover(
  resource: ManifestResource,
  columns: readonly (FleetHoverColumn & { readonly findings: readonly Finding[] })[],
): string {
  const lines = [
    `**${resource.kind} ${JSON.stringify(resource.name ?? resource.generateName ?? '')}** in ${columns.length} contexts`,
    '',
    '| context | state |',
    '|---|---|',
  ];
  for (const { context, facts, trouble, findings } of columns)
    lines.push(
      `| ${tableCell(context)} | ${tableCell(trouble ? `not judged: ${trouble}` : fleetCell(fleetEntryOf(facts, findings)))} |`,
    );
  return lines.join('\n');
}

/** What a table cell is made of, from one context's facts and findings of an object. */
export function fleetEntryOf(facts: ResourceFacts | undefined, findings: readonly Finding[]): FleetEntry {
  const pending = !facts || facts.kind.state === 'pending' || facts.live.state === 'pending';
  const unknown = pending || facts.kind.state === 'unavailable' || facts.live.state === 'unavailable';
  return {
    findings,
    ...(unknown ? { notJudged: true } : {}),
    ...(facts?.live.state === 'exists'
      ? { live: 'exists' as const }
      : facts?.live.state === 'absent'
        ? { live: 'absent' as const }
        : {}),
  };
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
  return writtenLeaves(resource, schema).map((leaf) => {
    const owners = exactOrWholeOwners(ownership, leaf.keys).map(ownerLabel).sort();
    return {
      path: leaf.shown,
      live: valueAtFieldPath(live, leaf.path),
      manifest: leaf.manifest,
      owners: [...new Set(owners)],
      // Placed only when a finding is put on it (most fields are the same everywhere).
      get range(): Range {
        return leaf.range();
      },
    };
  });
}

/** A leaf the manifest sets: its path as the server names it, its value, and where it is written (placed once, when asked). */
interface WrittenLeaf {
  readonly path: FieldPath;
  /** `path` as pathElementKey gives each element: a leaf is looked up in every context's managedFields. */
  readonly keys: readonly string[];
  readonly shown: string;
  readonly manifest: JsonValue;
  range(): Range;
}

/**
 * The leaves of a resource under a schema, found once: every context whose schema is the same
 * (the same OpenAPI document, cluster/share.ts) compares the same leaves, and naming each path the
 * server's way is the same work for each. They are read from the object's values, in the order
 * written; a leaf's place is read from the text where it is written on one line (as
 * core/manifest/written-scalar.ts places a finding), else from the node tree, which is then built:
 * a file compared across contexts is not fully parsed for the fields that do not differ.
 */
const leavesByResource = new WeakMap<ManifestResource, { schema: SchemaModel | undefined; leaves: WrittenLeaf[] }[]>();

function writtenLeaves(resource: ManifestResource, schema: SchemaModel | undefined): readonly WrittenLeaf[] {
  let known = leavesByResource.get(resource);
  if (!known) leavesByResource.set(resource, (known = []));
  const found = known.find((k) => k.schema === schema);
  if (found) return found.leaves;
  const leaves: WrittenLeaf[] = [];
  const walk = (value: JsonValue, indexPath: FieldPath): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...indexPath, { kind: 'index', index }]));
      return;
    }
    if (value !== null && typeof value === 'object') {
      for (const [name, member] of Object.entries(value)) {
        if (indexPath.length === 0 && (name === 'apiVersion' || name === 'kind')) continue;
        walk(member, [...indexPath, { kind: 'field', name }]);
      }
      return;
    }
    const path = serverPath(resource, indexPath, schema);
    const shown = formatServerPath(path);
    if (shown === '.metadata.name' || shown === '.metadata.namespace') return;
    let placed: Range | undefined;
    const range = () =>
      (placed ??=
        locateScalarInText(resource, indexPath)?.keyRange ??
        locate(resource, indexPath)?.keyRange ??
        absoluteRange(resource, resource.root.range));
    leaves.push({ path, keys: path.map(pathElementKey), shown, manifest: value, range });
  };
  walk(resource.object, []);
  // A few schemas at most (the versions of a fleet): the oldest is forgotten.
  if (known.length >= 4) known.shift();
  known.push({ schema, leaves });
  return leaves;
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
  // The first context's state of each path places its finding (read only for a path that differs).
  const byPath = new Map<string, { first: FieldState; states: { context: string; state: FieldState | undefined }[] }>();
  for (const c of holding)
    for (const f of c.fields) if (!byPath.has(f.path)) byPath.set(f.path, { first: f, states: [] });
  for (const c of holding) {
    const mine = new Map(c.fields.map((f) => [f.path, f]));
    for (const [path, entry] of byPath) entry.states.push({ context: c.context, state: mine.get(path) });
  }
  const out: Finding[] = [];
  for (const [path, { first, states }] of byPath) {
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
      range: first.range,
      object,
      path,
    });
  }
  return out;
}

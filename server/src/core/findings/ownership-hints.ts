// Ownership at a glance, as a blame view shows authorship: at the end of each line of a manifest that
// sets a field another field manager owns on the live object, that manager and how long ago it wrote
// (`kubectl-edit · 3 days ago`; `+1` when more managers own it), and in the tooltip every owner of
// the field, as the hover lists them. A line only the user's own field manager owns gets nothing:
// what the user wrote and applied is not news. Pure: the editor passes the live object, the settings
// and the time, so the relative times are tested without a clock.
import type { JsonObject } from '../json';
import { forEachNode, type ManifestResource } from '../manifest/manifest';
import type { SourceMap } from '../sources/source-map';
import { formatServerPath, managerIdentifier } from '../ssa/messages';
import type { FieldPath } from '../ssa/path';
import type { ApplyMode } from '../ssa/predict';
import type { SchemaModel } from '../ssa/schema';
import { locateOptions } from './locate';
import { ago, ownersTable } from './hover-text';
import { decodeOwnership, ownersIn, serverPath, type FieldOwner } from './ownership';

/** Who the user applies as: the owners of this identity are the user's own. */
export interface HintSettings {
  readonly fieldManager: string;
  readonly applyMode: ApplyMode;
}

export interface OwnershipHint {
  /** The line (of the text the resource was parsed from, 0-based) the hint is shown at the end of. */
  readonly line: number;
  /** `kubectl-edit · 3 days ago`, `kube-controller-manager (scale) +1`. */
  readonly label: string;
  /** Markdown: every owner of each field set on the line (the user's own too). */
  readonly tooltip: string;
  /** The owners other than the user, the most recent first (a write with no recorded time last). */
  readonly others: readonly FieldOwner[];
  /** The fields set on the line that others own, in the server's notation. */
  readonly paths: readonly string[];
}

/** Lines to look at, both ends included; undefined: every line. */
export interface LineSpan {
  readonly start: number;
  readonly end: number;
}

interface OwnedField {
  readonly path: FieldPath;
  /** Absolute line of the field's key (or list item marker) in the manifest. */
  readonly line: number;
  /** Its exact owners on the live object: the managers that set this field, not only fields below. */
  readonly owners: readonly FieldOwner[];
}

/** The hints of a plain manifest: each on the line of the field's key. */
export function ownershipHints(
  resource: ManifestResource,
  live: JsonObject,
  schema: SchemaModel | undefined,
  settings: HintSettings,
  now: number,
  lines?: LineSpan,
): OwnershipHint[] {
  const byLine = new Map<number, OwnedField[]>();
  for (const field of ownedFields(resource, live, schema, lines))
    byLine.set(field.line, [...(byLine.get(field.line) ?? []), field]);
  return hintsOf(byLine, settings, now);
}

/**
 * The hints of a rendered object (`resource`, document `resource.documentIndex` of the render that
 * `map` describes) on the lines of the source file `file` that set its fields: a template line, the
 * values line it reads, a patch's or a resource file's key.
 */
export function renderedOwnershipHints(
  resource: ManifestResource,
  live: JsonObject,
  schema: SchemaModel | undefined,
  settings: HintSettings,
  now: number,
  map: SourceMap,
  file: string,
): OwnershipHint[] {
  const options = locateOptions(resource, schema);
  const byLine = new Map<number, OwnedField[]>();
  for (const field of ownedFields(resource, live, schema)) {
    const here = new Set(
      map
        .locate(resource.documentIndex, field.path, options)
        .filter((l) => l.file === file)
        .map((l) => l.range.start.line),
    );
    for (const line of here) byLine.set(line, [...(byLine.get(line) ?? []), { ...field, line }]);
  }
  return hintsOf(byLine, settings, now);
}

/** Whether an owner is the identity the user applies as (in server-side mode an Apply; never a subresource's writer). */
export function isOwnManager(owner: FieldOwner, settings: HintSettings): boolean {
  const m = owner.manager;
  return (
    m.manager === settings.fieldManager &&
    !m.subresource &&
    (settings.applyMode !== 'serverSide' || m.operation === 'Apply')
  );
}

/** The fields the manifest sets that some manager owns exactly, decoded once for the whole object. */
function ownedFields(
  resource: ManifestResource,
  live: JsonObject,
  schema: SchemaModel | undefined,
  lines?: LineSpan,
): OwnedField[] {
  const ownership = decodeOwnership(live);
  if (ownership.entries.length === 0) return [];
  const out: OwnedField[] = [];
  forEachNode(resource, (visit) => {
    const line = visit.keyRange.start.line + resource.lineOffset;
    // Only where the editor looks (a 4,000-key ConfigMap scrolled to its top asks about a screenful).
    if (lines && (line > lines.end || visit.node.range.end.line + resource.lineOffset < lines.start)) return false;
    const path = serverPath(resource, visit.path, schema);
    const owners = ownersIn(ownership, path).filter((o) => o.exact);
    if (owners.length > 0 && (!lines || line >= lines.start)) out.push({ path, line, owners });
    return true;
  });
  return out;
}

function hintsOf(
  byLine: ReadonlyMap<number, readonly OwnedField[]>,
  settings: HintSettings,
  now: number,
): OwnershipHint[] {
  const hints: OwnershipHint[] = [];
  for (const [line, fields] of [...byLine].sort((a, b) => a[0] - b[0])) {
    const others = new Map<string, FieldOwner>();
    for (const field of fields) {
      for (const o of field.owners)
        if (!isOwnManager(o, settings) && !others.has(managerIdentifier(o.manager)))
          others.set(managerIdentifier(o.manager), o);
    }
    if (others.size === 0) continue;
    const sorted = [...others.values()].sort((a, b) => (timeOf(a) === timeOf(b) ? 0 : timeOf(a) < timeOf(b) ? 1 : -1));
    const latest = sorted[0]!;
    const relative = latest.time !== undefined ? ago(latest.time, now) : undefined;
    const label = `${ownerName(latest)}${relative ? ` · ${relative}` : ''}${sorted.length > 1 ? ` +${sorted.length - 1}` : ''}`;
    const contested = fields.filter((f) => f.owners.some((o) => !isOwnManager(o, settings)));
    hints.push({
      line,
      label,
      tooltip: tooltipOf(contested, now),
      others: sorted,
      paths: contested.map((f) => formatServerPath(f.path)),
    });
  }
  return hints;
}

/** One table per set of owners; fields with the same owners (a list item and its key field) share it. */
function tooltipOf(fields: readonly OwnedField[], now: number): string {
  const sections: { paths: string[]; key: string; owners: readonly FieldOwner[] }[] = [];
  for (const f of fields) {
    const key = f.owners.map((o) => managerIdentifier(o.manager)).join('\n');
    const same = sections.find((s) => s.key === key);
    if (same) same.paths.push(formatServerPath(f.path));
    else sections.push({ paths: [formatServerPath(f.path)], key, owners: f.owners });
  }
  return sections
    .map((s) => [s.paths.map((p) => `**\`${p}\`**`).join(', '), '', ...ownersTable(s.owners, now)].join('\n'))
    .join('\n\n');
}

/** `kubectl-edit`; with its subresource, which tells an autoscaler from the controller: `kube-controller-manager (scale)`. */
function ownerName(o: FieldOwner): string {
  return o.manager.subresource ? `${o.manager.manager} (${o.manager.subresource})` : o.manager.manager;
}

function timeOf(o: FieldOwner): number {
  const t = o.time !== undefined ? Date.parse(o.time) : Number.NaN;
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

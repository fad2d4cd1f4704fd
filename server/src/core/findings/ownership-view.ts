// A read-only view of a live object in the shape of `kubectl get -o yaml`, with each line's owners
// written after it as a comment: `replicas: 5  # kube-controller-manager (Update, scale)`.
// managedFields itself is left out (the comments say the same, readably); a legend at the top lists
// each manager once, and the view can mark only one manager's lines (`manager`).
import { stringify } from 'yaml';
import { isJsonObject, jsonCutAt, type JsonObject } from '../json';
import { forEachNode, parseManifestText } from '../manifest/manifest';
import { when } from './hover-text';
import { decodeOwnership, ownersIn, serverPath, type Ownership } from './ownership';
import { setPaths } from '../ssa/field-set';
import type { SchemaModel } from '../ssa/schema';

/** One managedFields entry in the legend. */
export interface OwnershipLegendEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly subresource?: string;
  readonly apiVersion: string;
  /** RFC 3339, when the server recorded one. */
  readonly time?: string;
  /** How many fields the entry owns (each field, list item and set member it names). */
  readonly fields: number;
}

export interface OwnershipViewOptions {
  /** Mark only the lines this manager (by name) owns; the legend still lists every manager. */
  readonly manager?: string;
  /** For the legend's "3 min ago"; without it the legend gives the times as recorded. */
  readonly now?: number;
}

/** Each manager of the live object once, in the server's order, with how many fields it owns. */
export function ownershipLegend(live: JsonObject): OwnershipLegendEntry[] {
  return legendOf(decodeOwnership(live));
}

function legendOf(ownership: Ownership): OwnershipLegendEntry[] {
  return ownership.entries.map((e) => ({
    manager: e.identity.manager,
    operation: e.identity.operation,
    ...(e.identity.subresource ? { subresource: e.identity.subresource } : {}),
    apiVersion: e.apiVersion,
    ...(e.time !== undefined ? { time: e.time } : {}),
    fields: setPaths(e.fields).length,
  }));
}

/** The legend as YAML comments, aligned: `#   kubectl-edit   Update   apps/v1   3 min ago (…)   1 field`. */
function legendText(legend: readonly OwnershipLegendEntry[], options: OwnershipViewOptions): string[] {
  if (legend.length === 0) return ['# Managers: none recorded'];
  const rows = legend.map((e) => [
    e.manager,
    [e.operation, e.subresource].filter(Boolean).join(', '),
    e.apiVersion,
    e.time === undefined ? 'time not recorded' : options.now !== undefined ? when(e.time, options.now) : e.time,
    `${e.fields} ${e.fields === 1 ? 'field' : 'fields'}`,
  ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const filtered = options.manager !== undefined;
  const header = filtered
    ? `# Managers (only the lines of ${JSON.stringify(options.manager)} are marked):`
    : '# Managers:';
  return [
    header,
    ...rows.map((r, i) =>
      `#  ${filtered && legend[i]!.manager === options.manager ? '>' : ' '} ${r.map((c, j) => (j < r.length - 1 ? c.padEnd(widths[j]!) : c)).join('   ')}`.trimEnd(),
    ),
  ];
}

/**
 * Levels of the live object shown. A live object may nest 10,000 levels (the API server's JSON
 * limit); rendering and reading back that many recursively runs out of stack, and nobody reads a
 * line indented 200 columns. Deeper values are shown as `deeperMarker`.
 */
export const ownershipViewDepth = 100;
export const deeperMarker = `… nested deeper than ${ownershipViewDepth} levels, not shown`;

export function ownershipView(
  live: JsonObject,
  schema: SchemaModel | undefined,
  options: OwnershipViewOptions = {},
): string {
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const { managedFields: _omitted, ...rest } = metadata;
  const shown = jsonCutAt({ ...live, metadata: rest }, ownershipViewDepth, deeperMarker);
  const text = stringify(shown, { lineWidth: 0, aliasDuplicateObjects: false });
  // Decoded once for the whole view: a 4,000-key ConfigMap asks 4,000 questions.
  const ownership = decodeOwnership(live);
  const legend = legendText(legendOf(ownership), options);
  const resource = parseManifestText(text).resources[0];
  if (!resource) return [...legend, text].join('\n');
  const lines = text.split('\n');
  const ownersByLine = new Map<number, string>();
  forEachNode(resource, (visit) => {
    const owners = ownersIn(ownership, serverPath(resource, visit.path, schema)).filter(
      (o) => o.exact && (options.manager === undefined || o.manager.manager === options.manager),
    );
    if (owners.length === 0) return;
    const label = owners
      .map((o) => `${o.manager.manager} (${[o.manager.operation, o.manager.subresource].filter(Boolean).join(', ')})`)
      .join(', ');
    ownersByLine.set(visit.keyRange.start.line + resource.lineOffset, label);
  });
  let longest = 0;
  for (const l of lines) longest = Math.max(longest, l.length);
  const width = Math.min(60, longest + 2);
  // At least two spaces before the `#`: glued to a long value it would be part of the value, for
  // YAML and for the view's grammar alike.
  const marked = lines.map((line, i) =>
    ownersByLine.has(i) ? `${line.padEnd(Math.max(width, line.length + 2))}# ${ownersByLine.get(i)}` : line,
  );
  return [...legend, ...marked].join('\n');
}

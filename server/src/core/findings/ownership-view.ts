// A read-only view of a live object in the shape of `kubectl get -o yaml`, with each line's owners
// written after it as a comment: `replicas: 5  # kube-controller-manager (Update, scale)`.
// managedFields itself is left out (the comments say the same, readably).
import { stringify } from 'yaml';
import { isJsonObject, jsonCutAt, type JsonObject } from '../json';
import { forEachNode, parseManifestText } from '../manifest/manifest';
import { decodeOwnership, ownersIn, serverPath } from './ownership';
import type { SchemaModel } from '../ssa/schema';

/**
 * Levels of the live object shown. A live object may nest 10,000 levels (the API server's JSON
 * limit); rendering and reading back that many recursively runs out of stack, and nobody reads a
 * line indented 200 columns. Deeper values are shown as `deeperMarker`.
 */
export const ownershipViewDepth = 100;
export const deeperMarker = `… nested deeper than ${ownershipViewDepth} levels, not shown`;

export function ownershipView(live: JsonObject, schema: SchemaModel | undefined): string {
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const { managedFields: _omitted, ...rest } = metadata;
  const shown = jsonCutAt({ ...live, metadata: rest }, ownershipViewDepth, deeperMarker);
  const text = stringify(shown, { lineWidth: 0, aliasDuplicateObjects: false });
  const resource = parseManifestText(text).resources[0];
  if (!resource) return text;
  const lines = text.split('\n');
  const ownersByLine = new Map<number, string>();
  // Decoded once for the whole view: a 4,000-key ConfigMap asks 4,000 questions.
  const ownership = decodeOwnership(live);
  forEachNode(resource, (visit) => {
    const owners = ownersIn(ownership, serverPath(resource, visit.path, schema)).filter((o) => o.exact);
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
  return lines.map((line, i) => (ownersByLine.has(i) ? `${line.padEnd(Math.max(width, line.length + 2))}# ${ownersByLine.get(i)}` : line)).join('\n');
}

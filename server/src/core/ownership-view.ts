// A read-only view of a live object in the shape of `kubectl get -o yaml`, with each line's owners
// written after it as a comment: `replicas: 5  # kube-controller-manager (Update, scale)`.
// managedFields itself is left out (the comments say the same, readably).
import { stringify } from 'yaml';
import { isJsonObject, type JsonObject } from './json';
import { forEachNode, parseManifestText } from './manifest';
import { ownersOf, serverPath } from './ownership';
import type { SchemaModel } from './schema';

export function ownershipView(live: JsonObject, schema: SchemaModel | undefined): string {
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const { managedFields: _omitted, ...rest } = metadata;
  const shown: JsonObject = { ...live, metadata: rest };
  const text = stringify(shown, { lineWidth: 0, aliasDuplicateObjects: false });
  const resource = parseManifestText(text).resources[0];
  if (!resource) return text;
  const lines = text.split('\n');
  const ownersByLine = new Map<number, string>();
  forEachNode(resource, (visit) => {
    const owners = ownersOf(live, serverPath(resource, visit.path, schema)).filter((o) => o.exact);
    if (owners.length === 0) return;
    const label = owners
      .map((o) => `${o.manager.manager} (${[o.manager.operation, o.manager.subresource].filter(Boolean).join(', ')})`)
      .join(', ');
    ownersByLine.set(visit.keyRange.start.line + resource.lineOffset, label);
  });
  const width = Math.min(60, Math.max(...lines.map((l) => l.length)) + 2);
  return lines.map((line, i) => (ownersByLine.has(i) ? `${line.padEnd(width)}# ${ownersByLine.get(i)}` : line)).join('\n');
}

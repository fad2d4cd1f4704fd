// What kubectl itself refuses before it sends anything: the server never hears such a manifest
// from kubectl, so the finding says kubectl's words, not the server's.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import type { ApplyMode } from '../ssa/predict';

/**
 * kubectl apply (client- or server-side) stops before any request when the object has no name but
 * a generateName (apply.go: "from <generateName>: cannot use generate name with apply"): nothing
 * about the cluster matters then. kubectl create is where generateName works. Its words, or
 * undefined when it sends the object.
 */
export function generateNameRefusal(resource: ManifestResource, mode: ApplyMode): string | undefined {
  if (
    mode === 'create' ||
    resource.name !== undefined ||
    resource.generateName === undefined ||
    resource.generateName === ''
  )
    return undefined;
  return `from ${resource.generateName}: cannot use generate name with apply`;
}

/**
 * kubectl decodes every object's `metadata` into its ObjectMeta before it sends anything (its
 * resource builder's metadata-validating decoder), so a wrongly typed field there never reaches the
 * server from kubectl: it stops with Go's JSON error for the first field that does not fit (keys in
 * sorted order, as kubectl's YAML-to-JSON conversion writes them). Its words for the ObjectMeta
 * fields users write; undefined when everything there decodes (or for fields it cannot name).
 */
export function kubectlMetadataRefusal(object: JsonObject): string | undefined {
  const metadata = object.metadata;
  if (!isJsonObject(metadata)) return undefined;
  // The Go type of each field, and of its items or values.
  const goTypes: Record<string, readonly [container: string, item?: string]> = {
    annotations: ['map[string]string', 'string'],
    finalizers: ['[]string', 'string'],
    generateName: ['string'],
    labels: ['map[string]string', 'string'],
    name: ['string'],
    namespace: ['string'],
    resourceVersion: ['string'],
    uid: ['types.UID'],
  };
  const jsonKind = (v: JsonValue): string =>
    v === null
      ? 'null'
      : Array.isArray(v)
        ? 'array'
        : typeof v === 'object'
          ? 'object'
          : typeof v === 'boolean'
            ? 'bool'
            : typeof v;
  const words = (value: JsonValue, field: string, type: string) =>
    `json: cannot unmarshal ${jsonKind(value)} into Go struct field ObjectMeta.metadata.${field} of type ${type}`;
  for (const field of Object.keys(metadata).sort()) {
    // Own keys only: a metadata key such as `constructor` must not find an Object method.
    const types = Object.hasOwn(goTypes, field) ? goTypes[field] : undefined;
    const value = metadata[field];
    if (!types || value === undefined || value === null) continue;
    const [container, item] = types;
    if (item === undefined) {
      if (typeof value !== 'string') return words(value, field, container);
      continue;
    }
    const isMap = container.startsWith('map[');
    if (isMap ? !isJsonObject(value) : !Array.isArray(value)) return words(value, field, container);
    const items = Array.isArray(value)
      ? value
      : Object.keys(value as JsonObject)
          .sort()
          .map((k) => (value as JsonObject)[k]!);
    const bad = items.find((v) => v !== null && typeof v !== 'string');
    if (bad !== undefined) return words(bad, field, item);
  }
  return undefined;
}

// The part of a kind's OpenAPI v3 schema that CustomResourceDefinition validation rules need: the
// structural schema (types, formats, list and map types, defaults) and the `x-kubernetes-validations`
// of each node. The API server publishes a CRD's rules in the very document the product already reads
// for Server-Side Apply (/openapi/v3/apis/<group>/<version>), so no other read is needed.
import { isJsonObject, setOwn, type JsonObject, type JsonValue } from '../json';

/** One entry of `x-kubernetes-validations`, as the CRD declares it. */
export interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  /** A relative JSON path (`.spec.x`, `['a.b']`) where the server reports a failure. */
  readonly fieldPath?: string;
  /** FieldValueInvalid (the default), FieldValueForbidden, FieldValueRequired, FieldValueDuplicate. */
  readonly reason?: string;
  /** The rule runs without an old value too, with `oldSelf` an optional. */
  readonly optionalOldSelf?: boolean;
}

/** A node of the structural schema, with its rules. */
export interface CelNode {
  readonly type: string;
  readonly format?: string;
  readonly intOrString?: boolean;
  readonly preserveUnknownFields?: boolean;
  readonly embeddedResource?: boolean;
  readonly nullable?: boolean;
  readonly default?: JsonValue;
  readonly properties?: Readonly<Record<string, CelNode>>;
  readonly additionalProperties?: CelNode;
  readonly items?: CelNode;
  readonly listType?: string;
  readonly listMapKeys?: readonly string[];
  readonly rules: readonly CelRule[];
  /** Whether this node or one below it carries rules (a subtree without any is not walked). */
  readonly hasRules: boolean;
}

/** Past this depth a schema is cut: a CRD's own schema is never that deep. */
const MAX_DEPTH = 64;

/**
 * The schema of `apiVersion`/`kind` in an OpenAPI v3 document, with its rules; undefined when the
 * document does not describe the kind or no node of it carries a rule (nothing to evaluate).
 */
export function celSchemaFor(document: JsonValue, apiVersion: string, kind: string): CelNode | undefined {
  const schemas =
    isJsonObject(document) && isJsonObject(document.components) && isJsonObject(document.components.schemas)
      ? document.components.schemas
      : undefined;
  if (!schemas) return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  for (const spec of Object.values(schemas)) {
    if (!isJsonObject(spec) || !Array.isArray(spec['x-kubernetes-group-version-kind'])) continue;
    const names = spec['x-kubernetes-group-version-kind'].some(
      (g) => isJsonObject(g) && (g.group ?? '') === group && g.version === version && g.kind === kind,
    );
    if (!names || !isJsonObject(spec.properties) || !('metadata' in spec.properties)) continue;
    const node = convert(schemas, spec, 0, new Map());
    return node.hasRules ? node : undefined;
  }
  return undefined;
}

function resolve(schemas: JsonObject, spec: JsonObject): JsonObject {
  let ref = typeof spec.$ref === 'string' ? spec.$ref : undefined;
  if (
    ref === undefined &&
    Array.isArray(spec.allOf) &&
    spec.allOf.length === 1 &&
    isJsonObject(spec.allOf[0]) &&
    typeof spec.allOf[0].$ref === 'string'
  )
    ref = spec.allOf[0].$ref;
  if (ref === undefined) return spec;
  const target = schemas[ref.slice(ref.lastIndexOf('/') + 1)];
  // Siblings of the reference (a default, a description) stay with the field.
  return isJsonObject(target) ? { ...target, ...withoutRef(spec) } : spec;
}

function withoutRef(spec: JsonObject): JsonObject {
  const { $ref: _ref, allOf: _allOf, ...rest } = spec;
  return rest;
}

/**
 * Each named schema is converted once (`seen`, by the name a `$ref` points at and what stands beside it), so a schema
 * whose types refer to each other many times over — a CustomResourceDefinition's own
 * JSONSchemaProps refers to itself from a dozen fields — costs its size, not its size to the
 * power of the depth. A `$ref` cycle meets the node it started from (the same object, completed
 * later); built-in schemas carry no rules, so a node's `hasRules` seen early in a cycle is exact
 * for every schema that has them (a CRD's schema is written out, without references).
 */
function convert(schemas: JsonObject, raw: JsonObject, depth: number, seen: Map<string, CelNode>): CelNode {
  const ref = refKey(raw);
  const known = ref !== undefined ? seen.get(ref) : undefined;
  if (known) return known;
  const spec = resolve(schemas, raw);
  const rules = Array.isArray(spec['x-kubernetes-validations']) ? spec['x-kubernetes-validations'].flatMap(ruleOf) : [];
  const out: { -readonly [K in keyof CelNode]: CelNode[K] } = {
    type: typeof spec.type === 'string' ? spec.type : '',
    rules,
    hasRules: rules.length > 0,
  };
  if (typeof spec.format === 'string' && spec.format !== '') out.format = spec.format;
  if (spec['x-kubernetes-int-or-string'] === true) out.intOrString = true;
  if (spec['x-kubernetes-preserve-unknown-fields'] === true) out.preserveUnknownFields = true;
  if (spec['x-kubernetes-embedded-resource'] === true) out.embeddedResource = true;
  if (spec.nullable === true) out.nullable = true;
  if (spec.default !== undefined) out.default = spec.default;
  if (typeof spec['x-kubernetes-list-type'] === 'string') out.listType = spec['x-kubernetes-list-type'];
  if (Array.isArray(spec['x-kubernetes-list-map-keys']))
    out.listMapKeys = spec['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string');
  if (ref !== undefined) seen.set(ref, out);
  if (depth >= MAX_DEPTH) return out;
  if (isJsonObject(spec.properties)) {
    const properties: Record<string, CelNode> = {};
    for (const [name, member] of Object.entries(spec.properties)) {
      if (!isJsonObject(member)) continue;
      const node = convert(schemas, member, depth + 1, seen);
      setOwn(properties, name, node);
      if (node.hasRules) out.hasRules = true;
    }
    out.properties = properties;
  }
  if (isJsonObject(spec.additionalProperties)) {
    out.additionalProperties = convert(schemas, spec.additionalProperties, depth + 1, seen);
    if (out.additionalProperties.hasRules) out.hasRules = true;
  }
  if (isJsonObject(spec.items)) {
    out.items = convert(schemas, spec.items, depth + 1, seen);
    if (out.items.hasRules) out.hasRules = true;
  }
  return out;
}

/**
 * What a referring spec converts to, as a key: the schema it points at (`$ref`, or `allOf` of one
 * `$ref`) with what stands beside the reference (a `default: {}`), words left out.
 */
function refKey(spec: JsonObject): string | undefined {
  const ref =
    typeof spec.$ref === 'string'
      ? spec.$ref
      : Array.isArray(spec.allOf) &&
          spec.allOf.length === 1 &&
          isJsonObject(spec.allOf[0]) &&
          typeof spec.allOf[0].$ref === 'string'
        ? spec.allOf[0].$ref
        : undefined;
  if (ref === undefined) return undefined;
  const { description: _words, ...beside } = withoutRef(spec);
  return Object.keys(beside).length === 0 ? ref : `${ref} ${JSON.stringify(beside)}`;
}

function ruleOf(entry: JsonValue): CelRule[] {
  if (!isJsonObject(entry) || typeof entry.rule !== 'string') return [];
  const text = (key: string) => (typeof entry[key] === 'string' && entry[key] !== '' ? { [key]: entry[key] } : {});
  return [
    {
      rule: entry.rule,
      ...text('message'),
      ...text('messageExpression'),
      ...text('fieldPath'),
      ...text('reason'),
      ...(entry.optionalOldSelf === true ? { optionalOldSelf: true } : {}),
    },
  ];
}

// The schema model the merge engine walks: the same shape as structured-merge-diff's schema.Schema
// (schema/elements.go), built from the OpenAPI v3 documents kube-apiserver serves at
// /openapi/v3/api/v1 and /openapi/v3/apis/<group>/<version> — for built-in kinds and CRDs alike.
// The conversion follows k8s.io/kube-openapi pkg/schemaconv/openapi.go and smd.go line by line,
// because the server builds its own merge schema with exactly that code.
import { isJsonObject, setOwn, type JsonObject, type JsonValue } from '../json';

/** How the children of a list or map relate: one value, separate fields, or keyed items. */
export type ElementRelationship = 'atomic' | 'separable' | 'associative';

/** A reference to a type: by name, or inlined; optionally overriding the map/list relationship. */
export interface TypeRef {
  readonly named?: string;
  readonly inlined?: Atom;
  /** Field-level `x-kubernetes-map-type` on a `$ref` (schemaconv makeOpenAPIRef). */
  readonly elementRelationship?: ElementRelationship;
}

export type ScalarKind = 'string' | 'numeric' | 'boolean' | 'untyped';

export interface ListType {
  readonly elementType: TypeRef;
  /** atomic: one leaf. associative with keys: a map-list; associative without keys: a set. */
  readonly elementRelationship: 'atomic' | 'associative';
  readonly keys: readonly string[];
}

export interface StructField {
  readonly type: TypeRef;
  /** The schema `default`; the server uses it for key fields a list item leaves out. */
  readonly default?: JsonValue;
}

export interface MapType {
  readonly fields: Readonly<Record<string, StructField>>;
  /** Type of entries that are not named fields; absent when unknown fields are not allowed. */
  readonly elementType?: TypeRef;
  /** atomic (`x-kubernetes-map-type: atomic`) or separable (granular, the default). */
  readonly elementRelationship: 'atomic' | 'separable';
}

/** A type may accept several shapes at once (an int-or-string is an untyped scalar). */
export interface Atom {
  readonly scalar?: ScalarKind;
  readonly list?: ListType;
  readonly map?: MapType;
}

export interface SchemaModel {
  readonly types: Readonly<Record<string, Atom>>;
  /** `apiVersion Kind` -> type name, from x-kubernetes-group-version-kind. */
  readonly kinds: Readonly<Record<string, string>>;
}

export const UNTYPED_ATOMIC = '__untyped_atomic_';
export const UNTYPED_DEDUCED = '__untyped_deduced_';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'io.k8s.apimachinery.pkg.runtime.RawExtension';

const untypedAtomicAtom: Atom = {
  scalar: 'untyped',
  list: { elementType: { named: UNTYPED_ATOMIC }, elementRelationship: 'atomic', keys: [] },
  map: { fields: {}, elementType: { named: UNTYPED_ATOMIC }, elementRelationship: 'atomic' },
};
/** What the server uses for fields it knows nothing about: maps granular, lists atomic. */
const untypedDeducedAtom: Atom = {
  scalar: 'untyped',
  list: { elementType: { named: UNTYPED_ATOMIC }, elementRelationship: 'atomic', keys: [] },
  map: { fields: {}, elementType: { named: UNTYPED_DEDUCED }, elementRelationship: 'separable' },
};

export const deducedTypeRef: TypeRef = { named: UNTYPED_DEDUCED };

export function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion} ${kind}`;
}

/**
 * Builds one model from any number of OpenAPI v3 documents (each `{components: {schemas}}`).
 * Problems in the documents never throw: they are returned as messages, and the offending part
 * falls back to what the server does (an untyped value). Every type is converted here; the
 * judgements use schemaOfDocuments, which converts only the types a kind reaches.
 */
export function schemaFromOpenApi(documents: readonly JsonValue[]): { schema: SchemaModel; problems: string[] } {
  const problems: string[] = [];
  const schema = buildSchema(documents, problems);
  for (const name of Object.keys(schema.types)) void schema.types[name];
  return { schema, problems };
}

/**
 * The same model, each type converted when it is first looked up: judging a ConfigMap reaches a
 * dozen of api/v1's hundreds of types. A type converts alone (its fields name other types), so
 * the answer is the same either way; the problems a document has are not gathered.
 */
export function schemaOfDocuments(documents: readonly JsonValue[]): SchemaModel {
  return buildSchema(documents, []);
}

function buildSchema(documents: readonly JsonValue[], problems: string[]): SchemaModel {
  const types: Record<string, Atom> = {};
  const kinds: Record<string, string> = {};
  for (const doc of documents) {
    const schemas = isJsonObject(doc) && isJsonObject(doc.components) ? doc.components.schemas : undefined;
    if (!isJsonObject(schemas)) {
      problems.push('an OpenAPI document without components.schemas');
      continue;
    }
    for (const [name, spec] of Object.entries(schemas)) {
      if (!isJsonObject(spec) || typeof spec.$ref === 'string') continue;
      const convert = (): Atom =>
        name === QUANTITY
          ? { scalar: 'untyped' }
          : name === RAW_EXTENSION
            ? untypedAtomicAtom
            : visitSpec({ preserveUnknownFields: false, name, problems }, spec);
      // Replaced by its value at the first look: a later document's type of the same name wins, as before.
      Object.defineProperty(types, name, {
        configurable: true,
        enumerable: true,
        get: () => {
          const atom = convert();
          Object.defineProperty(types, name, { value: atom, configurable: true, enumerable: true, writable: true });
          return atom;
        },
      });
      for (const gvk of Array.isArray(spec['x-kubernetes-group-version-kind'])
        ? spec['x-kubernetes-group-version-kind']
        : []) {
        if (!isJsonObject(gvk) || typeof gvk.version !== 'string' || typeof gvk.kind !== 'string') continue;
        const apiVersion =
          typeof gvk.group === 'string' && gvk.group !== '' ? `${gvk.group}/${gvk.version}` : gvk.version;
        const key = kindKey(apiVersion, gvk.kind);
        // A kind can be listed on several helper types (DeleteOptions, WatchEvent); the type
        // that carries `kind` as its own root with `metadata` is the object itself.
        if (!(key in kinds) || (isJsonObject(spec.properties) && 'metadata' in spec.properties)) kinds[key] = name;
      }
    }
  }
  for (const [name, atom] of [
    [UNTYPED_ATOMIC, untypedAtomicAtom],
    [UNTYPED_DEDUCED, untypedDeducedAtom],
  ] as const)
    Object.defineProperty(types, name, { value: atom, configurable: true, enumerable: true, writable: true });
  return { types, kinds };
}

/** The root type of a kind, or undefined when the documents do not describe it. */
export function rootTypeFor(schema: SchemaModel, apiVersion: string, kind: string): TypeRef | undefined {
  const name = schema.kinds[kindKey(apiVersion, kind)];
  return name ? { named: name } : undefined;
}

/** Resolves a reference, applying a field-level relationship override (elements.go Resolve). */
export function resolveType(schema: SchemaModel, ref: TypeRef): Atom | undefined {
  const atom = ref.inlined ?? (ref.named !== undefined ? schema.types[ref.named] : undefined);
  if (!atom) return undefined;
  const rel = ref.elementRelationship;
  if (!rel) return atom;
  // The same type with another relationship: made once per type and relationship, as the walks
  // resolve it once per value they visit.
  let byRelationship = relabelled.get(atom);
  if (!byRelationship) relabelled.set(atom, (byRelationship = new Map()));
  const known = byRelationship.get(rel);
  if (known !== undefined) return known ?? undefined;
  let made: Atom | null = null;
  if (atom.map)
    made = { ...atom, map: { ...atom.map, elementRelationship: rel === 'atomic' ? 'atomic' : 'separable' } };
  else if (atom.list)
    made = { ...atom, list: { ...atom.list, elementRelationship: rel === 'atomic' ? 'atomic' : 'associative' } };
  byRelationship.set(rel, made);
  return made ?? undefined;
}

const relabelled = new WeakMap<Atom, Map<string, Atom | null>>();

/**
 * Picks the shape that matches the value, as helpers.go deduceAtom does. A type of one shape is
 * its own answer (no copy): most are.
 */
export function deduceAtom(atom: Atom, value: JsonValue | undefined): Atom {
  if (value === undefined || value === null) return atom;
  if (Array.isArray(value)) return atom.list ? (atom.map || atom.scalar ? { list: atom.list } : atom) : atom;
  if (typeof value === 'object') return atom.map ? (atom.list || atom.scalar ? { map: atom.map } : atom) : atom;
  return atom.scalar ? (atom.map || atom.list ? { scalar: atom.scalar } : atom) : atom;
}

/** The type of a map entry: the named field's type, else the element type. */
export function fieldType(map: MapType, name: string): TypeRef | undefined {
  return Object.prototype.hasOwnProperty.call(map.fields, name) ? map.fields[name]?.type : map.elementType;
}

// ---------------------------------------------------------------------------------------------
// OpenAPI -> atoms (schemaconv/openapi.go)

interface Converter {
  preserveUnknownFields: boolean;
  name: string;
  problems: string[];
}

function visitSpec(parent: Converter, spec: JsonObject): Atom {
  const conv: Converter = { ...parent };
  if (spec['x-kubernetes-preserve-unknown-fields'] === true) conv.preserveUnknownFields = true;
  const typ = Array.isArray(spec.type) ? spec.type[0] : spec.type;
  switch (typ) {
    case undefined:
    case '':
      return { scalar: 'untyped', list: parseList(conv, spec), map: parseObject(conv, spec) };
    case 'object':
      return { map: parseObject(conv, spec) };
    case 'array':
      return { list: parseList(conv, spec) };
    case 'integer':
    case 'number':
      return { scalar: 'numeric' };
    case 'boolean':
      return { scalar: 'boolean' };
    case 'string':
      return {
        scalar: spec.format === undefined || spec.format === '' || spec.format === 'byte' ? 'string' : 'untyped',
      };
    default:
      conv.problems.push(`${conv.name}: unrecognized type ${JSON.stringify(typ)}`);
      return { scalar: 'untyped' };
  }
}

function refName(spec: JsonObject): string | undefined {
  let ref = typeof spec.$ref === 'string' ? spec.$ref : '';
  if (ref === '' && Array.isArray(spec.allOf) && spec.allOf.length === 1 && isJsonObject(spec.allOf[0])) {
    const inner = spec.allOf[0].$ref;
    if (typeof inner === 'string') ref = inner;
  }
  const name = ref.slice(ref.lastIndexOf('/') + 1);
  return name === '' ? undefined : name;
}

function makeRef(conv: Converter, spec: JsonObject): TypeRef {
  const named = refName(spec);
  if (named !== undefined) {
    const rel = mapRelationship(conv, spec);
    return rel ? { named, elementRelationship: rel } : { named };
  }
  return { inlined: visitSpec({ ...conv, name: `inlined in ${conv.name}` }, spec) };
}

function parseObject(conv: Converter, spec: JsonObject): MapType {
  const fields: Record<string, StructField> = {};
  const properties = isJsonObject(spec.properties) ? spec.properties : {};
  for (const [name, member] of Object.entries(properties)) {
    if (!isJsonObject(member)) continue;
    setOwn(
      fields,
      name,
      member.default === undefined
        ? { type: makeRef(conv, member) }
        : { type: makeRef(conv, member), default: member.default },
    );
  }
  let elementType: TypeRef | undefined;
  const extra = spec.additionalProperties;
  if (extra === undefined) {
    if (conv.preserveUnknownFields || Object.keys(properties).length === 0) elementType = deducedTypeRef;
  } else if (isJsonObject(extra)) {
    elementType = makeRef(conv, extra);
  } else if (extra === true) {
    elementType = deducedTypeRef;
  }
  const rel = mapRelationship(conv, spec);
  const map: MapType = { fields, elementRelationship: rel === 'atomic' ? 'atomic' : 'separable' };
  return elementType ? { ...map, elementType } : map;
}

function parseList(conv: Converter, spec: JsonObject): ListType {
  const { relationship, keys } = listRelationship(conv, spec);
  let elementType: TypeRef = { named: UNTYPED_ATOMIC };
  if (isJsonObject(spec.items)) elementType = makeRef(conv, spec.items);
  else if (spec.items !== undefined) {
    conv.problems.push(`${conv.name}: structural schema arrays must have exactly one member subtype`);
    elementType = deducedTypeRef;
  }
  return { elementType, elementRelationship: relationship, keys };
}

function listRelationship(
  conv: Converter,
  spec: JsonObject,
): { relationship: 'atomic' | 'associative'; keys: string[] } {
  const listType = spec['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (listType === 'atomic') return { relationship: 'atomic', keys: [] };
    if (listType === 'set') return { relationship: 'associative', keys: [] };
    if (listType === 'map') {
      const keys = spec['x-kubernetes-list-map-keys'];
      if (!Array.isArray(keys)) {
        conv.problems.push(`${conv.name}: missing map keys`);
        return { relationship: 'associative', keys: [] };
      }
      return { relationship: 'associative', keys: keys.filter((k): k is string => typeof k === 'string') };
    }
    conv.problems.push(`${conv.name}: unknown list type ${JSON.stringify(listType)}`);
    return { relationship: 'atomic', keys: [] };
  }
  // Lists without a list type fall back to their strategic-merge-patch markers, as the server does.
  const strategy = spec['x-kubernetes-patch-strategy'];
  if (strategy === 'merge' || strategy === 'merge,retainKeys') {
    const key = spec['x-kubernetes-patch-merge-key'];
    return { relationship: 'associative', keys: typeof key === 'string' ? [key] : [] };
  }
  return { relationship: 'atomic', keys: [] };
}

function mapRelationship(conv: Converter, spec: JsonObject): 'atomic' | 'separable' | undefined {
  const v = spec['x-kubernetes-map-type'];
  if (v === undefined) return undefined;
  if (v === 'atomic') return 'atomic';
  if (v === 'granular') return 'separable';
  conv.problems.push(`${conv.name}: unknown map type ${JSON.stringify(v)}`);
  return undefined;
}

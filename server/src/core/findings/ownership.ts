// Who owns a field of a live object, for hovers and the ownership view: the managedFields entries
// whose field set holds the field's exact path, or something below it.
import { isJsonObject, jsonCutAt, type JsonObject, type JsonValue } from '../json';
import { hasPath, isEmptySet, pathElementKey, type FieldSet } from '../ssa/field-set';
import { listItemElement } from '../ssa/to-field-set';
import { decodeManagedFields, type ManagedFieldsEntry } from '../ssa/managed-fields';
import {
  absoluteRange,
  forEachNode,
  manifestLimits,
  rangeContains,
  type ManifestNode,
  type ManifestResource,
  type Position,
  type Range,
} from '../manifest/manifest';
import type { ManagerIdentity } from '../ssa/messages';
import type { FieldPath, PathElement } from '../ssa/path';
import { fieldType, resolveType, rootTypeFor, type Atom, type SchemaModel } from '../ssa/schema';

export interface FieldOwner {
  readonly manager: ManagerIdentity;
  /** The apiVersion the entry was recorded at. */
  readonly apiVersion: string;
  /** RFC 3339 time of the entry's last write, when the server recorded one. */
  readonly time?: string;
  /** True when the entry owns this exact path; false when it owns only fields below it. */
  readonly exact: boolean;
}

/** The managedFields of a live object, decoded once: ask ownersIn() about as many paths as needed. */
export interface Ownership {
  readonly entries: readonly ManagedFieldsEntry[];
}

/**
 * Decodes the managedFields of `live`. Each FieldsV1 is cut below the deepest path a manifest can
 * have (what lies deeper counts as owned where it is cut): a live object may nest 10,000 levels,
 * deeper than the recursive decoder can go, and no question about it goes that deep.
 */
export function decodeOwnership(live: JsonObject): Ownership {
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const raw = Array.isArray(metadata.managedFields) ? metadata.managedFields : [];
  const cut = raw.map((e) =>
    isJsonObject(e) && e.fieldsV1 !== undefined
      ? { ...e, fieldsV1: jsonCutAt(e.fieldsV1, manifestLimits.depth + 2, {}) }
      : e,
  );
  return { entries: decodeManagedFields(cut).entries };
}

/** The owners of `path`, exact owners first, in managedFields order. */
export function ownersIn(ownership: Ownership, path: FieldPath): FieldOwner[] {
  const owners: FieldOwner[] = [];
  for (const e of ownership.entries) {
    const exact = hasPath(e.fields, path);
    if (!exact && !ownsBelow(e.fields, path)) continue;
    owners.push({
      manager: e.identity,
      apiVersion: e.apiVersion,
      ...(e.time !== undefined ? { time: e.time } : {}),
      exact,
    });
  }
  return [...owners.filter((o) => o.exact), ...owners.filter((o) => !o.exact)];
}

/**
 * The managers that own a field exactly, else those that own its nearest ancestor as a whole: an
 * atomic struct or map (a label selector) is recorded at its own path with nothing below it, not
 * at its leaves'. An ancestor that an Update manager marks with `.` (a granular map: the labels)
 * has its members recorded below it, each owned on its own, so it owns none of them: a label the
 * live object lacks has no owner. `keys`: the field's path as pathElementKey gives each element
 * (made once by a caller that asks about the same fields in many objects). Each manager's set is
 * walked once along the path.
 */
export function exactOrWholeOwners(ownership: Ownership, keys: readonly string[]): ManagerIdentity[] {
  const chains = ownership.entries.map((e) => {
    // chain[i]: the set below the path's first i elements, as far as the manager's set goes.
    const chain: FieldSet[] = [e.fields];
    for (let i = 0; i < keys.length; i++) {
      const next = chain[i]!.children.get(keys[i]!)?.set;
      if (!next) break;
      chain.push(next);
    }
    return chain;
  });
  // The path's first n elements recorded as a field of the set, and anything recorded below them.
  const recorded = (chain: FieldSet[], n: number) => chain.length >= n && chain[n - 1]!.members.has(keys[n - 1]!);
  const below = (chain: FieldSet[], n: number) => chain.length > n && !isEmptySet(chain[n]!);
  const exact = ownership.entries.filter((_, i) => recorded(chains[i]!, keys.length));
  if (exact.length > 0) return exact.map((e) => e.identity);
  for (let n = keys.length - 1; n > 0; n--) {
    const whole = ownership.entries.filter((_, i) => recorded(chains[i]!, n) && !below(chains[i]!, n));
    if (whole.length > 0) return whole.map((e) => e.identity);
  }
  return [];
}

/** The owners of `path` in the live object (one question: decodeOwnership + ownersIn for many). */
export function ownersOf(live: JsonObject, path: FieldPath): FieldOwner[] {
  return ownersIn(decodeOwnership(live), path);
}

function ownsBelow(set: FieldSet, path: FieldPath): boolean {
  let s: FieldSet | undefined = set;
  for (const el of path) {
    s = s.children.get(pathElementKey(el))?.set;
    if (!s) return false;
  }
  return !isEmptySet(s);
}

export interface NodeAtPosition {
  /** The path in the server's terms: list items by key or value, as managedFields record them. */
  readonly path: FieldPath;
  readonly node: ManifestNode;
  /** Absolute range of the key (or list item marker) under the position. */
  readonly keyRange: Range;
}

/**
 * The deepest field of the resource whose key — or, for a scalar, whose value — holds the position.
 * List items are named by their key fields (from the schema), or by index without one.
 */
export function nodeAt(
  resource: ManifestResource,
  position: Position,
  schema: SchemaModel | undefined,
): NodeAtPosition | undefined {
  const rel = {
    line: position.line - resource.lineOffset,
    character: position.character - (position.line === resource.lineOffset ? (resource.columnOffset ?? 0) : 0),
  };
  let best: { path: FieldPath; node: ManifestNode; keyRange: Range } | undefined;
  forEachNode(resource, (visit) => {
    const inKey = rangeContains(visit.keyRange, rel);
    const inValue = rangeContains(visit.node.range, rel);
    if (inKey || (visit.node.kind === 'scalar' && inValue)) best = visit;
    // Only descend where the position can be.
    return inKey || inValue;
  });
  if (!best) return undefined;
  const found = best as { path: FieldPath; node: ManifestNode; keyRange: Range };
  return {
    path: serverPath(resource, found.path, schema),
    node: found.node,
    keyRange: absoluteRange(resource, found.keyRange),
  };
}

/** Turns list indexes into the item's identity (key fields or set value) where the schema says how. */
export function serverPath(
  resource: ManifestResource,
  indexPath: FieldPath,
  schema: SchemaModel | undefined,
): FieldPath {
  const root = schema ? rootTypeFor(schema, resource.apiVersion, resource.kind) : undefined;
  let atom: Atom | undefined = schema && root ? resolveType(schema, root) : undefined;
  let value: JsonValue | undefined = resource.object;
  const out: PathElement[] = [];
  for (const el of indexPath) {
    if (el.kind === 'field') {
      const t: ReturnType<typeof fieldType> = atom?.map ? fieldType(atom.map, el.name) : undefined;
      atom = schema && t ? resolveType(schema, t) : undefined;
      value = ownField(value, el.name);
      out.push(el);
      continue;
    }
    const item: JsonValue | undefined = Array.isArray(value) && el.kind === 'index' ? value[el.index] : undefined;
    const list = atom?.list;
    const named = schema && list && item !== undefined ? listItemElement(schema, list, item) : undefined;
    out.push(named !== undefined && typeof named !== 'string' ? named : el);
    atom = schema && list ? resolveType(schema, list.elementType) : undefined;
    value = item;
  }
  return out;
}

// A field named `constructor` or `toString` is an ordinary key: a plain lookup would find the
// object's prototype methods (a hover on such a key failed with a TypeError).
function ownField(value: JsonValue | undefined, name: string): JsonValue | undefined {
  return isJsonObject(value) && Object.prototype.hasOwnProperty.call(value, name) ? value[name] : undefined;
}

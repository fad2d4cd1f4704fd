// Merge, compare and remove over schema-typed JSON, as structured-merge-diff does them:
// typed/merge.go (live merged with the applied config), typed/compare.go (Added / Modified /
// Removed between two objects), typed/remove.go (RemoveItems, used when pruning).
// `undefined` means "absent"; `null` is a present null value — the server keeps the difference.
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json';
import type { FieldPath, PathElement } from './path';
import { FieldPathWalk, FieldSetBuilder, fieldStep, isEmptySet, pathElementKey, type FieldSet } from './field-set';
import { listItemElement } from './to-field-set';
import {
  deduceAtom,
  deducedTypeRef,
  fieldType,
  resolveType,
  type Atom,
  type ListType,
  type MapType,
  type SchemaModel,
  type TypeRef,
} from './schema';

type Value = JsonValue | undefined;

function sameShape(a: Atom, b: Atom): boolean {
  return a.map === b.map && a.list === b.list && a.scalar === b.scalar;
}

const asList = (v: Value): JsonValue[] | undefined => (Array.isArray(v) ? v : undefined);
const asMap = (v: Value): JsonObject | undefined => (isJsonObject(v) ? v : undefined);
const has = (o: JsonObject, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
/** No map, or a map without entries (without listing its keys). */
const noEntries = (o: JsonObject | undefined): boolean => {
  if (o === undefined) return true;
  for (const k in o) if (has(o, k)) return false;
  return true;
};

// ---------------------------------------------------------------------------------------------
// Merge (merge.go with ruleKeepRHS): scalars and atomic values take the config's value, `null`
// included; granular maps and associative lists merge entry by entry.

export function mergeValues(schema: SchemaModel, tr: TypeRef, lhs: Value, rhs: Value): Value {
  if (lhs === undefined && rhs === undefined) return undefined;
  const atom = resolveType(schema, tr);
  if (!atom) return rhs !== undefined ? rhs : lhs;
  const alhs = deduceAtom(atom, lhs);
  const arhs = deduceAtom(atom, rhs);
  const chosen = rhs === undefined ? alhs : arhs;
  return mergeAtom(schema, chosen, lhs, rhs);
}

function mergeAtom(schema: SchemaModel, atom: Atom, lhs: Value, rhs: Value): Value {
  const leaf = (): Value => (rhs !== undefined ? rhs : lhs);
  if (atom.map) {
    const l = asMap(lhs);
    const r = asMap(rhs);
    if (atom.map.elementRelationship === 'atomic' || (noEntries(l) && noEntries(r))) return leaf();
    return mergeMap(schema, atom.map, l, r);
  }
  if (atom.scalar) return leaf();
  if (atom.list) {
    const l = asList(lhs);
    const r = asList(rhs);
    const emptyPromoteToLeaf = (!l || l.length === 0) && (!r || r.length === 0);
    if (atom.list.elementRelationship === 'atomic' || emptyPromoteToLeaf) return leaf();
    return mergeList(schema, atom.list, l, r);
  }
  return leaf();
}

function mergeMap(schema: SchemaModel, map: MapType, l: JsonObject | undefined, r: JsonObject | undefined): Value {
  const out: JsonObject = {};
  let entries = 0;
  // A live map the config does not touch, every entry merged into itself: the live map, not a copy
  // (the comparison with the live object then skips it; nothing changes a value once made).
  let same = r === undefined;
  // The live object's keys, then the config's new ones (the order of a set of both).
  if (l)
    for (const key in l) {
      if (!has(l, key)) continue;
      const rv = r && has(r, key) ? r[key] : undefined;
      const merged = mergeValues(schema, fieldType(map, key) ?? deducedTypeRef, l[key], rv);
      if (merged !== l[key] || key === '__proto__') same = false;
      if (merged !== undefined) {
        out[key] = merged;
        if (key !== '__proto__') entries++; // that one sets no entry: as Object.keys(out) counts
      }
    }
  if (same && l && entries > 0) return l;
  if (r)
    for (const key in r) {
      if (!has(r, key) || (l && has(l, key))) continue;
      const merged = mergeValues(schema, fieldType(map, key) ?? deducedTypeRef, undefined, r[key]);
      if (merged !== undefined) {
        out[key] = merged;
        if (key !== '__proto__') entries++; // that one sets no entry: as Object.keys(out) counts
      }
    }
  return entries > 0 ? out : undefined;
}

/** Item order follows merge.go visitListItems: the config's order, live-only items kept in place. */
function mergeList(schema: SchemaModel, list: ListType, l: JsonValue[] | undefined, r: JsonValue[] | undefined): Value {
  const index = (items: JsonValue[] | undefined, allowDuplicates: boolean) => {
    // at: the item's raw position (items without a usable identity are not in pes).
    const pes: { key: string; at: number }[] = [];
    const observed = new Map<string, JsonValue>();
    for (let at = 0; at < (items?.length ?? 0); at++) {
      const item = items![at] as JsonValue;
      const pe = listItemElement(schema, list, item);
      if (typeof pe === 'string') continue;
      const key = pathElementKey(pe);
      if (observed.has(key)) {
        if (!allowDuplicates) continue;
        // Duplicated live items are not merged with the new value.
        observed.set(key, null);
      } else observed.set(key, item);
      pes.push({ key, at });
    }
    return { pes, observed };
  };
  const rhs = index(r, false);
  const lhs = index(l, true);
  const out: JsonValue[] = [];
  const sharedOrder = rhs.pes.filter((pe) => lhs.observed.has(pe.key)).map((pe) => pe.key);
  let nextShared = sharedOrder.shift();
  const mergedRHS = new Set<string>();
  const push = (v: Value): void => {
    if (v !== undefined) out.push(v);
  };
  let lI = 0;
  let rI = 0;
  while (lI < lhs.pes.length || rI < rhs.pes.length) {
    if (lI < lhs.pes.length && rI < rhs.pes.length) {
      const pe = lhs.pes[lI]!.key;
      if (pe === rhs.pes[rI]!.key) {
        mergedRHS.add(pe);
        push(mergeValues(schema, list.elementType, lhs.observed.get(pe), rhs.observed.get(pe)));
        lI++;
        rI++;
        nextShared = sharedOrder.shift();
        continue;
      }
      if (rhs.observed.has(pe) && nextShared !== undefined && nextShared !== pe) {
        lI++;
        continue;
      }
    }
    if (lI < lhs.pes.length) {
      const pe = lhs.pes[lI]!.key;
      if (!rhs.observed.has(pe)) {
        push(mergeValues(schema, list.elementType, (l ?? [])[lhs.pes[lI]!.at], undefined));
        lI++;
        continue;
      } else if (mergedRHS.has(pe)) {
        lI++;
      }
    }
    if (rI < rhs.pes.length) {
      const pe = rhs.pes[rI]!.key;
      mergedRHS.add(pe);
      push(mergeValues(schema, list.elementType, lhs.observed.get(pe), rhs.observed.get(pe)));
      rI++;
      if (nextShared === pe) nextShared = sharedOrder.shift();
    }
  }
  // A live list the config does not touch, every item merged into itself: the live list.
  if (r === undefined && l !== undefined && out.length === l.length && out.every((v, i) => v === l[i])) return l;
  return out.length > 0 ? out : undefined;
}

// ---------------------------------------------------------------------------------------------
// Compare (compare.go)

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/**
 * Leaves present on both sides with unequal values are Modified; paths only on the right are
 * Added (maps and items included, not just leaves); paths only on the left are Removed.
 */
export function compareValues(schema: SchemaModel, root: TypeRef, lhs: Value, rhs: Value): Comparison {
  const walk = new FieldPathWalk();
  const c: CompareWalk = {
    schema,
    walk,
    added: new FieldSetBuilder(walk),
    modified: new FieldSetBuilder(walk),
    removed: new FieldSetBuilder(walk),
  };
  compareAt(c, root, lhs, rhs);
  return { added: c.added.set, modified: c.modified.set, removed: c.removed.set };
}

/** One comparison's state, handed down the walk (no closures made per value visited). */
interface CompareWalk {
  readonly schema: SchemaModel;
  readonly walk: FieldPathWalk;
  readonly added: FieldSetBuilder;
  readonly modified: FieldSetBuilder;
  readonly removed: FieldSetBuilder;
}

function compareAt(c: CompareWalk, tr: TypeRef, l: Value, r: Value): void {
  // The same value on both sides (a live part the merge left as it was) has nothing added,
  // modified or removed anywhere below it.
  if (l === r) return;
  const atom = resolveType(c.schema, tr);
  if (!atom) return;
  const al = deduceAtom(atom, l);
  const ar = deduceAtom(atom, r);
  let inLeaf: boolean;
  if (r === undefined || l === undefined || sameShape(al, ar)) {
    inLeaf = compareShape(c, r === undefined ? al : ar, l, r, false);
  } else {
    // Different shapes (an untyped value changed from a map to a string): the server walks
    // the old shape for removals on a copy of the walker, then the new shape.
    compareShape(c, al, l, r, true);
    inLeaf = compareShape(c, ar, l, r, false);
  }
  if (!inLeaf) {
    if (l === undefined) c.added.own();
    else if (r === undefined) c.removed.own();
  }
}

/**
 * Compares l and r as the shape `a` says; true when that made them a leaf. `oldShape`: the old
 * shape of a value whose shape changed (walked by the server on a copy of the walker), where a
 * leaf is only ever modified.
 */
function compareShape(c: CompareWalk, a: Atom, l: Value, r: Value, oldShape: boolean): boolean {
  if (a.map) {
    const lm = asMap(l);
    const rm = asMap(r);
    if (a.map.elementRelationship === 'atomic' || (noEntries(lm) && noEntries(rm))) return leaf(c, l, r, oldShape);
    const map = a.map;
    const walk = c.walk;
    // The left side's keys, then the right side's new ones (the order of a set of both).
    if (lm)
      for (const key in lm) {
        if (!has(lm, key)) continue;
        const step = fieldStep(key);
        walk.push(step.pe, step.key);
        compareAt(c, fieldType(map, key) ?? deducedTypeRef, lm[key], rm && has(rm, key) ? rm[key] : undefined);
        walk.pop();
      }
    if (rm)
      for (const key in rm) {
        if (!has(rm, key) || (lm && has(lm, key))) continue;
        const step = fieldStep(key);
        walk.push(step.pe, step.key);
        compareAt(c, fieldType(map, key) ?? deducedTypeRef, undefined, rm[key]);
        walk.pop();
      }
    return false;
  }
  if (a.scalar) return leaf(c, l, r, oldShape);
  if (a.list) {
    const ll = asList(l);
    const rl = asList(r);
    const emptyPromoteToLeaf = (!ll || ll.length === 0) && (!rl || rl.length === 0);
    if (a.list.elementRelationship === 'atomic' || emptyPromoteToLeaf) return leaf(c, l, r, oldShape);
    compareListItems(c, a.list, ll, rl);
  }
  return false;
}

function leaf(c: CompareWalk, l: Value, r: Value, oldShape: boolean): true {
  if (oldShape) {
    if (!jsonEqual(r, l)) c.modified.own();
  } else if (l === undefined) c.added.own();
  else if (r === undefined) c.removed.own();
  else if (!jsonEqual(r, l)) c.modified.own();
  return true;
}

/** A list's items by identity (their FieldsV1 key), each with every value of that identity. */
function gatherItems(
  c: CompareWalk,
  list: ListType,
  items: JsonValue[] | undefined,
  into: Map<string, JsonValue[]>,
  all: { key: string; pe: PathElement }[],
  other: Map<string, JsonValue[]> | undefined,
): void {
  if (!items) return;
  for (const item of items) {
    const pe = listItemElement(c.schema, list, item);
    if (typeof pe === 'string') continue;
    const key = pathElementKey(pe);
    const existing = into.get(key);
    if (existing) existing.push(item);
    else {
      into.set(key, [item]);
      if (!other?.has(key)) all.push({ key, pe });
    }
  }
}

function compareListItems(
  c: CompareWalk,
  list: ListType,
  l: JsonValue[] | undefined,
  r: JsonValue[] | undefined,
): void {
  const all: { key: string; pe: PathElement }[] = [];
  const lValues = new Map<string, JsonValue[]>();
  const rValues = new Map<string, JsonValue[]>();
  gatherItems(c, list, l, lValues, all, undefined);
  gatherItems(c, list, r, rValues, all, lValues);
  const walk = c.walk;
  for (const { key, pe } of all) {
    const lList = lValues.get(key) ?? [];
    const rList = rValues.get(key) ?? [];
    walk.push(pe, key);
    if (lList.length <= 1 && rList.length <= 1) {
      compareAt(c, list.elementType, lList[0], rList[0]);
    } else if (lList.length >= 2 && rList.length >= 2) {
      // Duplicates on both sides: compared as one atomic value.
      if (lList.length !== rList.length || lList.some((x, i) => !jsonEqual(x, rList[i]))) c.modified.own();
    } else if (lList.length >= 2) {
      if (rList.length !== 0) compareAt(c, list.elementType, undefined, rList[0]);
      c.removed.own();
    } else {
      if (lList.length !== 0) compareAt(c, list.elementType, lList[0], undefined);
      c.added.own();
    }
    walk.pop();
  }
}

// ---------------------------------------------------------------------------------------------
// RemoveItems (remove.go): members of the set are removed with everything below them.

export function removeItems(schema: SchemaModel, tr: TypeRef, value: JsonValue, toRemove: FieldSet): JsonValue {
  const atom = resolveType(schema, tr);
  if (!atom) return value;
  const a = deduceAtom(atom, value);
  // A part that loses nothing is the value itself, not a copy (nothing changes a value once made).
  if (a.map) {
    if (!isJsonObject(value) || a.map.elementRelationship === 'atomic') return null;
    const map = a.map;
    let out: JsonObject | undefined;
    let kept = 0;
    for (const k in value) {
      if (!has(value, k)) continue;
      const v = value[k] as JsonValue;
      const key = `f:${k}`;
      const subset = toRemove.members.has(key) ? undefined : toRemove.children.get(key)?.set;
      const after = toRemove.members.has(key)
        ? undefined
        : subset === undefined || isEmptySet(subset)
          ? v
          : removeItems(schema, fieldType(map, k) ?? deducedTypeRef, v, subset);
      if (after === v && out === undefined) {
        kept++;
        continue;
      }
      out ??= copiedEntries(value, kept);
      if (after !== undefined) out[k] = after;
    }
    if (out === undefined) return kept > 0 ? value : null;
    return Object.keys(out).length > 0 ? out : null;
  }
  if (a.scalar) return value;
  if (a.list) {
    if (!Array.isArray(value) || value.length === 0 || a.list.elementRelationship === 'atomic') return null;
    const list = a.list;
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i] as JsonValue;
      const pe = listItemElement(schema, list, item);
      let after: JsonValue | undefined = item;
      if (typeof pe !== 'string') {
        const key = pathElementKey(pe);
        if (toRemove.members.has(key)) after = undefined;
        else {
          const subset = toRemove.children.get(key)?.set;
          if (subset !== undefined && !isEmptySet(subset)) after = removeItems(schema, list.elementType, item, subset);
        }
      }
      if (after === item && out === undefined) continue;
      out ??= value.slice(0, i);
      if (after !== undefined) out.push(after);
    }
    if (out === undefined) return value;
    return out.length > 0 ? out : null;
  }
  return value;
}

/** A new object with the first `n` entries of `value`. */
function copiedEntries(value: JsonObject, n: number): JsonObject {
  const out: JsonObject = {};
  if (n === 0) return out;
  let i = 0;
  for (const k in value) {
    if (!has(value, k)) continue;
    out[k] = value[k] as JsonValue;
    if (++i >= n) break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading a value at a field path

/**
 * The value a path points at, or undefined when the object does not have it. List items are found
 * by their identity as the schema gives it, key fields left to their default included (a port
 * written without `protocol` is the TCP one); without the schema only fields and indexes are found.
 */
export function valueAtPath(
  schema: SchemaModel | undefined,
  root: TypeRef | undefined,
  value: Value,
  path: FieldPath,
): Value {
  let tr: TypeRef | undefined = root;
  let v: Value = value;
  for (const pe of path) {
    if (v === undefined) return undefined;
    const atom: Atom | undefined = schema && tr ? resolveType(schema, tr) : undefined;
    const a: Atom | undefined = atom ? deduceAtom(atom, v) : undefined;
    if (pe.kind === 'field') {
      if (!isJsonObject(v) || !has(v, pe.name)) return undefined;
      v = v[pe.name];
      tr = a?.map ? (fieldType(a.map, pe.name) ?? deducedTypeRef) : deducedTypeRef;
    } else if (pe.kind === 'index') {
      v = Array.isArray(v) ? v[pe.index] : undefined;
      tr = a?.list?.elementType;
    } else {
      if (!schema || !Array.isArray(v) || !a?.list) return undefined;
      const list: ListType = a.list;
      const want = pathElementKey(pe);
      v = v.find((item) => {
        const got = listItemElement(schema, list, item);
        return typeof got !== 'string' && pathElementKey(got) === want;
      });
      tr = list.elementType;
    }
  }
  return v;
}

// The field set an applied configuration owns: structured-merge-diff typed/tofieldset.go, plus
// the list-item identity the server derives from key fields and their schema defaults
// (typed/helpers.go listItemToPathElement, keyedAssociativeListItemToPathElement).
import { isJsonObject, type JsonValue } from '../json';
import type { FieldPath, PathElement } from './path';
import {
  FieldPathWalk,
  FieldSetBuilder,
  fieldStep,
  insertPath,
  newFieldSet,
  pathElementKey,
  isEmptySet,
  recursiveDifferenceSets,
  unionSets,
  type FieldSet,
  type FieldSetNode,
} from './field-set';
import { formatServerPath, goTypeName, goValueSharpV, goValueV } from './messages';
import {
  deduceAtom,
  deducedTypeRef,
  fieldType,
  resolveType,
  UNTYPED_DEDUCED,
  type ListType,
  type MapType,
  type SchemaModel,
  type TypeRef,
} from './schema';

/** Something in a value the server would refuse before looking at ownership. */
export interface ValueProblem {
  readonly path: FieldPath;
  readonly code: 'duplicateKey' | 'badListItem' | 'unknownType' | 'typeMismatch';
  readonly message: string;
  /** The same refusal as the server's typed validation words it (typed/validate.go): where and what. */
  readonly server: { readonly path: FieldPath; readonly message: string };
}

/**
 * The identity of a list item: its key fields (a missing key field takes its schema default,
 * so `{containerPort: 80}` is the item `[containerPort=80,protocol="TCP"]`), or its value in a set.
 */
export function listItemElement(schema: SchemaModel, list: ListType, item: JsonValue): PathElement | string {
  if (list.elementRelationship !== 'associative') return 'invalid indexing of non-associative list';
  if (list.keys.length > 0) {
    if (item === null) return 'associative list with keys may not have a null element';
    if (!isJsonObject(item)) return 'associative list with keys may not have non-map elements';
    const fields: Record<string, JsonValue> = {};
    let found = 0;
    const element = resolveType(schema, list.elementType);
    for (const name of list.keys) {
      if (Object.prototype.hasOwnProperty.call(item, name)) fields[name] = item[name] as JsonValue;
      else {
        const def = element?.map?.fields[name]?.default;
        if (def === undefined || def === null) continue;
        fields[name] = def;
      }
      if (name !== '__proto__') found++; // that one sets no field: as Object.keys(fields) counts
    }
    if (found === 0) {
      return `associative list with keys has an element that omits all key fields ${JSON.stringify(list.keys)} (and doesn't have default values for any key fields)`;
    }
    return { kind: 'key', fields };
  }
  if (isJsonObject(item)) return "associative list without keys has an element that's a map type";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  if (item === null) return "associative list without keys has an element that's an explicit null";
  return { kind: 'value', value: item };
}

/**
 * ToFieldSet: scalars own their path; atomic lists/maps/structs are one leaf; a map-list item owns
 * itself plus its children; granular map entries own themselves; `null` and `{}` own themselves;
 * an empty granular list owns nothing. Duplicated list items are owned as one item, no children.
 * `namedFieldsAreMembers`: the set ensureNamedFieldsAreMembers would make of it, in one walk (the
 * same paths; the order of a node's members may differ).
 */
export function toFieldSet(
  schema: SchemaModel,
  root: TypeRef,
  value: JsonValue,
  namedFieldsAreMembers = false,
  /**
   * The set of a value this one was made from, as toFieldSet made it (same schema, root and
   * `namedFieldsAreMembers`), where `value` keeps the parts it did not change as the same objects
   * (removeItems does): below a field whose value is the same object, that set's node is taken
   * as it is instead of walking the value again. No problem is reported below such a field.
   */
  from?: { readonly value: JsonValue; readonly set: FieldSet },
): { set: FieldSet; problems: ValueProblem[] } {
  const walk = new FieldPathWalk();
  const owned = new FieldSetBuilder(walk);
  const problems: ValueProblem[] = [];
  const path = walk.path;

  // fv, fs: the value `from` has at this path and its set's node there, while known.
  const visit = (tr: TypeRef, v: JsonValue, fv?: JsonValue, fs?: FieldSet): void => {
    const resolved = resolveType(schema, tr);
    if (!resolved) {
      const message = `schema error: no type found matching: ${tr.named ?? 'inlined type'}`;
      problems.push({ path: [...path], code: 'unknownType', message, server: { path: [...path], message } });
      return;
    }
    const atom = deduceAtom(resolved, v);
    if (atom.map) {
      const map = atom.map;
      if (map.elementRelationship === 'atomic') {
        owned.own();
        return;
      }
      if (!isJsonObject(v)) return;
      // The same object at the same path: the same set below it (none when nothing is owned there).
      if (fv === v && walk.path.length > 0 && (fs === undefined || owned.graft(fs))) return;
      const fm = fv !== undefined && isJsonObject(fv) ? fv : undefined;
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        const child = v[key] as JsonValue;
        const named = Object.prototype.hasOwnProperty.call(map.fields, key);
        const step = fieldStep(key);
        const k = step.key;
        walk.push(step.pe, k);
        if (fm && Object.prototype.hasOwnProperty.call(fm, key))
          visit(fieldType(map, key) ?? deducedTypeRef, child, fm[key], fs?.children.get(k)?.set);
        else visit(fieldType(map, key) ?? deducedTypeRef, child);
        if (child === null || !named || isEmptyObject(child) || (namedFieldsAreMembers && owned.ownsBelow()))
          owned.own();
        walk.pop();
      }
      return;
    }
    if (atom.scalar) {
      owned.own();
      return;
    }
    if (atom.list) {
      const list = atom.list;
      if (list.elementRelationship === 'atomic') {
        owned.own();
        return;
      }
      if (!Array.isArray(v)) return;
      if (fv === v && walk.path.length > 0 && (fs === undefined || owned.graft(fs))) return;
      const elements = v.map((item) => listItemElement(schema, list, item));
      const keys: (string | undefined)[] = [];
      const seen = new Set<string>();
      const duplicates = new Set<string>();
      elements.forEach((pe, i) => {
        if (typeof pe === 'string') {
          problems.push({
            path: [...path, { kind: 'index', index: i }],
            code: 'badListItem',
            message: pe,
            server: { path: [...path], message: `element ${i}: ${pe}` },
          });
          return;
        }
        const k = pathElementKey(pe);
        keys[i] = k;
        if (seen.has(k) && !duplicates.has(k)) {
          duplicates.add(k);
          owned.ownChild(pe, k);
          const message = `duplicate entries for key ${formatServerPath([pe])}`;
          problems.push({ path: [...path, pe], code: 'duplicateKey', message, server: { path: [...path], message } });
        }
        seen.add(k);
      });
      elements.forEach((pe, i) => {
        const k = keys[i];
        if (typeof pe === 'string' || k === undefined || duplicates.has(k)) return;
        walk.push(pe, k);
        visit(list.elementType, v[i] as JsonValue);
        owned.own();
        walk.pop();
      });
    }
  };
  if (from) visit(root, value, from.value, from.set);
  else visit(root, value);
  return { set: owned.set, problems };
}

/** A map without entries (listing no keys to find out). */
function isEmptyObject(v: JsonValue): boolean {
  if (!isJsonObject(v)) return false;
  for (const k in v) if (Object.prototype.hasOwnProperty.call(v, k)) return false;
  return true;
}

/**
 * Values the schema does not accept: a scalar of the wrong kind (`team: on` read as true where a
 * label must be a string), a list where a map belongs, a field the type does not declare. The
 * server converts the applied configuration to a typed value first (typed/validate.go,
 * validatingObjectWalker) and answers 500 "failed to create typed patch object" before any
 * ownership is looked at. Inside atomic lists and maps too: validation walks everything.
 * List items without a usable identity are reported by toFieldSet, not here.
 */
export function typeProblems(schema: SchemaModel, root: TypeRef, value: JsonValue): ValueProblem[] {
  const problems: ValueProblem[] = [];
  const path: PathElement[] = [];
  const report = (message: string, serverMessage = message): void => {
    problems.push({
      path: [...path],
      code: 'typeMismatch',
      message,
      server: { path: [...path], message: serverMessage },
    });
  };
  const visit = (tr: TypeRef, v: JsonValue): void => {
    const resolved = resolveType(schema, tr);
    if (!resolved || v === null) return;
    const atom = deduceAtom(resolved, v);
    // handleAtom's order (typed/helpers.go): map, then scalar, then list.
    if (atom.map) {
      if (!isJsonObject(v)) return report(`expected map, got ${JSON.stringify(v)}`, `expected map, got ${goValueV(v)}`);
      for (const [key, child] of Object.entries(v)) {
        path.push({ kind: 'field', name: key });
        const childType = fieldType(atom.map, key);
        if (childType) visit(childType, child);
        else report('field not declared in schema');
        path.pop();
      }
      return;
    }
    if (atom.scalar) {
      const ok =
        atom.scalar === 'string'
          ? typeof v === 'string'
          : atom.scalar === 'numeric'
            ? typeof v === 'number'
            : atom.scalar === 'boolean'
              ? typeof v === 'boolean'
              : typeof v !== 'object';
      if (ok) return;
      const expected = {
        string: 'string',
        numeric: 'numeric (int or float)',
        boolean: 'boolean',
        untyped: 'any scalar',
      }[atom.scalar];
      // validateScalar prints the value with a different verb for each expectation (only built
      // for a value that is wrong: formatting every scalar of a large schema is not free).
      const got = atom.scalar === 'string' ? goValueSharpV(v) : atom.scalar === 'numeric' ? goTypeName(v) : goValueV(v);
      report(`expected ${expected}, got ${JSON.stringify(v)}`, `expected ${expected}, got ${got}`);
      return;
    }
    if (atom.list) {
      if (!Array.isArray(v))
        return report(`expected list, got ${JSON.stringify(v)}`, `expected list, got ${goValueV(v)}`);
      const list = atom.list;
      v.forEach((item, i) => {
        const pe: PathElement | string =
          list.elementRelationship === 'associative'
            ? listItemElement(schema, list, item)
            : { kind: 'index', index: i };
        if (typeof pe === 'string') return;
        path.push(pe);
        visit(list.elementType, item);
        path.pop();
      });
    }
  };
  visit(root, value);
  return problems;
}

/**
 * Struct fields that have children also become members (set.go EnsureNamedFieldsAreMembers):
 * the pruning step works on this form so that a struct is removed as a whole.
 */
export function ensureNamedFieldsAreMembers(schema: SchemaModel, tr: TypeRef | undefined, set: FieldSet): FieldSet {
  const walk = new FieldPathWalk();
  const out = new FieldSetBuilder(walk);
  const visit = (s: FieldSet, ref: TypeRef | undefined): void => {
    const atom = ref ? resolveType(schema, ref) : undefined;
    for (const [key, pe] of s.members) out.ownChild(pe, key);
    for (const [key, node] of s.children) {
      const pe = node.element;
      let childRef: TypeRef | undefined;
      if (pe.kind === 'field' && atom?.map) {
        if (Object.prototype.hasOwnProperty.call(atom.map.fields, pe.name)) out.ownChild(pe, key);
        childRef = fieldType(atom.map, pe.name);
      } else if (pe.kind === 'key' && atom?.list) {
        childRef = atom.list.elementType;
      }
      walk.push(pe, key);
      visit(node.set, childRef);
      walk.pop();
    }
  };
  visit(set, tr);
  return out.set;
}

/**
 * `a` minus ensureNamedFieldsAreMembers(`set`), without making the latter: a walk of `a` (in the
 * prune, what is left to take away: usually little) instead of one of `set` (a manager's whole set).
 * `a` itself when nothing of it is taken away, as differenceSets.
 */
export function differenceWithNamedMembers(
  schema: SchemaModel,
  tr: TypeRef | undefined,
  a: FieldSet,
  set: FieldSet,
): FieldSet {
  if (set.members.size === 0 && set.children.size === 0) return a;
  const atom = tr ? resolveType(schema, tr) : undefined;
  // A member of ensure(set) here: a member of `set`, or a field of the type with something below it in `set`.
  const taken = (key: string, pe: PathElement): boolean =>
    set.members.has(key) ||
    (pe.kind === 'field' &&
      atom?.map !== undefined &&
      Object.prototype.hasOwnProperty.call(atom.map.fields, pe.name) &&
      set.children.has(key));
  let changed = false;
  for (const [key, pe] of a.members)
    if (taken(key, pe)) {
      changed = true;
      break;
    }
  const below: (FieldSet | undefined)[] = [];
  for (const [key, node] of a.children) {
    let res: FieldSet | undefined = node.set;
    const other = set.children.get(key);
    if (other) {
      const pe = node.element;
      const childRef =
        pe.kind === 'field' && atom?.map
          ? fieldType(atom.map, pe.name)
          : pe.kind === 'key' && atom?.list
            ? atom.list.elementType
            : undefined;
      const diff = differenceWithNamedMembers(schema, childRef, node.set, other.set);
      res = isEmptySet(diff) ? undefined : diff;
    }
    if (res !== node.set) changed = true;
    below.push(res);
  }
  if (!changed) return a;
  const members = new Map<string, PathElement>();
  for (const [key, pe] of a.members) if (!taken(key, pe)) members.set(key, pe);
  const children = new Map<string, FieldSetNode>();
  let i = 0;
  for (const [key, node] of a.children) {
    const res = below[i++];
    if (res) children.set(key, { element: node.element, set: res });
  }
  return { members, children };
}

/**
 * ReconcileFieldSetWithSchema (typed/reconcile_schema.go): a field set recorded under an older
 * schema, brought in line with the current one before anything is compared. A struct, map or list
 * that became atomic is owned as a whole: whoever owned `.spec.struct.numeric` now owns
 * `.spec.struct`. The reverse is left alone, as upstream leaves it ("treated as if they were always
 * granular"): the owner of a formerly atomic `.spec.struct` keeps just that path, none of its
 * children. Free-form maps (no fields, untyped elements: x-kubernetes-preserve-unknown-fields) are
 * not looked into. Undefined when nothing changes, as upstream returns nil.
 */
export function reconcileFieldSetWithSchema(
  schema: SchemaModel,
  root: TypeRef,
  fieldSet: FieldSet,
): FieldSet | undefined {
  const toRemove = newFieldSet();
  const toAdd = newFieldSet();
  let changed = false;
  const path: PathElement[] = [];
  const ownWhole = (): void => {
    // toRemove: the path and everything below it; toAdd: the path itself.
    insertPath(toRemove, path);
    insertPath(toAdd, path);
    changed = true;
  };

  const reconcile = (tr: TypeRef, set: FieldSet | undefined, isAtomic: boolean): void => {
    const atom = resolveType(schema, tr);
    if (!atom) return; // upstream: "could not resolve", an error the schemas the server serves never raise
    // handleAtom's order: map, then scalar, then list.
    if (atom.map) {
      const map = atom.map;
      if (isUntypedDeducedMap(map)) return;
      if (!isAtomic && map.elementRelationship === 'atomic') {
        if (set && !isEmptySet(set)) ownWhole();
        return;
      }
      if (set)
        visitItems(set, (pe) =>
          pe.kind === 'field' && Object.prototype.hasOwnProperty.call(map.fields, pe.name)
            ? map.fields[pe.name]?.type
            : map.elementType,
        );
      return;
    }
    if (atom.scalar) return;
    if (atom.list) {
      const list = atom.list;
      if (!isAtomic && list.elementRelationship === 'atomic') {
        ownWhole();
        return;
      }
      if (set) visitItems(set, () => list.elementType);
    }
  };

  // visitMapItems / visitListItems: children that are not members, then members (a member without
  // children was owned as a leaf, i.e. atomically). Fields the schema does not know are skipped.
  const visitItems = (set: FieldSet, typeOf: (pe: PathElement) => TypeRef | undefined): void => {
    const descend = (pe: PathElement, key: string, isMember: boolean): void => {
      const tr = typeOf(pe);
      if (!tr) return;
      const child = set.children.get(key)?.set;
      path.push(pe);
      reconcile(tr, child, isMember && child === undefined);
      path.pop();
    };
    for (const [k, node] of set.children) if (!set.members.has(k)) descend(node.element, k, false);
    for (const [k, pe] of set.members) descend(pe, k, true);
  };

  reconcile(root, fieldSet, false);
  return changed ? unionSets(recursiveDifferenceSets(fieldSet, toRemove), toAdd) : undefined;
}

/** A map with no fields whose elements are untyped: what x-kubernetes-preserve-unknown-fields gives. */
function isUntypedDeducedMap(map: MapType): boolean {
  const el = map.elementType;
  const untyped =
    el !== undefined && (el.named !== undefined ? el.named === UNTYPED_DEDUCED : el.inlined?.scalar === 'untyped');
  return untyped && Object.keys(map.fields).length === 0;
}

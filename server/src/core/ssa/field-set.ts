// Field sets: the trie that metadata.managedFields[].fieldsV1 encodes, and the set operations the
// server runs on it. Mirrors sigs.k8s.io/structured-merge-diff/v6 fieldpath/set.go (operations),
// fieldpath/serialize.go (FieldsV1 <-> set), fieldpath/serialize-pe.go (one key <-> PathElement)
// and fieldpath/element.go (ordering).
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { FieldPath, PathElement } from './path';

/**
 * A set of field paths. `members` are the paths that end at this node; `children` are the
 * subtrees below it. A path can be both a member and have children (FieldsV1 writes `.` then).
 * Maps are keyed by the FieldsV1 key of the element (`f:name`, `k:{...}`, `v:...`, `i:3`).
 */
export interface FieldSet {
  readonly members: ReadonlyMap<string, PathElement>;
  readonly children: ReadonlyMap<string, FieldSetNode>;
}

export interface FieldSetNode {
  readonly element: PathElement;
  readonly set: FieldSet;
}

interface MutableFieldSet {
  members: Map<string, PathElement>;
  children: Map<string, { element: PathElement; set: MutableFieldSet }>;
}

/**
 * The children of a set that has none yet, shared: most nodes are the last of their path and
 * never get any, so their own map is made by the first addChild, never here.
 */
const noChildren: Map<string, { element: PathElement; set: MutableFieldSet }> = new Map();
const newMutable = (): MutableFieldSet => ({ members: new Map(), children: noChildren });

function addChild(s: MutableFieldSet, key: string, node: { element: PathElement; set: MutableFieldSet }): void {
  if (s.children === noChildren) s.children = new Map();
  s.children.set(key, node);
}

export const emptyFieldSet: FieldSet = { members: new Map(), children: new Map() };

// ---------------------------------------------------------------------------------------------
// Path elements as FieldsV1 keys

/**
 * The FieldsV1 key of a path element, byte for byte as the server writes it
 * (serialize-pe.go: field names raw, key fields as compact JSON sorted by name, Go's JSON escaping).
 */
export function pathElementKey(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key': {
      const names = Object.keys(pe.fields).sort(compareGoStrings);
      return `k:{${names.map((n) => `${goJson(n)}:${goJsonValue(pe.fields[n] as JsonValue)}`).join(',')}}`;
    }
    case 'value':
      return `v:${goJsonValue(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

/**
 * Parses one FieldsV1 key. Returns undefined for a key the server's decoder would not
 * accept or does not know (an unknown prefix is dropped there too: serialize.go readIterV1).
 */
export function parsePathElementKey(key: string): PathElement | undefined {
  if (key.length < 2 || key[1] !== ':') return undefined;
  const body = key.slice(2);
  try {
    switch (key[0]) {
      case 'f':
        return { kind: 'field', name: body };
      case 'v':
        return { kind: 'value', value: JSON.parse(body) as JsonValue };
      case 'k': {
        const parsed: unknown = JSON.parse(body);
        if (!isJsonObject(parsed)) return undefined;
        const fields: Record<string, JsonValue> = {};
        for (const name of Object.keys(parsed).sort(compareGoStrings)) fields[name] = parsed[name] as JsonValue;
        return { kind: 'key', fields };
      }
      case 'i': {
        if (!/^-?\d+$/.test(body)) return undefined;
        return { kind: 'index', index: Number(body) };
      }
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// FieldsV1 JSON <-> FieldSet

/**
 * Decodes a FieldsV1 object. `{}` under a key means the path is owned; an object with children
 * is only a prefix unless it also holds `.`. Keys that do not parse are skipped, never fatal.
 * An object whose keys all get skipped counts as `{}` — exactly what readIterV1 does.
 */
export function decodeFieldsV1(fieldsV1: unknown): FieldSet {
  if (!isJsonObject(fieldsV1)) return emptyFieldSet;
  return readNode(fieldsV1).children ?? emptyFieldSet;
}

function readNode(node: JsonObject): { children: MutableFieldSet | undefined; isMember: boolean } {
  let children: MutableFieldSet | undefined;
  let isMember = false;
  for (const key in node) {
    if (!Object.prototype.hasOwnProperty.call(node, key)) continue;
    if (key === '.') {
      isMember = true;
      continue;
    }
    const parsed = parsedKey(key);
    if (!parsed) continue;
    const value = node[key];
    const sub = readNode(isJsonObject(value) ? value : {});
    const { pe, key: k } = parsed;
    if (sub.isMember) {
      children ??= newMutable();
      children.members.set(k, pe);
    }
    if (sub.children) {
      children ??= newMutable();
      const existing = children.children.get(k);
      if (existing) existing.set = toMutable(unionSets(existing.set, sub.children));
      else addChild(children, k, { element: pe, set: sub.children });
    }
  }
  if (!children) isMember = true;
  return { children, isMember };
}

/**
 * A FieldsV1 key read once: its element and canonical key. The same keys come back in every
 * object of a kind (`f:metadata`, `k:{"name":"app"}`), so each is parsed and spelled once; the
 * elements are plain data, never changed, and shared by the sets that hold them.
 */
const parsedKeys = new Map<string, { readonly pe: PathElement; readonly key: string } | null>();
const parsedKeysLimit = 8192;

function parsedKey(key: string): { readonly pe: PathElement; readonly key: string } | null {
  const known = parsedKeys.get(key);
  if (known !== undefined) return known;
  const pe = parsePathElementKey(key);
  // A field's key is its name as written; another kind is spelled again as the server spells it.
  const parsed = pe ? { pe, key: pe.kind === 'field' ? key : pathElementKey(pe) } : null;
  if (parsedKeys.size >= parsedKeysLimit) parsedKeys.clear();
  parsedKeys.set(key, parsed);
  return parsed;
}

/**
 * A field's path element and FieldsV1 key, made once per name: the walks over values step onto the
 * same field names in every object (`metadata`, `spec`, `containers`), and each step made both again.
 * Plain data, never changed, shared by the paths and sets that hold them.
 */
const fieldSteps = new Map<string, { readonly pe: PathElement; readonly key: string }>();
const fieldStepsLimit = 4096;

export function fieldStep(name: string): { readonly pe: PathElement; readonly key: string } {
  let step = fieldSteps.get(name);
  if (step === undefined) {
    if (fieldSteps.size >= fieldStepsLimit) fieldSteps.clear();
    step = { pe: { kind: 'field', name }, key: `f:${name}` };
    fieldSteps.set(name, step);
  }
  return step;
}

// ---------------------------------------------------------------------------------------------
// Building and querying

export function fieldSetFromPaths(paths: Iterable<FieldPath>): FieldSet {
  const s = newMutable();
  for (const p of paths) insertPath(s, p);
  return s;
}

/** Adds a path to a set being built (the set must not be shared yet). */
export function insertPath(target: FieldSet, path: FieldPath): void {
  if (path.length === 0) return;
  let s = target as MutableFieldSet;
  for (let i = 0; i < path.length - 1; i++) {
    const pe = path[i] as PathElement;
    const k = pathElementKey(pe);
    let node = s.children.get(k);
    if (!node) {
      node = { element: pe, set: newMutable() };
      addChild(s, k, node);
    }
    s = node.set;
  }
  const last = path[path.length - 1] as PathElement;
  s.members.set(pathElementKey(last), last);
}

export function newFieldSet(): FieldSet {
  return newMutable();
}

/**
 * The path of a depth-first walk over a value, with each element's FieldsV1 key worked out once,
 * when the walk steps onto it. Shared by the sets a walk builds (FieldSetBuilder).
 */
export class FieldPathWalk {
  readonly path: PathElement[] = [];
  /** keys[i] is pathElementKey(path[i]). */
  readonly keys: string[] = [];
  /** stamps[i] tells one visit of depth i from the next: a builder's node is current while it matches. */
  readonly stamps: number[] = [];
  private next = 0;

  push(pe: PathElement, key: string = pathElementKey(pe)): void {
    this.path.push(pe);
    this.keys.push(key);
    this.stamps.push(++this.next);
  }

  pop(): void {
    this.path.pop();
    this.keys.pop();
    this.stamps.pop();
  }
}

/**
 * A set built along a FieldPathWalk: own() adds the walk's current path, as insertPath would,
 * but finds the node to add it to from the last one it used instead of from the root. Nodes are
 * made only when something below them is owned, so the set is the one insertPath would build,
 * in the same order.
 */
export class FieldSetBuilder {
  readonly set: FieldSet;
  /** nodes[i]: the node for the walk's first i elements, valid while stamps[i] matches the walk. */
  private readonly nodes: MutableFieldSet[];
  private readonly stamps: number[] = [0];

  constructor(private readonly walk: FieldPathWalk) {
    const root = newMutable();
    this.set = root;
    this.nodes = [root];
  }

  /** Adds the walk's current path (nothing at the root, as insertPath). */
  own(): void {
    const depth = this.walk.path.length;
    if (depth === 0) return;
    this.nodeAt(depth - 1).members.set(this.walk.keys[depth - 1] as string, this.walk.path[depth - 1] as PathElement);
  }

  /** Whether something below the walk's current path is in the set (its node was made on this visit). */
  ownsBelow(): boolean {
    const depth = this.walk.path.length;
    return depth > 0 && this.stamps[depth] === this.walk.stamps[depth - 1];
  }

  /**
   * Makes `set` the set below the walk's current path, as it is: another walk's, for a value the
   * same there, never changed after. False (and nothing done) when this walk already owns something
   * below that path: the caller walks the value instead.
   */
  graft(set: FieldSet): boolean {
    const depth = this.walk.path.length;
    const parent = this.nodeAt(depth - 1);
    const key = this.walk.keys[depth - 1] as string;
    if (parent.children.has(key)) return false;
    addChild(parent, key, { element: this.walk.path[depth - 1] as PathElement, set: toMutable(set) });
    this.nodes[depth] = toMutable(set);
    this.stamps[depth] = this.walk.stamps[depth - 1] as number;
    return true;
  }

  /** Adds the current path extended by one element, without stepping onto it. */
  ownChild(pe: PathElement, key: string = pathElementKey(pe)): void {
    this.nodeAt(this.walk.path.length).members.set(key, pe);
  }

  private nodeAt(depth: number): MutableFieldSet {
    if (depth === 0) return this.nodes[0] as MutableFieldSet;
    if (this.stamps[depth] === this.walk.stamps[depth - 1]) return this.nodes[depth] as MutableFieldSet;
    const parent = this.nodeAt(depth - 1);
    const key = this.walk.keys[depth - 1] as string;
    let node = parent.children.get(key);
    if (!node) {
      node = { element: this.walk.path[depth - 1] as PathElement, set: newMutable() };
      addChild(parent, key, node);
    }
    this.nodes[depth] = node.set;
    this.stamps[depth] = this.walk.stamps[depth - 1] as number;
    return node.set;
  }
}

/** True when the exact path is a member (not merely a prefix): set.go Has. */
export function hasPath(set: FieldSet, path: FieldPath): boolean {
  if (path.length === 0) return false;
  let s: FieldSet | undefined = set;
  for (let i = 0; i < path.length - 1; i++) {
    s = s.children.get(pathElementKey(path[i] as PathElement))?.set;
    if (!s) return false;
  }
  return s.members.has(pathElementKey(path[path.length - 1] as PathElement));
}

/** The subtree below one element (set.go WithPrefix). */
export function withPrefix(set: FieldSet, pe: PathElement): FieldSet {
  return set.children.get(pathElementKey(pe))?.set ?? emptyFieldSet;
}

export function isEmptySet(set: FieldSet): boolean {
  if (set.members.size > 0) return false;
  for (const node of set.children.values()) if (!isEmptySet(node.set)) return false;
  return true;
}

/** Every member path, in the server's iteration order (members first, then subtrees, sorted). */
export function setPaths(set: FieldSet): FieldPath[] {
  const out: FieldPath[] = [];
  const walk = (s: FieldSet, prefix: PathElement[]): void => {
    for (const pe of sortedElements(s.members.values())) out.push([...prefix, pe]);
    const nodes = [...s.children.values()].sort((a, b) => comparePathElements(a.element, b.element));
    for (const node of nodes) walk(node.set, [...prefix, node.element]);
  };
  walk(set, []);
  return out;
}

function sortedElements(it: Iterable<PathElement>): PathElement[] {
  return [...it].sort(comparePathElements);
}

// ---------------------------------------------------------------------------------------------
// Set algebra (set.go)

// The operations return one of their inputs (or emptyFieldSet) where the result would equal it:
// sets are never changed once built, so sharing them is safe and spares copying whole subtrees.

export function unionSets(a: FieldSet, b: FieldSet): FieldSet {
  if (a.members.size === 0 && a.children.size === 0) return b;
  if (b.members.size === 0 && b.children.size === 0) return a;
  const out = newMutable();
  for (const [k, pe] of a.members) out.members.set(k, pe);
  for (const [k, pe] of b.members) out.members.set(k, pe);
  for (const [k, node] of a.children) addChild(out, k, { element: node.element, set: toMutable(node.set) });
  for (const [k, node] of b.children) {
    const existing = out.children.get(k);
    if (existing) existing.set = toMutable(unionSets(existing.set, node.set));
    else addChild(out, k, { element: node.element, set: toMutable(node.set) });
  }
  return out;
}

export function intersectSets(a: FieldSet, b: FieldSet): FieldSet {
  if (a.members.size + a.children.size === 0 || b.members.size + b.children.size === 0) return emptyFieldSet;
  let out: MutableFieldSet | undefined;
  for (const [k, pe] of a.members) if (b.members.has(k)) (out ??= newMutable()).members.set(k, pe);
  for (const [k, node] of a.children) {
    const other = b.children.get(k);
    if (!other) continue;
    const res = intersectSets(node.set, other.set);
    if (!isEmptySet(res)) addChild((out ??= newMutable()), k, { element: node.element, set: toMutable(res) });
  }
  return out ?? emptyFieldSet;
}

/** Whether every member of `a` is a member of `b` (`a` minus `b` is empty), without making the difference. */
export function isSubsetOf(a: FieldSet, b: FieldSet): boolean {
  if (a === b) return true;
  for (const k of a.members.keys()) if (!b.members.has(k)) return false;
  for (const [k, node] of a.children) {
    const other = b.children.get(k);
    if (other ? !isSubsetOf(node.set, other.set) : !isEmptySet(node.set)) return false;
  }
  return true;
}

/** Paths of `a` that are not members of `b`; exact paths only (set.go Difference). */
export function differenceSets(a: FieldSet, b: FieldSet): FieldSet {
  return difference(a, b, false);
}

/**
 * Like differenceSets, but a member of `b` also removes everything below it. This is how reset
 * fields (`status`) are taken out of a comparison (set.go RecursiveDifference, excludeFilter).
 */
export function recursiveDifferenceSets(a: FieldSet, b: FieldSet): FieldSet {
  return difference(a, b, true);
}

/** `a` itself when nothing of it is taken away; otherwise a new set that shares a's untouched subtrees. */
function difference(a: FieldSet, b: FieldSet, recursive: boolean): FieldSet {
  if (b.members.size === 0 && b.children.size === 0) return a;
  // One set (a part two walks share, FieldSetBuilder.graft): nothing is left.
  if (a === b) return emptyFieldSet;
  let changed = false;
  for (const k of a.members.keys())
    if (b.members.has(k)) {
      changed = true;
      break;
    }
  // What each subtree of `a` becomes, in a's order: itself, a smaller set, or nothing.
  const below: (FieldSet | undefined)[] = [];
  for (const [k, node] of a.children) {
    let res: FieldSet | undefined = node.set;
    if (recursive && b.members.has(k)) res = undefined;
    else {
      const other = b.children.get(k);
      if (other) {
        const diff = difference(node.set, other.set, recursive);
        res = isEmptySet(diff) ? undefined : diff;
      }
    }
    if (res !== node.set) changed = true;
    below.push(res);
  }
  if (!changed) return a;
  const out = newMutable();
  for (const [k, pe] of a.members) if (!b.members.has(k)) out.members.set(k, pe);
  let i = 0;
  for (const [k, node] of a.children) {
    const res = below[i++];
    if (res) addChild(out, k, { element: node.element, set: toMutable(res) });
  }
  return out;
}

/** Members that have no children: the leaves of the trie (set.go Leaves). */
export function leafSet(set: FieldSet): FieldSet {
  const out = newMutable();
  for (const [k, pe] of set.members) if (!set.children.has(k)) out.members.set(k, pe);
  for (const [k, node] of set.children) addChild(out, k, { element: node.element, set: toMutable(leafSet(node.set)) });
  return out;
}

function toMutable(set: FieldSet): MutableFieldSet {
  return set as MutableFieldSet;
}

// ---------------------------------------------------------------------------------------------
// Ordering (element.go Compare, value/value.go Compare) and Go's JSON spelling

/** Field < key < value < index; within a kind the server's own order. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const rank = { field: 0, key: 1, value: 2, index: 3 } as const;
  if (a.kind !== b.kind) return rank[a.kind] - rank[b.kind];
  switch (a.kind) {
    case 'field':
      return compareGoStrings(a.name, (b as typeof a).name);
    case 'key': {
      const bf = (b as typeof a).fields;
      const an = Object.keys(a.fields).sort(compareGoStrings);
      const bn = Object.keys(bf).sort(compareGoStrings);
      for (let i = 0; ; i++) {
        if (i >= an.length && i >= bn.length) return 0;
        if (i >= an.length) return -1;
        if (i >= bn.length) return 1;
        const c = compareGoStrings(an[i] as string, bn[i] as string);
        if (c !== 0) return c;
        const v = compareJsonValues(a.fields[an[i] as string] as JsonValue, bf[bn[i] as string] as JsonValue);
        if (v !== 0) return v;
      }
    }
    case 'value':
      return compareJsonValues(a.value, (b as typeof a).value);
    case 'index':
      return Math.sign(a.index - (b as typeof a).index);
  }
}

/** Total order over values: numbers, strings, booleans, lists, maps, null (value.Compare). */
export function compareJsonValues(a: JsonValue, b: JsonValue): number {
  const rank = (v: JsonValue): number =>
    typeof v === 'number'
      ? 0
      : typeof v === 'string'
        ? 1
        : typeof v === 'boolean'
          ? 2
          : Array.isArray(v)
            ? 3
            : v === null
              ? 5
              : 4;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return Math.sign(a - (b as number));
  if (typeof a === 'string') return compareGoStrings(a, b as string);
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a)) {
    const bl = b as JsonValue[];
    for (let i = 0; ; i++) {
      if (i >= a.length && i >= bl.length) return 0;
      if (i >= a.length) return -1;
      if (i >= bl.length) return 1;
      const c = compareJsonValues(a[i] as JsonValue, bl[i] as JsonValue);
      if (c !== 0) return c;
    }
  }
  if (a === null) return 0;
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ak = Object.keys(ao).sort(compareGoStrings);
  const bk = Object.keys(bo).sort(compareGoStrings);
  for (let i = 0; ; i++) {
    if (i >= ak.length && i >= bk.length) return 0;
    if (i >= ak.length) return -1;
    if (i >= bk.length) return 1;
    const c = compareGoStrings(ak[i] as string, bk[i] as string);
    if (c !== 0) return c;
    const v = compareJsonValues(ao[ak[i] as string] as JsonValue, bo[bk[i] as string] as JsonValue);
    if (v !== 0) return v;
  }
}

/** Go compares strings byte-wise in UTF-8, which is code point order. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(j) as number;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** What JSON.stringify or Go escapes in a string: quotes, backslashes, controls, HTML, separators, surrogates. */
const needsEscape = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

/** A string as Go's encoding/json writes it (HTML-safe escapes included). */
export function goJson(s: string): string {
  // Most strings (field names, list keys) have nothing to escape: quoted as they are.
  if (!needsEscape.test(s)) return `"${s}"`;
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A value as Go's encoding/json writes it: map keys sorted as Go sorts them (bytes of UTF-8, that is
 * code point order, not JS's UTF-16 order), strings with goJson's escapes.
 */
export function goJsonValue(v: JsonValue): string {
  if (typeof v === 'string') return goJson(v);
  if (Array.isArray(v)) return `[${v.map(goJsonValue).join(',')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort(compareGoStrings);
    return `{${keys.map((k) => `${goJson(k)}:${goJsonValue(v[k] as JsonValue)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

// The text edits behind the quick fixes: remove a contested field (and the maps and lists it leaves
// empty), remove several at once, take the live value. Pure: the original text and its parsed
// resource in, LSP-shaped edits against that text out, or the reason no edit is offered.
//
// Edits touch as little as they can: the removed entry's own lines (with the comment lines directly
// above it and the deeper comment lines after it, which describe it) in block style, the item and
// one comma in flow style; everything else keeps its bytes, comments and line breaks (CRLF stays
// CRLF). Every planned edit is checked before it is offered: the edited text is read again as
// kubectl reads it and must hold exactly the intended object, with no new problem, and the other
// objects of the text unchanged. That check is computed on the JSON value independently of the
// planner, so what the planner cannot see (an anchor used by an alias elsewhere, a duplicate key
// that would come back, a `<<` merge) turns into a refusal rather than a wrong edit.
import { addressOf, cloneJson, withoutFields, withValue, type JsonAddress } from './edits-json';
import { isBlockValue, renderBlock, renderInline, renderJson, type BlockStyle } from './edits-render';
import {
  commentOnlyColumn,
  firstOnLine,
  isBlankLine,
  lineContentEnd,
  lineCount,
  lineOf,
  lineStart,
  nextLineStart,
  offsetAt,
  rangeAt,
  restOfLineComment,
  skipWhitespace,
  textLines,
  type TextLines,
} from './edits-text';
import { jsonEqual, type JsonObject, type JsonValue } from '../json';
import {
  absoluteRange,
  isIdentityPath,
  locate,
  nodeToJson,
  parseManifestText,
  type ListItem,
  type ListNode,
  type LocateOptions,
  type ManifestNode,
  type ManifestResource,
  type MapEntry,
  type MapNode,
  type Range,
} from './manifest';
import { formatPath, parsePath, type FieldPath } from '../ssa/path';

/** One replacement in the original text, as LSP's TextEdit: positions in UTF-16 code units. */
export interface TextEdit {
  readonly range: Range;
  readonly newText: string;
}

/** The edits (non-overlapping, in text order), or why there are none: `edits` is then undefined. */
export type EditResult =
  { readonly edits: readonly TextEdit[] } | { readonly edits: undefined; readonly reason: string };

/** A field path, or the API server's spelling of one (a Finding's `path`). */
export type PathInput = FieldPath | string;

// Emptied parents are removed up to, never including, these top-level fields.
const KEPT_TOP_LEVEL = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Removes the field at `path` and the parents it leaves empty (a `resources: {limits: {cpu: 1}}`
 * whose `cpu` goes is removed whole), never the object's root or what names the object.
 * `resource` must come from parseManifestText(text).
 */
export function removeFieldEdits(
  text: string,
  resource: ManifestResource,
  path: PathInput,
  options: LocateOptions = {},
): EditResult {
  return removeFieldsEdits(text, resource, [path], options);
}

/**
 * Removes several fields of one resource at once, in one set of non-overlapping edits: a parent
 * and its child, or two siblings that together empty their parent, are handled as one removal.
 */
export function removeFieldsEdits(
  text: string,
  resource: ManifestResource,
  paths: readonly PathInput[],
  options: LocateOptions = {},
): EditResult {
  const lines = textLines(text);
  if (!parsedFrom(lines, resource)) return refuse(STALE);
  const plan = new RemovalPlan(resource);
  const addresses: JsonAddress[] = [];
  const names: string[] = [];
  const resolved: FieldPath[] = [];
  for (const input of paths) {
    const path = resolvePath(resource, input, options);
    const name = typeof input === 'string' ? input : formatPath(input);
    if (!path) return refuse(`${name} is not a field path`);
    if (isIdentityPath(path) || path.length === 0) return refuse(`${name} names the object: it stays`);
    const steps = stepsTo(resource, path, options);
    const address = addressOf(resource.object, path, options);
    if (!steps || !address) return refuse(`${name} is not written in this manifest`);
    const blocked = throughOtherPlaces(lines, resource, steps, name) ?? writtenTwice(resource, steps.at(-1)!, name);
    if (blocked) return refuse(blocked);
    plan.add(steps);
    addresses.push(address);
    names.push(name);
    resolved.push(path);
  }
  if (addresses.length === 0) return { edits: [] };
  const planned = plan.edits(lines);
  if (typeof planned === 'string') return refuse(planned);
  const expected = withoutFields(resource.object, addresses, (a) => a.length === 1 && KEPT_TOP_LEVEL.has(String(a[0])));
  return checked(lines, resource, planned, expected, names.join(', '), resolved);
}

/**
 * Sets the field at `path` (which the manifest writes) to `value`, written so kubectl reads back
 * exactly `value`: the key and the comment on its line stay; a map or list goes in block style at
 * the indentation the file uses, or in flow style where the old value was a short flow collection.
 */
export function replaceValueEdits(
  text: string,
  resource: ManifestResource,
  path: PathInput,
  value: JsonValue,
  options: LocateOptions = {},
): EditResult {
  const lines = textLines(text);
  if (!parsedFrom(lines, resource)) return refuse(STALE);
  const name = typeof path === 'string' ? path : formatPath(path);
  const resolved = resolvePath(resource, path, options);
  if (!resolved) return refuse(`${name} is not a field path`);
  if (resolved.length === 0) return refuse('the whole object cannot be replaced by a value');
  const steps = stepsTo(resource, resolved, options);
  const address = addressOf(resource.object, resolved, options);
  if (!steps || !address) return refuse(`${name} is not written in this manifest`);
  const blocked = throughOtherPlaces(lines, resource, steps, name);
  if (blocked) return refuse(blocked);
  const last = steps.at(-1)!;
  if (jsonEqual(nodeToJson(last.node), value)) return { edits: [] };
  const edit = replacement(lines, resource, last, value);
  if (typeof edit === 'string') return refuse(edit);
  return checked(lines, resource, [edit], withValue(resource.object, address, value), name);
}

/**
 * Sets the field at `path` to `value` whether or not the manifest writes it: the value replaced
 * where it is written (replaceValueEdits), else the missing keys added under the deepest map the
 * manifest writes, after its last entry and at its entries' indentation. Only a path of map keys
 * is added (a list item is not: where it would go depends on the list's merge); the check reads
 * the edited text back as every edit here is.
 */
export function setFieldEdits(text: string, resource: ManifestResource, path: FieldPath, value: JsonValue): EditResult {
  const name = formatPath(path);
  if (path.length === 0 || path.some((e) => e.kind !== 'field'))
    return refuse(`${name} is not reached through map keys alone`);
  if (locate(resource, path)) return replaceValueEdits(text, resource, path, value);
  const lines = textLines(text);
  if (!parsedFrom(lines, resource)) return refuse(STALE);
  let depth = path.length - 1;
  while (depth > 0 && !locate(resource, path.slice(0, depth))) depth--;
  const at = depth === 0 ? undefined : locate(resource, path.slice(0, depth));
  if (at?.through)
    return refuse(`${formatPath(path.slice(0, depth))} is written through an alias or a merge; edit it by hand`);
  const parent = at ? at.node : resource.root;
  if (parent.kind !== 'map') return refuse(`${formatPath(path.slice(0, depth))} is not a map here`);
  const written = parent.entries.filter((e) => placementOf(lines, resource, parent, e).kind === 'here');
  if (written.length === 0 || isFlow(lines, resource, parent))
    return refuse(
      `${formatPath(path.slice(0, depth)) || 'the object'} is not written as a block map here; edit it by hand`,
    );
  const column = absoluteRange(resource, written[0]!.keyRange).start.character;
  const end = Math.max(...written.map((e) => childEnd(lines, resource, parent, e)));
  const rest = path.slice(depth).map((e) => (e.kind === 'field' ? e.name : ''));
  const nested = rest.reduceRight<JsonValue>((inner, key) => ({ [key]: inner }), value);
  const rendered = renderBlock(nested, column, blockStyle(lines, resource)).join(lines.eol);
  const insertAt = lineContentEnd(lines, lineOf(lines, end));
  const edit: TextEdit = { range: rangeAt(lines, insertAt, insertAt), newText: `${lines.eol}${rendered}` };
  // What kubectl must read back: the object with the new keys under the parent, nothing else changed.
  const expected = cloneJson(resource.object);
  let container = expected;
  for (const e of path.slice(0, depth)) container = container[e.kind === 'field' ? e.name : ''] as JsonObject;
  Object.defineProperty(container, rest[0]!, {
    value: (nested as JsonObject)[rest[0]!],
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return checked(lines, resource, [edit], expected, name);
}

/** The fields to remove from one resource of the file. */
export interface RemovalRequest {
  readonly resource: ManifestResource;
  readonly paths: readonly PathInput[];
  /** How this resource's paths are located (its list keys' defaults come from its own schema). */
  readonly options?: LocateOptions;
}

/** What a file-wide removal could not do; the rest of it is still in the edits. */
export interface SkippedRemoval {
  readonly resource: ManifestResource;
  readonly path: string;
  readonly reason: string;
}

export interface FileRemovalResult {
  readonly edits: readonly TextEdit[];
  readonly skipped: readonly SkippedRemoval[];
}

/**
 * Removes the given fields of several resources of one file (the "remove all conflicting fields"
 * fix, `source.fixAll`): whatever can be removed is, each path that cannot is reported with its
 * reason. Items of one List document are checked together, since they share a document.
 */
export function removeFieldsInFileEdits(
  text: string,
  requests: readonly RemovalRequest[],
  defaults: LocateOptions = {},
): FileRemovalResult {
  const skipped: SkippedRemoval[] = [];
  const byDocument = new Map<number, DocumentEdits[]>();
  for (const request of requests) {
    const name = (p: PathInput) => (typeof p === 'string' ? p : formatPath(p));
    const options = request.options ?? defaults;
    let paths = request.paths;
    let result = removeFieldsEdits(text, request.resource, paths, options);
    if (!result.edits) {
      // One path that cannot go must not keep the others: find it, remove the rest.
      const removable = request.paths.filter((p) => {
        const alone = removeFieldEdits(text, request.resource, p, options);
        if (!alone.edits) skipped.push({ resource: request.resource, path: name(p), reason: alone.reason });
        return alone.edits !== undefined;
      });
      paths = removable;
      result = removable.length > 0 ? removeFieldsEdits(text, request.resource, removable, options) : { edits: [] };
      if (!result.edits) {
        for (const p of removable) skipped.push({ resource: request.resource, path: name(p), reason: result.reason });
        continue;
      }
    }
    if (result.edits.length === 0) continue;
    const list = byDocument.get(request.resource.documentIndex) ?? [];
    list.push({ resource: request.resource, paths: paths.map(name), edits: result.edits });
    byDocument.set(request.resource.documentIndex, list);
  }
  const edits: TextEdit[] = [];
  for (const group of byDocument.values()) edits.push(...compatibleEdits(text, group, skipped));
  const lines = textLines(text);
  return { edits: edits.sort((a, b) => offsetAt(lines, a.range.start) - offsetAt(lines, b.range.start)), skipped };
}

/**
 * The edits of resources sharing one document (items of a List) that hold together: each item
 * reads back after all of them as it does after its own edits alone.
 */
interface DocumentEdits {
  readonly resource: ManifestResource;
  readonly paths: readonly string[];
  readonly edits: readonly TextEdit[];
}

function compatibleEdits(text: string, group: readonly DocumentEdits[], skipped: SkippedRemoval[]): TextEdit[] {
  if (group.length === 1) return [...group[0]!.edits];
  const lines = textLines(text);
  const documentIndex = group[0]!.resource.documentIndex;
  const itemsAfter = (edits: readonly TextEdit[]) =>
    parseManifestText(applyTextEdits(text, edits)).resources.filter((r) => r.documentIndex === documentIndex);
  const objectOf = (items: readonly ManifestResource[], itemIndex: number | undefined) =>
    items.find((r) => r.itemIndex === itemIndex)?.object;
  const original = itemsAfter([]);
  const accepted: DocumentEdits[] = [];
  for (const entry of group) {
    const candidate = [...accepted, entry];
    const all = candidate.flatMap((c) => c.edits);
    const spans = all
      .map((e) => ({ start: offsetAt(lines, e.range.start), end: offsetAt(lines, e.range.end) }))
      .sort((a, b) => a.start - b.start);
    const disjoint = spans.every((s, i) => i === 0 || spans[i - 1]!.end <= s.start);
    const together = disjoint ? itemsAfter(all) : [];
    const holds =
      disjoint &&
      together.length === original.length &&
      together.every((item) => {
        const owner = candidate.find((c) => c.resource.itemIndex === item.itemIndex);
        const expected = owner ? objectOf(itemsAfter(owner.edits), item.itemIndex) : objectOf(original, item.itemIndex);
        return expected !== undefined && jsonEqual(item.object, expected);
      });
    if (holds) accepted.push(entry);
    else {
      const reason = 'its edit collides with the edit of another item of the same List; apply the fix once more';
      for (const path of entry.paths) skipped.push({ resource: entry.resource, path, reason });
    }
  }
  return accepted.flatMap((a) => a.edits);
}

/** The text after the edits (which must not overlap), for callers that want the result itself. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const lines = textLines(text);
  const spans = edits
    .map((e) => ({ start: offsetAt(lines, e.range.start), end: offsetAt(lines, e.range.end), newText: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const s of spans) out = out.slice(0, s.start) + s.newText + out.slice(s.end);
  return out;
}

const STALE = 'the text changed since it was read; ask again';

/** Whether `resource` was read from this very text (an editor may hand a newer text). */
function parsedFrom(lines: TextLines, resource: ManifestResource): boolean {
  // A JSON value after another on its line is not edited (the edits rewrite whole documents from a line start).
  if (resource.columnOffset !== undefined) return false;
  const start = lineStart(lines, resource.lineOffset);
  return lines.text.startsWith(resource.documentText, start) && (resource.lineOffset === 0 || start > 0);
}

function refuse(reason: string): EditResult {
  return { edits: undefined, reason };
}

function resolvePath(resource: ManifestResource, input: PathInput, options: LocateOptions): FieldPath | undefined {
  if (typeof input !== 'string') return input;
  // As locatePathString: names holding dots are matched against the keys the manifest writes.
  return parsePath(input, (parent) => {
    const at = locate(resource, parent, options);
    return at?.node.kind === 'map' ? at.node.entries.map((e) => e.key) : undefined;
  });
}

// ---------------------------------------------------------------------------------------------
// Walking a path through the node tree

type Container = MapNode | ListNode;

/** One step of a path: the child `index` of `container`, whose value is `node`. */
interface Step {
  readonly container: Container;
  readonly index: number;
  readonly child: MapEntry | ListItem;
  readonly node: ManifestNode;
  /** The path up to and including this step. */
  readonly path: FieldPath;
}

function childrenOf(container: Container): readonly (MapEntry | ListItem)[] {
  return container.kind === 'map' ? container.entries : container.items;
}

function isEntry(child: MapEntry | ListItem): child is MapEntry {
  return 'key' in child;
}

/** The key of an entry; the `-` of a block list item, or the item itself in a flow list. */
function headRange(child: MapEntry | ListItem): Range {
  return isEntry(child) ? child.keyRange : child.markerRange;
}

function sameRange(a: Range, b: Range): boolean {
  return (
    a.start.line === b.start.line &&
    a.start.character === b.start.character &&
    a.end.line === b.end.line &&
    a.end.character === b.end.character
  );
}

function stepsTo(resource: ManifestResource, path: FieldPath, options: LocateOptions): Step[] | undefined {
  const steps: Step[] = [];
  let node: ManifestNode = resource.root;
  for (let i = 0; i < path.length; i++) {
    if (node.kind === 'scalar') return undefined;
    const at = locate(resource, path.slice(0, i + 1), options);
    if (!at) return undefined;
    const container: Container = node;
    // locate() knows which child the step picks (key fields, schema defaults); its key range
    // tells the child apart, even when aliases share the value node.
    const index = childrenOf(container).findIndex((c) => sameRange(absoluteRange(resource, headRange(c)), at.keyRange));
    if (index < 0) return undefined;
    const child: MapEntry | ListItem = childrenOf(container)[index]!;
    steps.push({ container, index, child, node: child.value, path: path.slice(0, i + 1) });
    node = child.value;
  }
  return steps;
}

/** How a child is written: in its parent's text, with `*alias` as its value, or not here at all (`<<`). */
type Placement =
  | { readonly kind: 'here' }
  | { readonly kind: 'aliasValue'; readonly alias: Range }
  | { readonly kind: 'merged'; readonly from: Range };

function placementOf(
  lines: TextLines,
  resource: ManifestResource,
  container: Container,
  child: MapEntry | ListItem,
): Placement {
  if (!child.via) return { kind: 'here' };
  const via = absoluteRange(resource, child.via);
  if (!isEntry(child)) return { kind: 'aliasValue', alias: via };
  const viaText = lines.text.slice(offsetAt(lines, via.start), offsetAt(lines, via.end));
  const key = absoluteRange(resource, child.keyRange);
  const area = absoluteRange(resource, container.range);
  // Only the start: a block map ends where its last value ends, which for an alias is at its anchor.
  const keyHere = offsetAt(lines, key.start) >= offsetAt(lines, area.start);
  const valueAfterKey = offsetAt(lines, via.start) >= offsetAt(lines, key.end);
  if (viaText.startsWith('*') && keyHere && valueAfterKey) return { kind: 'aliasValue', alias: via };
  return { kind: 'merged', from: viaText.startsWith('<<') ? via : key };
}

/** Why an edit at the end of `steps` would change other places too, or undefined when it would not. */
function throughOtherPlaces(
  lines: TextLines,
  resource: ManifestResource,
  steps: readonly Step[],
  name: string,
): string | undefined {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    const placement = placementOf(lines, resource, step.container, step.child);
    const where = formatPath(step.path);
    if (placement.kind === 'merged') {
      return `${name} comes from a \`<<\` merge (line ${placement.from.start.line + 1}${where === name ? '' : `, through ${where}`}): changing it here would change every place that merges the same anchor`;
    }
    // Replacing or removing the `*alias` itself is local; going inside it is not.
    if (placement.kind === 'aliasValue' && i < steps.length - 1) {
      const alias = lines.text.slice(offsetAt(lines, placement.alias.start), offsetAt(lines, placement.alias.end));
      return `${name} is written through the alias ${alias} (line ${placement.alias.start.line + 1}): changing it would change the anchored value and every other use of it`;
    }
    // A map or list on the way that carries an `&anchor` some `*alias` uses: the alias changes too.
    if (i < steps.length - 1 && step.node.kind !== 'scalar' && placement.kind === 'here') {
      const start = offsetAt(lines, absoluteRange(resource, step.node.range).start);
      const anchor = /&([^\s,[\]{}]+)/.exec(lines.text.slice(startWithProperties(lines, start), start))?.[1];
      if (anchor && aliasPattern(anchor).test(resource.documentText)) {
        return `${name} is inside ${where}, whose value the anchor &${anchor} shares with *${anchor}: changing it would change both places`;
      }
    }
  }
  return undefined;
}

/** `*name` as a whole alias (not the start of a longer name). */
function aliasPattern(name: string): RegExp {
  return new RegExp(`\\*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![^\\s,\\[\\]{}])`);
}

/** kubectl keeps the last of a key written twice: removing it would bring the other one back. */
function writtenTwice(resource: ManifestResource, step: Step, name: string): string | undefined {
  if (!isEntry(step.child)) return undefined;
  // Both document-relative: the key's range and the problems of the document read alone.
  const key = step.child.keyRange;
  const duplicate = parseManifestText(resource.documentText).problems.some(
    (p) => p.code === 'duplicate-key' && sameRange(p.range, key),
  );
  return duplicate
    ? `${name} is written twice in its map: kubectl reads only the last, and removing it would bring back the other; remove both by hand`
    : undefined;
}

// ---------------------------------------------------------------------------------------------
// Removal

interface ContainerState {
  readonly removed: Set<number>;
  /** Where the container sits in its parent; undefined for the resource's root. */
  readonly parent?: { readonly container: Container; readonly index: number };
  /** A top-level apiVersion/kind/metadata value: never removed for being empty. */
  readonly kept: boolean;
}

/** Which children of which containers go; a container whose children all go goes itself. */
class RemovalPlan {
  private readonly states = new Map<Container, ContainerState>();

  constructor(private readonly resource: ManifestResource) {
    this.states.set(resource.root, { removed: new Set(), kept: true });
  }

  add(steps: readonly Step[]): void {
    steps.forEach((step, i) => {
      if (i === steps.length - 1 || step.node.kind === 'scalar' || this.states.has(step.node)) return;
      const kept = i === 0 && isEntry(step.child) && KEPT_TOP_LEVEL.has(step.child.key);
      this.states.set(step.node, {
        removed: new Set(),
        parent: { container: step.container, index: step.index },
        kept,
      });
    });
    const last = steps.at(-1)!;
    this.states.get(last.container)!.removed.add(last.index);
    this.propagate();
  }

  private propagate(): void {
    for (let changed = true; changed;) {
      changed = false;
      for (const [container, state] of this.states) {
        if (state.kept || !state.parent || state.removed.size < childrenOf(container).length) continue;
        const parentState = this.states.get(state.parent.container)!;
        if (!parentState.removed.has(state.parent.index)) {
          parentState.removed.add(state.parent.index);
          changed = true;
        }
      }
    }
  }

  private goneWithParent(container: Container): boolean {
    for (let state = this.states.get(container); state?.parent; state = this.states.get(state.parent.container)) {
      if (this.states.get(state.parent.container)!.removed.has(state.parent.index)) return true;
    }
    return false;
  }

  /** The deletions, or why they cannot be made. */
  edits(lines: TextLines): TextEdit[] | string {
    const spans: Span[] = [];
    for (const [container, state] of this.states) {
      if (state.removed.size === 0 || this.goneWithParent(container)) continue;
      const found = isFlow(lines, this.resource, container)
        ? flowDeletions(lines, this.resource, container, state.removed)
        : blockDeletions(lines, this.resource, container, state.removed);
      if (typeof found === 'string') return found;
      spans.push(...found);
    }
    return mergeSpans(spans).map((s) => ({ range: rangeAt(lines, s.start, s.end), newText: '' }));
  }
}

interface Span {
  readonly start: number;
  readonly end: number;
}

function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.start <= last.end) out[out.length - 1] = { start: last.start, end: Math.max(last.end, s.end) };
    else out.push(s);
  }
  return out;
}

function isFlow(lines: TextLines, resource: ManifestResource, container: Container): boolean {
  const c = lines.text[offsetAt(lines, absoluteRange(resource, container.range).start)];
  return c === '{' || c === '[';
}

/** A written child's text: from its key (or item) to the end of its value, as offsets. */
interface ChildExtent {
  readonly index: number;
  readonly start: number;
  readonly end: number;
}

/**
 * Where a written child's text ends. A block collection's range ends where its last value ends,
 * and for an `*alias` that is where the anchored value ends, earlier in the text: the end is
 * therefore the furthest of the range and of its children's own ends.
 */
function childEnd(
  lines: TextLines,
  resource: ManifestResource,
  container: Container,
  child: MapEntry | ListItem,
): number {
  const head = offsetAt(lines, absoluteRange(resource, headRange(child)).end);
  const placement = placementOf(lines, resource, container, child);
  if (placement.kind === 'aliasValue') return Math.max(head, offsetAt(lines, placement.alias.end));
  return Math.max(head, nodeEnd(lines, resource, child.value));
}

function nodeEnd(lines: TextLines, resource: ManifestResource, node: ManifestNode): number {
  const end = offsetAt(lines, absoluteRange(resource, node.range).end);
  if (node.kind === 'scalar' || isFlow(lines, resource, node)) return end;
  let furthest = end;
  for (const child of childrenOf(node)) {
    if (placementOf(lines, resource, node, child).kind !== 'merged')
      furthest = Math.max(furthest, childEnd(lines, resource, node, child));
  }
  return furthest;
}

/** The children written in the container's own text, in text order; `merged` when a `<<` adds others. */
function writtenChildren(
  lines: TextLines,
  resource: ManifestResource,
  container: Container,
  flow: boolean,
): { children: ChildExtent[]; merged: boolean } {
  const children: ChildExtent[] = [];
  let merged = false;
  childrenOf(container).forEach((child, index) => {
    const placement = placementOf(lines, resource, container, child);
    if (placement.kind === 'merged') {
      merged = true;
      return;
    }
    const head = absoluteRange(resource, headRange(child));
    // In a flow list the item is its own head: its `&anchor` or `!tag` goes with it.
    const start =
      flow && !isEntry(child) ? startWithProperties(lines, offsetAt(lines, head.start)) : offsetAt(lines, head.start);
    children.push({ index, start, end: childEnd(lines, resource, container, child) });
  });
  return { children: children.sort((a, b) => a.start - b.start), merged };
}

/**
 * `{a: 1, b: 2}` → `{a: 1}`, `[x, y]` → `[y]`: each run of removed children goes with the comma
 * after it, or, when it ends the collection, with the comma before it.
 */
function flowDeletions(
  lines: TextLines,
  resource: ManifestResource,
  container: Container,
  removed: ReadonlySet<number>,
): Span[] | string {
  const { children, merged } = writtenChildren(lines, resource, container, true);
  if (merged) return 'the map also takes entries from a `<<` merge; edit it by hand';
  const spans: Span[] = [];
  for (let i = 0; i < children.length; i++) {
    if (!removed.has(children[i]!.index)) continue;
    let j = i;
    while (j + 1 < children.length && removed.has(children[j + 1]!.index)) j++;
    const next = children[j + 1];
    const previous = children[i - 1];
    if (next) spans.push({ start: children[i]!.start, end: next.start });
    else if (previous) spans.push(...lastRunDeletions(lines, previous, children[i]!, children[j]!));
    i = j;
  }
  return spans;
}

/**
 * The run that ends a flow collection goes with the comma before it. Written one per line, the
 * run's lines go whole and only the comma is taken from the line before, so the comments on
 * the remaining lines stay where they are.
 */
function lastRunDeletions(lines: TextLines, previous: ChildExtent, first: ChildExtent, last: ChildExtent): Span[] {
  const comma = lines.text.indexOf(',', previous.end);
  const ownLines =
    comma >= 0 &&
    comma < first.start &&
    lineOf(lines, comma) < lineOf(lines, first.start) &&
    firstOnLine(lines, first.start) &&
    restOfLineComment(lines, last.end) !== undefined &&
    restOfLineComment(lines, comma + 1) !== undefined;
  if (!ownLines) return [{ start: previous.end, end: last.end }];
  return [
    { start: comma, end: comma + 1 },
    { start: lineStart(lines, lineOf(lines, first.start)), end: nextLineStart(lines, lineOf(lines, last.end)) },
  ];
}

/**
 * Block style: a removed child takes its lines — the comment lines right above it at its own
 * column, its value, and the comment lines after it indented deeper than it (they are inside
 * it). A comment at its column after it belongs to what follows. The first entry of a map written
 * on its list item's line (`- name: a`) gives up its place on that line to what follows.
 */
function blockDeletions(
  lines: TextLines,
  resource: ManifestResource,
  container: Container,
  removed: ReadonlySet<number>,
): Span[] {
  // Entries a `<<` merges in are not written here and cannot be among the removed ones (that is
  // refused earlier); the written ones are found by their own lines, the `<<` line stays.
  const { children } = writtenChildren(lines, resource, container, false);
  const own: (Span & { inline: boolean; first: boolean })[] = [];
  for (const child of children) {
    if (!removed.has(child.index)) continue;
    const column = child.start - lineStart(lines, lineOf(lines, child.start));
    let end = nextLineStart(lines, lineOf(lines, child.end));
    for (let line = lineOf(lines, child.end) + 1; line < lineCount(lines); line++) {
      if (isBlankLine(lines, line)) continue;
      const comment = commentOnlyColumn(lines, line);
      if (comment === undefined || comment <= column) break;
      end = nextLineStart(lines, line);
    }
    if (!firstOnLine(lines, child.start)) {
      own.push({ start: child.start, end, inline: true, first: false });
      continue;
    }
    let startLine = lineOf(lines, child.start);
    while (startLine > 0 && commentOnlyColumn(lines, startLine - 1) === column) startLine--;
    own.push({ start: lineStart(lines, startLine), end, inline: false, first: child === children[0] });
  }
  const merged: (Span & { inline: boolean; first: boolean })[] = [];
  for (const s of own.sort((a, b) => a.start - b.start)) {
    const last = merged.at(-1);
    if (last && s.start <= last.end) merged[merged.length - 1] = { ...last, end: Math.max(last.end, s.end) };
    else merged.push(s);
  }
  return merged.map((s) =>
    s.inline ? { start: s.start, end: skipWhitespace(lines.text, s.end) } : tidyBlankLines(lines, s, s.first),
  );
}

/**
 * A removal between two blank lines takes the blank lines after it, so one blank line stays; so
 * does the removal of a collection's first child, so no blank line opens the collection.
 */
function tidyBlankLines(lines: TextLines, span: Span, first: boolean): Span {
  const firstLine = lineOf(lines, span.start);
  const blankBefore = firstLine > 0 && isBlankLine(lines, firstLine - 1);
  if (!blankBefore && !first) return span;
  if (blankBefore && span.end >= lines.text.length) {
    let start = span.start;
    for (let line = firstLine - 1; line >= 0 && isBlankLine(lines, line); line--) start = lineStart(lines, line);
    return { start, end: span.end };
  }
  let end = span.end;
  for (
    let line = lineOf(lines, end);
    line < lineCount(lines) && end < lines.text.length && isBlankLine(lines, line);
    line++
  ) {
    end = nextLineStart(lines, line);
  }
  return { start: span.start, end };
}

/** Moves `offset` back over the `&anchor` and `!tag` written before a value. */
function startWithProperties(lines: TextLines, offset: number): number {
  let start = offset;
  for (;;) {
    let i = start;
    while (i > 0 && /[ \t\r\n]/.test(lines.text[i - 1]!)) i--;
    let j = i;
    while (j > 0 && !/[ \t\r\n,[{]/.test(lines.text[j - 1]!)) j--;
    if (j === i || !/^[&!]/.test(lines.text.slice(j, i))) return start;
    // Not a property but words of a comment: `key: # see &anchor`.
    if (lines.text.slice(lineStart(lines, lineOf(lines, j)), j).includes('#')) return start;
    start = j;
  }
}

// ---------------------------------------------------------------------------------------------
// Replacement

function replacement(lines: TextLines, resource: ManifestResource, step: Step, value: JsonValue): TextEdit | string {
  const placement = placementOf(lines, resource, step.container, step.child);
  const head = absoluteRange(resource, headRange(step.child));
  const valueRange = placement.kind === 'aliasValue' ? placement.alias : absoluteRange(resource, step.node.range);
  let oldStart = startWithProperties(lines, offsetAt(lines, valueRange.start));
  let oldEnd = placement.kind === 'aliasValue' ? offsetAt(lines, valueRange.end) : nodeEnd(lines, resource, step.node);
  const flowContainer = isFlow(lines, resource, step.container);
  const edit = (start: number, end: number, newText: string): TextEdit => ({
    range: rangeAt(lines, start, end),
    newText,
  });

  if (flowContainer) {
    // A document written as JSON gets JSON; a flow collection inside YAML gets YAML's flow style.
    const json = isFlow(lines, resource, resource.root);
    return edit(oldStart, oldEnd, json ? renderJson(value) : renderInline(value, true));
  }

  // Where the value may begin: after the entry's `:` or the item's `-`.
  let indicatorEnd: number;
  if (isEntry(step.child)) {
    const afterKey = offsetAt(lines, head.end);
    const colon = /^[ \t]*:/.exec(lines.text.slice(afterKey));
    if (!colon) return 'the key is not followed by `:` on its line; edit it by hand';
    indicatorEnd = afterKey + colon[0].length;
  } else {
    indicatorEnd = offsetAt(lines, head.end);
  }
  // `key:` with nothing after it: the value's range is empty, at the key or before a comment.
  if (oldEnd <= indicatorEnd || oldStart === oldEnd) oldStart = oldEnd = indicatorEnd;

  const headLine = lineOf(lines, indicatorEnd);
  const sameLine = lineOf(lines, oldStart) === headLine;
  // A comment left on the value's last line goes with the old value, unless that is the key's line.
  const lastLineRest = restOfLineComment(lines, oldEnd);
  const oldEndWithComment = lastLineRest !== undefined ? lineContentEnd(lines, lineOf(lines, oldEnd)) : oldEnd;
  const headComment = sameLine
    ? lineOf(lines, oldEnd) === headLine
      ? lastLineRest
      : undefined
    : restOfLineComment(lines, indicatorEnd);
  const comment = headComment ? ` ${headComment}` : '';

  const style = blockStyle(lines, resource);
  const oldText = lines.text.slice(oldStart, oldEnd);
  const preferFlow =
    (oldText.startsWith('{') || oldText.startsWith('[')) &&
    !oldText.includes('\n') &&
    renderInline(value, false).length <= 80;
  if (!isBlockValue(value) || preferFlow) {
    const inline = renderInline(value, false);
    if (sameLine) return edit(oldStart, oldEnd, oldStart === indicatorEnd ? ` ${inline}` : inline);
    return edit(indicatorEnd, oldEndWithComment, ` ${inline}${comment}`);
  }

  const headColumn = head.start.character;
  const oldIsBlock = !sameLine && step.node.kind !== 'scalar' && placement.kind === 'here';
  const eol = lines.eol;
  if (!isEntry(step.child)) {
    // A list item: the value starts after `- `, its other lines under its first.
    const rendered = renderBlock(value, headColumn + 2, style);
    const body = comment
      ? `${comment}${eol}${rendered.join(eol)}`
      : ` ${rendered[0]!.trimStart()}${rendered.length > 1 ? eol : ''}${rendered.slice(1).join(eol)}`;
    return edit(indicatorEnd, oldEndWithComment, body);
  }
  const oldColumn =
    offsetAt(lines, valueRange.start) - lineStart(lines, lineOf(lines, offsetAt(lines, valueRange.start)));
  const indent = Array.isArray(value)
    ? oldIsBlock && step.node.kind === 'list'
      ? oldColumn
      : headColumn + (style.indentlessSequences ? 0 : style.indentUnit)
    : oldIsBlock && step.node.kind === 'map' && oldColumn > headColumn
      ? oldColumn
      : headColumn + style.indentUnit;
  return edit(indicatorEnd, oldEndWithComment, `${comment}${eol}${renderBlock(value, indent, style).join(eol)}`);
}

/** The indentation step and sequence style the resource already uses (2 and indented by default). */
function blockStyle(lines: TextLines, resource: ManifestResource): BlockStyle {
  let indentUnit: number | undefined;
  let indentlessSequences: boolean | undefined;
  const visit = (node: ManifestNode) => {
    if (node.kind === 'list') {
      node.items.forEach((i) => visit(i.value));
      return;
    }
    if (node.kind !== 'map' || isFlow(lines, resource, node)) return;
    for (const e of node.entries) {
      if (e.via) continue;
      const keyColumn = e.keyRange.start.character;
      const child = e.value;
      if (
        child.kind !== 'scalar' &&
        !isFlow(lines, resource, child) &&
        child.range.start.line > e.keyRange.start.line
      ) {
        const column = child.range.start.character;
        if (child.kind === 'map' && indentUnit === undefined && column > keyColumn) indentUnit = column - keyColumn;
        if (child.kind === 'list' && indentlessSequences === undefined) indentlessSequences = column === keyColumn;
      }
      visit(child);
    }
  };
  visit(resource.root);
  return { indentUnit: indentUnit ?? 2, indentlessSequences: indentlessSequences ?? false };
}

// ---------------------------------------------------------------------------------------------
// The check before an edit is offered

function checked(
  lines: TextLines,
  resource: ManifestResource,
  edits: readonly TextEdit[],
  expected: JsonObject,
  name: string,
  removed: readonly FieldPath[] = [],
): EditResult {
  const sorted = [...edits].sort((a, b) => offsetAt(lines, a.range.start) - offsetAt(lines, b.range.start));
  // Only the resource's document is read again: edits stay inside it, and YAML anchors, aliases
  // and keys never reach across `---`. That keeps the check cheap in a file of many documents.
  const documentStart = lineStart(lines, resource.lineOffset);
  const documentEnd = documentStart + resource.documentText.length;
  const shifted: { start: number; end: number; newText: string }[] = [];
  for (const e of sorted) {
    const start = offsetAt(lines, e.range.start);
    const end = offsetAt(lines, e.range.end);
    if (start < documentStart || end > documentEnd)
      return refuse(`the edit of ${name} would reach into another document; edit it by hand`);
    shifted.push({ start: start - documentStart, end: end - documentStart, newText: e.newText });
  }
  let afterText = resource.documentText;
  for (const e of [...shifted].reverse()) afterText = afterText.slice(0, e.start) + e.newText + afterText.slice(e.end);
  const lost = lostAnchor(lines, sorted, afterText);
  if (lost) return refuse(`the edit of ${name} would remove the anchor &${lost}, which an alias elsewhere uses`);
  const before = parseManifestText(resource.documentText);
  const after = parseManifestText(afterText);
  const known = new Set(before.problems.map((p) => `${p.code} ${p.message}`));
  const added = after.problems.find((p) => !known.has(`${p.code} ${p.message}`));
  if (added) return refuse(`the edit of ${name} would leave the YAML broken (${added.message}); edit it by hand`);
  if (after.totalDocuments !== 1 || after.resources.length !== before.resources.length) {
    return refuse(`the edit of ${name} would change which objects the file holds; edit it by hand`);
  }
  for (let i = 0; i < before.resources.length; i++) {
    const was = before.resources[i]!;
    const isTarget = was.itemIndex === resource.itemIndex;
    if (!jsonEqual(after.resources[i]!.object, isTarget ? expected : was.object)) {
      if (isTarget && removed.some((p) => locate(after.resources[i]!, p) !== undefined)) {
        return refuse(
          `${name} would still be there after the edit: a \`<<\` merge gives the same key another value; edit it by hand`,
        );
      }
      return refuse(
        isTarget
          ? `the edit of ${name} would change other fields too; edit it by hand`
          : `the edit of ${name} would change another object of the file; edit it by hand`,
      );
    }
  }
  return { edits: sorted };
}

/** An `&anchor` the edits delete while an `*alias` of it stays. */
function lostAnchor(lines: TextLines, edits: readonly TextEdit[], afterText: string): string | undefined {
  for (const e of edits) {
    const old = lines.text.slice(offsetAt(lines, e.range.start), offsetAt(lines, e.range.end));
    for (const m of old.matchAll(/&([^\s,[\]{}]+)/g)) {
      const name = m[1]!;
      const stillDefined = afterText.includes(`&${name}`);
      if (aliasPattern(name).test(afterText) && !stillDefined) return name;
    }
  }
  return undefined;
}

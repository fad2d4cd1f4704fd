// The manifest model: the Kubernetes objects a YAML or JSON text holds, read as kubectl reads them,
// with the source range of every map entry and list item, addressable by field path.
//
// Parsing is per document: the text is split at `---` lines (as kubectl's YAMLReader splits,
// k8s.io/apimachinery/pkg/util/yaml/decoder.go) and each document's parse is cached by its text,
// with positions relative to its first line, so an edit re-parses only the edited document even
// when the lines above it changed. Ranges in the node tree are therefore document-relative;
// everything that leaves this module through locate() or the problems list is absolute.
//
// Most documents never need a position: a document is first read for its values alone
// (fast-values.ts), and its node tree and range are built by the full parse the first time
// something asks for them (`root`, `range`), once per document text.
import { Composer, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Parser, Scalar, YAMLParseError } from 'yaml';
import type { CST, Document, Node as YamlNode, YAMLMap, YAMLSeq } from 'yaml';
import { isJsonObject, jsonEqual, setOwn, type JsonObject, type JsonValue } from '../json';
import { isJsonStream, splitJsonStream } from './json-stream';
import { field, formatPath, index, parsePath, type FieldPath, type PathElement } from '../ssa/path';
import { jsonKeyOf, resolveScalar } from './yaml-scalars';
import { fastDocumentValue } from './fast-values';
import { writtenScalar, type WrittenStep } from './written-scalar';

/** Zero-based line and character, the character in UTF-16 code units (as LSP counts). */
export interface Position {
  readonly line: number;
  readonly character: number;
}

export interface Range {
  readonly start: Position;
  readonly end: Position;
}

export type ManifestNode = MapNode | ListNode | ScalarNode;

export interface MapNode {
  readonly kind: 'map';
  readonly range: Range;
  /** The entries kubectl ends up with: one per key, merge keys applied, the last duplicate winning. */
  readonly entries: readonly MapEntry[];
}

export interface MapEntry {
  /** The JSON key kubectl makes of the YAML key (`on:` is "true", `0x10:` is "16"). */
  readonly key: string;
  readonly keyRange: Range;
  readonly value: ManifestNode;
  /** Set when the entry is not written here: the range of the `<<` merge key or the `*alias` it comes through. */
  readonly via?: Range;
}

export interface ListNode {
  readonly kind: 'list';
  readonly range: Range;
  readonly items: readonly ListItem[];
}

export interface ListItem {
  /** The `-` of a block sequence item; the value itself in a flow sequence. */
  readonly markerRange: Range;
  readonly value: ManifestNode;
  /** The range of the `*alias` the item is written as, if it is one. */
  readonly via?: Range;
}

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly range: Range;
  readonly value: null | boolean | number | string;
}

export type ProblemCode =
  /** The YAML does not parse. */
  | 'yaml-syntax'
  /** It parses, but kubectl would refuse it (null key, `.inf`, a bad `!!int`, merge of a non-map). */
  | 'yaml-decode'
  /** A key written twice in one map: kubectl silently keeps the last. */
  | 'duplicate-key'
  /** Beyond the limits below (size, nesting, alias expansion): not analysed, so nothing is said about it. */
  | 'too-large';

/** A problem of the text itself; how severe it is, the rule catalogue (core/findings/catalogue.ts) says by its code. */
export interface ManifestProblem {
  readonly code: ProblemCode;
  readonly message: string;
  readonly range: Range;
}

/** One Kubernetes object of the text (a document, or an item of a `kind: List` document). */
export interface ManifestResource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  /** The object as kubectl would send it. Shared with the cache: never mutate it. */
  readonly object: JsonObject;
  /** The object's node tree; its ranges are relative to `lineOffset`. */
  readonly root: MapNode;
  /** Absolute range of the document, or of the item of a List. */
  readonly range: Range;
  /** Zero-based index of the document in the text. */
  readonly documentIndex: number;
  /** Index in the List's `items` when the object came from a List. */
  readonly itemIndex?: number;
  /** Line of the text where the document starts: add it to node-tree ranges (absoluteRange). */
  readonly lineOffset: number;
  /**
   * Column where the document starts on that line, when not the first: a JSON value after another
   * on the same line (`{…} {…}`). Added to the columns of node-tree ranges on their first line.
   */
  readonly columnOffset?: number;
  /** The document's text: later stages can cache their work by it, as this module does. */
  readonly documentText: string;
}

/**
 * The object a resource is about, as plain data to look it up by (no name: a new object,
 * generateName). The one shape of an object reference: the cluster layer's lookups, the facts a
 * check reads and the object a finding is about are this, or NamedObjectTarget. The namespace is
 * the manifest's; where the object lands is placeInNamespace's answer.
 */
export interface ObjectTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** An ObjectTarget with its name: an object whose live state can be looked up. */
export interface NamedObjectTarget extends ObjectTarget {
  readonly name: string;
}

/** Where an object's namespace comes from: its own `metadata.namespace`, or the default (settings, kubeconfig context). */
export type NamespaceOrigin = 'manifest' | 'default';

/**
 * Where an object lands, as kubectl places it: an object of a namespaced kind in its own namespace,
 * else in the default one; an object of a cluster-scoped kind in none ('').
 */
export function placeInNamespace(
  namespaced: boolean,
  namespace: string | undefined,
  defaultNamespace: string,
): { readonly namespace: string; readonly origin: NamespaceOrigin } {
  return { namespace: namespaced ? namespace || defaultNamespace : '', origin: namespaceOrigin(namespace) };
}

/** Where an object's namespace comes from: the manifest when it writes one, else the default. */
export function namespaceOrigin(namespace: string | undefined): NamespaceOrigin {
  return namespace ? 'manifest' : 'default';
}

export function objectTarget(resource: ManifestResource): ObjectTarget {
  return {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    ...(resource.name !== undefined ? { name: resource.name } : {}),
    ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}),
  };
}

/** objectTarget for a resource with a name, the only kind whose live object can be looked up. */
export function namedObject(resource: ManifestResource): NamedObjectTarget | undefined {
  return resource.name === undefined ? undefined : { ...objectTarget(resource), name: resource.name };
}

export interface ParsedManifest {
  readonly resources: readonly ManifestResource[];
  readonly problems: readonly ManifestProblem[];
  /** How many documents were parsed rather than reused from the cache. */
  readonly parsedDocuments: number;
  readonly totalDocuments: number;
}

/**
 * What the analysis takes on. Beyond these a document is not parsed (or not analysed) and gets one
 * `too-large` warning instead: without limits a hostile or accidental file blocks the language
 * server for seconds and takes gigabytes, and the recursive walks of the analysis run out of stack.
 * Real manifests stay far below every one of them.
 */
export const manifestLimits = {
  /**
   * Characters in one document. etcd refuses to store a request over 1.5 MiB (its default
   * --max-request-bytes), so no Kubernetes object is larger; a document that large is a data
   * dump, not a manifest. Parsing it would block the server for about a second per MiB.
   */
  documentLength: 1.5 * 1024 * 1024,
  /** Characters in one file: about ten seconds of background parsing and 250 MB of parse trees. */
  textLength: 16 * 1024 * 1024,
  /**
   * Levels of nesting, aliases expanded. kubectl accepts up to 10,000 (go-yaml's max depth); real
   * objects nest a few dozen levels, and every walk below is recursive.
   */
  depth: 512,
  /**
   * Values that aliases add to a document beyond what is written in it: at most as many as are
   * written, or this many in a small document. kubectl accepts up to 99% of 400,000 values coming
   * from aliases (goyaml.v2 decode.go allowedAliasRatio), which a 100-byte text reaches (the
   * "billion laughs"); analysing that is work out of all proportion to the text.
   */
  aliasExpansion: 25_000,
} as const;

/** The size of a text for a message: "8.0 MB". */
function sizeText(chars: number): string {
  return chars >= 1024 * 1024 ? `${(chars / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(chars / 1024)} KiB`;
}

/** What one document's text parses to, positions relative to its first line. Cached by text. */
interface ParsedDocument {
  readonly resources: readonly DocumentResource[];
  readonly problems: readonly ManifestProblem[];
}

type DocumentResource = Omit<ManifestResource, 'documentIndex' | 'lineOffset' | 'columnOffset' | 'documentText'>;

/**
 * Parsed documents by text, for one editor document (one cache per URI): each parse keeps only
 * the documents of the latest text, so the cache never grows beyond one text's documents.
 */
export interface ManifestCache {
  documents: Map<string, ParsedDocument>;
}

export function createManifestCache(): ManifestCache {
  return { documents: new Map() };
}

export interface ParseOptions {
  /**
   * Read each document for its values first and build its node tree when first asked (default);
   * false builds every tree at once. Both give the same resources, ranges and problems
   * (test/unit/core/manifest/fast-values.test.ts); false is for that comparison.
   */
  readonly valuesFirst?: boolean;
}

/** Parses a YAML (or JSON) text into its Kubernetes objects. Never throws for bad input. */
export function parseManifestText(text: string, cache?: ManifestCache, options: ParseOptions = {}): ParsedManifest {
  const run = parseSteps(text, cache, options.valuesFirst ?? true);
  for (let step = run.next(); ; step = run.next()) if (step.done) return step.value;
}

export interface SliceOptions {
  /**
   * Longest stretch of parsing between two yields, in milliseconds. Short: the cluster is asked
   * while the file is read, and each step of that (reading the kubeconfig, connecting, each answer)
   * waits for the next yield.
   */
  readonly sliceMs?: number;
  /**
   * Lets the event loop run. The default, setImmediate, lets it take in whatever has arrived
   * (the editor's messages, the cluster's answers, a file read) and go on at once: a setTimeout
   * would wait for the timer too.
   */
  readonly yieldToEventLoop?: () => Promise<void>;
  /**
   * Called once, with the first Kubernetes object as soon as it is found: work that only a file of
   * manifests needs (contacting the cluster, asking for that object) can start while the rest is read.
   */
  readonly onFirstResource?: (first: ManifestResource) => void;
}

/**
 * parseManifestText that hands the event loop back every `sliceMs`: a cold parse of a
 * 2,000-document file takes about a second, far too long to block a language server.
 */
export async function parseManifestTextInSlices(
  text: string,
  cache?: ManifestCache,
  options: SliceOptions = {},
): Promise<ParsedManifest> {
  const sliceMs = options.sliceMs ?? 3;
  const yieldToEventLoop = options.yieldToEventLoop ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  const run = parseSteps(text, cache);
  let sliceStart = performance.now();
  let found = false;
  for (let step = run.next(); ; step = run.next()) {
    if (step.done) {
      if (!found && step.value.resources.length > 0) options.onFirstResource?.(step.value.resources[0]!);
      return step.value;
    }
    if (!found && step.value.length > 0) {
      found = true;
      options.onFirstResource?.(step.value[0]!);
    }
    if (performance.now() - sliceStart >= sliceMs) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
}

/** The parse, one document per step (each step gives the objects found so far), so that callers can decide when to pause. */
function* parseSteps(
  text: string,
  cache: ManifestCache | undefined,
  valuesFirst = true,
): Generator<readonly ManifestResource[], ParsedManifest> {
  if (text.length > manifestLimits.textLength) {
    if (cache) cache.documents = new Map();
    const problem = tooLarge(
      `This file is ${sizeText(text.length)}: files over ${sizeText(manifestLimits.textLength)} are not analysed (kube-conflict-hints keeps the editor responsive). Split it to have it checked.`,
      { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    );
    return { resources: [], problems: [problem], parsedDocuments: 0, totalDocuments: 0 };
  }
  const chunks = splitDocuments(text);
  const reused = new Map<string, ParsedDocument>();
  const resources: ManifestResource[] = [];
  const problems: ManifestProblem[] = [];
  let parsedDocuments = 0;
  for (let documentIndex = 0; documentIndex < chunks.length; documentIndex++) {
    const chunk = chunks[documentIndex]!;
    let parsed = reused.get(chunk.text) ?? cache?.documents.get(chunk.text);
    const fresh = !parsed;
    if (!parsed) {
      parsed = valuesFirst ? parseDocumentText(chunk.text) : fullParse(chunk.text);
      parsedDocuments++;
    }
    reused.set(chunk.text, parsed);
    for (const r of parsed.resources) resources.push(placeResource(r, documentIndex, chunk));
    for (const p of parsed.problems)
      problems.push({ ...p, range: shiftRange(p.range, chunk.startLine, chunk.startCharacter) });
    if (chunk.problem) problems.push(chunk.problem);
    if (fresh) yield resources;
  }
  if (cache) cache.documents = reused;
  return { resources, problems, parsedDocuments, totalDocuments: chunks.length };
}

interface DocumentChunk {
  readonly text: string;
  readonly startLine: number;
  /** The column of the document's first character on its first line (a JSON value after another on the same line). */
  readonly startCharacter?: number;
  /** Where a JSON stream goes wrong (absolute): kubectl reads nothing after it. */
  readonly problem?: ManifestProblem;
}

// A line starting with `---` followed by nothing, a space or a comment starts a document
// (decoder.go YAMLReader.Read; kubectl refuses content after the marker on the same line).
const SEPARATOR = /^---(?=[ \t\r\n]|$)/gm;

function splitDocuments(text: string): DocumentChunk[] {
  if (isJsonStream(text)) return jsonStreamChunks(text);
  const chunks: DocumentChunk[] = [];
  let chunkStart = 0;
  let chunkStartLine = 0;
  let countedTo = 0;
  let line = 0;
  for (const m of text.matchAll(SEPARATOR)) {
    if (m.index === 0) continue;
    for (let i = text.indexOf('\n', countedTo); i >= 0 && i < m.index; i = text.indexOf('\n', i + 1)) line++;
    countedTo = m.index;
    chunks.push({ text: text.slice(chunkStart, m.index), startLine: chunkStartLine });
    chunkStart = m.index;
    chunkStartLine = line;
  }
  chunks.push({ text: text.slice(chunkStart), startLine: chunkStartLine });
  return chunks;
}

/**
 * A text kubectl reads as a stream of JSON values (see json-stream.ts): one document per value.
 * A value indented on its line is padded with spaces to its column, so that the document's
 * positions are the text's once shifted by its line, as for YAML documents. A value after another
 * on the same line keeps its column apart instead, added to the positions of its first line when
 * it is placed: padding each of a line of many values (`jq -j`, or a hostile file) to its column
 * was quadratic in them.
 */
function jsonStreamChunks(text: string): DocumentChunk[] {
  const stream = splitJsonStream(text);
  const chunks: DocumentChunk[] = stream.values.map((v) => {
    let i = v.start.offset;
    while (
      i > v.start.offset - v.start.character &&
      (text[i - 1] === ' ' || text[i - 1] === '\t' || text[i - 1] === '\r')
    )
      i--;
    const indented = i === v.start.offset - v.start.character;
    return indented
      ? { text: ' '.repeat(v.start.character) + v.text, startLine: v.start.line }
      : { text: v.text, startLine: v.start.line, startCharacter: v.start.character };
  });
  if (stream.error) {
    const at = { line: stream.error.at.line, character: stream.error.at.character };
    chunks.push({
      text: '',
      startLine: at.line,
      problem: { code: 'yaml-syntax', message: stream.error.message, range: { start: at, end: at } },
    });
  }
  return chunks.length > 0 ? chunks : [{ text, startLine: 0 }];
}

/**
 * The range moved down by `lines` lines (a document's range in the whole text), and on its first
 * line right by `column` characters (a document that starts mid-line).
 */
export function shiftRange(r: Range, lines: number, column = 0): Range {
  if (lines === 0 && column === 0) return r;
  const shift = (p: Position): Position => ({
    line: p.line + lines,
    character: p.line === 0 ? p.character + column : p.character,
  });
  return { start: shift(r.start), end: shift(r.end) };
}

// The fields that say which object a manifest is: a fix never removes them (that would address
// another object), and hovering them tells about the object itself rather than one field.
const IDENTITY_PATHS = new Set([
  '.apiVersion',
  '.kind',
  '.metadata',
  '.metadata.name',
  '.metadata.generateName',
  '.metadata.namespace',
]);

/** True for the fields that name the object: apiVersion, kind, metadata and its name, generateName, namespace. */
export function isIdentityPath(path: FieldPath): boolean {
  return IDENTITY_PATHS.has(formatPath(path));
}

/** True when the position lies in the range, both ends included. */
export function rangeContains(r: Range, p: Position): boolean {
  const afterStart = p.line > r.start.line || (p.line === r.start.line && p.character >= r.start.character);
  const beforeEnd = p.line < r.end.line || (p.line === r.end.line && p.character <= r.end.character);
  return afterStart && beforeEnd;
}

/** The range's first character: where a finding about a whole resource or document is shown. */
export function firstCharacter(range: Range): Range {
  return { start: range.start, end: { line: range.start.line, character: range.start.character + 1 } };
}

/** A node-tree range of `resource` as a range in the whole text. */
export function absoluteRange(resource: ManifestResource, range: Range): Range {
  return shiftRange(range, resource.lineOffset, resource.columnOffset);
}

// ---------------------------------------------------------------------------------------------
// One document

interface Converted {
  readonly node: ManifestNode;
  readonly json: JsonValue;
  /** Node count with aliases expanded. */
  readonly size: number;
  /** Levels of nesting below and including this node, aliases expanded (a scalar is 1). */
  readonly height: number;
}

class DecodeError extends Error {
  constructor(
    message: string,
    readonly range: Range,
    readonly code: ProblemCode = 'yaml-decode',
  ) {
    super(message);
  }
}

interface DocumentContext {
  readonly source: string;
  readonly lines: LineCounter;
  readonly doc: Document.Parsed;
  readonly problems: ManifestProblem[];
  readonly converted: Map<YamlNode, Converted>;
  readonly converting: Set<YamlNode>;
  /** What each alias refers to (absent: no such anchor before it), found in one pass over the document. */
  readonly aliasTargets: Map<YamlNode, YamlNode | undefined>;
}

function tooLarge(message: string, range: Range): ManifestProblem {
  return { code: 'too-large', message, range };
}

const tooDeepMessage = `This document nests deeper than ${manifestLimits.depth} levels: it is not analysed (kube-conflict-hints walks objects recursively; real manifests nest a few dozen levels).`;

/**
 * A document's resource placed in the text. A resource read for its values alone keeps `root` and
 * `range` lazy: reading either builds the node tree (once per document text).
 */
function placeResource(r: DocumentResource, documentIndex: number, chunk: DocumentChunk): ManifestResource {
  // A document that did not move since the last parse (most of a file, after a keystroke) keeps its placed resource.
  const known = placements.get(r);
  if (
    known &&
    known.documentIndex === documentIndex &&
    known.lineOffset === chunk.startLine &&
    known.columnOffset === chunk.startCharacter
  )
    return known;
  const made = placeAnew(r, documentIndex, chunk);
  placements.set(r, made);
  return made;
}

/** The last place each document resource was put at. */
const placements = new WeakMap<DocumentResource, ManifestResource>();

function placeAnew(r: DocumentResource, documentIndex: number, chunk: DocumentChunk): ManifestResource {
  const placement = {
    documentIndex,
    lineOffset: chunk.startLine,
    ...(chunk.startCharacter !== undefined ? { columnOffset: chunk.startCharacter } : {}),
    documentText: chunk.text,
  };
  if (!(LAZY in r)) return { ...r, range: shiftRange(r.range, chunk.startLine, chunk.startCharacter), ...placement };
  const { apiVersion, kind, name, generateName, namespace, object, itemIndex } = r;
  const placed = {
    apiVersion,
    kind,
    ...(name !== undefined && { name }),
    ...(generateName !== undefined && { generateName }),
    ...(namespace !== undefined && { namespace }),
    object,
    ...(itemIndex !== undefined && { itemIndex }),
    ...placement,
  } as ManifestResource;
  let range: Range | undefined;
  Object.defineProperty(placed, 'root', { enumerable: true, get: () => r.root });
  Object.defineProperty(placed, 'range', {
    enumerable: true,
    get: () => (range ??= shiftRange(r.range, chunk.startLine, chunk.startCharacter)),
  });
  Object.defineProperty(placed, LAZY, { value: r });
  return placed;
}

/** Marks a resource whose `root` and `range` are built on first use (on a placed one: its document's). */
const LAZY = Symbol('lazy');
/** The lazy document resources whose node tree has been built. */
const treesBuilt = new WeakSet<object>();

/**
 * locate() for a path of map keys and list items that ends on a one-line scalar, read off the text
 * of a document whose node tree is not built (written-scalar.ts): a finding on such a field is
 * placed without a full parse. Which item a list step means is read from the document's value,
 * exactly as locate() picks it from the tree (childAt). Undefined when the tree is built (locate()
 * answers from it), the path is not in the value, or the text leaves any doubt.
 */
export function locateScalarInText(
  resource: ManifestResource,
  path: FieldPath,
  options: LocateOptions = {},
): { keyRange: Range; valueRange: Range } | undefined {
  const source = (resource as unknown as { [LAZY]?: object })[LAZY];
  if (source === undefined || treesBuilt.has(source)) return undefined;
  const steps: WrittenStep[] = [];
  let value: JsonValue | undefined = resource.object;
  for (let i = 0; i < path.length; i++) {
    const element = path[i]!;
    if (element.kind === 'field') {
      if (!isJsonObject(value) || !Object.hasOwn(value, element.name)) return undefined;
      steps.push(element.name);
      value = value[element.name];
      continue;
    }
    if (!Array.isArray(value)) return undefined;
    const at = itemIndex(value, element, path.slice(0, i), options);
    if (at < 0) return undefined;
    steps.push(at);
    value = value[at];
  }
  if (value === undefined || (value !== null && typeof value === 'object')) return undefined;
  const found = writtenScalar(resource.documentText, steps);
  if (!found) return undefined;
  const onLine = ([from, to]: readonly [number, number]): Range =>
    absoluteRange(resource, { start: { line: found.line, character: from }, end: { line: found.line, character: to } });
  return { keyRange: onLine(found.key), valueRange: onLine(found.value) };
}

/** The index of the item a list element picks in a list's value, as childAt picks it in the tree; -1 when none. */
function itemIndex(
  items: readonly JsonValue[],
  element: Exclude<PathElement, { kind: 'field' }>,
  listPath: FieldPath,
  options: LocateOptions,
): number {
  if (element.kind === 'index') return element.index < items.length ? element.index : -1;
  if (element.kind === 'value') return items.findIndex((it) => jsonEqual(it, element.value));
  return items.findIndex(
    (it) =>
      isJsonObject(it) &&
      Object.entries(element.fields).every(([name, want]) => {
        const have = Object.hasOwn(it, name) ? it[name] : options.keyFieldDefault?.(listPath, name);
        return have !== undefined && jsonEqual(have, want);
      }),
  );
}

/** Whether a resource's node tree has been built (tests and the benchmark ask). */
export function hasNodeTree(resource: ManifestResource): boolean {
  const source = (resource as unknown as { [LAZY]?: object })[LAZY];
  return source === undefined || treesBuilt.has(source);
}

function parseDocumentText(source: string): ParsedDocument {
  if (source.length <= manifestLimits.documentLength) {
    const fast = fastDocumentValue(source, manifestLimits.depth);
    if (fast) return { resources: lazyResources(source, fast.value), problems: [] };
  }
  return fullParse(source);
}

/**
 * The resources of a document read for its values alone, or of its full parse where it holds a
 * List (whose items' ranges only the node tree has).
 */
function lazyResources(source: string, value: JsonValue): DocumentResource[] {
  if (!isObject(value)) return [];
  const head = headOf(value);
  if (!head) return [];
  if (Array.isArray(value.items)) return fullParse(source).resources as DocumentResource[];
  let full: DocumentResource | undefined;
  const resource = { ...head, object: value } as unknown as DocumentResource;
  const tree = (): DocumentResource => {
    if (!full) {
      const parsed = fullParse(source).resources[0];
      full = parsed ?? {
        ...head,
        object: value,
        root: { kind: 'map', range: emptyRange, entries: [] },
        range: emptyRange,
      };
      treesBuilt.add(resource);
    }
    return full;
  };
  Object.defineProperty(resource, LAZY, { value: true });
  Object.defineProperty(resource, 'root', { enumerable: true, get: () => tree().root });
  Object.defineProperty(resource, 'range', { enumerable: true, get: () => tree().range });
  return [resource];
}

const emptyRange: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
const isObject = (v: JsonValue): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

function fullParse(source: string): ParsedDocument {
  if (source.length > manifestLimits.documentLength) {
    const firstLine = source.match(/^(---[^\n]*\n)?/)![0].length > 0 ? 1 : 0;
    return {
      resources: [],
      problems: [
        tooLarge(
          `This document is ${sizeText(source.length)}: documents over ${sizeText(manifestLimits.documentLength)} are not analysed. No Kubernetes object can be that large (etcd stores at most 1.5 MiB).`,
          { start: { line: firstLine, character: 0 }, end: { line: firstLine, character: 0 } },
        ),
      ],
    };
  }
  const lines = new LineCounter();
  // The syntax tree first (the parser keeps a stack of its own), then its depth, before the
  // composer builds nodes: the composer recurses per level, and running a recursion into the
  // stack's end is no way to meet a limit (V8 may even stop the process compiling a regular
  // expression there).
  const tokens = [...new Parser(lines.addNewLine).parse(source)];
  const tooDeepAt = cstDeeperThan(tokens, manifestLimits.depth);
  if (tooDeepAt !== undefined) {
    const at = lines.linePos(tooDeepAt);
    const start = { line: at.line - 1, character: at.col - 1 };
    return { resources: [], problems: [tooLarge(tooDeepMessage, { start, end: start })] };
  }
  const composer = new Composer({
    // Every scalar stays text: resolveScalar applies kubectl's rules (see yaml-scalars.ts).
    schema: 'failsafe',
    resolveKnownTags: false,
    keepSourceTokens: true,
    uniqueKeys: false,
    strict: false,
  });
  // As the yaml package's parseDocument: the first document, and an error for a second.
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, source.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(
        new YAMLParseError(
          next.range.slice(0, 2) as [number, number],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  if (!doc) return { resources: [], problems: [] };
  const ctx: DocumentContext = {
    source,
    lines,
    doc,
    problems: [],
    converted: new Map(),
    converting: new Set(),
    aliasTargets: new Map(),
  };
  for (const e of doc.errors) {
    // The parser recurses per level of nesting and reports running out of stack as an error, once
    // per level it gives up on: the document is one `too-large`, as a document deep within the stack is.
    if (e.code === 'RESOURCE_EXHAUSTION') {
      if (!ctx.problems.some((p) => p.code === 'too-large'))
        ctx.problems.push(tooLarge(tooDeepMessage, rangeOf(ctx, e.pos[0], e.pos[1])));
    } else ctx.problems.push({ code: 'yaml-syntax', message: e.message, range: rangeOf(ctx, e.pos[0], e.pos[1]) });
  }
  if (doc.errors.length > 0 || !doc.contents) return { resources: [], problems: ctx.problems };
  let root: Converted;
  try {
    const written = resolveAliases(ctx, doc.contents);
    root = convert(ctx, doc.contents, 1);
    if (root.height > manifestLimits.depth) throw new DecodeError(tooDeepMessage, root.node.range, 'too-large');
    const added = root.size - written;
    if (added > 100 && root.size > 1000 && added / root.size > allowedAliasRatio(root.size)) {
      throw new DecodeError('document contains excessive aliasing', root.node.range);
    }
    if (added > Math.max(written, manifestLimits.aliasExpansion)) {
      throw new DecodeError(
        `Aliases expand this document from ${written} to ${root.size} values: it is not analysed (at most ${Math.max(written, manifestLimits.aliasExpansion)} values may come from aliases).`,
        root.node.range,
        'too-large',
      );
    }
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    ctx.problems.push(
      e.code === 'too-large' ? tooLarge(e.message, e.range) : { code: e.code, message: e.message, range: e.range },
    );
    return { resources: [], problems: ctx.problems };
  }
  return { resources: resourcesOf(root), problems: ctx.problems };
}

/**
 * Where the syntax tree first nests a value deeper than `limit` levels (the root is level 1, as in
 * jsonDepthExceeds), or undefined. Aliases are not followed: convert() bounds what they expand to.
 */
function cstDeeperThan(tokens: readonly CST.Token[], limit: number): number | undefined {
  const stack: { token: CST.Token; level: number }[] = tokens.map((token) => ({ token, level: 1 }));
  while (stack.length > 0) {
    const { token, level } = stack.pop()!;
    if (level > limit) return token.offset;
    if (token.type === 'document') {
      if (token.value) stack.push({ token: token.value, level });
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      for (const item of token.items) {
        if ('key' in item && item.key) stack.push({ token: item.key, level: level + 1 });
        if (item.value) stack.push({ token: item.value, level: level + 1 });
      }
    }
  }
  return undefined;
}

/**
 * goyaml.v2 decode.go allowedAliasRatio: the share of decoded values that may come from aliases
 * before kubectl refuses the document as "excessive aliasing" (go-yaml counts as it decodes; the
 * final counts here give the same verdict for the documents that grow by aliasing aliases).
 */
function allowedAliasRatio(decodeCount: number): number {
  const low = 400_000;
  const high = 4_000_000;
  if (decodeCount <= low) return 0.99;
  if (decodeCount >= high) return 0.1;
  return 0.99 - (0.89 * (decodeCount - low)) / (high - low);
}

/**
 * Finds every alias's anchor in one pass, in document order: an alias refers to the last node
 * before it with that anchor (a node's own anchor comes before its children, so `&a [*a]` refers
 * to itself, which convert() refuses as go-yaml does). Resolving each alias with Alias.resolve
 * walks the whole document per alias: 4,000 aliases took seconds. Returns how many nodes are written.
 */
function resolveAliases(ctx: DocumentContext, root: YamlNode): number {
  const anchors = new Map<string, YamlNode>();
  const stack: unknown[] = [root];
  let written = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    if (isPair(item)) {
      // Key before value: pushed in reverse.
      if (item.value) stack.push(item.value);
      if (item.key) stack.push(item.key);
      continue;
    }
    if (!item || typeof item !== 'object') continue;
    const node = item as YamlNode;
    written++;
    if (isAlias(node)) {
      ctx.aliasTargets.set(node, anchors.get(node.source));
      continue;
    }
    if (node.anchor) anchors.set(node.anchor, node);
    if (isMap(node) || isSeq(node)) for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
  }
  return written;
}

function resourcesOf(root: Converted): DocumentResource[] {
  if (root.node.kind !== 'map') return [];
  const head = resourceHead(root.node, root.json as JsonObject);
  if (!head) return [];
  // Any object with an `items` list is read as a list and flattened by kubectl, whatever its kind
  // (apimachinery unstructured.go UnstructuredJSONScheme, cli-runtime FlattenListVisitor).
  const items = root.node.entries.find((e) => e.key === 'items');
  if (items?.value.kind === 'list') {
    const out: DocumentResource[] = [];
    items.value.items.forEach((item, itemIndex) => {
      if (item.value.kind !== 'map') return;
      const json = (root.json as JsonObject).items as JsonValue[];
      const itemHead = resourceHead(item.value, json[itemIndex] as JsonObject);
      if (itemHead) out.push({ ...itemHead, range: item.value.range, itemIndex });
    });
    return out;
  }
  return [{ ...head, range: root.node.range }];
}

function resourceHead(node: MapNode, object: JsonObject): Omit<DocumentResource, 'range'> | undefined {
  const head = headOf(object);
  return head ? { ...head, object, root: node } : undefined;
}

/** What names a resource: apiVersion and kind (both needed), name, generateName, namespace. */
function headOf(
  object: JsonObject,
): Pick<DocumentResource, 'apiVersion' | 'kind' | 'name' | 'generateName' | 'namespace'> | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion || !kind) return undefined;
  const metadata = object.metadata;
  const meta = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata : {};
  const str = (v: JsonValue | undefined) => (typeof v === 'string' && v !== '' ? v : undefined);
  const name = str(meta.name);
  const generateName = str(meta.generateName);
  const namespace = str(meta.namespace);
  return {
    apiVersion,
    kind,
    ...(name !== undefined && { name }),
    ...(generateName !== undefined && { generateName }),
    ...(namespace !== undefined && { namespace }),
  };
}

function position(ctx: DocumentContext, offset: number): Position {
  const { line, col } = ctx.lines.linePos(offset);
  return { line: line - 1, character: col - 1 };
}

function rangeOf(ctx: DocumentContext, start: number, end: number): Range {
  return { start: position(ctx, start), end: position(ctx, Math.max(start, end)) };
}

/** `depth` is the written nesting level of `node` (the root is 1): the recursion stops at the limit. */
function convert(ctx: DocumentContext, node: YamlNode, depth: number): Converted {
  const done = ctx.converted.get(node);
  if (done) return done;
  if (depth > manifestLimits.depth) throw new DecodeError(tooDeepMessage, nodeRange(ctx, node), 'too-large');
  if (ctx.converting.has(node)) {
    throw new DecodeError('anchor value contains itself', rangeOf(ctx, node.range![0], node.range![1]));
  }
  ctx.converting.add(node);
  let result: Converted;
  if (isMap(node)) result = convertMap(ctx, node as YAMLMap.Parsed, depth);
  else if (isSeq(node)) result = convertSeq(ctx, node as YAMLSeq.Parsed, depth);
  else if (isScalar(node)) result = convertScalar(ctx, node);
  else if (isAlias(node)) result = convert(ctx, aliasTarget(ctx, node), depth);
  else throw new DecodeError('unsupported YAML node', rangeOf(ctx, 0, 0));
  ctx.converting.delete(node);
  ctx.converted.set(node, result);
  return result;
}

function aliasTarget(ctx: DocumentContext, alias: YamlNode & { source: string }): YamlNode {
  const target = ctx.aliasTargets.get(alias);
  if (!target) throw new DecodeError(`unknown anchor '${alias.source}' referenced`, nodeRange(ctx, alias));
  return target;
}

function nodeRange(ctx: DocumentContext, node: YamlNode): Range {
  const [start, valueEnd] = node.range!;
  let end = valueEnd;
  // Block scalars (`|`, `>`) end after their trailing line breaks; the value ends at its last character.
  if (isScalar(node) && (node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED)) {
    while (end > start && /\s/.test(ctx.source[end - 1]!)) end--;
  }
  return rangeOf(ctx, start, end);
}

function convertScalar(ctx: DocumentContext, node: Scalar): Converted {
  const range = nodeRange(ctx, node);
  const text = typeof node.value === 'string' ? node.value : node.value == null ? '' : String(node.value);
  const r = resolveScalar(text, node.type === Scalar.PLAIN, node.tag);
  if (!r.ok) throw new DecodeError(r.message, range);
  if (typeof r.value === 'number' && !Number.isFinite(r.value)) {
    // sigs.k8s.io/yaml hands the float to encoding/json, which refuses it.
    throw new DecodeError(
      `json: unsupported value: ${Number.isNaN(r.value) ? 'NaN' : r.value > 0 ? '+Inf' : '-Inf'}`,
      range,
    );
  }
  return { node: { kind: 'scalar', range, value: r.value }, json: r.value, size: 1, height: 1 };
}

function convertSeq(ctx: DocumentContext, seq: YAMLSeq.Parsed, depth: number): Converted {
  const items: ListItem[] = [];
  const json: JsonValue[] = [];
  let size = 1;
  let height = 1;
  const cstItems =
    seq.srcToken && 'items' in seq.srcToken && seq.srcToken.type === 'block-seq' ? seq.srcToken.items : undefined;
  seq.items.forEach((raw, i) => {
    const item = raw as YamlNode | null;
    if (!item) return;
    const c = convert(ctx, item, depth + 1);
    const valueRange = isAlias(item) ? c.node.range : c.node.range;
    const marker = cstItems?.[i]?.start.find((t) => t.type === 'seq-item-ind');
    const markerRange = marker
      ? rangeOf(ctx, marker.offset, marker.offset + 1)
      : isAlias(item)
        ? nodeRange(ctx, item)
        : valueRange;
    items.push({ markerRange, value: c.node, ...(isAlias(item) && { via: nodeRange(ctx, item) }) });
    json.push(c.json);
    size += c.size;
    height = Math.max(height, c.height + 1);
  });
  const range = collectionRange(
    ctx,
    seq,
    items.map((i) => i.value.range),
  );
  return { node: { kind: 'list', range, items }, json, size, height };
}

// A flow collection ends at its bracket; a block one at the end of its last value (the parser's
// range runs on to the next key's line).
function collectionRange(ctx: DocumentContext, node: YAMLMap | YAMLSeq, childRanges: Range[]): Range {
  const [start, valueEnd] = node.range!;
  const last = childRanges.at(-1);
  if (node.flow || !last) return rangeOf(ctx, start, valueEnd);
  return { start: position(ctx, start), end: last.end };
}

function convertMap(ctx: DocumentContext, map: YAMLMap.Parsed, depth: number): Converted {
  const entries = new Map<string, MapEntry & { json: JsonValue; size: number; height: number; merged: boolean }>();
  let mergedSize = 0;
  let lastEnd: Range | undefined;
  for (const pair of map.items) {
    if (!isPair(pair)) continue;
    const keyNode = pair.key as YamlNode | null;
    const valueNode = pair.value as YamlNode | null;
    const keyRange = keyNode ? nodeRange(ctx, keyNode) : rangeOf(ctx, map.range[0], map.range[0]);
    if (keyNode && isScalar(keyNode) && isMergeKey(keyNode)) {
      if (!valueNode) throw new DecodeError('map merge requires map or sequence of maps as the value', keyRange);
      for (const source of mergeSources(ctx, valueNode, keyRange, depth)) {
        // Counted whole, overridden keys included: the size only serves the expansion limit.
        mergedSize += source.size - 1;
        for (const e of source.node.entries) {
          const json = (source.json as JsonObject)[e.key]!;
          entries.set(e.key, { ...e, via: e.via ?? keyRange, json, size: 0, height: source.height - 1, merged: true });
        }
        lastEnd = nodeRange(ctx, valueNode);
      }
      continue;
    }
    const key = keyNode ? keyOf(ctx, keyNode, keyRange) : 'null';
    const value = valueNode
      ? convert(ctx, valueNode, depth + 1)
      : {
          node: { kind: 'scalar', range: { start: keyRange.end, end: keyRange.end }, value: null } as ScalarNode,
          json: null,
          size: 1,
          height: 1,
        };
    const previous = entries.get(key);
    if (previous && !previous.merged) {
      ctx.problems.push({
        code: 'duplicate-key',
        message: `duplicate key "${key}" in this map: kubectl keeps only the last one`,
        range: keyRange,
      });
    }
    entries.set(key, {
      key,
      keyRange,
      value: value.node,
      ...(valueNode && isAlias(valueNode) && { via: nodeRange(ctx, valueNode) }),
      json: value.json,
      size: value.size,
      height: value.height,
      merged: false,
    });
    lastEnd = value.node.range;
  }
  const json: JsonObject = {};
  const out: MapEntry[] = [];
  let size = 1 + mergedSize;
  let height = 1;
  for (const e of entries.values()) {
    setOwn(json, e.key, e.json);
    out.push(
      e.via
        ? { key: e.key, keyRange: e.keyRange, value: e.value, via: e.via }
        : { key: e.key, keyRange: e.keyRange, value: e.value },
    );
    size += e.size;
    height = Math.max(height, e.height + 1);
  }
  const range = collectionRange(ctx, map, lastEnd ? [lastEnd] : []);
  return { node: { kind: 'map', range, entries: out }, json, size, height };
}

// decode.go isMerge: a plain (or !!merge-tagged) `<<` key; a quoted '<<' is an ordinary key.
function isMergeKey(key: Scalar): boolean {
  return key.value === '<<' && ((key.type === Scalar.PLAIN && !key.tag) || key.tag === 'tag:yaml.org,2002:merge');
}

// decode.go merge(): a map, an alias of a map, or a sequence of those in which earlier maps win,
// so they are returned last. The merged entries override keys written before the `<<` (go-yaml v2
// applies the merge in place; checked with kubectl).
function mergeSources(
  ctx: DocumentContext,
  value: YamlNode,
  keyRange: Range,
  depth: number,
): { node: MapNode; json: JsonValue; size: number; height: number }[] {
  // The merged map's entries become this map's: they sit at this map's level.
  const asMap = (n: YamlNode) => {
    const c = convert(ctx, n, depth);
    if (c.node.kind !== 'map')
      throw new DecodeError('map merge requires map or sequence of maps as the value', keyRange);
    return { node: c.node, json: c.json, size: c.size, height: c.height };
  };
  if (isSeq(value)) return (value.items as YamlNode[]).map(asMap).reverse();
  return [asMap(value)];
}

function keyOf(ctx: DocumentContext, keyNode: YamlNode, keyRange: Range): string {
  let node = keyNode;
  if (isAlias(node)) node = aliasTarget(ctx, node as YamlNode & { source: string });
  if (!isScalar(node)) throw new DecodeError('invalid map key: a map or list cannot be a key', keyRange);
  const text = typeof node.value === 'string' ? node.value : node.value == null ? '' : String(node.value);
  const r = resolveScalar(text, node.type === Scalar.PLAIN, node.tag);
  if (!r.ok) throw new DecodeError(r.message, keyRange);
  const k = jsonKeyOf(r.value, r.float);
  if (!k.ok) throw new DecodeError(k.message, keyRange);
  return k.key;
}

// ---------------------------------------------------------------------------------------------
// Addressing

export interface LocateOptions {
  /**
   * The default of a key field an item may omit, from the schema: a Container port's `protocol`
   * defaults to "TCP", so `{containerPort: 80}` is the item `[containerPort=80,protocol="TCP"]`.
   * `listPath` is the path of the list.
   */
  readonly keyFieldDefault?: (listPath: FieldPath, fieldName: string) => JsonValue | undefined;
}

export interface Location {
  readonly node: ManifestNode;
  /** Absolute. A map entry's key; a list item's `-` (or the item, in a flow list); the root's range. */
  readonly keyRange: Range;
  /** Absolute range of the value. */
  readonly valueRange: Range;
  /** Absolute range of the first `<<` or `*alias` the path passes through: the value is written elsewhere. */
  readonly through?: Range;
}

/**
 * Finds the node at `path` in the resource. Map-list items (`{key}`) match on their key fields,
 * set items (`{value}`) on their value; `{index}` picks by position. Undefined when absent.
 */
export function locate(resource: ManifestResource, path: FieldPath, options: LocateOptions = {}): Location | undefined {
  let node: ManifestNode = resource.root;
  let keyRange = node.range;
  let through: Range | undefined;
  for (let i = 0; i < path.length; i++) {
    const step = childAt(node, path[i]!, path.slice(0, i), options);
    if (!step) return undefined;
    node = step.node;
    keyRange = step.keyRange;
    through ??= step.via;
  }
  return {
    node,
    keyRange: absoluteRange(resource, keyRange),
    valueRange: absoluteRange(resource, node.range),
    ...(through && { through: absoluteRange(resource, through) }),
  };
}

function childAt(
  node: ManifestNode,
  element: PathElement,
  parentPath: FieldPath,
  options: LocateOptions,
): { node: ManifestNode; keyRange: Range; via?: Range } | undefined {
  if (element.kind === 'field') {
    if (node.kind !== 'map') return undefined;
    const entry = node.entries.find((e) => e.key === element.name);
    return entry && { node: entry.value, keyRange: entry.keyRange, ...(entry.via && { via: entry.via }) };
  }
  if (node.kind !== 'list') return undefined;
  let item: ListItem | undefined;
  if (element.kind === 'index') item = node.items[element.index];
  else if (element.kind === 'value') item = node.items.find((it) => jsonEqual(nodeToJson(it.value), element.value));
  else {
    item = node.items.find((it) => {
      if (it.value.kind !== 'map') return false;
      const entries = it.value.entries;
      return Object.entries(element.fields).every(([name, want]) => {
        const entry = entries.find((e) => e.key === name);
        const have = entry ? nodeToJson(entry.value) : options.keyFieldDefault?.(parentPath, name);
        return have !== undefined && jsonEqual(have, want);
      });
    });
  }
  return item && { node: item.value, keyRange: item.markerRange, ...(item.via && { via: item.via }) };
}

/** The JSON value of a node (as in `resource.object`). */
export function nodeToJson(node: ManifestNode): JsonValue {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'list') return node.items.map((i) => nodeToJson(i.value));
  const obj: JsonObject = {};
  for (const e of node.entries) setOwn(obj, e.key, nodeToJson(e.value));
  return obj;
}

/**
 * Finds a path given as the API server prints it (a conflict cause's `field`). Field names that
 * contain dots (`.metadata.labels.app.kubernetes.io/name`) are resolved against the keys written in
 * the manifest.
 */
export function locatePathString(
  resource: ManifestResource,
  text: string,
  options: LocateOptions = {},
): Location | undefined {
  const path = parsePath(text, (parent) => {
    const at = locate(resource, parent, options);
    return at?.node.kind === 'map' ? at.node.entries.map((e) => e.key) : undefined;
  });
  return path && locate(resource, path, options);
}

export interface NodeVisit {
  /** Path by field names and list indexes; the engine turns indexes into keys with the schema. */
  readonly path: FieldPath;
  readonly node: ManifestNode;
  /** Document-relative, like all node-tree ranges (absoluteRange converts). */
  readonly keyRange: Range;
}

/**
 * Visits every node below the root, parents before children, in source order. Return false from
 * `visit` to skip a node's children. Aliased values are visited at every place they are used.
 */
export function forEachNode(resource: ManifestResource, visit: (v: NodeVisit) => boolean | void): void {
  const walk = (node: ManifestNode, path: PathElement[]) => {
    if (node.kind === 'map') {
      for (const e of node.entries) {
        const p = [...path, field(e.key)];
        if (visit({ path: p, node: e.value, keyRange: e.keyRange }) !== false) walk(e.value, p);
      }
    } else if (node.kind === 'list') {
      node.items.forEach((item, i) => {
        const p = [...path, index(i)];
        if (visit({ path: p, node: item.value, keyRange: item.markerRange }) !== false) walk(item.value, p);
      });
    }
  };
  walk(resource.root, []);
}

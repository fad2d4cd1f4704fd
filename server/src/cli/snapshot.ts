// Offline snapshots: what a check needs from the cluster, saved in a directory so that
// `check --snapshot DIR` runs with no cluster (in CI, on a plane) and gives the same findings.
//
//   DIR/snapshot.json            discovery, which objects were looked up and found absent, the index
//   DIR/objects/*.json           live objects, managedFields included (Secret values are not saved)
//   DIR/openapi/*.json           OpenAPI v3 documents, one per group-version
//
// Any other *.yaml, *.yml or *.json under DIR is read as live objects too, so the output of
// `kubectl get -o yaml --show-managed-fields` (single objects or `kind: List`) works as a snapshot,
// with or without a snapshot.json beside it.
//
// A snapshot directory may come from someone else (a CI artifact): every path in snapshot.json must
// be one this tool writes (objects/NAME.json, openapi/NAME.json), links out of DIR are not
// followed, and no error quotes a file's text. Taking a snapshot again removes only the files the
// earlier snapshot.json lists, and writes through no link.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applierFacts, ruleFor, type KindFacts, type LiveFacts, type ResourceFacts } from '../core/findings';
import { isJsonObject, jsonDepthExceeds, type JsonObject, type JsonValue } from '../core/json';
import { manifestLimits, parseManifestText, placeInNamespace, type ManifestResource } from '../core/manifest/manifest';
import { schemaOfDocuments, type SchemaModel } from '../core/ssa/schema';
import { celSchemaFor } from '../core/cel/schema';
import type { ApiResourceInfo, ClusterConnection, ClusterProblem, DiscoveryIndex } from '../cluster';
import { findResource, notServedKindFacts, splitApiVersion } from '../cluster/discovery';
import { openApiPathKey } from '../cluster/openapi';
import { crdRef, otherManagerVersions, surelyBuiltIn, versionsFrom } from '../cluster/versions';
import { withoutUserinfo, type LiveObjectState } from '../cluster';
import { objectTitle, schemaOf, type FactsReader } from './facts';
import { collectManifestFiles, describeFsError, findManifestFiles, readTextFile } from './files';

export const snapshotFormat = 'kube-conflict-hints/snapshot@1';
const indexFile = 'snapshot.json';

export interface AbsentObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** DIR/snapshot.json. Paths are relative to DIR, with `/`. */
export interface SnapshotIndex {
  format: typeof snapshotFormat;
  createdAt: string;
  context: string;
  server: string;
  /** The namespace objects without one were placed in when the snapshot was taken. */
  defaultNamespace: string;
  discovery: Pick<DiscoveryIndex, 'groups' | 'resources'>;
  /** apiVersion → OpenAPI v3 document file. */
  openapi: Record<string, string>;
  /** The object files this snapshot wrote (removed when the snapshot is taken again). */
  objects: string[];
  /** Objects that were looked up and did not exist: the check knows they are new. */
  absent: AbsentObject[];
}

// ---------------------------------------------------------------------------------------------
// Taking a snapshot

export interface SnapshotRequest {
  outDir: string;
  /** Manifest files or directories, and `kind/name` selectors (`deployment/web`, `configmaps.v1/x`). */
  selectors: string[];
}

export type SnapshotResult =
  | { ok: true; saved: number; absent: number; documents: number; notes: string[] }
  | { ok: false; problem: ClusterProblem }
  | { ok: false; usage: string };

export async function takeSnapshot(connection: ClusterConnection, request: SnapshotRequest): Promise<SnapshotResult> {
  // A directory that cannot take the snapshot is refused before the cluster is asked anything.
  const planned = planDirectory(request.outDir);
  if (!planned.ok) return { ok: false, usage: planned.message };
  // Manifests are read before the cluster is asked: a file that cannot be read is the user's to fix.
  type Wanted = { apiVersion: string; kind: string; name: string; namespace?: string };
  const selected: (Wanted[] | { selector: string; kind: string; name: string })[] = [];
  for (const selector of request.selectors) {
    const kindName = /^([A-Za-z0-9.-]+)\/([a-z0-9][a-z0-9.:-]*)$/.exec(selector);
    if (kindName && !fs.existsSync(selector)) {
      selected.push({ selector, kind: kindName[1]!, name: kindName[2]! });
      continue;
    }
    const files = collectManifestFiles([selector]);
    if (!files.ok)
      return {
        ok: false,
        usage: files.message.startsWith('no such file')
          ? `${files.message} (not a file, a directory or kind/name)`
          : files.message,
      };
    for (const file of files.files) {
      const read = readTextFile(file);
      if (!read.ok) return { ok: false, usage: read.message };
      const refs: Wanted[] = [];
      for (const r of parseManifestText(read.text).resources) {
        if (r.name === undefined) continue;
        refs.push({
          apiVersion: r.apiVersion,
          kind: r.kind,
          name: r.name,
          ...(r.namespace ? { namespace: r.namespace } : {}),
        });
      }
      selected.push(refs);
    }
  }

  const discovery = await connection.discovery();
  if (!discovery.ok) return { ok: false, problem: discovery.problem };
  const index = discovery.value;

  const wanted: Wanted[] = [];
  const notes: string[] = [];
  for (const item of selected) {
    if (Array.isArray(item)) {
      wanted.push(...item);
      continue;
    }
    const resource = resolveSelector(index, item.kind);
    if (!resource)
      return {
        ok: false,
        usage: `the cluster serves no kind named ${JSON.stringify(item.kind)} (selector ${item.selector})`,
      };
    wanted.push({ apiVersion: resource.apiVersion, kind: resource.kind, name: item.name });
  }

  const objects = new Map<string, JsonObject>();
  const absent: AbsentObject[] = [];
  // Each absent object once, found by key: a search of the list for each object made a snapshot of
  // many new objects quadratic in them.
  const absentKeys = new Set<string>();
  const addAbsent = (a: AbsentObject) => {
    const key = absentKey(a);
    if (absentKeys.has(key)) return;
    absentKeys.add(key);
    absent.push(a);
  };
  const apiVersions = new Set<string>();
  // Every object at once: a kind with many of them is listed, one with few read by name.
  await connection.expectObjects(wanted);
  for (const ref of wanted) {
    const served = findResource(index, ref.apiVersion, ref.kind);
    if (!served.ok) {
      notes.push(served.problem.message);
      continue;
    }
    const { namespace } = placeInNamespace(served.value.namespaced, ref.namespace, connection.defaultNamespace);
    const live = await connection.getObject({ ...ref, namespace });
    if (live.state === 'failed') return { ok: false, problem: live.problem };
    if (live.state === 'pending')
      return {
        ok: false,
        problem: { kind: 'unreachable', message: `no answer from the cluster for ${ref.kind} ${ref.name}` },
      };
    apiVersions.add(ref.apiVersion);
    const file = `objects/${objectFileName(served.value, namespace, ref.name)}`;
    if (live.state === 'exists') objects.set(file, live.object);
    else addAbsent({ apiVersion: ref.apiVersion, kind: ref.kind, namespace, name: ref.name });
    if (live.state !== 'exists') continue;
    // Managers recorded at other versions are compared there (cluster/versions.ts), as the live
    // check does: those versions' documents, and a custom kind's CRD (its versions and conversion).
    // A version no longer served has no document, but its CRD still says what the server does with it.
    const others = otherManagerVersions(live.object, ref.apiVersion);
    for (const v of others) if (findResource(index, v, ref.kind).ok) apiVersions.add(v);
    if (others.length > 0 && !surelyBuiltIn(served.value.group)) {
      const crd = crdRef(served.value);
      const crdKind = findResource(index, crd.apiVersion, crd.kind);
      const read = crdKind.ok ? await connection.getObject(crd) : undefined;
      // A CRD that cannot be read (forbidden) leaves the versions unknown, offline as live.
      if (crdKind.ok && read?.state === 'exists')
        objects.set(`objects/${objectFileName(crdKind.value, '', crd.name)}`, read.object);
      else if (crdKind.ok && read?.state === 'absent')
        addAbsent({ apiVersion: crd.apiVersion, kind: crd.kind, namespace: '', name: crd.name });
    }
  }

  const documents = new Map<string, JsonObject>();
  const openapi: Record<string, string> = {};
  for (const apiVersion of [...apiVersions].sort()) {
    const doc = await connection.openApiDocument(apiVersion);
    if (doc.ok) {
      const file = `openapi/${fileNameOf(openApiPathKey(apiVersion).replaceAll('/', '__'))}`;
      documents.set(file, doc.value);
      openapi[apiVersion] = file;
    } else if (doc.problem.kind === 'kindNotServed' || doc.problem.kind === 'notFound') {
      notes.push(doc.problem.message);
    } else {
      return { ok: false, problem: doc.problem };
    }
  }

  const prepared = prepareDirectory(request.outDir, planned.remove);
  if (!prepared.ok) return { ok: false, usage: prepared.message };
  const snapshot: SnapshotIndex = {
    format: snapshotFormat,
    createdAt: new Date().toISOString(),
    context: connection.context?.name ?? '',
    server: connection.context?.server ?? '',
    defaultNamespace: connection.defaultNamespace,
    discovery: { groups: index.groups, resources: index.resources },
    openapi,
    objects: [...objects.keys()].sort(),
    absent,
  };
  for (const [file, content] of [...objects, ...documents, [indexFile, snapshot] as const]) {
    const written = writeJson(request.outDir, file, content);
    if (!written.ok) return { ok: false, usage: written.message };
  }
  return { ok: true, saved: objects.size, absent: absent.length, documents: documents.size, notes };
}

/** `deployment`, `deployments`, `Deployment`, `deploy`, `deployments.apps`, `deployments.v1.apps`. */
export function resolveSelector(
  index: Pick<DiscoveryIndex, 'groups' | 'resources'>,
  text: string,
): ApiResourceInfo | undefined {
  const [name, ...rest] = text.split('.');
  const suffix = rest.join('.');
  const lower = name!.toLowerCase();
  const candidates = index.resources.filter((r) => {
    const named =
      r.resource === lower || r.singular === lower || r.kind.toLowerCase() === lower || r.shortNames.includes(lower);
    if (!named) return false;
    if (!suffix) return true;
    return r.group === suffix || `${r.version}.${r.group}` === suffix || (r.group === '' && r.version === suffix);
  });
  // The group's preferred version first, and the core group before others (as kubectl resolves `pods`).
  const rank = (r: ApiResourceInfo) => {
    const versions = index.groups.find((g) => g.name === r.group)?.versions ?? [];
    const v = versions.indexOf(r.version);
    return (r.group === '' ? 0 : 1000) + (v < 0 ? 999 : v);
  };
  return candidates.sort((a, b) => rank(a) - rank(b))[0];
}

function objectFileName(resource: ApiResourceInfo, namespace: string, name: string): string {
  const qualified = resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
  return fileNameOf(`${namespace ? `${namespace}__` : ''}${qualified}__${name}`);
}

/**
 * `NAME.json` for any text: characters a file name should not hold become `_`. When that changed
 * the text (names of some kinds may hold `:` or capitals), or it is too long for a file name, a
 * hash of the whole keeps two objects from sharing a file.
 */
function fileNameOf(text: string): string {
  const safe = text.replace(/[^a-z0-9._-]/g, '_').replace(/^[._-]/, '_');
  if (safe === text && safe.length <= 200) return `${safe}.json`;
  return `${safe.slice(0, 180)}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`;
}

/** The only paths a snapshot.json may name: what fileNameOf writes, under objects/ or openapi/. */
const entryPattern = /^(objects|openapi)\/[A-Za-z0-9_][A-Za-z0-9._-]{0,250}\.json$/;

function isEntry(value: unknown, folder: 'objects' | 'openapi'): value is string {
  return typeof value === 'string' && entryPattern.test(value) && value.startsWith(`${folder}/`);
}

type DirectoryPlan = { ok: true; remove: string[] } | { ok: false; message: string };

/**
 * Whether DIR can take a snapshot, and which files of an earlier one to remove: only those its
 * snapshot.json lists, each a regular file (or a link, removed itself) directly in DIR/objects or
 * DIR/openapi, never anything through a link to elsewhere.
 */
function planDirectory(dir: string): DirectoryPlan {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, remove: [] };
    return { ok: false, message: `cannot use ${dir}: ${describeFsError(e)}` };
  }
  if (!stat.isDirectory()) return { ok: false, message: `${dir} exists and is not a directory` };
  const previous = readIndex(dir);
  const keep = 'nothing was removed; give an empty or new directory';
  if (previous.state === 'invalid') return { ok: false, message: `${previous.message}: ${keep}` };
  if (previous.state === 'missing') {
    let entries: string[];
    try {
      entries = fs.readdirSync(dir);
    } catch (e) {
      return { ok: false, message: `cannot read the directory ${dir}: ${describeFsError(e)}` };
    }
    if (entries.length > 0)
      return { ok: false, message: `${dir} is not empty and holds no ${indexFile}: give an empty or new directory` };
    return { ok: true, remove: [] };
  }
  for (const folder of ['objects', 'openapi']) {
    const refused = refuseFolder(dir, folder);
    if (refused) return { ok: false, message: `${refused}: ${keep}` };
  }
  const remove: string[] = [];
  for (const file of [...previous.index.objects, ...Object.values(previous.index.openapi)]) {
    const full = path.join(dir, file);
    let entry: fs.Stats;
    try {
      entry = fs.lstatSync(full);
    } catch {
      continue; // already gone
    }
    if (entry.isDirectory()) return { ok: false, message: `${full}, listed in ${indexFile}, is a directory: ${keep}` };
    remove.push(full);
  }
  return { ok: true, remove };
}

/** DIR/objects and DIR/openapi are written into: they must be directories of DIR's own, not links. */
function refuseFolder(dir: string, folder: string): string | undefined {
  const full = path.join(dir, folder);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(full);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `cannot use ${full}: ${describeFsError(e)}`;
  }
  if (stat.isSymbolicLink()) return `${full} is a symbolic link: a snapshot writes only into directories of its own`;
  if (!stat.isDirectory()) return `${full} exists and is not a directory`;
  return undefined;
}

/** Removes what the plan names and makes DIR/objects and DIR/openapi. */
function prepareDirectory(dir: string, remove: readonly string[]): { ok: true } | { ok: false; message: string } {
  try {
    // Links are removed themselves (unlink never follows them).
    for (const file of remove) fs.rmSync(file, { force: true });
    for (const folder of ['objects', 'openapi']) {
      const refused = refuseFolder(dir, folder);
      if (refused) return { ok: false, message: refused };
      fs.mkdirSync(path.join(dir, folder), { recursive: true });
    }
  } catch (e) {
    return { ok: false, message: `cannot prepare ${dir}: ${describeFsError(e)}` };
  }
  return { ok: true };
}

/**
 * Writes DIR/file as a new file: whatever had the name (a link to elsewhere, a second hard link of
 * another file) is removed first, so no write goes through it.
 */
function writeJson(dir: string, file: string, value: unknown): { ok: true } | { ok: false; message: string } {
  const full = path.join(dir, file);
  try {
    const existing = fs.lstatSync(full, { throwIfNoEntry: false });
    if (existing?.isDirectory()) return { ok: false, message: `cannot write ${full}: a directory has its name` };
    if (existing) fs.unlinkSync(full);
    fs.writeFileSync(full, `${JSON.stringify(value, null, 2)}\n`, { flag: 'wx' });
    return { ok: true };
  } catch (e) {
    return { ok: false, message: `cannot write ${full}: ${describeFsError(e)}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Reading a snapshot

type IndexRead = { state: 'missing' } | { state: 'invalid'; message: string } | { state: 'ok'; index: SnapshotIndex };

function readIndex(dir: string): IndexRead {
  const file = path.join(dir, indexFile);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    return { state: 'invalid', message: `cannot read ${file}: ${describeFsError(e)}` };
  }
  if (!stat) return { state: 'missing' };
  if (stat.isSymbolicLink())
    return { state: 'invalid', message: `${file} is a symbolic link: a snapshot's files are its own` };
  const read = readTextFile(file);
  if (!read.ok) return { state: 'invalid', message: read.message };
  const parsed = parseJson(file, read.text);
  if (!parsed.ok) return { state: 'invalid', message: parsed.message };
  const invalid = indexProblem(parsed.value);
  if (invalid)
    return {
      state: 'invalid',
      message: `${file} is not a snapshot this version of kube-conflict-hints can read (format ${snapshotFormat}): ${invalid}`,
    };
  return { state: 'ok', index: parsed.value as unknown as SnapshotIndex };
}

/**
 * JSON text, or where it stops being JSON (a line and column, never the text itself). A value
 * nested deeper than a manifest may be is refused as a manifest is (manifestLimits.depth): every
 * walk of a schema or an object below is recursive.
 */
function parseJson(file: string, text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    const value = JSON.parse(text) as JsonValue;
    if (jsonDepthExceeds(value, manifestLimits.depth))
      return { ok: false, message: `${file} nests deeper than ${manifestLimits.depth} levels: not read` };
    return { ok: true, value };
  } catch (e) {
    const position = /at position (\d+)/.exec((e as Error).message);
    if (!position) return { ok: false, message: `${file} is not JSON` };
    const before = text.slice(0, Number(position[1]));
    return {
      ok: false,
      message: `${file} is not JSON (line ${before.split('\n').length}, column ${Number(position[1]) - before.lastIndexOf('\n')})`,
    };
  }
}

/** What is wrong with a parsed snapshot.json, or undefined: each path one this tool writes, each record of the shape it writes. */
function indexProblem(value: unknown): string | undefined {
  if (!isJsonObject(value) || value.format !== snapshotFormat) return 'another format';
  const quote = (v: unknown) => {
    const text = JSON.stringify(v) ?? String(v);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  const isString = (v: unknown): v is string => typeof v === 'string';
  const isStrings = (v: unknown) => Array.isArray(v) && v.every(isString);
  for (const key of ['createdAt', 'context', 'server', 'defaultNamespace'] as const) {
    if (!isString(value[key])) return `${key} is not a string`;
  }
  if (!Array.isArray(value.objects)) return 'objects is not a list';
  for (const [i, entry] of value.objects.entries()) {
    if (!isEntry(entry, 'objects'))
      return `objects[${i}] is ${quote(entry)}, not a file this tool writes (objects/NAME.json)`;
  }
  if (!isJsonObject(value.openapi)) return 'openapi is not an object';
  for (const [apiVersion, entry] of Object.entries(value.openapi)) {
    if (!isEntry(entry, 'openapi'))
      return `openapi[${quote(apiVersion)}] is ${quote(entry)}, not a file this tool writes (openapi/NAME.json)`;
  }
  if (!Array.isArray(value.absent)) return 'absent is not a list';
  for (const [i, a] of value.absent.entries()) {
    if (!isJsonObject(a) || !['apiVersion', 'kind', 'namespace', 'name'].every((k) => isString(a[k])))
      return `absent[${i}] is not an object reference`;
  }
  const discovery = value.discovery;
  if (!isJsonObject(discovery) || !Array.isArray(discovery.groups) || !Array.isArray(discovery.resources))
    return 'discovery is not a discovery index';
  for (const [i, g] of discovery.groups.entries()) {
    if (!isJsonObject(g) || !isString(g.name) || !isStrings(g.versions))
      return `discovery.groups[${i}] is not an API group`;
  }
  for (const [i, r] of discovery.resources.entries()) {
    const resource =
      isJsonObject(r) &&
      ['group', 'version', 'apiVersion', 'kind', 'resource'].every((k) => isString(r[k])) &&
      (r.singular === undefined || isString(r.singular)) &&
      typeof r.namespaced === 'boolean' &&
      ['verbs', 'subresources', 'shortNames'].every((k) => isStrings(r[k]));
    if (!resource) return `discovery.resources[${i}] is not an API resource`;
  }
  return undefined;
}

/**
 * A file of the snapshot, read only if it is inside DIR once links are followed: a snapshot from
 * elsewhere must not make the check read, or quote, a file of this machine.
 */
function readSnapshotFile(root: string, file: string): { ok: true; text: string } | { ok: false; message: string } {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (e) {
    return { ok: false, message: `cannot read ${file}: ${describeFsError(e)}` };
  }
  const relative = path.relative(root, real);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    return {
      ok: false,
      message: `${file} is a link to a file outside the snapshot directory: not read (a snapshot reads only its own files)`,
    };
  }
  return readTextFile(real);
}

/** Objects are found by group, kind, namespace and name: a live object read at another version is the same object. */
function objectKey(apiVersion: string, kind: string, namespace: string, name: string): string {
  return JSON.stringify([splitApiVersion(apiVersion)[0], kind, namespace, name]);
}

function absentKey(a: AbsentObject): string {
  return objectKey(a.apiVersion, a.kind, a.namespace, a.name);
}

export type SnapshotLoad = { ok: true; reader: FactsReader } | { ok: false; message: string };

/** A facts reader over DIR; `namespace` overrides the snapshot's default namespace, as --namespace does live. */
export function loadSnapshot(dir: string, namespace: string | undefined): SnapshotLoad {
  let root: string;
  try {
    root = fs.realpathSync(dir);
    if (!fs.statSync(root).isDirectory()) return { ok: false, message: `${dir} is not a snapshot directory` };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      ok: false,
      message:
        code === 'ENOENT'
          ? `no such snapshot directory: ${dir}`
          : `cannot read the snapshot directory ${dir}: ${describeFsError(e)}`,
    };
  }
  const read = readIndex(dir);
  if (read.state === 'invalid') return { ok: false, message: read.message };
  const index = read.state === 'ok' ? read.index : undefined;

  // The OpenAPI documents the index names, read now: a problem with one stops the check before it starts.
  const documents = new Map<string, JsonObject>();
  for (const [apiVersion, entry] of Object.entries(index?.openapi ?? {})) {
    const file = path.join(dir, entry);
    const text = readSnapshotFile(root, file);
    if (!text.ok) return { ok: false, message: text.message };
    const doc = parseJson(file, text.text);
    if (!doc.ok) return { ok: false, message: doc.message };
    if (!isJsonObject(doc.value)) return { ok: false, message: `${file} is not an OpenAPI document` };
    documents.set(apiVersion, doc.value);
  }

  const objects = new Map<string, JsonObject>();
  // Which kinds hold namespaced objects: without discovery, the objects themselves tell.
  const namespacedKinds = new Set<string>();
  const skip = new Set([indexFile, ...Object.values(index?.openapi ?? {})].map((f) => path.resolve(dir, f)));
  const files = findManifestFiles(dir);
  if (!files.ok) return { ok: false, message: files.message };
  for (const file of files.files) {
    if (skip.has(path.resolve(file))) continue;
    const text = readSnapshotFile(root, file);
    if (!text.ok) return { ok: false, message: text.message };
    const parsed = parseManifestText(text.text);
    // A document not read (a syntax error, or one too large or too deep to read) would make its
    // objects look absent: the snapshot is refused instead, with the first such problem.
    const problem = parsed.problems.find((p) => ruleFor(p.code).severity === 'error' || p.code === 'too-large');
    if (problem) return { ok: false, message: `${file}:${problem.range.start.line + 1}: ${problem.message}` };
    for (const r of parsed.resources) {
      if (r.name === undefined) continue;
      objects.set(objectKey(r.apiVersion, r.kind, r.namespace ?? '', r.name), r.object);
      if (r.namespace) namespacedKinds.add(JSON.stringify([splitApiVersion(r.apiVersion)[0], r.kind]));
    }
  }
  const absent = new Set((index?.absent ?? []).map(absentKey));
  const schemas = new Map<string, SchemaModel | undefined>();
  const combined = new Map<string, SchemaModel>();
  const defaultNamespace = namespace || index?.defaultNamespace || 'default';

  function schemaFor(apiVersion: string): SchemaModel | undefined {
    if (!schemas.has(apiVersion)) {
      const doc = documents.get(apiVersion);
      schemas.set(apiVersion, doc ? schemaOf(doc) : undefined);
    }
    return schemas.get(apiVersion);
  }

  /**
   * The schema with the documents of the versions other managers wrote at, and the kind's versions,
   * as the live check reads them (cluster/facts.ts `read`, cluster/versions.ts).
   */
  function withManagerVersions(
    resource: ManifestResource,
    served: ApiResourceInfo,
    live: JsonObject,
  ): Pick<ResourceFacts, 'schema' | 'versions'> | undefined {
    const recorded = otherManagerVersions(live, resource.apiVersion);
    if (recorded.length === 0) return undefined;
    const others = recorded.filter((v) =>
      index ? findResource(index.discovery as DiscoveryIndex, v, resource.kind).ok : documents.has(v),
    );
    const doc = documents.get(resource.apiVersion);
    const extra = others.flatMap((v) => (documents.has(v) ? [documents.get(v)!] : []));
    const key = JSON.stringify([resource.apiVersion, ...others]);
    let schema = combined.get(key);
    if (doc && !schema && extra.length > 0) {
      schema = schemaOfDocuments([doc, ...extra]);
      combined.set(key, schema);
    }
    let crd: LiveObjectState | undefined;
    if (!surelyBuiltIn(served.group)) {
      const ref = crdRef(served);
      const key = objectKey(ref.apiVersion, ref.kind, '', ref.name);
      const object = objects.get(key);
      crd = object
        ? { state: 'exists', object, observedAt: 0 }
        : absent.has(key)
          ? { state: 'absent', observedAt: 0 }
          : { state: 'failed', problem: { kind: 'notFound', message: 'not in the snapshot' } };
    }
    const { versions } = versionsFrom(served, crd);
    return { schema: extra.length > 0 ? schema : schemaFor(resource.apiVersion), ...(versions ? { versions } : {}) };
  }

  function servedResource(
    resource: ManifestResource,
  ): { ok: true; served: ApiResourceInfo } | { ok: false; problem: ClusterProblem } {
    if (index) {
      const found = findResource(index.discovery as DiscoveryIndex, resource.apiVersion, resource.kind);
      return found.ok ? { ok: true, served: found.value } : { ok: false, problem: found.problem };
    }
    const [group, version] = splitApiVersion(resource.apiVersion);
    const namespaced = namespacedKinds.has(JSON.stringify([group, resource.kind])) || resource.namespace !== undefined;
    return {
      ok: true,
      served: {
        group,
        version,
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        resource: guessResource(resource.kind),
        namespaced,
        verbs: [],
        subresources: [],
        shortNames: [],
      },
    };
  }

  return {
    ok: true,
    reader: {
      // A snapshot written before servers were saved without their userinfo may still hold a password.
      source: {
        kind: 'snapshot',
        directory: dir,
        ...(index ? { context: index.context, server: withoutUserinfo(index.server) } : {}),
      },
      async read(resource) {
        const found = servedResource(resource);
        if (!found.ok) {
          return {
            ok: true,
            facts: { kind: notServedKindFacts(found.problem), live: { state: 'absent' }, schema: undefined },
            title: objectTitle(resource, undefined, ''),
            notes: [],
          };
        }
        const { served } = found;
        const ns = placeInNamespace(served.namespaced, resource.namespace, defaultNamespace).namespace;
        const notes: string[] = [];
        let live: LiveFacts;
        if (resource.name === undefined) live = { state: 'absent' };
        else {
          const key = objectKey(resource.apiVersion, resource.kind, ns, resource.name);
          const object = objects.get(key);
          if (object) live = { state: 'exists', object };
          else if (absent.has(key)) live = { state: 'absent' };
          else {
            live = { state: 'unavailable', message: 'not in the snapshot' };
            notes.push(
              `not in the snapshot ${dir}: take it again with this file among the selectors, or add the object's \`kubectl get -o yaml --show-managed-fields\``,
            );
          }
        }
        const schema = schemaFor(resource.apiVersion);
        if (!schema && live.state === 'exists') {
          notes.push(
            `no OpenAPI document for ${resource.apiVersion} in the snapshot: field conflicts are not predicted (\`kube-conflict-hints snapshot\` saves it)`,
          );
        }
        const kind: KindFacts = {
          state: 'served',
          group: served.group,
          resource: served.resource,
          namespaced: served.namespaced,
        };
        // A custom kind's validation rules come in its OpenAPI document, as the live check reads them.
        const doc = documents.get(resource.apiVersion);
        const rules = doc ? celSchemaFor(doc, resource.apiVersion, resource.kind) : undefined;
        const facts: ResourceFacts = {
          kind,
          live,
          schema,
          ...(live.state === 'exists' ? withManagerVersions(resource, served, live.object) : {}),
          ...(rules ? { rules } : {}),
          ...snapshotAppliers(live),
        };
        return { ok: true, facts, title: objectTitle(resource, served, ns), notes };
      },
      close: () => {},
    },
  };
}

/**
 * Who applies a saved object, from its marks: a snapshot saves no Argo CD Application, Flux
 * Kustomization or HelmRelease, so each policy is unknown, and says so (docs/gitops.md).
 */
function snapshotAppliers(live: LiveFacts): Pick<ResourceFacts, 'appliers'> {
  const appliers =
    live.state === 'exists'
      ? applierFacts(live.object, (sighting) =>
          sighting.kind === 'helm'
            ? undefined
            : { state: 'unknown', sighting, reason: 'a snapshot does not save the GitOps objects that apply objects' },
        )
      : undefined;
  return appliers ? { appliers } : {};
}

/**
 * The plural resource name of a kind when no discovery is at hand: the rule of
 * apimachinery/pkg/api/meta/restmapper.go UnsafeGuessKindToResource.
 */
export function guessResource(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower === '') return lower;
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y') && !/[aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

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
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KindFacts, LiveFacts, ResourceFacts } from '../core/analysis';
import { isJsonObject, type JsonObject } from '../core/json';
import { parseManifestText, type ManifestResource } from '../core/manifest';
import type { SchemaModel } from '../core/schema';
import type { ApiResourceInfo, ClusterConnection, ClusterProblem, DiscoveryIndex } from '../cluster';
import { findResource, splitApiVersion } from '../cluster/discovery';
import { openApiPathKey } from '../cluster/openapi';
import { objectTitle, placeNamespace, schemaOf, type FactsReader } from './facts';
import { collectManifestFiles, manifestExtensions } from './files';

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
  const discovery = await connection.discovery();
  if (!discovery.ok) return { ok: false, problem: discovery.problem };
  const index = discovery.value;

  const wanted: { apiVersion: string; kind: string; name: string; namespace?: string }[] = [];
  const notes: string[] = [];
  for (const selector of request.selectors) {
    const kindName = /^([A-Za-z0-9.-]+)\/([a-z0-9][a-z0-9.:-]*)$/.exec(selector);
    if (kindName && !fs.existsSync(selector)) {
      const resource = resolveSelector(index, kindName[1]!);
      if (!resource) return { ok: false, usage: `the cluster serves no kind named ${JSON.stringify(kindName[1])} (selector ${selector})` };
      wanted.push({ apiVersion: resource.apiVersion, kind: resource.kind, name: kindName[2]! });
      continue;
    }
    const files = collectManifestFiles([selector]);
    if (!files.ok) return { ok: false, usage: `${files.message} (not a file, a directory or kind/name)` };
    for (const file of files.files) {
      for (const r of parseManifestText(fs.readFileSync(file, 'utf8')).resources) {
        if (r.name === undefined) continue;
        wanted.push({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}) });
      }
    }
  }

  const objects = new Map<string, JsonObject>();
  const absent: AbsentObject[] = [];
  const apiVersions = new Set<string>();
  for (const ref of wanted) {
    const served = findResource(index, ref.apiVersion, ref.kind);
    if (!served.ok) {
      notes.push(served.problem.message);
      continue;
    }
    const namespace = served.value.namespaced ? ref.namespace || connection.defaultNamespace : '';
    const live = await connection.getObject({ ...ref, namespace });
    if (live.state === 'failed') return { ok: false, problem: live.problem };
    if (live.state === 'pending') return { ok: false, problem: { kind: 'unreachable', message: `no answer from the cluster for ${ref.kind} ${ref.name}` } };
    apiVersions.add(ref.apiVersion);
    const file = `objects/${objectFileName(served.value, namespace, ref.name)}`;
    if (live.state === 'exists') objects.set(file, live.object);
    else if (!absent.some((a) => absentKey(a) === absentKey({ ...ref, namespace }))) absent.push({ apiVersion: ref.apiVersion, kind: ref.kind, namespace, name: ref.name });
  }

  const documents = new Map<string, JsonObject>();
  const openapi: Record<string, string> = {};
  for (const apiVersion of [...apiVersions].sort()) {
    const doc = await connection.openApiDocument(apiVersion);
    if (doc.ok) {
      const file = `openapi/${openApiPathKey(apiVersion).replaceAll('/', '__')}.json`;
      documents.set(file, doc.value);
      openapi[apiVersion] = file;
    } else if (doc.problem.kind === 'kindNotServed' || doc.problem.kind === 'notFound') {
      notes.push(doc.problem.message);
    } else {
      return { ok: false, problem: doc.problem };
    }
  }

  const prepared = prepareDirectory(request.outDir);
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
  for (const [file, content] of [...objects, ...documents]) writeJson(path.join(request.outDir, file), content);
  writeJson(path.join(request.outDir, indexFile), snapshot);
  return { ok: true, saved: objects.size, absent: absent.length, documents: documents.size, notes };
}

/** `deployment`, `deployments`, `Deployment`, `deploy`, `deployments.apps`, `deployments.v1.apps`. */
export function resolveSelector(index: Pick<DiscoveryIndex, 'groups' | 'resources'>, text: string): ApiResourceInfo | undefined {
  const [name, ...rest] = text.split('.');
  const suffix = rest.join('.');
  const lower = name!.toLowerCase();
  const candidates = index.resources.filter((r) => {
    const named = r.resource === lower || r.singular === lower || r.kind.toLowerCase() === lower || r.shortNames.includes(lower);
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
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${namespace ? `${safe(namespace)}__` : ''}${safe(qualified)}__${safe(name)}.json`;
}

/** Creates DIR, or empties what an earlier snapshot wrote there; never touches other files. */
function prepareDirectory(dir: string): { ok: true } | { ok: false; message: string } {
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) return { ok: false, message: `${dir} exists and is not a directory` };
    const previous = readIndex(dir);
    if (previous.state === 'invalid') return { ok: false, message: previous.message };
    if (previous.state === 'missing') {
      if (fs.readdirSync(dir).length > 0) return { ok: false, message: `${dir} is not empty and holds no ${indexFile}: give an empty or new directory` };
    } else {
      for (const file of [...previous.index.objects, ...Object.values(previous.index.openapi)]) fs.rmSync(path.join(dir, file), { force: true });
    }
  }
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'openapi'), { recursive: true });
  return { ok: true };
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Reading a snapshot

type IndexRead = { state: 'missing' } | { state: 'invalid'; message: string } | { state: 'ok'; index: SnapshotIndex };

function readIndex(dir: string): IndexRead {
  const file = path.join(dir, indexFile);
  if (!fs.existsSync(file)) return { state: 'missing' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return { state: 'invalid', message: `${file} is not JSON: ${(e as Error).message}` };
  }
  if (!isJsonObject(parsed) || parsed.format !== snapshotFormat) {
    return { state: 'invalid', message: `${file} is not a snapshot of this version of kube-conflict-hints (format ${snapshotFormat})` };
  }
  return { state: 'ok', index: parsed as unknown as SnapshotIndex };
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
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return { ok: false, message: `no such snapshot directory: ${dir}` };
  const read = readIndex(dir);
  if (read.state === 'invalid') return { ok: false, message: read.message };
  const index = read.state === 'ok' ? read.index : undefined;

  const objects = new Map<string, JsonObject>();
  // Which kinds hold namespaced objects: without discovery, the objects themselves tell.
  const namespacedKinds = new Set<string>();
  const skip = new Set([indexFile, ...Object.values(index?.openapi ?? {})].map((f) => path.resolve(dir, f)));
  const files = collectManifestFiles([dir]);
  for (const file of files.ok ? files.files : []) {
    if (skip.has(path.resolve(file)) || !manifestExtensions.includes(path.extname(file).toLowerCase())) continue;
    const parsed = parseManifestText(fs.readFileSync(file, 'utf8'));
    if (parsed.problems.some((p) => p.severity === 'error')) return { ok: false, message: `${file}: ${parsed.problems[0]!.message}` };
    for (const r of parsed.resources) {
      if (r.name === undefined) continue;
      objects.set(objectKey(r.apiVersion, r.kind, r.namespace ?? '', r.name), r.object);
      if (r.namespace) namespacedKinds.add(JSON.stringify([splitApiVersion(r.apiVersion)[0], r.kind]));
    }
  }
  const absent = new Set((index?.absent ?? []).map(absentKey));
  const schemas = new Map<string, SchemaModel | undefined>();
  const defaultNamespace = namespace || index?.defaultNamespace || 'default';

  function schemaFor(apiVersion: string): SchemaModel | undefined {
    if (!schemas.has(apiVersion)) {
      const file = index?.openapi[apiVersion];
      const doc: unknown = file ? JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) : undefined;
      schemas.set(apiVersion, isJsonObject(doc) ? schemaOf(doc) : undefined);
    }
    return schemas.get(apiVersion);
  }

  function servedResource(resource: ManifestResource): { ok: true; served: ApiResourceInfo } | { ok: false; message: string } {
    if (index) {
      const found = findResource(index.discovery as DiscoveryIndex, resource.apiVersion, resource.kind);
      return found.ok ? { ok: true, served: found.value } : { ok: false, message: found.problem.message };
    }
    const [group, version] = splitApiVersion(resource.apiVersion);
    const namespaced = namespacedKinds.has(JSON.stringify([group, resource.kind])) || resource.namespace !== undefined;
    return {
      ok: true,
      served: { group, version, apiVersion: resource.apiVersion, kind: resource.kind, resource: guessResource(resource.kind), namespaced, verbs: [], subresources: [], shortNames: [] },
    };
  }

  return {
    ok: true,
    reader: {
      source: { kind: 'snapshot', directory: dir, ...(index ? { context: index.context, server: index.server } : {}) },
      async read(resource) {
        const found = servedResource(resource);
        if (!found.ok) {
          return {
            ok: true,
            facts: { kind: { state: 'notServed', message: found.message }, live: { state: 'absent' }, schema: undefined },
            title: objectTitle(resource, undefined, ''),
            notes: [],
          };
        }
        const { served } = found;
        const ns = placeNamespace(resource, served, defaultNamespace);
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
            notes.push(`not in the snapshot ${dir}: take it again with this file among the selectors, or add the object's \`kubectl get -o yaml --show-managed-fields\``);
          }
        }
        const schema = schemaFor(resource.apiVersion);
        if (!schema && live.state === 'exists') {
          notes.push(`no OpenAPI document for ${resource.apiVersion} in the snapshot: field conflicts are not predicted (\`kube-conflict-hints snapshot\` saves it)`);
        }
        const kind: KindFacts = { state: 'served', group: served.group, resource: served.resource, namespaced: served.namespaced };
        const facts: ResourceFacts = { kind, live, schema };
        return { ok: true, facts, title: objectTitle(resource, served, ns), notes };
      },
      close: () => {},
    },
  };
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

// Builds realistic object histories in the test cluster through the real API, under the manager names
// real tools use, so tests can compare the product's predictions with what the API server answers.
// Plain HTTPS with a bearer token and the kubeconfig's CA; deliberately independent of product code.
// Every call returns the server's answer as data (ApiResult), failures included, so a test can assert
// on a 409's causes or a 403.
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { TestContext } from 'node:test';
import { parse as parseYaml } from 'yaml';

export type TestUser = 'admin' | 'viewer' | 'stranger';

/** Where and as whom requests go. */
export interface Connection {
  server: string;
  ca: string;
  token: string;
  user: TestUser;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsV1;
  subresource?: string;
}
export interface FieldsV1 {
  [pathElement: string]: FieldsV1;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Enough to address an object; every KubeObject is one. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** metav1.Status, the body of every failed request. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[] };
}

export type ApiResult =
  { ok: true; status: number; object: KubeObject } | { ok: false; status: number; failure: Status };

export interface WriteOptions {
  /** dryRun=All: the server runs admission, defaulting and the conflict check, and stores nothing. */
  dryRun?: boolean;
  /** e.g. `scale` or `status`. */
  subresource?: string;
}

export interface ApplyOptions extends WriteOptions {
  force?: boolean;
}

export type PatchType = 'strategic' | 'merge' | 'json';

// ---------------------------------------------------------------------------------------------------
// Connection and raw requests

interface KubeconfigFile {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
}

/** Reads the test kubeconfig (context = user name) that test/support/cluster.ts wrote. */
export function connect(user: TestUser = 'admin', kubeconfigPath = process.env.KCH_KUBECONFIG): Connection {
  if (!kubeconfigPath) throw new Error('no kubeconfig: set KCH_KUBECONFIG (npm test does) or run npm run cluster:up');
  const config = parseYaml(fs.readFileSync(kubeconfigPath, 'utf8')) as KubeconfigFile;
  const context = config.contexts.find((c) => c.name === user)?.context;
  const cluster = config.clusters.find((c) => c.name === context?.cluster)?.cluster;
  const token = config.users.find((u) => u.name === context?.user)?.user.token;
  if (!context || !cluster || !token) throw new Error(`kubeconfig ${kubeconfigPath} has no usable context ${user}`);
  return {
    server: cluster.server,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
    token,
    user,
  };
}

export interface RawAnswer {
  status: number;
  body: unknown;
}

export async function request(
  conn: Connection,
  method: string,
  path: string,
  options: { query?: Record<string, string | undefined>; body?: unknown; contentType?: string } = {},
): Promise<RawAnswer> {
  const url = new URL(path, conn.server);
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: conn.ca,
        timeout: 30_000,
        headers: {
          Authorization: `Bearer ${conn.token}`,
          Accept: 'application/json',
          'User-Agent': 'kch-test-seed',
          ...(payload === undefined ? {} : { 'Content-Type': options.contentType ?? 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON (e.g. /readyz): keep the text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: timeout`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function toResult(answer: RawAnswer): ApiResult {
  if (answer.status >= 200 && answer.status < 300)
    return { ok: true, status: answer.status, object: answer.body as KubeObject };
  const failure: Status =
    typeof answer.body === 'object' && answer.body !== null && (answer.body as Status).kind === 'Status'
      ? (answer.body as Status)
      : { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: answer.status, message: String(answer.body) };
  return { ok: false, status: answer.status, failure };
}

/** The object of a successful result; anything else throws with the server's message. */
export function objectOf(result: ApiResult, what = 'request'): KubeObject {
  if (result.ok) return result.object;
  throw new Error(`${what}: ${result.status} ${result.failure.reason ?? ''} ${result.failure.message ?? ''}`);
}

// ---------------------------------------------------------------------------------------------------
// Resource paths from discovery (works for CRDs once they are served)

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}
const discoveryCache = new Map<string, ApiResource[]>();

async function discover(conn: Connection, apiVersion: string, refresh = false): Promise<ApiResource[]> {
  const key = `${conn.server} ${apiVersion}`;
  const cached = discoveryCache.get(key);
  if (cached && !refresh) return cached;
  const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const answer = await request(conn, 'GET', path);
  const resources = answer.status === 200 ? ((answer.body as { resources: ApiResource[] }).resources ?? []) : [];
  discoveryCache.set(key, resources);
  return resources;
}

/** URL path of an object (or of its subresource), e.g. /apis/apps/v1/namespaces/ns/deployments/web/scale. */
export async function objectPath(conn: Connection, ref: ObjectRef, subresource?: string): Promise<string> {
  const find = (list: ApiResource[]) => list.find((r) => r.kind === ref.kind && !r.name.includes('/'));
  const resource = find(await discover(conn, ref.apiVersion)) ?? find(await discover(conn, ref.apiVersion, true));
  if (!resource) throw new Error(`${ref.apiVersion} ${ref.kind} is not served`);
  const base = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
  const namespace = resource.namespaced ? `/namespaces/${ref.metadata.namespace ?? 'default'}` : '';
  return `${base}${namespace}/${resource.name}/${encodeURIComponent(ref.metadata.name)}${subresource ? `/${subresource}` : ''}`;
}

function collectionPath(objectUrl: string): string {
  return objectUrl.slice(0, objectUrl.lastIndexOf('/'));
}

// ---------------------------------------------------------------------------------------------------
// Generic primitives

/** Server-Side Apply: PATCH application/apply-patch+yaml (JSON is YAML) with fieldManager=manager. */
export async function apply(
  conn: Connection,
  manager: string,
  obj: KubeObject,
  options: ApplyOptions = {},
): Promise<ApiResult> {
  return toResult(
    await request(conn, 'PATCH', await objectPath(conn, obj, options.subresource), {
      query: {
        fieldManager: manager,
        force: options.force ? 'true' : undefined,
        dryRun: options.dryRun ? 'All' : undefined,
      },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    }),
  );
}

/** POST: the manager owns every field of the created, defaulted object. */
export async function create(
  conn: Connection,
  manager: string,
  obj: KubeObject,
  options: { dryRun?: boolean } = {},
): Promise<ApiResult> {
  const url = collectionPath(await objectPath(conn, obj));
  return toResult(
    await request(conn, 'POST', url, {
      query: { fieldManager: manager, dryRun: options.dryRun ? 'All' : undefined },
      body: obj,
    }),
  );
}

/** PUT (an Update): with metadata.resourceVersion it is an optimistic-lock write, without it unconditional. */
export async function update(
  conn: Connection,
  manager: string,
  obj: KubeObject,
  options: WriteOptions = {},
): Promise<ApiResult> {
  return toResult(
    await request(conn, 'PUT', await objectPath(conn, obj, options.subresource), {
      query: { fieldManager: manager, dryRun: options.dryRun ? 'All' : undefined },
      body: obj,
    }),
  );
}

const patchContentTypes: Record<PatchType, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** PATCH (an Update for managedFields) of the given type. */
export async function patch(
  conn: Connection,
  manager: string,
  ref: ObjectRef,
  body: unknown,
  options: WriteOptions & { type?: PatchType } = {},
): Promise<ApiResult> {
  return toResult(
    await request(conn, 'PATCH', await objectPath(conn, ref, options.subresource), {
      query: { fieldManager: manager, dryRun: options.dryRun ? 'All' : undefined },
      body,
      contentType: patchContentTypes[options.type ?? 'strategic'],
    }),
  );
}

export async function get(
  conn: Connection,
  ref: ObjectRef,
  options: { subresource?: string } = {},
): Promise<ApiResult> {
  return toResult(await request(conn, 'GET', await objectPath(conn, ref, options.subresource)));
}

export async function deleteObject(conn: Connection, ref: ObjectRef): Promise<ApiResult> {
  return toResult(await request(conn, 'DELETE', await objectPath(conn, ref)));
}

/**
 * What a HorizontalPodAutoscaler does: read the scale subresource and PUT it back with new replicas
 * (pkg/controller/podautoscaler/horizontal.go via the scale client). The server records the manager
 * with subresource `scale` at the parent's apiVersion, owning `.spec.replicas`.
 */
export async function scale(conn: Connection, manager: string, ref: ObjectRef, replicas: number): Promise<ApiResult> {
  const current = await get(conn, ref, { subresource: 'scale' });
  if (!current.ok) return current;
  const next = { ...current.object, spec: { ...(current.object.spec as object), replicas } };
  // The body is an autoscaling/v1 Scale, but the URL is the parent's /scale: address it by `ref`.
  return toResult(
    await request(conn, 'PUT', await objectPath(conn, ref, 'scale'), { query: { fieldManager: manager }, body: next }),
  );
}

/**
 * Sets an object's replicas through its /scale subresource as an autoscaler does (the field manager
 * kube-controller-manager, subresource scale), failing the test when the server refuses.
 */
export async function autoscale(conn: Connection, ref: ObjectRef, replicas: number): Promise<void> {
  const name = `${ref.kind} ${ref.metadata.namespace ? `${ref.metadata.namespace}/` : ''}${ref.metadata.name}`;
  objectOf(
    await scale(conn, 'kube-controller-manager', ref, replicas),
    `scaling ${name} to ${replicas} as the autoscaler`,
  );
}

/** A namespace of its own per test, so tests never see each other's objects. */
export async function freshNamespace(conn: Connection, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`.toLowerCase();
  objectOf(
    await create(conn, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    `namespace ${name}`,
  );
  return name;
}

/** A fresh namespace, deleted when the test ends: for one that a test fills with hundreds of objects. */
export async function freshNamespaceFor(t: TestContext, conn: Connection, prefix: string): Promise<string> {
  const namespace = await freshNamespace(conn, prefix);
  t.after(() => deleteObject(conn, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }));
  return namespace;
}

/** Many objects created at once, twenty-five requests at a time. */
export async function createMany(conn: Connection, objects: KubeObject[]): Promise<void> {
  for (let i = 0; i < objects.length; i += 25)
    await Promise.all(objects.slice(i, i + 25).map(async (o) => objectOf(await create(conn, 'seed', o), 'seed')));
}

export function managers(obj: KubeObject): ManagedFieldsEntry[] {
  return obj.metadata.managedFields ?? [];
}

/** The entry for (manager, operation[, subresource]), as the server identifies managers. */
export function managedBy(
  obj: KubeObject,
  manager: string,
  operation: 'Apply' | 'Update',
  subresource?: string,
): ManagedFieldsEntry | undefined {
  return managers(obj).find(
    (m) => m.manager === manager && m.operation === operation && (m.subresource ?? '') === (subresource ?? ''),
  );
}

// ---------------------------------------------------------------------------------------------------
// Client-side apply, as `kubectl apply` without --server-side does it

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/** Go's json.Marshal of a map sorts keys; kubectl's encoder adds a newline. */
function goJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return `${JSON.stringify(sort(value))}\n`;
}

function withoutLastApplied(obj: KubeObject): KubeObject {
  const annotations = { ...(obj.metadata.annotations ?? {}) };
  delete annotations[lastAppliedAnnotation];
  const metadata: ObjectMeta = { ...obj.metadata, annotations };
  if (Object.keys(annotations).length === 0) delete metadata.annotations;
  return { ...obj, metadata };
}

/** Map keys that the previous configuration set and the new one drops become null (deleted). */
function deletions(previous: unknown, next: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!previous || typeof previous !== 'object' || Array.isArray(previous)) return out;
  for (const [k, v] of Object.entries(previous)) {
    const n =
      next && typeof next === 'object' && !Array.isArray(next) ? (next as Record<string, unknown>)[k] : undefined;
    if (n === undefined) out[k] = null;
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      const inner = deletions(v, n);
      if (Object.keys(inner).length) out[k] = inner;
    }
  }
  return out;
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (
    !base ||
    typeof base !== 'object' ||
    Array.isArray(base) ||
    !over ||
    typeof over !== 'object' ||
    Array.isArray(over)
  )
    return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

/**
 * `kubectl apply` (client side, kubectl/pkg/cmd/apply): the manifest plus the last-applied annotation,
 * created with POST or sent as a patch, with fieldManager `kubectl-client-side-apply` (operation Update).
 * The patch is the new configuration plus `null` for map keys the previous last-applied had and the new
 * one lacks; kubectl's full three-way patch also deletes list items, which these scenarios do not need.
 */
export async function clientSideApply(conn: Connection, manifest: KubeObject): Promise<ApiResult> {
  const config = withoutLastApplied(manifest);
  const annotated: KubeObject = {
    ...config,
    metadata: {
      ...config.metadata,
      annotations: { ...(config.metadata.annotations ?? {}), [lastAppliedAnnotation]: goJson(config) },
    },
  };
  const live = await get(conn, manifest);
  if (!live.ok && live.status === 404) return create(conn, 'kubectl-client-side-apply', annotated);
  if (!live.ok) return live;
  const previousText = live.object.metadata.annotations?.[lastAppliedAnnotation];
  const previous: unknown = previousText ? JSON.parse(previousText) : {};
  const body = deepMerge(deletions(previous, config), annotated);
  const strategic = await patch(conn, 'kubectl-client-side-apply', manifest, body, { type: 'strategic' });
  // Custom resources have no strategic-merge schema; kubectl sends them a JSON merge patch.
  if (!strategic.ok && strategic.status === 415)
    return patch(conn, 'kubectl-client-side-apply', manifest, body, { type: 'merge' });
  return strategic;
}

/** `kubectl edit`: the edited object goes back as a strategic-merge patch under `kubectl-edit`. */
export function kubectlEdit(conn: Connection, ref: ObjectRef, change: unknown): Promise<ApiResult> {
  return patch(conn, 'kubectl-edit', ref, change, { type: 'strategic' });
}

// ---------------------------------------------------------------------------------------------------
// Manifests

export function webDeployment(
  namespace: string,
  name = 'web',
  overrides: { replicas?: number; image?: string } = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: overrides.replicas ?? 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'app', image: overrides.image ?? 'nginx:1.25', ports: [{ containerPort: 8080 }] }],
        },
      },
    },
  };
}

/**
 * The Deployment `web` of an overlay's base: no namespace (the overlay gives it), block YAML with
 * compact lists, as kustomize examples write it; tests find its lines by their text.
 */
export function baseDeploymentText(replicas: number): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    'spec:',
    `  replicas: ${replicas}`,
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  template:',
    '    metadata:',
    '      labels:',
    '        app: web',
    '    spec:',
    '      containers:',
    '      - name: app',
    '        image: nginx:1.25',
    '',
  ].join('\n');
}

/**
 * The Deployment `web` as a user writes it by hand in an editor (block YAML, no labels or ports):
 * for the real-editor tests, which find its lines by their text.
 */
export function webDeploymentText(namespace: string): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    `  namespace: ${namespace}`,
    'spec:',
    '  replicas: 3',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  template:',
    '    metadata:',
    '      labels:',
    '        app: web',
    '    spec:',
    '      containers:',
    '        - name: app',
    '          image: nginx:1.25',
    '',
  ].join('\n');
}

export function configMap(
  namespace: string,
  name: string,
  data: Record<string, string>,
  labels?: Record<string, string>,
): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}

/** ConfigMaps `PREFIX-0` to `PREFIX-(count - 1)`, each holding its index: the crowd around the objects a test checks. */
export function numberedConfigMaps(namespace: string, count: number, prefix = 'other'): KubeObject[] {
  return Array.from({ length: count }, (_, i) => configMap(namespace, `${prefix}-${i}`, { index: String(i) }));
}

/**
 * A `Certificate` custom resource of `group` and the CustomResourceDefinition that serves it (v1,
 * any fields), as YAML text: for the tests of a kind whose CRD is not installed yet.
 */
export function certificateWithCrd(group: string, namespace: string): { certificate: string; crd: string } {
  return {
    certificate: `apiVersion: ${group}/v1\nkind: Certificate\nmetadata:\n  name: web-tls\n  namespace: ${namespace}\nspec:\n  secretName: web-tls\n`,
    crd: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.${group}
spec:
  group: ${group}
  names: { kind: Certificate, plural: certificates, singular: certificate }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`,
  };
}

// The differential suite's own judges, written without any product code, so that a bug in the
// engine cannot cancel out against the same bug in the check:
// - the server's answer as it sent it (HTTP status, reason, message, causes), read over plain HTTPS;
// - what a real apply removed: the live object before and after as plain JSON, walked along the
//   managedFields the server recorded (FieldsV1 read here, spelled as the server spells paths).
import { spawn } from 'node:child_process';
import * as https from 'node:https';
import type { Connection } from '../support/seed';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the server answered instead of success: its status, word for word. */
export interface ServerStatus {
  code: number;
  reason: string;
  message: string;
  /** `message @ field` of each cause, each once (a 422 may list one field error twice), sorted. */
  causes: string[];
}

export interface RawAnswer {
  status: number;
  body: Json | string;
}

/** One request with a body sent exactly as given. */
export function sendRaw(
  conn: Connection,
  method: string,
  urlPath: string,
  query: Record<string, string>,
  contentType: string,
  text: string,
): Promise<RawAnswer> {
  const url = new URL(urlPath, conn.server);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return exchange(conn, method, url, { Accept: 'application/json', 'Content-Type': contentType }, text);
}

/** One request as the oracle sends every request (its own user agent, 30 s); the answer as JSON, or as text when it is not. */
function exchange(
  conn: Connection,
  method: string,
  url: URL,
  headers: Record<string, string>,
  text?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: conn.ca,
        timeout: 30_000,
        headers: { Authorization: `Bearer ${conn.token}`, ...headers, 'User-Agent': 'kch-test-oracle' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          let parsed: Json | string = body;
          try {
            parsed = JSON.parse(body) as Json;
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: timeout`)));
    req.on('error', reject);
    req.end(text);
  });
}

/** The status of a refusal as the server sent it; undefined for a success (2xx). */
export function serverStatus(answer: RawAnswer): ServerStatus | undefined {
  if (answer.status >= 200 && answer.status < 300) return undefined;
  const body = isMap(answer.body) ? answer.body : {};
  const details = isMap(body.details) ? body.details : {};
  const causes = Array.isArray(details.causes) ? details.causes.filter(isMap) : [];
  return {
    code: answer.status,
    reason: typeof body.reason === 'string' ? body.reason : '',
    message: typeof body.message === 'string' ? body.message : typeof answer.body === 'string' ? answer.body : '',
    causes: [...new Set(causes.map((c) => `${String(c.message ?? '')} @ ${String(c.field ?? '')}`))].sort(),
  };
}

// -------------------------------------------------------------------------------------------------
// What a real apply removed

/** A path of a FieldsV1 tree: the server's spelling, the raw keys, and whether it is a member. */
interface OwnedPath {
  text: string;
  keys: string[];
  member: boolean;
}

/**
 * Every path of a FieldsV1 tree, members (`{}` leaves and `.` markers) and the prefixes above
 * them, spelled as structured-merge-diff prints a path (fieldpath PathElement.String).
 */
function ownedPaths(
  fieldsV1: Json | undefined,
  prefix: { text: string; keys: string[] } = { text: '', keys: [] },
  out = new Map<string, OwnedPath>(),
): Map<string, OwnedPath> {
  if (!isMap(fieldsV1)) return out;
  for (const [key, child] of Object.entries(fieldsV1)) {
    if (key === '.') continue;
    const path = { text: prefix.text + spell(key), keys: [...prefix.keys, key] };
    const leaf = isMap(child) && Object.keys(child).length === 0;
    const member = leaf || (isMap(child) && '.' in child);
    const seen = out.get(path.text);
    out.set(path.text, { ...path, member: member || (seen?.member ?? false) });
    ownedPaths(child, path, out);
  }
  return out;
}

/** `f:name` → `.name`, `k:{"a":1,"b":"x"}` → `[a=1,b="x"]`, `v:"x"` → `[="x"]`, `i:3` → `[3]`. */
function spell(key: string): string {
  const kind = key.slice(0, 2);
  const rest = key.slice(2);
  if (kind === 'f:') return `.${rest}`;
  if (kind === 'i:') return `[${rest}]`;
  if (kind === 'v:') return `[=${JSON.stringify(JSON.parse(rest))}]`;
  if (kind === 'k:') {
    const fields = JSON.parse(rest) as JsonMap;
    return `[${Object.keys(fields)
      .sort()
      .map((k) => `${k}=${JSON.stringify(fields[k])}`)
      .join(',')}]`;
  }
  throw new Error(`a FieldsV1 key of an unknown kind: ${key}`);
}

/** The value a FieldsV1 path points at in a plain JSON object, or undefined when it has none. */
function valueAt(object: Json, keys: readonly string[]): Json | undefined {
  let at: Json | undefined = object;
  for (const key of keys) {
    const kind = key.slice(0, 2);
    const rest = key.slice(2);
    if (at === undefined) return undefined;
    if (kind === 'f:') at = isMap(at) && Object.prototype.hasOwnProperty.call(at, rest) ? at[rest] : undefined;
    else if (!Array.isArray(at)) return undefined;
    else if (kind === 'i:') at = at[Number(rest)];
    else if (kind === 'v:') {
      const want = JSON.parse(rest) as Json;
      at = at.find((item) => deepEqual(item, want));
    } else {
      const fields = JSON.parse(rest) as JsonMap;
      at = at.find((item) => isMap(item) && Object.entries(fields).every(([k, v]) => deepEqual(item[k], v)));
    }
  }
  return at;
}

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a))
    return (
      isMap(b) &&
      Object.keys(a).length === Object.keys(b).length &&
      Object.keys(a).every((k) => k in b && deepEqual(a[k], b[k]))
    );
  return false;
}

function managedFieldsOf(object: Json): Json[] {
  const meta = isMap(object) && isMap(object.metadata) ? object.metadata : {};
  return Array.isArray(meta.managedFields) ? meta.managedFields : [];
}

function allOwned(object: Json): Map<string, OwnedPath> {
  const out = new Map<string, OwnedPath>();
  for (const entry of managedFieldsOf(object)) {
    if (!isMap(entry)) continue;
    for (const [text, p] of ownedPaths(entry.fieldsV1)) {
      const seen = out.get(text);
      out.set(text, { ...p, member: p.member || (seen?.member ?? false) });
    }
  }
  return out;
}

/** Bookkeeping fields every write changes or that only the server writes: not deletions. */
const NOT_USER_FIELDS =
  /^\.metadata\.(managedFields|resourceVersion|generation|creationTimestamp|uid)(\W|$)|^\.status(\W|$)/;

/**
 * What a real apply deleted, as the top-most removed paths: every path some manager owned before
 * (a member or a map above members) that the object had before and lacks after, plus every owned
 * member whose value changed and that nobody owns afterwards (a deleted field the server defaulted
 * again: a dropped `replicas` comes back as 1, owned by nobody). Paths below a removed path are
 * left out: they went with it.
 */
export function removedRoots(before: Json, after: Json): string[] {
  const ownedAfter = allOwned(after);
  const removed: string[] = [];
  for (const p of allOwned(before).values()) {
    const was = valueAt(before, p.keys);
    if (was === undefined) continue;
    const now = valueAt(after, p.keys);
    if (now === undefined) removed.push(p.text);
    else if (p.member && !deepEqual(was, now) && !ownedAfter.get(p.text)?.member) removed.push(p.text);
  }
  return topMost(removed.filter((p) => !NOT_USER_FIELDS.test(p)));
}

/** The paths none of whose ancestors is in the list, sorted. */
export function topMost(paths: readonly string[]): string[] {
  const all = [...new Set(paths)].sort();
  return all.filter((p) => !all.some((q) => q !== p && (p.startsWith(`${q}.`) || p.startsWith(`${q}[`))));
}

/** The one write request kubectl sent, as its log (`-v=10`) shows it. */
export interface KubectlRequest {
  method: string;
  /** Path and query, as sent (`?dryRun=All&fieldManager=...&fieldValidation=Strict&force=false`). */
  url: string;
  contentType: string;
  body: string;
}

/** What kubectl did with a manifest: the request it sent, or its refusal before sending any. */
export type KubectlSent = { sent: KubectlRequest } | { refused: string };

/**
 * What kubectl sends for a manifest, taken from the real kubectl: it runs the user's command with
 * `--dry-run=server` and `-v=10` against the server and the request body, method, URL and content
 * type are read off its log (client-go logs the body whole at level 10: `"Request Body" body=<`).
 * Nothing here decodes the manifest, so the body carries whatever kubectl's own decoding does —
 * go-yaml's YAML 1.1, anchors and merge keys, the last of two equal keys, numbers re-encoded by
 * Go (`1.0` is sent as `1`), keys sorted — and the request is refused exactly where kubectl
 * refuses it before sending (its metadata check of the decoded object, a kind it cannot map).
 * `command`: `apply --server-side`, `apply` (client-side: for an object that exists, the patch it
 * works out from the live object and its last-applied annotation) or `create`.
 */
export async function kubectlSends(
  kubeconfig: string,
  context: string,
  cacheDir: string,
  command: KubectlCommand,
  fieldManager: string,
  text: string,
): Promise<KubectlSent> {
  const run = await kubectlRuns(kubeconfig, context, cacheDir, command, fieldManager, text, { dryRun: true });
  if (run.writes.length > 0) return { sent: run.writes[0]! };
  if (run.refusals.length > 0) return { refused: run.refusals.join('\n') };
  throw new Error(`kubectl sent no write and said no error:\n${run.log.slice(-2000)}`);
}

export type KubectlCommand = 'apply --server-side' | 'apply' | 'create';

/** Everything one kubectl run did with a manifest of one or more objects, in the order it did it. */
export interface KubectlRun {
  /** The write requests it sent (one per object it could send), as its log shows them. */
  writes: KubectlRequest[];
  /** Its `error: ...` lines (a refusal before sending: an object it cannot map, metadata it cannot decode), each with the lines that continue it. */
  refusals: string[];
  /** What it printed per object (`-o name`: `kind.group/name`, one a line), for the objects the server accepted. */
  stdout: string;
  /** Its exit code. */
  code: number;
  log: string;
}

/**
 * Runs the user's command on a manifest — `dryRun: true` with `--dry-run=server`, else for real, as
 * the user runs it — at `-v=10`, and reads what it sent and refused off its log.
 */
export function kubectlRuns(
  kubeconfig: string,
  context: string,
  cacheDir: string,
  command: KubectlCommand,
  fieldManager: string,
  text: string,
  options: { dryRun: boolean },
): Promise<KubectlRun> {
  const args = ['--kubeconfig', kubeconfig, '--context', context, '--cache-dir', cacheDir, ...command.split(' ')];
  if (options.dryRun) args.push('--dry-run=server');
  args.push(`--field-manager=${fieldManager}`, '-o', 'name', '-f', '-', '-v=10');
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    let err = '';
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', (e) =>
      reject(new Error(`kubectl could not run (${e.message}): it is the reference of what a user sends`)),
    );
    child.on('close', (code) =>
      resolve({ writes: writeRequestsOf(err), refusals: refusalsOf(err), stdout: out, code: code ?? -1, log: err }),
    );
    child.stdin.end(text);
  });
}

/** kubectl's `error: ` lines, each with the unprefixed lines after it (`ensure CRDs are installed first`). */
function refusalsOf(log: string): string[] {
  const out: string[] = [];
  let current: string[] | undefined;
  for (const line of log.split('\n')) {
    if (/^error: /.test(line)) {
      current = [line.replace(/^error: /, '')];
      out.push('');
    } else if (current && line !== '' && !/^[IWE]\d{4} /.test(line)) current.push(line);
    else current = undefined;
    if (current) out[out.length - 1] = current.join('\n');
  }
  return out;
}

/** The requests of a kubectl log that are not a GET (discovery and OpenAPI reads come first), in order. */
function writeRequestsOf(log: string): KubectlRequest[] {
  const lines = log.split('\n');
  const out: KubectlRequest[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/ "Request Body" body=/.test(lines[i]!)) continue;
    // klog prints a value with a newline (Go's JSON encoder ends the body with one) as
    // `body=<`, each line indented by a tab, then ` >`; a value without one as a quoted string.
    let body: string;
    let j = i + 1;
    const quoted = / "Request Body" body=(".*")\s*$/.exec(lines[i]!);
    if (quoted) body = JSON.parse(quoted[1]!) as string;
    else {
      const parts: string[] = [];
      for (; j < lines.length && lines[j] !== ' >'; j++) parts.push(lines[j]!.replace(/^\t/, ''));
      body = parts.join('\n');
    }
    const curl = lines.slice(j).find((l) => / curl -v -X/.test(l));
    const m = curl && /curl -v -X(\w+) (.*) '([^']+)'\s*$/.exec(curl);
    if (!m || m[1] === 'GET') continue;
    const contentType = /-H "Content-Type: ([^"]+)"/.exec(m[2]!)?.[1] ?? '';
    const url = new URL(m[3]!);
    out.push({ method: m[1]!, url: url.pathname + url.search, contentType, body });
  }
  return out;
}

// -------------------------------------------------------------------------------------------------
// What the server serves: discovery and CustomResourceDefinitions, read as plain JSON

/**
 * The resource name kubectl would use for a kind it cannot map: lower case, plural by its spelling
 * (apimachinery meta.UnsafeGuessKindToResource). Where the group-version is not served, any name
 * gets the same 404.
 */
export function guessedResource(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/**
 * Why the server does not serve `kind` at `apiVersion`, from the server's own lists: the
 * CustomResourceDefinition of that group and kind (then which versions it serves), and otherwise
 * whether Kubernetes itself serves the group or the kind elsewhere (a group-version in discovery
 * that no CRD serves is the server's own).
 */
export interface NotServedTruth {
  /** GET of the group-version's discovery: 404, or 200 without the kind. */
  groupVersionStatus: number;
  groupVersionListsKind: boolean;
  cause: 'crd-version-not-served' | 'built-in-version-not-served' | 'crd-not-installed';
  /** The apiVersions that serve the kind instead: the CRD's served versions, or the server's own group-versions that list it. */
  servedInstead: string[];
}

export async function notServedTruth(conn: Connection, apiVersion: string, kind: string): Promise<NotServedTruth> {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const gv = await getJson(conn, slash < 0 ? `/api/${apiVersion}` : `/apis/${apiVersion}`, 'application/json');
  const listed = isMap(gv.body) && Array.isArray(gv.body.resources) ? gv.body.resources.filter(isMap) : [];
  const groupVersionListsKind = listed.some(
    (r) => r.kind === kind && typeof r.name === 'string' && !r.name.includes('/'),
  );

  const crdList = await getJson(conn, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 'application/json');
  const crds = (isMap(crdList.body) && Array.isArray(crdList.body.items) ? crdList.body.items.filter(isMap) : []).map(
    (c) => {
      const spec = isMap(c.spec) ? c.spec : {};
      const names = isMap(spec.names) ? spec.names : {};
      const versions = Array.isArray(spec.versions) ? spec.versions.filter(isMap) : [];
      return {
        group: String(spec.group ?? ''),
        kind: String(names.kind ?? ''),
        served: versions.filter((v) => v.served === true).map((v) => String(v.name)),
      };
    },
  );
  const crdServes = (g: string, v: string) => crds.some((c) => c.group === g && c.served.includes(v));

  // Aggregated discovery (one request per root): every group-version and the kinds it serves.
  const served: { group: string; version: string; kinds: string[] }[] = [];
  for (const root of ['/api', '/apis']) {
    const answer = await getJson(conn, root, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const items = isMap(answer.body) && Array.isArray(answer.body.items) ? answer.body.items.filter(isMap) : [];
    for (const item of items) {
      const name = isMap(item.metadata) ? String(item.metadata.name ?? '') : '';
      for (const v of Array.isArray(item.versions) ? item.versions.filter(isMap) : []) {
        const kinds = (Array.isArray(v.resources) ? v.resources.filter(isMap) : []).map((r) =>
          isMap(r.responseKind) ? String(r.responseKind.kind ?? '') : '',
        );
        served.push({ group: name, version: String(v.version ?? ''), kinds });
      }
    }
  }
  const crd = crds.find((c) => c.group === group && c.kind === kind);
  if (crd)
    return {
      groupVersionStatus: gv.status,
      groupVersionListsKind,
      cause: 'crd-version-not-served',
      servedInstead: crd.served.map((v) => `${group}/${v}`),
    };
  const own = served.filter((s) => !crdServes(s.group, s.version));
  const ownInstead = own
    .filter((s) => s.kinds.includes(kind))
    .map((s) => (s.group ? `${s.group}/${s.version}` : s.version));
  const ownGroup = own.some((s) => s.group === group);
  return {
    groupVersionStatus: gv.status,
    groupVersionListsKind,
    cause: ownGroup || ownInstead.length > 0 ? 'built-in-version-not-served' : 'crd-not-installed',
    servedInstead: ownInstead,
  };
}

/** Whether the CRD of `name` says it is established (its kind is served). */
export async function crdEstablished(conn: Connection, name: string): Promise<boolean> {
  const answer = await getJson(
    conn,
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
    'application/json',
  );
  const status = isMap(answer.body) && isMap(answer.body.status) ? answer.body.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isMap) : [];
  return conditions.some((c) => c.type === 'Established' && c.status === 'True');
}

function getJson(conn: Connection, urlPath: string, accept: string): Promise<RawAnswer> {
  return exchange(conn, 'GET', new URL(urlPath, conn.server), { Accept: accept });
}

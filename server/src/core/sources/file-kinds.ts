// What a YAML (or JSON) file is, before anything parses it as a manifest. Most of what users apply
// is rendered: a Helm template is not YAML at all, a Kustomize patch is a fragment of an object, and
// a kustomization.yaml is the recipe, not an object the cluster serves. Only a plain manifest is
// checked from its own text; the others are sources of rendered manifests.
//
// Pure: given the files (paths and texts) the caller knows of, it says what each is. The caller
// reads the files, including the Chart.yaml and kustomization files around the ones it checks.
import { parseAllDocuments } from 'yaml';

export type FileKind =
  /** Kubernetes objects written by hand: checked from their own text. */
  | { readonly kind: 'manifest' }
  /** A kustomization: `kustomization.yaml|yml`, `Kustomization`, or apiVersion kustomize.config.k8s.io/*. */
  | { readonly kind: 'kustomization' }
  /** A file kustomizations use: a resource, a patch, a component's or a generator's input. */
  | { readonly kind: 'kustomization-input'; readonly role: KustomizeRole; readonly usedBy: readonly string[] }
  /** A file of a Helm chart: Chart.yaml, values files, templates, helpers, CRDs, subcharts. */
  | { readonly kind: 'helm-chart'; readonly role: HelmRole; readonly chart: string }
  /** YAML that is not Kubernetes at all (CI workflows, compose files, tool settings). */
  | { readonly kind: 'other' };

export type KustomizeRole = 'resource' | 'component' | 'patch' | 'generator-input' | 'configuration';
export type HelmRole = 'chart' | 'values' | 'template' | 'helpers' | 'crd' | 'other';

export interface KnownFile {
  /** `/`-separated; relative or absolute, as long as all files agree. */
  readonly path: string;
  readonly text: string;
}

/** The names kustomize looks for in a folder, in its order (api/konfig/general.go, RecognizedKustomizationFileNames). */
export const kustomizationFileNames = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;
const KUSTOMIZATION_NAMES = new Set<string>(kustomizationFileNames);

/** Whether a file's name (its last segment) is one kustomize reads as a folder's kustomization. */
export function isKustomizationFileName(name: string): boolean {
  return KUSTOMIZATION_NAMES.has(name);
}
const KUSTOMIZE_API = /^kustomize\.config\.k8s\.io\//;

/** What each file is. Every path of `files` gets an answer. */
export function classifyFiles(files: readonly KnownFile[]): Map<string, FileKind> {
  const byPath = new Map(files.map((f) => [normalizePath(f.path), f]));
  const result = new Map<string, FileKind>();

  const charts = [...byPath.keys()].filter((p) => basename(p) === 'Chart.yaml').map(dirname);
  const kustomizations = new Map<string, KustomizationRefs>();
  for (const [p, f] of byPath) {
    if (isKustomization(p, f.text)) kustomizations.set(p, kustomizationRefs(f.text));
  }

  // Who uses what: each path a kustomization names, resolved against its folder. A folder stands
  // for the kustomization in it, which is a kustomization anyway.
  const used = new Map<string, { role: KustomizeRole; usedBy: string[] }>();
  for (const [k, refs] of kustomizations) {
    const dir = dirname(k);
    for (const { path: ref, role } of refs) {
      const target = joinPath(dir, ref);
      const entry = used.get(target) ?? { role, usedBy: [] };
      if (!entry.usedBy.includes(k)) entry.usedBy.push(k);
      used.set(target, entry);
    }
  }

  for (const [p, f] of byPath) {
    const chart = nearestChart(p, charts);
    const use = used.get(p);
    let kind: FileKind;
    if (kustomizations.has(p)) kind = { kind: 'kustomization' };
    else if (chart !== undefined) kind = { kind: 'helm-chart', role: helmRole(relative(chart, p)), chart };
    else if (use) kind = { kind: 'kustomization-input', role: use.role, usedBy: use.usedBy };
    else if (looksLikeKubernetes(f.text)) kind = { kind: 'manifest' };
    else kind = { kind: 'other' };
    result.set(f.path, kind);
  }
  return result;
}

/** Kustomize's own rule for the file name, or the recipe's apiVersion whatever the file is called. */
function isKustomization(p: string, text: string): boolean {
  if (isKustomizationFileName(basename(p))) return true;
  const apiVersion = /^apiVersion:[ \t]*["']?([^"'\s#]+)/m.exec(text)?.[1];
  return apiVersion !== undefined && KUSTOMIZE_API.test(apiVersion);
}

/** The chart a file belongs to: the nearest folder above it (or its own) that holds a Chart.yaml. */
function nearestChart(p: string, charts: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const c of charts) {
    if ((c === '' || p.startsWith(`${c}/`)) && (best === undefined || c.length > best.length)) best = c;
  }
  return best;
}

function helmRole(inChart: string): HelmRole {
  if (inChart === 'Chart.yaml') return 'chart';
  if (inChart.startsWith('templates/')) return basename(inChart).startsWith('_') ? 'helpers' : 'template';
  if (inChart.startsWith('crds/')) return 'crd';
  // values.yaml, values-production.yaml, and the values files charts keep for CI (ci/*.yaml).
  if (/^values[^/]*\.(ya?ml|json)$/.test(inChart) || inChart.startsWith('ci/')) return 'values';
  return 'other';
}

/**
 * A document with both an apiVersion and a kind (JSON or YAML, block or flow style, an item of a
 * List counts too). A flow mapping's key follows `{` or `,`: `{apiVersion: v1, kind: ConfigMap}`.
 */
function looksLikeKubernetes(text: string): boolean {
  // [ \t\uFEFF]*, not \s*: in multiline mode \s* runs over line ends, and a search from every line
  // of a file of blank lines would take time quadratic in its length. A byte order mark before the
  // first key is allowed, as kubectl allows it.
  return (
    (/(?:^|[{,])[ \t\uFEFF]*["']?apiVersion["']?[ \t]*:/m.test(text) &&
      /(?:^|[{,])[ \t\uFEFF]*["']?kind["']?[ \t]*:/m.test(text)) ||
    (/"apiVersion"\s*:/.test(text) && /"kind"\s*:/.test(text))
  );
}

export interface KustomizationRefs extends Array<{ path: string; role: KustomizeRole }> {}

/**
 * The local files a kustomization names (kustomize's api/types/kustomization.go fields, including
 * the deprecated ones kustomize still reads). Remote resources (URLs, git) name no local file.
 */
export function kustomizationRefs(text: string): KustomizationRefs {
  const refs: KustomizationRefs = [];
  let k: Record<string, unknown> | undefined;
  try {
    const docs = parseAllDocuments(text);
    const first = Array.isArray(docs) ? docs[0] : undefined;
    const js = first && first.errors.length === 0 ? (first.toJS() as unknown) : undefined;
    if (js && typeof js === 'object' && !Array.isArray(js)) k = js as Record<string, unknown>;
  } catch {
    k = undefined;
  }
  if (!k) return refs;
  const add = (value: unknown, role: KustomizeRole) => {
    if (typeof value !== 'string' || value === '' || isRemote(value)) return;
    refs.push({ path: value, role });
  };
  const each = (field: string, fn: (item: unknown) => void) => {
    const v = k[field];
    if (Array.isArray(v)) v.forEach(fn);
  };
  for (const field of ['resources', 'bases', 'crds']) each(field, (v) => add(v, 'resource'));
  each('components', (v) => add(v, 'component'));
  each('patchesStrategicMerge', (v) => add(v, 'patch'));
  for (const field of ['patches', 'patchesJson6902', 'replacements']) {
    each(field, (v) => add(v && typeof v === 'object' ? (v as Record<string, unknown>).path : undefined, 'patch'));
  }
  for (const field of ['configMapGenerator', 'secretGenerator']) {
    each(field, (g) => {
      if (!g || typeof g !== 'object') return;
      const gen = g as Record<string, unknown>;
      // `files` entries are `path` or `key=path`.
      if (Array.isArray(gen.files))
        for (const f of gen.files)
          add(typeof f === 'string' ? f.slice(f.indexOf('=') + 1) : undefined, 'generator-input');
      if (Array.isArray(gen.envs)) for (const e of gen.envs) add(e, 'generator-input');
      add(gen.env, 'generator-input');
    });
  }
  for (const field of ['configurations', 'generators', 'transformers', 'validators'])
    each(field, (v) => add(v, 'configuration'));
  const openapi = k.openapi;
  if (openapi && typeof openapi === 'object') add((openapi as Record<string, unknown>).path, 'configuration');
  return refs;
}

function isRemote(ref: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(ref) ||
    /^(git@|github\.com\/|gitlab\.com\/|bitbucket\.org\/)/.test(ref) ||
    /\?ref=|\.git(\/\/|$)/.test(ref)
  );
}

// --- `/` paths, without node:path (core does no I/O and imports nothing that does) ---

export function normalizePath(p: string): string {
  const absolute = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length > 0 && out.at(-1) !== '..') out.pop();
    else if (part !== '..' || !absolute) out.push(part);
  }
  return `${absolute ? '/' : ''}${out.join('/')}`;
}

export function joinPath(dir: string, ref: string): string {
  return normalizePath(ref.startsWith('/') ? ref : dir === '' ? ref : `${dir}/${ref}`);
}

export function dirname(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : i === 0 ? '/' : p.slice(0, i);
}

export function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function relative(dir: string, p: string): string {
  return dir === '' ? p : p.slice(dir.length + 1);
}

/**
 * The kustomizations to build for `file` (a kustomization or a file one uses): the folders of the
 * kustomizations that reach it and that no other known kustomization uses, the overlays a user
 * applies. A base is judged through each overlay that uses it; a component only through the
 * kustomizations that list it. Paths as in `files`.
 */
export function kustomizeRoots(files: readonly KnownFile[], file: string): string[] {
  const texts = new Map(files.map((f) => [normalizePath(f.path), f.text]));
  const users = new Map<string, string[]>();
  const dirs = new Map<string, boolean>();
  const starts: string[] = [];
  const target = normalizePath(file);
  for (const [p, text] of texts) {
    if (!isKustomization(p, text)) continue;
    const dir = dirname(p);
    dirs.set(dir, /^kind:[ \t]*["']?Component\b/m.test(text));
    if (p === target) starts.push(dir);
    for (const ref of kustomizationRefs(text)) {
      const used = joinPath(dir, ref.path);
      users.set(used, [...(users.get(used) ?? []), dir]);
      if (used === target) starts.push(dir);
    }
  }
  const roots = new Set<string>();
  const seen = new Set<string>();
  const climb = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const up = users.get(dir) ?? [];
    if (up.length === 0 && dirs.get(dir) === false) roots.add(dir);
    for (const u of up) climb(u);
  };
  starts.forEach(climb);
  return [...roots].sort();
}

/** Every overlay among `files`: the folders of the kustomizations that no other uses and that are not components (what kustomizeRoots climbs to). */
export function overlayRoots(files: readonly KnownFile[]): string[] {
  const dirs = new Map<string, boolean>();
  const used = new Set<string>();
  for (const f of files) {
    const p = normalizePath(f.path);
    if (!isKustomization(p, f.text)) continue;
    const dir = dirname(p);
    dirs.set(dir, /^kind:[ \t]*["']?Component\b/m.test(f.text));
    for (const ref of kustomizationRefs(f.text)) used.add(joinPath(dir, ref.path));
  }
  return [...dirs]
    .filter(([dir, component]) => !component && !used.has(dir))
    .map(([dir]) => dir)
    .sort();
}

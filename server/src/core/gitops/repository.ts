// Which GitOps controller applies a file of the repository the user edits: the Argo CD Application
// or Flux Kustomization whose source is this repository (its remote) and whose path holds the file.
// Before a pull request is merged the objects may not exist yet, so the live object cannot say who
// will apply them; the controllers' own objects can.
//
// Each controller decides which files of its path it sends, and the rules here are theirs:
// - Argo CD, a directory source (reposerver/repository/repository.go, getPotentiallyValidManifests
//   and getPotentiallyValidManifestFile in argo-cd v3.5): files named *.yaml, *.yml, *.json or
//   *.jsonnet in the path itself, in its subfolders only with `directory.recurse: true`; a file whose
//   path relative to the source path matches `directory.exclude`, or does not match
//   `directory.include`, is left out (gobwas/glob patterns, `*` crossing folders); a file holding
//   the marker `+argocd:skip-file-rendering` is left out. A path holding a kustomization is built by
//   kustomize, one with a Chart.yaml by Helm (reposerver's source type detection): then the
//   kustomization or chart decides, which this module does not judge (the answer says so).
// - Flux (fluxcd/pkg/kustomize kustomize_generator.go, scanManifests): without a kustomization in
//   the path, every *.yaml and *.yml below it, in any subfolder; a subfolder holding a kustomization
//   is taken whole and not walked further, so that kustomization decides for the files under it.
//   `.sourceignore` patterns are not read here (the answer says "may").
//
// Repositories are compared as a user reads them: the same host and path, whatever the scheme, user
// or `.git` suffix (`git@github.com:org/shop.git` is `https://github.com/org/shop`). Argo CD itself
// compares more strictly (util/git NormalizeGitURL keeps the scheme), but a clone over SSH of the
// repository an Application reads over HTTPS is the same repository to the person editing it.
//
// Pure: the caller gives the file's path inside its repository, the repository's remotes, and a way
// to ask whether a folder holds a kustomization or a chart.
import { isJsonObject, type JsonValue } from '../json';
import { isKustomizationFileName } from '../sources/file-kinds';
import type { ApplierPolicy, ControllerApplier } from './model';
import { applicationPolicy, kustomizationPolicy } from './policy';

export interface RepositorySource {
  readonly applier: { readonly kind: 'argocd' | 'flux-kustomize'; readonly name: string; readonly namespace: string };
  readonly repoURL: string;
  /** The folder in the repository, as the controller's object writes it (`./apps/shop`, `apps/shop/`, ``). */
  readonly path: string;
  /** Argo CD's directory options (spec.source.directory); Flux has none. */
  readonly directory?: { readonly recurse?: boolean; readonly include?: string; readonly exclude?: string };
}

export interface RepositoryFile {
  /** The repository's remote URLs (origin first). */
  readonly remotes: readonly string[];
  /** The file's path from the top of the repository, `/`-separated. */
  readonly path: string;
  /** The file's text, when known: Argo CD leaves out a file carrying its skip marker. */
  readonly text?: string;
}

/** What the caller knows of the repository's folders (paths from its top, `/`-separated, `` for the top). */
export interface RepositoryFolders {
  readonly hasKustomization: (folder: string) => boolean;
  readonly hasChart: (folder: string) => boolean;
}

export type SourceMatch =
  /** The controller sends the file's objects as written. */
  | { readonly source: RepositorySource; readonly how: 'sends' }
  /** A kustomization or chart at `folder` decides whether, and how, the file is sent. */
  | {
      readonly source: RepositorySource;
      readonly how: 'rendered';
      readonly by: 'kustomization' | 'chart';
      readonly folder: string;
    };

/** The sources whose controller sends (or renders) the file, in the order given. */
export function sourcesOfFile(
  file: RepositoryFile,
  sources: readonly RepositorySource[],
  folders: RepositoryFolders,
): SourceMatch[] {
  const filePath = cleanPath(file.path);
  if (filePath === undefined || filePath === '') return [];
  const remotes = file.remotes.map(repositoryKey).filter((k): k is string => k !== undefined);
  const matches: SourceMatch[] = [];
  for (const source of sources) {
    const key = repositoryKey(source.repoURL);
    if (key === undefined || !remotes.includes(key)) continue;
    const root = cleanPath(source.path);
    if (root === undefined) continue;
    const rel = relativeTo(filePath, root);
    if (rel === undefined) continue;
    const match =
      source.applier.kind === 'argocd'
        ? argoMatch(source, root, rel, file, folders)
        : fluxMatch(source, root, rel, folders);
    if (match) matches.push(match);
  }
  return matches;
}

const ARGO_MANIFEST = /^.*\.(yaml|yml|json|jsonnet)$/;
const ARGO_SKIP_MARKER = '+argocd:skip-file-rendering';

function argoMatch(
  source: RepositorySource,
  root: string,
  rel: string,
  file: RepositoryFile,
  folders: RepositoryFolders,
): SourceMatch | undefined {
  if (folders.hasKustomization(root)) return { source, how: 'rendered', by: 'kustomization', folder: root };
  if (folders.hasChart(root)) return { source, how: 'rendered', by: 'chart', folder: root };
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  if (rel.includes('/') && !source.directory?.recurse) return undefined;
  if (!ARGO_MANIFEST.test(name)) return undefined;
  const { include, exclude } = source.directory ?? {};
  if (exclude && globMatch(exclude, rel)) return undefined;
  if (include && !globMatch(include, rel)) return undefined;
  if (file.text?.includes(ARGO_SKIP_MARKER)) return undefined;
  return { source, how: 'sends' };
}

function fluxMatch(
  source: RepositorySource,
  root: string,
  rel: string,
  folders: RepositoryFolders,
): SourceMatch | undefined {
  // The first folder from the source path down to the file's own that holds a kustomization decides.
  const parts = rel.split('/');
  for (let depth = 0; depth < parts.length; depth++) {
    const folder = joinPath(root, parts.slice(0, depth).join('/'));
    if (folders.hasKustomization(folder)) return { source, how: 'rendered', by: 'kustomization', folder };
  }
  const name = parts[parts.length - 1]!;
  if (isKustomizationFileName(name)) return undefined;
  return /\.(yaml|yml)$/.test(name) ? { source, how: 'sends' } : undefined;
}

/**
 * A repository URL as host and path, lower-cased, without scheme, user, port or `.git`:
 * `github.com/org/shop`. Undefined for what is not a remote repository URL (a local path).
 */
export function repositoryKey(url: string): string | undefined {
  let rest = url.trim().toLowerCase();
  if (rest.length === 0 || rest.length > 2048) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(rest);
  let host: string;
  let path: string;
  if (scheme) {
    if (scheme[1] === 'file') return undefined;
    rest = rest.slice(scheme[0].length);
    const slash = rest.indexOf('/');
    if (slash < 0) return undefined;
    host = rest.slice(0, slash);
    path = rest.slice(slash + 1);
  } else {
    // scp-like: [user@]host:path (git's own rule: a colon before any slash).
    const colon = rest.indexOf(':');
    const slash = rest.indexOf('/');
    if (colon <= 0 || (slash >= 0 && slash < colon)) return undefined;
    host = rest.slice(0, colon);
    path = rest.slice(colon + 1);
  }
  host = host.slice(host.lastIndexOf('@') + 1).replace(/:\d*$/, '');
  path = path
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/^\/+/, '');
  if (!host || !path) return undefined;
  return `${host}/${path}`;
}

/** `./apps/shop/` as `apps/shop`; `` for the top; undefined for a path that leaves the repository. */
function cleanPath(p: string): string | undefined {
  const parts: string[] = [];
  for (const part of p.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') return undefined;
    parts.push(part);
  }
  return parts.join('/');
}

function relativeTo(file: string, folder: string): string | undefined {
  if (folder === '') return file;
  return file.startsWith(`${folder}/`) ? file.slice(folder.length + 1) : undefined;
}

function joinPath(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : `${a}/${b}`;
}

/**
 * gobwas/glob without separators, as Argo CD's util/glob.Match calls it: `*` (and `**`) any run of
 * characters, slashes included; `?` one character; `[abc]`, `[a-z]`, `[!abc]`; `{a,b}`
 * alternatives; `\\` escapes. A pattern that does not compile matches nothing (Argo CD logs it and
 * answers false). The pattern comes from the cluster: matched without a regular expression, in time
 * proportional to pattern times text, with at most 64 brace alternatives.
 */
export function globMatch(pattern: string, text: string): boolean {
  if (pattern.length > 1024) return false;
  const alternatives = expandBraces(pattern);
  if (alternatives === undefined) return false;
  for (const alternative of alternatives) {
    const tokens = globTokens(alternative);
    if (tokens === undefined) return false;
    if (tokensMatch(tokens, text)) return true;
  }
  return false;
}

type GlobToken =
  | { readonly t: 'char'; readonly c: string }
  | { readonly t: 'any' }
  | { readonly t: 'one' }
  | { readonly t: 'class'; readonly negate: boolean; readonly ranges: readonly [string, string][] };

const MAX_ALTERNATIVES = 64;

/** `a{b,c}d` as [`abd`, `acd`] (nested braces too); an escaped brace stays; undefined: unbalanced or too many. */
function expandBraces(pattern: string): string[] | undefined {
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '{') {
      open = i;
      break;
    } else if (pattern[i] === '}') return undefined;
  }
  if (open < 0) return [pattern];
  // The matching close, and the top-level commas between.
  let depth = 0;
  const cuts: number[] = [];
  let close = -1;
  for (let i = open + 1; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) {
        close = i;
        break;
      }
      depth--;
    } else if (c === ',' && depth === 0) cuts.push(i);
  }
  if (close < 0) return undefined;
  const bounds = [open, ...cuts, close];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const out: string[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const expanded = expandBraces(head + pattern.slice(bounds[k]! + 1, bounds[k + 1]) + tail);
    if (expanded === undefined) return undefined;
    out.push(...expanded);
    if (out.length > MAX_ALTERNATIVES) return undefined;
  }
  return out;
}

function globTokens(pattern: string): GlobToken[] | undefined {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[++i];
      if (next === undefined) return undefined;
      tokens.push({ t: 'char', c: next });
    } else if (c === '*') {
      while (pattern[i + 1] === '*') i++;
      tokens.push({ t: 'any' });
    } else if (c === '?') tokens.push({ t: 'one' });
    else if (c === '[') {
      let j = i + 1;
      const negate = pattern[j] === '!';
      if (negate) j++;
      const ranges: [string, string][] = [];
      for (; j < pattern.length && pattern[j] !== ']'; j++) {
        let lo = pattern[j]!;
        if (lo === '\\') lo = pattern[++j] ?? '';
        if (pattern[j + 1] === '-' && pattern[j + 2] !== undefined && pattern[j + 2] !== ']') {
          ranges.push([lo, pattern[j + 2]!]);
          j += 2;
        } else ranges.push([lo, lo]);
      }
      if (j >= pattern.length || ranges.length === 0) return undefined;
      tokens.push({ t: 'class', negate, ranges });
      i = j;
    } else tokens.push({ t: 'char', c });
  }
  return tokens;
}

/** Wildcard matching by dynamic programming over (token, character): no backtracking. */
function tokensMatch(tokens: readonly GlobToken[], text: string): boolean {
  // can[j]: the tokens so far can match text[0..j).
  let can = new Array<boolean>(text.length + 1).fill(false);
  can[0] = true;
  for (const token of tokens) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    if (token.t === 'any') {
      let reached = false;
      for (let j = 0; j <= text.length; j++) {
        reached = reached || can[j]!;
        next[j] = reached;
      }
    } else {
      for (let j = 0; j < text.length; j++) {
        if (!can[j]) continue;
        const ch = text[j]!;
        const ok =
          token.t === 'one' ||
          (token.t === 'char' && token.c === ch) ||
          (token.t === 'class' && token.ranges.some(([lo, hi]) => lo <= ch && ch <= hi) !== token.negate);
        if (ok) next[j + 1] = true;
      }
    }
    can = next;
  }
  return can[text.length]!;
}

// ---------------------------------------------------------------------------------------------
// The controllers' objects as sources, and the applier of a file

/**
 * The sources of an Argo CD Application as the cluster answered it (hostile input: checked for
 * type, bounded): `spec.source` and each of `spec.sources` with a repository URL and a path (a
 * chart source has no folder of the repository), with its directory options.
 */
export function applicationSources(app: JsonValue | undefined): RepositorySource[] {
  const policy = applicationPolicy(app);
  if (!policy || !isJsonObject(app)) return [];
  const spec = isJsonObject(app.spec) ? app.spec : {};
  const raw = [
    ...(isJsonObject(spec.source) ? [spec.source] : []),
    ...(Array.isArray(spec.sources) ? spec.sources : []),
  ];
  return raw.slice(0, 64).flatMap((s): RepositorySource[] => {
    if (!isJsonObject(s) || typeof s.repoURL !== 'string' || typeof s.path !== 'string') return [];
    const d = isJsonObject(s.directory) ? s.directory : undefined;
    const directory = d
      ? {
          ...(d.recurse === true ? { recurse: true } : {}),
          ...(typeof d.include === 'string' && d.include !== '' ? { include: d.include } : {}),
          ...(typeof d.exclude === 'string' && d.exclude !== '' ? { exclude: d.exclude } : {}),
        }
      : undefined;
    return [
      {
        applier: { kind: 'argocd', name: policy.name, namespace: policy.namespace },
        repoURL: s.repoURL,
        path: s.path,
        ...(directory ? { directory } : {}),
      },
    ];
  });
}

/**
 * The source of a Flux Kustomization: its `spec.path` in the GitRepository its `spec.sourceRef`
 * names (in the Kustomization's namespace unless it says another), whose `spec.url` is the
 * repository. Undefined for another kind of source (OCIRepository, Bucket) or a GitRepository not given.
 */
export function kustomizationSource(
  kustomization: JsonValue | undefined,
  gitRepositories: readonly JsonValue[],
): RepositorySource | undefined {
  const policy = kustomizationPolicy(kustomization);
  if (!policy || !isJsonObject(kustomization)) return undefined;
  const spec = isJsonObject(kustomization.spec) ? kustomization.spec : {};
  const ref = isJsonObject(spec.sourceRef) ? spec.sourceRef : undefined;
  if (!ref || ref.kind !== 'GitRepository' || typeof ref.name !== 'string') return undefined;
  const namespace = typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : policy.namespace;
  const repository = gitRepositories.find((g) => {
    if (!isJsonObject(g) || g.kind !== 'GitRepository' || !isJsonObject(g.metadata)) return false;
    return g.metadata.name === ref.name && g.metadata.namespace === namespace;
  });
  const url = isJsonObject(repository) && isJsonObject(repository.spec) ? repository.spec.url : undefined;
  if (typeof url !== 'string') return undefined;
  return {
    applier: { kind: 'flux-kustomize', name: policy.name, namespace: policy.namespace },
    repoURL: url,
    path: policy.path,
  };
}

/**
 * The GitOps controller that sends a file, from the sources that hold it (sourcesOfFile) and the
 * policies of their objects: the first whose controller sends the file as written or through a
 * kustomization (a chart's file is rendered by Helm: not this). Argo CD applies server-side with
 * `ServerSideApply=true`. Undefined when no source holds the file: then kubectl applies it.
 */
export function applierOfSources(
  matches: readonly SourceMatch[],
  policies: readonly ApplierPolicy[],
): ControllerApplier | undefined {
  for (const match of matches) {
    if (match.how === 'rendered' && match.by === 'chart') continue;
    const { kind, name, namespace } = match.source.applier;
    const policy = policies.find((p) => p.kind === kind && p.name === name && p.namespace === namespace);
    const shown = `${kind === 'argocd' ? 'Argo CD Application' : 'Flux Kustomization'} ${namespace}/${name} (path ${match.source.path || '.'} of ${match.source.repoURL})`;
    if (kind === 'argocd') {
      const ssa = policy?.kind === 'argocd' && policy.serverSideApply;
      return { name: ssa ? 'argocd-ssa' : 'argocd', ...(policy ? { policy } : {}), because: shown };
    }
    return { name: 'flux', ...(policy ? { policy } : {}), because: shown };
  }
  return undefined;
}

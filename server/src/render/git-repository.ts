// The Git repository a file is in, as far as a GitOps controller's source is concerned: the folder at
// its top, the file's path from there, and the URLs of its remotes. Read from the repository's
// config file as text — git itself is never run (a repository's config can name programs to run,
// and an untrusted workspace must run none) — through the small-file reader, so a hostile `.git`
// (a FIFO, a huge file, a link loop) costs one refused read. The URLs are only compared with the
// controllers' own (core/gitops/repository.ts); nothing is fetched from them.
import * as path from 'node:path';
import {
  isControllerName,
  type ApplierPolicy,
  type ApplierSetting,
  type ControllerApplier,
} from '../core/gitops/model';
import { kustomizationFileNames } from '../core/sources/file-kinds';
import { applierOfSources, sourcesOfFile, type RepositorySource } from '../core/gitops/repository';
import { isDirectory, isRegularFile, toSlashes } from './paths';
import { readSmallText } from './small-file';

export interface GitRepository {
  /** The folder holding `.git`. */
  readonly top: string;
  /** The file's path from `top`, `/`-separated. */
  readonly path: string;
  /** The remotes' URLs, `origin` first, then in the config's order. */
  readonly remotes: readonly string[];
}

const MAX_LEVELS = 64;
const MAX_CONFIG_BYTES = 256 * 1024;

/** The repository holding `file` (an absolute path), or undefined when it is in none or its config cannot be read. */
export function gitRepositoryOf(file: string): GitRepository | undefined {
  let dir = path.dirname(path.resolve(file));
  for (let level = 0; level < MAX_LEVELS; level++) {
    const dotGit = path.join(dir, '.git');
    const gitDir = isDirectory(dotGit) ? dotGit : isRegularFile(dotGit) ? linkedGitDir(dotGit) : undefined;
    if (gitDir) {
      const remotes = remotesOf(gitDir);
      if (!remotes) return undefined;
      return { top: dir, path: toSlashes(path.relative(dir, path.resolve(file))), remotes };
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** A `.git` file (a worktree, a submodule) names the real folder: `gitdir: <path>`. */
function linkedGitDir(dotGit: string): string | undefined {
  const text = readSmallText(dotGit, { maxBytes: 4096 });
  const named = text && /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
  if (!named) return undefined;
  const dir = path.resolve(path.dirname(dotGit), named);
  return isDirectory(dir) ? dir : undefined;
}

/** The remote URLs of a git folder's config; a worktree's own config defers to the common folder's. */
function remotesOf(gitDir: string): string[] | undefined {
  const own = readSmallText(path.join(gitDir, 'config'), { maxBytes: MAX_CONFIG_BYTES });
  const remotes = own === undefined ? [] : remotesInConfig(own);
  if (remotes.length > 0) return remotes;
  const common = readSmallText(path.join(gitDir, 'commondir'), { maxBytes: 4096 })?.trim();
  if (common) {
    const shared = readSmallText(path.join(path.resolve(gitDir, common), 'config'), { maxBytes: MAX_CONFIG_BYTES });
    if (shared !== undefined) return remotesInConfig(shared);
  }
  return own === undefined ? undefined : remotes;
}

/**
 * The `url` of every `[remote "NAME"]` section of a git config text, `origin` first. Git's syntax
 * (git-config(1)): sections in brackets (also the old `[remote.NAME]`), `key = value`, values
 * optionally in double quotes with backslash escapes, comments after `#` or `;`.
 */
export function remotesInConfig(text: string): string[] {
  const found: { remote: string; url: string }[] = [];
  let remote: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      const section =
        /^\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]/i.exec(line) ?? /^\[\s*remote\.([^\]\s]+)\s*\]/i.exec(line);
      remote = section ? section[1]!.replace(/\\(.)/g, '$1') : undefined;
      continue;
    }
    if (remote === undefined) continue;
    const entry = /^url\s*=\s*(.*)$/i.exec(line);
    if (!entry) continue;
    const url = configValue(entry[1]!);
    if (url) found.push({ remote, url });
  }
  return [...found.filter((f) => f.remote === 'origin'), ...found.filter((f) => f.remote !== 'origin')].map(
    (f) => f.url,
  );
}

function configValue(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return out.trim();
}

/** The controllers' sources as the cluster layer read them (cluster/gitops.ts repositorySources). */
export interface ControllerSources {
  readonly sources: readonly RepositorySource[];
  readonly policies: readonly ApplierPolicy[];
}

/**
 * The applier a file's objects are checked as (`--applier`, `kubeConflictHints.applier`): a
 * controller named outright; for `auto`, the Flux Kustomization or Argo CD Application whose
 * source is the file's repository (one of its remotes) and whose path holds the file
 * (core/gitops/repository.ts: each controller's own rules), its policy with it; else none —
 * kubectl (or Helm) applies it, as the user's own settings say. The one path of the command line
 * (which waits for the sources) and the editor (which peeks at them: undefined while unread).
 */
export function applierOfFile(
  setting: ApplierSetting,
  file: string,
  text: string | undefined,
  sources: ControllerSources | undefined,
): ControllerApplier | undefined {
  if (isControllerName(setting)) return { name: setting, because: `the applier is set to ${setting}` };
  if (setting !== 'auto' || !sources || sources.sources.length === 0) return undefined;
  const repository = gitRepositoryOf(file);
  if (!repository || repository.remotes.length === 0) return undefined;
  const folder = (rel: string) => path.join(repository.top, ...rel.split('/').filter((p) => p !== ''));
  const matches = sourcesOfFile(
    { remotes: repository.remotes, path: repository.path, ...(text !== undefined ? { text } : {}) },
    sources.sources,
    {
      hasKustomization: (rel) => kustomizationFileNames.some((n) => isRegularFile(path.join(folder(rel), n))),
      hasChart: (rel) => isRegularFile(path.join(folder(rel), 'Chart.yaml')),
    },
  );
  return applierOfSources(matches, sources.policies);
}

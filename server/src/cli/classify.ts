// What each file the check reads is (core/sources/file-kinds.ts decides), with the context that decision
// needs read from disk: the Chart.yaml and kustomization files in the folders above each file, so
// that `check chart/templates/deployment.yaml` knows it names a template even when the chart's
// other files are not named.
import * as path from 'node:path';
import {
  classifyFiles,
  isKustomizationFileName,
  kustomizationFileNames,
  kustomizeRoots,
  type FileKind,
  type KnownFile,
} from '../core/sources/file-kinds';
import { readTextFile, stdinTarget } from './files';
import { folderEntries, isRegularFile, toSlashes } from '../render/paths';

const CONTEXT_NAMES = ['Chart.yaml', ...kustomizationFileNames];
/** Folders above a file that are searched for a chart or a kustomization. */
const MAX_ANCESTORS = 32;

/** Kinds of `files` (as named), their texts given; the standard input is always a plain manifest. */
export function classifyInputs(
  texts: ReadonlyMap<string, string>,
  around: ReadonlyMap<string, string> = new Map(),
): Map<string, FileKind> {
  const { known, absoluteOf } = knownFiles(texts, around);
  const kinds = classifyFiles([...known.values()]);
  const result = new Map<string, FileKind>();
  for (const file of texts.keys()) {
    result.set(
      file,
      file === stdinTarget ? { kind: 'manifest' } : (kinds.get(absoluteOf.get(file)!) ?? { kind: 'manifest' }),
    );
  }
  return result;
}

/**
 * The files named, the Chart.yaml and kustomization files in the folders above them, and `around`
 * (kustomizations found elsewhere: the overlays that may use a named file).
 */
function knownFiles(
  texts: ReadonlyMap<string, string>,
  around: ReadonlyMap<string, string> = new Map(),
): { known: Map<string, KnownFile>; absoluteOf: Map<string, string> } {
  const known = new Map<string, KnownFile>();
  const absoluteOf = new Map<string, string>();
  for (const [file, text] of texts) {
    if (file === stdinTarget) continue;
    const absolute = toSlashes(path.resolve(file));
    absoluteOf.set(file, absolute);
    known.set(absolute, { path: absolute, text });
  }
  for (const [file, text] of around) if (!known.has(file)) known.set(file, { path: file, text });
  const searched = new Set<string>();
  for (const absolute of [...known.keys()]) {
    let dir = path.posix.dirname(absolute);
    for (let i = 0; i < MAX_ANCESTORS && !searched.has(dir); i++) {
      searched.add(dir);
      for (const name of CONTEXT_NAMES) {
        const candidate = dir === '/' ? `/${name}` : `${dir}/${name}`;
        if (known.has(candidate) || !isRegularFile(candidate)) continue;
        // Context that cannot be read is context not known: the file is judged without it.
        const read = readTextFile(candidate);
        if (read.ok) known.set(candidate, { path: candidate, text: read.text });
      }
      const parent = path.posix.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return { known, absoluteOf };
}

/** Why a file is not checked from its own text, in the words the output uses; undefined for a manifest. */
export function notCheckedNote(kind: FileKind, shown: (absolute: string) => string): string | undefined {
  const prefix = 'not checked yet: rendered source';
  switch (kind.kind) {
    case 'manifest':
    case 'other':
      return undefined;
    case 'kustomization':
      return `${prefix} (a kustomization)`;
    case 'kustomization-input':
      return `${prefix} (a ${kind.role.replace('-', ' ')} of ${kind.usedBy.map(shown).join(', ')})`;
    case 'helm-chart':
      return `${prefix} (${helmRoleWords[kind.role]} of the Helm chart ${shown(kind.chart)}/)`;
  }
}

const helmRoleWords: Record<Extract<FileKind, { kind: 'helm-chart' }>['role'], string> = {
  chart: 'the Chart.yaml',
  values: 'a values file',
  template: 'a template',
  helpers: 'a helpers template',
  crd: 'a CRD',
  other: 'a file',
};

/**
 * For each file that is a kustomization or a file one uses, the kustomization folders (absolute) to
 * build to check it: the overlays above it among the files named and the kustomizations found
 * around them.
 */
export function kustomizeTargets(
  texts: ReadonlyMap<string, string>,
  kinds: ReadonlyMap<string, FileKind>,
  around: ReadonlyMap<string, string> = new Map(),
): Map<string, string[]> {
  const known = knownFiles(texts, around);
  const out = new Map<string, string[]>();
  for (const [file, kind] of kinds) {
    if (kind.kind !== 'kustomization' && kind.kind !== 'kustomization-input') continue;
    out.set(file, kustomizeRoots([...known.known.values()], known.absoluteOf.get(file)!));
  }
  return out;
}

/** How far `check` looks for the overlays that use a named file: folders deep, and folders in all. */
export const overlaySearchLimits = { depth: 8, directories: 2000 } as const;
const skippedFolders = new Set(['node_modules', 'vendor']);

/**
 * The kustomization files under `root` (absolute `/` path → text): where the overlays that use a
 * named base or patch live, in sibling folders the user did not name. Bounded: `overlaySearchLimits`,
 * hidden folders, node_modules and vendor skipped, links not followed (no loops, nothing outside).
 * Files that cannot be read are left out, as unknown context.
 */
export function findKustomizations(
  root: string,
  limits: { depth: number; directories: number } = overlaySearchLimits,
): Map<string, string> {
  const found = new Map<string, string>();
  let queue: string[] = [path.resolve(root)];
  let visited = 0;
  for (let depth = 0; depth <= limits.depth && queue.length > 0; depth++) {
    const next: string[] = [];
    for (const dir of queue) {
      if (visited++ >= limits.directories) return found;
      for (const e of folderEntries(dir)) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (!e.name.startsWith('.') && !skippedFolders.has(e.name)) next.push(full);
        } else if (e.isFile() && isKustomizationFileName(e.name)) {
          const read = readTextFile(full);
          if (read.ok) found.set(toSlashes(full), read.text);
        }
      }
    }
    queue = next.sort();
  }
  return found;
}

// Rendering a kustomization with the user's own tool: `kustomize build DIR` (the binary the user
// named, else `kustomize` on PATH), else `kubectl kustomize DIR`. The text predicted on is the plain
// build's output, exactly what `kubectl apply -k` would send. A second build through a wrapper
// kustomization in a temporary folder (`buildMetadata: [originAnnotations]`) says which file or
// generator each object comes from; its annotations never reach the prediction. The files the
// kustomizations name are read here so that core/sources/kustomize-map.ts can map fields to lines.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { kustomizationFileNames, kustomizationRefs } from '../core/sources/file-kinds';
import {
  identityOf,
  kustomizationFileIn,
  kustomizeSourceMap,
  parseKustomizeOrigins,
  type KustomizeOrigin,
} from '../core/sources/kustomize-map';
import type { RenderTarget } from '../core/sources/source-map';
import { parseManifestText } from '../core/manifest/manifest';
import type { Renderer, RenderResult, RenderSettings } from './renderer';
import { runTool, toolOptions, type ToolResult } from './run-tool';
import { isDirectory, isRegularFile, toSlashes } from './paths';
import { readSmallText } from './small-file';

/** A source file larger than this is not read for the map (the command line's own file limit). */
const MAX_SOURCE_BYTES = 32 * 1024 * 1024;
const sourceFile = { maxBytes: MAX_SOURCE_BYTES };
const MAX_FILES = 5000;

export const kustomizeRenderer: Renderer = { render: renderKustomization };

interface Tool {
  readonly command: string;
  readonly args: (dir: string) => string[];
  readonly shown: string;
}

function toolsFor(settings: RenderSettings): Tool[] {
  const kubectl = settings.kubectl || 'kubectl';
  const kustomize: Tool[] = settings.kustomize
    ? [{ command: settings.kustomize, args: (d) => ['build', d], shown: `${settings.kustomize} build` }]
    : [{ command: 'kustomize', args: (d) => ['build', d], shown: 'kustomize build' }];
  // A binary the user named is the one to use: no quiet fallback to another tool.
  return settings.kustomize
    ? kustomize
    : [...kustomize, { command: kubectl, args: (d) => ['kustomize', d], shown: `${kubectl} kustomize` }];
}

/** The kustomization file of a folder on disk (`/`-separated): the first of kustomize's names, in its order, that is a regular file. */
export function kustomizationFileOf(dir: string): string | undefined {
  return kustomizationFileNames.map((n) => toSlashes(path.join(dir, n))).find(isRegularFile);
}

export async function renderKustomization(target: RenderTarget, settings: RenderSettings): Promise<RenderResult> {
  const root = target.root;
  const { files: read, refused } = readKustomization(root, settings.workspace);
  if (kustomizationFileIn(toSlashes(root), read) === undefined && refused.length === 0) {
    return {
      ok: false,
      problem: { kind: 'invalid-target', command: 'kustomize', message: `no kustomization.yaml in ${root}` },
    };
  }
  // Not built at all: kustomize refuses most of these itself, but a folder outside the checked one
  // it would build, and what it printed would then be shown.
  if (refused.length > 0)
    return {
      ok: false,
      problem: {
        kind: 'refused',
        command: 'kustomize',
        message: `${refused[0]}${refused.length > 1 ? ` (and ${refused.length - 1} more)` : ''}`,
      },
    };
  let plain: ToolResult | undefined;
  let tool: Tool | undefined;
  const missing: string[] = [];
  for (const t of toolsFor(settings)) {
    plain = await runTool({ command: t.command, args: t.args(root), cwd: root, ...toolOptions(settings) });
    if (plain.ok || plain.problem.kind !== 'not-installed') {
      tool = t;
      break;
    }
    missing.push(t.command);
  }
  if (!plain || !tool) {
    const names =
      missing.length > 1
        ? `neither ${missing.join(' nor ')} is installed`
        : `${missing[0]} is not installed or cannot be run`;
    return { ok: false, problem: { kind: 'not-installed', command: missing[0] ?? 'kustomize', message: names } };
  }
  if (!plain.ok) return plain;

  const origins = await buildOrigins(tool, root, settings);
  const rendered = parseManifestText(plain.stdout).resources;
  const notes: string[] = [...plain.notes];
  // Pair the two builds by position, as long as the identities agree (they are the same build, with
  // annotations added); else by identity.
  const byIdentity = new Map(origins.map((o) => [o.identity, o.origin]));
  const paired: (KustomizeOrigin | undefined)[] = rendered.map((r, i) =>
    origins[i]?.identity === identityOf(r) ? origins[i]!.origin : byIdentity.get(identityOf(r)),
  );
  if (origins.length === 0 && rendered.length > 0)
    notes.push(
      `${target.label}: kustomize did not say where its objects come from; findings stay on the kustomization`,
    );
  const sourceMap = kustomizeSourceMap({ target, rendered, origins: paired, files: read });
  return { ok: true, text: plain.stdout, sourceMap, notes, command: `${tool.shown} ${root}` };
}

async function buildOrigins(
  tool: Tool,
  root: string,
  settings: RenderSettings,
): Promise<{ identity: string; origin?: KustomizeOrigin }[]> {
  let wrapper: string | undefined;
  try {
    wrapper = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'kch-kustomize-')));
    // kustomize refuses an absolute path as a resource; a relative one may lead anywhere.
    const relative = toSlashes(path.relative(wrapper, root));
    fs.writeFileSync(
      path.join(wrapper, 'kustomization.yaml'),
      `resources:\n- ${JSON.stringify(relative)}\nbuildMetadata:\n- originAnnotations\n`,
      { mode: 0o600 },
    );
    const annotated = await runTool({
      command: tool.command,
      args: tool.args(wrapper),
      cwd: root,
      ...toolOptions(settings),
    });
    return annotated.ok ? parseKustomizeOrigins(annotated.stdout, toSlashes(wrapper)) : [];
  } catch {
    return [];
  } finally {
    if (wrapper) fs.rmSync(wrapper, { recursive: true, force: true });
  }
}

/**
 * The kustomization files under `root` and every local file they name, recursively (bases,
 * components, patches, resources): absolute `/` paths → texts. Unreadable, special or huge files
 * are left out; the map then knows less, and kustomize itself says what it could not read.
 */
export function readKustomizationFiles(root: string, workspace?: string): Map<string, string> {
  return readKustomization(root, workspace).files;
}

/**
 * What `readKustomizationFiles` reads, and the references it would not follow. It reads as
 * kustomize loads (its default LoadRestrictionsRootOnly, api/internal/loader): a file must be in or
 * below the folder of the kustomization that names it, after links are followed; a folder named is
 * a kustomization of its own, a root again, which must be inside the checked folder (`workspace`;
 * the overlay's own folder when the overlay is not inside it; anywhere when none is given). So a
 * repository's `resources: [../../../../etc/passwd]`, an absolute path or a link out is a reference
 * refused, not a file read.
 */
export function readKustomization(root: string, workspace?: string): { files: Map<string, string>; refused: string[] } {
  const files = new Map<string, string>();
  const refused: string[] = [];
  const visited = new Set<string>();
  const top = realOf(path.resolve(root));
  if (top === undefined) return { files, refused };
  const checked = workspace !== undefined ? realOf(path.resolve(workspace)) : undefined;
  // Folders may be anywhere only when no checked folder is known (kustomize's own rule).
  const boundary = workspace === undefined ? undefined : checked !== undefined && within(top, checked) ? checked : top;
  const start = toSlashes(path.resolve(root));
  const shown = (file: string) => path.posix.relative(start, file) || file;
  // `dir` as the references spell it (the source map speaks those paths), `real` with links followed.
  const visitDir = (dir: string, real: string, depth: number) => {
    if (depth > 64 || visited.has(real) || files.size > MAX_FILES) return;
    visited.add(real);
    for (const name of kustomizationFileNames) {
      const file = `${dir}/${name}`;
      const realFile = realOf(file);
      if (realFile === undefined) continue;
      if (!within(realFile, real)) {
        refused.push(`${shown(file)} leads out of its folder`);
        break;
      }
      const text = readSmallText(realFile, sourceFile);
      if (text === undefined) continue;
      files.set(file, text);
      for (const ref of kustomizationRefs(text)) {
        const named = toSlashes(path.resolve(dir, ref.path));
        const target = realOf(named);
        // What is not there is kustomize's to report.
        if (target === undefined) continue;
        // A checkout's .git is in or below an overlay at the root of its repository, and its config
        // holds the token CI checked out with: a generator would print it.
        if (
          toSlashes(path.relative(top, target)).split('/').includes('.git') ||
          toSlashes(named).split('/').includes('.git')
        ) {
          refused.push(`${JSON.stringify(ref.path)} in ${shown(file)} is inside a .git folder`);
          continue;
        }
        if (isDirectory(target)) {
          if (boundary === undefined || within(target, boundary)) visitDir(named, target, depth + 1);
          else refused.push(`${JSON.stringify(ref.path)} in ${shown(file)} is a folder outside the checked folder`);
        } else if (!within(target, real)) {
          refused.push(
            `${JSON.stringify(ref.path)} in ${shown(file)} is not in or below the folder of that kustomization`,
          );
        } else if (!files.has(named)) {
          const t = readSmallText(target, sourceFile);
          if (t !== undefined) files.set(named, t);
        }
      }
      break;
    }
  };
  visitDir(start, top, 0);
  return { files, refused };
}

/** The real path (links followed), or undefined when there is nothing there. */
function realOf(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`);
}

// Render targets: what a rendered source is judged as, and what each target sends — one home for the
// editor (lsp/rendered.ts, which keeps its caching, watching and LSP parts) and the command line
// (cli/check.ts for overlays, cli/check-helm.ts for charts), so that both render the same chart as
// the same release and the same overlay from the same files, and judge the same objects:
//   - a chart file is rendered with its top chart (a subchart by the chart that holds it), as the
//     release the user names or the cluster holds it as (render/helm.ts renderInstalledChart), and
//     what Helm sends is every object but its hooks, with the release's ownership metadata, in the
//     mode of the user's Helm (core/findings/rendered.ts helmApply);
//   - an overlay is built with the user's kustomize, and its output is read as a manifest stream;
//     text that is not YAML is a failed render, shown on the overlay's kustomization.
import * as path from 'node:path';
import { helmApply, sentResource, type RenderedApply, type RenderFailureSource } from '../core/findings';
import { parseManifestText, type ManifestResource } from '../core/manifest/manifest';
import { kustomizationFileNames } from '../core/sources/file-kinds';
import type { ReleasePlace } from '../core/sources/helm-release';
import { kustomizationFileIn } from '../core/sources/kustomize-map';
import type { RenderTarget } from '../core/sources/source-map';
import { chartName, type HelmRenderResult } from './helm';
import { kustomizationFileOf, readKustomizationFiles, renderKustomization } from './kustomize';
import { isRegularFile, toSlashes } from './paths';
import type { RenderProblem, RenderResult, RenderSettings } from './renderer';

/**
 * Subchart levels looked up for the chart that holds a file's chart: far more than charts nest, a
 * bound on a hostile tree. The command line's classifier sees Chart.yaml files that far up (32
 * folders), so no subchart it can name is rendered alone for want of looking.
 */
const MAX_SUBCHART_LEVELS = 16;

/**
 * The chart that is installed for a chart folder: a subchart (`PARENT/charts/NAME/`, where PARENT
 * holds a Chart.yaml) is rendered by its parent, with the parent's values, never alone — as Helm
 * installs it. `within` says which parents may be looked at (the editor's workspace folders: a
 * render reads nothing outside them); the command line renders what the user named, anywhere.
 * `/`-separated and absolute.
 */
export function topChart(chart: string, within?: (folder: string) => boolean): string {
  let top = toSlashes(path.resolve(chart));
  for (let i = 0; i < MAX_SUBCHART_LEVELS; i++) {
    const charts = path.posix.dirname(top);
    const parent = path.posix.dirname(charts);
    if (path.posix.basename(charts) !== 'charts' || parent === charts || !isRegularFile(`${parent}/Chart.yaml`)) break;
    if (within && !within(parent)) break;
    top = parent;
  }
  return top;
}

/**
 * Which release a chart is rendered as: what the user named (release, namespace), and the guess
 * when the cluster does not say (the chart's name; the user's namespace, else the context's, else
 * `default`), as `helm install` without options would install it. Both named: the cluster is not
 * asked (core/sources/helm-release.ts findRelease).
 */
export function chartRelease(
  chart: string,
  user: { readonly release?: string | undefined; readonly namespace?: string | undefined },
  defaultNamespace: string,
): { named: Partial<ReleasePlace>; guess: ReleasePlace } {
  const named = {
    ...(user.release ? { release: user.release } : {}),
    ...(user.namespace ? { namespace: user.namespace } : {}),
  };
  const guess = {
    release: user.release || (chartName(chart) ?? path.posix.basename(toSlashes(path.resolve(chart)))),
    namespace: user.namespace || defaultNamespace,
  };
  return { named, guess };
}

/**
 * What Helm sends of a chart it rendered: every object but the hooks (Helm creates them at hook
 * time, not with the release: not predicted), in the release's namespace with the release's
 * ownership metadata, sent as the user's Helm sends (field manager `helm`; Helm 4 server-side
 * apply, Helm 3 a client-side update).
 */
export function sentByHelm(
  out: Extract<HelmRenderResult, { ok: true }>,
  severity?: RenderedApply['settings']['severity'],
): { apply: RenderedApply; resources: ManifestResource[] } {
  const apply = helmApply({ release: out.release, namespace: out.namespace, major: out.helm.major }, severity);
  return {
    apply,
    resources: out.resources.filter((r) => !out.hooks.has(r.documentIndex)).map((r) => sentResource(r, apply)),
  };
}

export type OverlayRender =
  | {
      readonly ok: true;
      readonly result: Extract<RenderResult, { ok: true }>;
      readonly resources: readonly ManifestResource[];
      readonly read: ReadonlyMap<string, string>;
    }
  /** The tool is missing or refused the overlay. */
  | {
      readonly ok: false;
      readonly problem: RenderProblem;
      readonly source: RenderFailureSource;
      readonly read: ReadonlyMap<string, string>;
    }
  /** The tool printed text that is not YAML: `unreadable` says so. */
  | {
      readonly ok: false;
      readonly problem?: undefined;
      readonly unreadable: string;
      readonly source: RenderFailureSource;
      readonly read: ReadonlyMap<string, string>;
    };

/**
 * An overlay built with the user's kustomize, its output read as the manifest stream that would be
 * applied. `read`: the files the overlay reads, read before the build (so that a change during it
 * is one the caller can tell was not read); `source`: where a failure is shown.
 */
export async function renderOverlay(target: RenderTarget, tools: RenderSettings): Promise<OverlayRender> {
  const read = readKustomizationFiles(target.root, tools.workspace);
  const out = await renderKustomization(target, tools);
  if (!out.ok) return { ok: false, problem: out.problem, source: overlayFailureSource(target.root, read), read };
  const parsed = parseManifestText(out.text);
  if (parsed.problems.length > 0)
    return {
      ok: false,
      unreadable: `${out.command} printed text that is not YAML: ${parsed.problems[0]!.message}`,
      source: overlayFailureSource(target.root, read),
      read,
    };
  return { ok: true, result: out, resources: parsed.resources, read };
}

/**
 * Where a failed render of an overlay is shown (core/findings/render-failure.ts): its
 * kustomization, with its text as the render's own reading found it (the place of an entry
 * kustomize could not read is looked up in it).
 */
export function overlayFailureSource(root: string, read?: ReadonlyMap<string, string>): RenderFailureSource {
  const kustomization = (read && kustomizationFileIn(root, read)) ?? overlayKustomization(root);
  const text = read?.get(kustomization);
  return { tool: 'kustomize', kustomization, ...(text !== undefined ? { kustomizationText: text } : {}) };
}

/** The kustomization file of an overlay's folder (kustomize's names, in its order); the first name when none is there. */
export function overlayKustomization(root: string): string {
  return kustomizationFileOf(root) ?? `${root}/${kustomizationFileNames[0]}`;
}

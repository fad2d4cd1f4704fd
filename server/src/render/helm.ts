// Rendering a Helm chart with the user's own helm: `helm template RELEASE CHART --namespace NS
// [--values F]...`, and the source map from each rendered field back to the template line and
// values line that set it (core/sources/helm-map.ts). `helm version` says which Helm it is, and so
// how it will send the objects (docs/helm.md has what the API server records for each):
//   Helm 4: server-side apply, field manager `helm`, force=false: a field another manager owns with
//           another value fails the upgrade with the API server's 409;
//   Helm 3: a create, then three-way strategic-merge patches (Update operations) as `helm`: no
//           field conflicts; what another manager changed is overwritten.
// Both add the release's ownership metadata to every object before sending it, so the prediction
// runs on the objects as sent (helmAppliedObject).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { helmSends } from '../core/findings';
import { parseManifestText, type ManifestResource } from '../core/manifest/manifest';
import { helmSourceMap } from '../core/sources/helm-map';
import {
  findRelease,
  placeKey,
  releaseLabel,
  type ReleaseFound,
  type ReleasePlace,
  type ReleaseSearch,
} from '../core/sources/helm-release';
import type { RenderTarget } from '../core/sources/source-map';
import type { RenderProblem, RenderResult, RenderSettings } from './renderer';
import { folderEntries } from './paths';
import { runTool, toolOptions } from './run-tool';
import { readSmallText } from './small-file';

export interface HelmRenderRequest {
  /** The chart folder (the one holding Chart.yaml). */
  readonly chart: string;
  /** Default: the chart's name (Chart.yaml `name`). */
  readonly release?: string;
  /** The release's namespace: the caller's default (the context's namespace, else `default`). */
  readonly namespace: string;
  /** `--values` files in order (the last wins); none means the chart's own values.yaml alone. */
  readonly valuesFiles?: readonly string[];
}

export interface HelmApplyMode {
  readonly major: 3 | 4;
  /** `v4.3.2`, as `helm version` prints it. */
  readonly version: string;
  readonly fieldManager: 'helm';
  readonly mode: 'serverSide' | 'clientSide';
}

export type HelmRenderResult =
  | (Extract<RenderResult, { ok: true }> & {
      readonly release: string;
      readonly namespace: string;
      readonly helm: HelmApplyMode;
      /** The rendered objects (as the manifest parser reads the stream), by document index. */
      readonly resources: readonly ManifestResource[];
      /** Documents Helm sends at hook time (`helm.sh/hook`), not with the release: not predicted. */
      readonly hooks: ReadonlySet<number>;
    })
  | { readonly ok: false; readonly problem: RenderProblem };

/** A chart folder and its subcharts hold a few hundred files at most; more is not a chart. */
const MAX_CHART_FILES = 2000;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const chartFile = { maxBytes: MAX_FILE_BYTES };
/** Entries looked at for links out of a chart: far more than a chart holds, a bound on a hostile one. */
const MAX_LINK_SCAN = 20_000;

/** Which Helm the binary is, and so how it sends objects. */
export async function helmApplyMode(
  settings: RenderSettings,
): Promise<{ ok: true; helm: HelmApplyMode } | { ok: false; problem: RenderProblem }> {
  const command = settings.helm || 'helm';
  const ran = await runTool({
    command,
    args: ['version', '--template', '{{.Version}}'],
    cwd: process.cwd(),
    ...toolOptions(settings),
    timeoutMs: settings.timeoutMs ?? 20_000,
  });
  if (!ran.ok) return { ok: false, problem: ran.problem };
  const version = ran.stdout.trim();
  const major = /^v?(\d+)\./.exec(version)?.[1];
  if (major !== '3' && major !== '4') {
    return {
      ok: false,
      problem: {
        kind: 'invalid-target',
        command,
        message: `${command} says it is Helm ${JSON.stringify(version.slice(0, 40))}: only Helm 3 and Helm 4 are known`,
      },
    };
  }
  const sends = helmSends(major === '4' ? 4 : 3);
  return {
    ok: true,
    helm: { major: major === '4' ? 4 : 3, version, fieldManager: sends.fieldManager, mode: sends.applyMode },
  };
}

export async function renderHelm(request: HelmRenderRequest, settings: RenderSettings): Promise<HelmRenderResult> {
  const command = settings.helm || 'helm';
  const root = path.resolve(request.chart);
  const name = chartName(root);
  const release = request.release ?? name ?? path.basename(root);
  if (name === undefined) {
    return {
      ok: false,
      problem: {
        kind: 'invalid-target',
        command,
        message: `${request.chart} is not a Helm chart (no Chart.yaml with a name)`,
      },
    };
  }
  const mode = await helmApplyMode(settings);
  if (!mode.ok) return mode;
  // Helm reads every file of the chart folder, following links (its sympath.Walk), and a template
  // may print any of them (`.Files.Get`): a link that leads out of the chart, or a checkout's `.git`
  // (whose config holds the credential CI checked out with), would put what it holds into the
  // output, and so into the findings. Such a chart is not rendered.
  const out = unsafeChartFiles(root);
  if (out.length > 0) {
    return {
      ok: false,
      problem: {
        kind: 'refused',
        command,
        message: `${out[0]}${out.length > 1 ? ` (and ${out.length - 1} more)` : ''}`,
      },
    };
  }

  const valuesFiles = (request.valuesFiles ?? []).map((f) => path.resolve(f));
  const args = [
    'template',
    release,
    root,
    '--namespace',
    request.namespace,
    ...valuesFiles.flatMap((f) => ['--values', f]),
  ];
  // Chart tests run only on `helm test`: they are never part of what an install or upgrade sends.
  args.push('--skip-tests');
  const ran = await runTool({ command, args, cwd: root, ...toolOptions(settings) });
  if (!ran.ok) return { ok: false, problem: ran.problem };

  const files = readChartFiles(root);
  for (const f of valuesFiles) {
    const text = readSmallText(f, chartFile);
    if (text !== undefined) files.set(toSlash(f), text);
  }
  const { resources } = parseManifestText(ran.stdout);
  const sourceMap = helmSourceMap(resources, {
    root: toSlash(root),
    files,
    valuesFiles: valuesFiles.map(toSlash),
    release,
    namespace: request.namespace,
  });
  const hooks = new Set<number>();
  for (const r of resources) {
    const annotations = (r.object.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
    if (annotations && typeof annotations === 'object' && 'helm.sh/hook' in annotations) hooks.add(r.documentIndex);
  }
  const notes = [
    ...ran.notes,
    ...(hooks.size > 0
      ? [
          `${hooks.size} hook object${hooks.size === 1 ? '' : 's'} (helm.sh/hook) not checked: Helm creates them at hook time, not with the release`,
        ]
      : []),
  ];
  const shown = [
    'helm',
    ...args.slice(0, 3).map((a, i) => (i === 2 ? path.relative(process.cwd(), root) || '.' : a)),
    ...args.slice(3),
  ].join(' ');
  return {
    ok: true,
    text: ran.stdout,
    sourceMap,
    notes,
    command: shown,
    release,
    namespace: request.namespace,
    helm: mode.helm,
    resources,
    hooks,
  };
}

/**
 * The chart rendered as the release the cluster holds it as (core/sources/helm-release.ts
 * `findRelease`): the editor's and the command line's one way to render a chart. `out` is the render
 * of the release found, failed or not (its failure is the chart's to show).
 */
export async function renderInstalledChart(
  request: {
    chart: string;
    valuesFiles: readonly string[];
    named: Partial<ReleasePlace>;
    guess: ReleasePlace;
    remembered?: ReleasePlace;
  },
  settings: RenderSettings,
  sightings: ReleaseSearch<Extract<HelmRenderResult, { ok: true }>>['sightings'],
): Promise<{ found: ReleaseFound<Extract<HelmRenderResult, { ok: true }>>; out: HelmRenderResult }> {
  const renders = new Map<string, HelmRenderResult>();
  const found = await findRelease({
    chartName: chartName(request.chart) ?? request.guess.release,
    named: request.named,
    guess: request.guess,
    ...(request.remembered ? { remembered: request.remembered } : {}),
    render: async (place) => {
      const out = await renderHelm(
        { chart: request.chart, namespace: place.namespace, valuesFiles: request.valuesFiles, release: place.release },
        settings,
      );
      renders.set(placeKey(place), out);
      return out.ok ? out : undefined;
    },
    sightings,
  });
  return { found, out: renders.get(placeKey(found.place))! };
}

/**
 * The release as messages name it (`release web in namespace shop`, or `release web` before its
 * namespace is settled), for a chart folder and an optional release name.
 */
export function helmTarget(chart: string, release?: string, namespace?: string): RenderTarget {
  const root = path.resolve(chart);
  const name = release ?? chartName(root) ?? path.basename(root);
  return {
    kind: 'helm',
    root: toSlash(root),
    label: namespace === undefined ? `release ${name}` : releaseLabel({ release: name, namespace }),
  };
}

/** The chart's name (Chart.yaml `name`): the release's name unless one is given. Undefined when the folder holds no chart. */
export function chartName(chart: string): string | undefined {
  const text = readSmallText(path.join(path.resolve(chart), 'Chart.yaml'), chartFile);
  return text === undefined ? undefined : /^name:[ \t]*["']?([^"'\s#]+)/m.exec(text)?.[1];
}

/** Chart.yaml, values files and templates of the chart and its unpacked subcharts, by `/` path. */
export function readChartFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (dir: string, depth: number) => {
    if (depth > 8 || files.size >= MAX_CHART_FILES) return;
    for (const e of folderEntries(dir)) {
      const p = path.join(dir, e.name);
      // Links are not followed: a chart's files are its own.
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) visit(p, depth + 1);
      } else if (e.isFile() && /\.(ya?ml|tpl|json)$/.test(e.name)) {
        const text = readSmallText(p, chartFile);
        if (text !== undefined) files.set(toSlash(p), text);
      }
      if (files.size >= MAX_CHART_FILES) return;
    }
  };
  visit(root, 0);
  return files;
}

/**
 * Why helm must not load the chart folder, one line each: the links in it (its subcharts and
 * hidden folders included: helm loads them all) that lead out of it, a `.git` that `.helmignore`
 * does not leave out, a chart too large to look through.
 */
export function unsafeChartFiles(root: string): string[] {
  let real: string;
  try {
    real = fs.realpathSync(root);
  } catch {
    return [];
  }
  const inside = (p: string) => p === real || p.startsWith(`${real}${path.sep}`);
  const out: string[] = [];
  const gits: string[] = [];
  let seen = 0;
  const visit = (dir: string, depth: number): void => {
    for (const e of folderEntries(dir)) {
      if (++seen > MAX_LINK_SCAN) return;
      const p = path.join(dir, e.name);
      if (e.name === '.git') gits.push(toSlash(path.relative(root, p)));
      if (e.isSymbolicLink()) {
        let target: string | undefined;
        try {
          target = fs.realpathSync(p);
        } catch {
          // A dangling link: helm says so itself.
        }
        // Said with the link's own text: where it really leads is not the repository's to learn.
        if (target !== undefined && !inside(target))
          out.push(`${toSlash(path.relative(root, p))} is a link out of the chart (${JSON.stringify(linkText(p))})`);
      } else if (e.isDirectory() && e.name !== '.git' && depth < 64) {
        // A linked folder that stays inside is walked as itself.
        visit(p, depth + 1);
      }
    }
  };
  visit(root, 0);
  if (seen > MAX_LINK_SCAN) out.push(`the chart folder holds more than ${MAX_LINK_SCAN} entries`);
  if (gits.length > 0 && !ignoresGit(readSmallText(path.join(root, '.helmignore'), chartFile) ?? '')) {
    out.push(
      `the chart folder holds ${gits[0]}, which helm would load and a template could print (add .git/ to .helmignore, as helm create does)`,
    );
  }
  return out;
}

/**
 * Whether `.helmignore` leaves every `.git` out: a line `.git`, `.git/` or `.*` (helm matches a
 * pattern without a slash against the base name at any depth), and no `!` line that could take
 * one back.
 */
function ignoresGit(helmignore: string): boolean {
  const lines = helmignore.split('\n').map((l) => l.trim());
  return lines.some((l) => l === '.git' || l === '.git/' || l === '.*') && !lines.some((l) => l.startsWith('!'));
}

function linkText(p: string): string {
  try {
    return fs.readlinkSync(p);
  } catch {
    return '?';
  }
}

function toSlash(p: string): string {
  return p.split(path.sep).join('/');
}

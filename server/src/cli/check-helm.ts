// `check --helm CHART`: the chart rendered by the user's helm, each object predicted as that Helm
// sends it (Helm 4: a server-side apply as `helm`; Helm 3: an update as `helm`; docs/helm.md), with
// the release's ownership metadata Helm adds, and Helm's own ownership check; each finding then
// moved to the template line that writes the field and the values line it reads.
import * as path from 'node:path';
import {
  definedKinds,
  releaseOriginFinding,
  withDefinedKinds,
  type AnalysisSettings,
  type DefinedKind,
} from '../core/findings';
import type { CheckedObject } from './report';
import type { ClusterConnection, ClusterProblem } from '../cluster';
import { helmTarget, renderInstalledChart } from '../render/helm';
import { chartRelease, sentByHelm } from '../render/targets';
import type { ReleasePlace } from '../core/sources/helm-release';
import { describeRenderProblem, type RenderSettings } from '../render/renderer';
import type { ObjectReads } from './facts';
import { displayPath } from './files';
import { judgeRenderedObject, renderFailureEntries } from './rendered-objects';
import { toSlashes } from '../render/paths';

export interface HelmCheckRequest {
  readonly charts: readonly string[];
  readonly valuesFiles: readonly string[];
  readonly release?: string;
  /** The release namespace: `-n`, else the context's namespace, else `default`. */
  readonly namespace: string;
  /** What the user named (--release, -n): both named, the cluster is not asked where the chart is installed. */
  readonly named?: Partial<ReleasePlace>;
  readonly settings: RenderSettings;
  /**
   * Charts the user did not name with --helm (their files are among the files checked): without
   * helm each is a tool-missing finding, listed as not judged, not a stop, since the user's plain
   * manifests are still checked.
   */
  readonly withoutHelm?: 'usage' | 'finding';
}

export type HelmCheckOutcome =
  | {
      ok: true;
      objects: CheckedObject[];
      charts: string[];
      apply?: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'>;
    }
  | { ok: false; problem: ClusterProblem }
  | { ok: false; usage: string };

export async function checkHelmCharts(
  request: HelmCheckRequest,
  /** The facts of each object; one the cluster refuses to let be read is listed as not judged. */
  reads: ObjectReads,
  severity: AnalysisSettings['severity'],
  /** --verify: each object's dry run, sent as the user's Helm sends it. */
  verifier?: ClusterConnection,
  /** The kinds CRDs among the other files checked define (a chart's own CRDs are added to them). */
  defined: readonly DefinedKind[] = [],
): Promise<HelmCheckOutcome> {
  const objects: CheckedObject[] = [];
  const charts: string[] = [];
  let apply: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'> | undefined;
  for (const chart of request.charts) {
    const target = helmTarget(chart, request.release);
    // The release and namespace: those named (--release, -n), else the cluster's, as the editor finds them (core/sources/helm-release.ts).
    const { named, guess } = chartRelease(
      chart,
      { release: request.release, namespace: request.named?.namespace },
      request.namespace,
    );
    const { found, out: result } = await renderInstalledChart(
      { chart, valuesFiles: request.valuesFiles, named, guess },
      request.settings,
      (kinds) => reads.helmSightings(kinds),
    );
    charts.push(path.resolve(chart));
    if (!result.ok) {
      // Without helm (or naming a folder that is no chart) nothing can be checked: one line, exit 2.
      // A chart helm refuses (a template error) is that chart's error; the other charts go on.
      if (result.problem.kind === 'not-installed' || result.problem.kind === 'invalid-target') {
        if (request.withoutHelm !== 'finding')
          return { ok: false, usage: describeRenderProblem(target, result.problem) };
        if (result.problem.kind === 'invalid-target') {
          const note = `not checked: ${describeRenderProblem(target, result.problem)}`;
          objects.push({ ...chartNote(chart, target.label, note), notJudged: note });
          continue;
        }
        // Without helm none of the charts renders: each is a tool-missing warning on its Chart.yaml,
        // as the editor shows it, and none of them is judged.
        for (const c of request.charts.slice(request.charts.indexOf(chart))) {
          const other = helmTarget(c, request.release);
          const root = toSlashes(path.resolve(c));
          const message = `cannot render ${other.label}: ${result.problem.message.split('\n')[0]!.trim()} (install helm, or check the chart with --helm CHART --helm-binary FILE)`;
          objects.push(
            ...renderFailureEntries(
              { tool: 'helm', chart: root, valuesFiles: [] },
              `${other.label} (${displayPath(root)})`,
              message,
              result.problem.message,
              'tool-missing',
            ),
          );
        }
        charts.push(...request.charts.map((c) => path.resolve(c)));
        break;
      }
      const root = toSlashes(path.resolve(chart));
      // On Chart.yaml, and on the template or values line helm names.
      objects.push(
        ...renderFailureEntries(
          { tool: 'helm', chart: root, valuesFiles: request.valuesFiles.map((f) => toSlashes(path.resolve(f))) },
          `${target.label} (${displayPath(root)})`,
          describeRenderProblem(target, result.problem),
          result.problem.message,
        ),
      );
      continue;
    }
    const { apply: applied, resources } = sentByHelm(result, severity);
    const sent = {
      ...applied,
      settings: withDefinedKinds(applied.settings, [
        ...defined,
        ...definedKinds(result.resources, result.sourceMap.target.label),
      ]),
    };
    const settings = sent.settings;
    apply = { fieldManager: settings.fieldManager, applyMode: settings.applyMode };
    const label = `${result.sourceMap.target.label} (Helm ${result.helm.major}: ${result.helm.mode === 'serverSide' ? 'server-side apply' : 'client-side update'} as ${result.helm.fieldManager})`;
    // What Helm sends: the rendered objects but its hooks, with the release's ownership metadata, in the release's namespace.
    await reads.expect(resources);
    for (const resource of resources) {
      const judged = await judgeRenderedObject(reads, {
        resource,
        apply: sent,
        sourceMap: result.sourceMap,
        label,
        rendered: {
          target: result.sourceMap.target.label,
          root: displayPath(path.resolve(chart)),
          index: resource.documentIndex,
        },
        verifier,
      });
      if (!judged.ok) return judged;
      objects.push(...judged.entries);
    }
    for (const note of result.notes)
      objects.push({
        file: displayPath(path.resolve(chart)),
        title: `${target.label} (${displayPath(path.resolve(chart))})`,
        findings: [],
        notes: [note],
      });
    // How the release was settled, on Chart.yaml: one of several, or none found.
    const said = releaseOriginFinding(found.origin, found.place, {
      start: { line: 0, character: 0 },
      end: { line: 0, character: 0 },
    });
    if (said)
      objects.push({
        file: displayPath(path.join(path.resolve(chart), 'Chart.yaml')),
        title: `${result.sourceMap.target.label} (${displayPath(path.resolve(chart))})`,
        findings: [said],
        notes: [],
      });
  }
  return { ok: true, objects, charts, ...(apply ? { apply } : {}) };
}

function chartNote(chart: string, label: string, note: string): CheckedObject {
  const root = path.resolve(chart);
  return { file: displayPath(root), title: `${label} (${displayPath(root)})`, findings: [], notes: [note] };
}

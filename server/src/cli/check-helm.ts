// `check --helm CHART`: the chart rendered by the user's helm, each object predicted as that Helm
// sends it (Helm 4: a server-side apply as `helm`; Helm 3: an update as `helm`; docs/helm.md), with
// the release's ownership metadata Helm adds, and Helm's own ownership check; each finding then
// moved to the template line that writes the field and the values line it reads.
import * as path from 'node:path';
import { objectIdentity, type AnalysisSettings, type Finding } from '../core/findings/analysis';
import { helmApply, renderedObjectFindings, sentResource } from '../core/findings/rendered';
import type { CheckedObject } from './report';
import type { ClusterProblem } from '../cluster';
import { helmTarget, renderHelm } from '../render/helm';
import { describeRenderProblem, type RenderSettings } from '../render/renderer';
import type { FactsReader } from './facts';
import { displayPath } from './files';

export interface HelmCheckRequest {
  readonly charts: readonly string[];
  readonly valuesFiles: readonly string[];
  readonly release?: string;
  /** The release namespace: `-n`, else the context's namespace, else `default`. */
  readonly namespace: string;
  readonly settings: RenderSettings;
}

export type HelmCheckOutcome =
  | { ok: true; objects: CheckedObject[]; charts: string[]; apply?: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'> }
  | { ok: false; problem: ClusterProblem }
  | { ok: false; usage: string };

export async function checkHelmCharts(request: HelmCheckRequest, reader: FactsReader, severity: AnalysisSettings['severity']): Promise<HelmCheckOutcome> {
  const objects: CheckedObject[] = [];
  const charts: string[] = [];
  let apply: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'> | undefined;
  for (const chart of request.charts) {
    const target = helmTarget(chart, request.release);
    const result = await renderHelm({ chart, namespace: request.namespace, valuesFiles: request.valuesFiles, ...(request.release !== undefined ? { release: request.release } : {}) }, request.settings);
    if (!result.ok) return { ok: false, usage: describeRenderProblem(target, result.problem) };
    charts.push(path.resolve(chart));
    const rendered = helmApply({ release: result.release, namespace: result.namespace, major: result.helm.major }, severity);
    apply = { fieldManager: rendered.settings.fieldManager, applyMode: rendered.settings.applyMode };
    const label = `${result.sourceMap.target.label} (Helm ${result.helm.major}: ${result.helm.mode === 'serverSide' ? 'server-side apply' : 'client-side update'} as ${result.helm.fieldManager})`;
    for (const object of result.resources) {
      if (result.hooks.has(object.documentIndex)) continue;
      const resource = sentResource(object, rendered);
      const answer = await reader.read(resource);
      if (!answer.ok) return { ok: false, problem: answer.problem };
      const moved = renderedObjectFindings(resource, answer.facts, rendered, result.sourceMap);
      const origin = result.sourceMap.objects.find((o) => o.index === resource.documentIndex)?.origin;
      const byFile = new Map<string, Finding[]>();
      if (origin) byFile.set(origin.file, []);
      for (const { source, rendered: _rendered, ...f } of moved) byFile.set(source.file, [...(byFile.get(source.file) ?? []), f]);
      for (const [file, list] of byFile) {
        objects.push({
          file: displayPath(file),
          object: objectIdentity(resource),
          title: `${answer.title} in ${label}`,
          findings: list,
          notes: file === origin?.file ? answer.notes : [],
          rendered: { target: result.sourceMap.target.label, root: displayPath(path.resolve(chart)), index: resource.documentIndex },
        });
      }
    }
    for (const note of result.notes) objects.push({ file: displayPath(path.resolve(chart)), title: `${target.label} (${displayPath(path.resolve(chart))})`, findings: [], notes: [note] });
  }
  return { ok: true, objects, charts, ...(apply ? { apply } : {}) };
}

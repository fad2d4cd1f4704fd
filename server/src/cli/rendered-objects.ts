// The report entries of one rendered object (an overlay's, a chart's): one per source file that its
// findings or its dry-run differences land on, and the object itself at its origin. One place for
// the command line's overlays and charts, so both report a rendered object alike.
import {
  differenceFindings,
  objectIdentity,
  relocateFindings,
  renderFailureFindings,
  renderFailurePlaces,
  type Finding,
  type RelocatedFinding,
  type RenderFailureSource,
} from '../core/findings';
import type { LocateOptions, ManifestResource } from '../core/manifest/manifest';
import type { SourceMap } from '../core/sources/source-map';
import { displayPath } from './files';
import type { CheckedObject, RenderedFrom, Verification } from './report';

export interface RenderedObjectReport {
  readonly resource: ManifestResource;
  /** Its findings, already on their source lines. */
  readonly findings: readonly RelocatedFinding[];
  /** --verify: the server's answer, compared on the rendered object. */
  readonly verification: Verification | undefined;
  readonly sourceMap: SourceMap;
  readonly options: LocateOptions;
  readonly title: string;
  /** Notes of the object (not in the snapshot, no schema), shown once, at its origin. */
  readonly notes: readonly string[];
  /** Why the object was not judged, when the facts did not let it be (core/findings/analysis.ts `unjudgedOn`): on each of its entries. */
  readonly notJudged?: string;
  readonly rendered: RenderedFrom;
  /** Only the entries on these source files (absolute, `/`-separated); all when absent. */
  readonly wanted?: ReadonlySet<string>;
}

export function renderedObjectEntries(r: RenderedObjectReport): CheckedObject[] {
  const { resource, verification } = r;
  // A difference goes to the source line of its field, as findings do.
  const differences = verification
    ? relocateFindings(differenceFindings(verification), resource, resource.documentIndex, r.sourceMap, r.options)
    : [];
  const origin = r.sourceMap.objects.find((o) => o.index === resource.documentIndex)?.origin;
  const byFile = new Map<string, Finding[]>();
  if (origin) byFile.set(origin.file, []);
  for (const { source, rendered: _rendered, ...f } of r.findings)
    byFile.set(source.file, [...(byFile.get(source.file) ?? []), f]);
  for (const d of differences) if (!byFile.has(d.source.file)) byFile.set(d.source.file, []);
  const entries: CheckedObject[] = [];
  for (const [file, list] of byFile) {
    if (r.wanted && !r.wanted.has(file)) continue;
    const here = differences
      .filter((d) => d.source.file === file)
      .map((d) => ({ message: d.message, range: d.range, ...(d.path !== undefined ? { path: d.path } : {}) }));
    entries.push({
      file: displayPath(file),
      object: objectIdentity(resource),
      title: r.title,
      findings: list,
      ...(verification ? { verification: { ...verification, differences: here } } : {}),
      notes: file === origin?.file ? r.notes : [],
      rendered: r.rendered,
      ...(r.notJudged !== undefined ? { notJudged: r.notJudged } : {}),
    });
  }
  return entries;
}

/**
 * A chart or an overlay the tool refused: one `render-failed` error (`tool-missing` when there is no
 * tool to run) on its Chart.yaml or kustomization, and one where the tool's words (`toolMessage`) name a place — a template's line, a
 * values file's — as the editor shows it (core/findings/render-failure.ts).
 */
export function renderFailureEntries(
  source: RenderFailureSource,
  title: string,
  message: string,
  toolMessage: string,
  code: 'render-failed' | 'tool-missing' = 'render-failed',
): CheckedObject[] {
  return renderFailureFindings(code, renderFailurePlaces(source, toolMessage), message).map(({ file, ...finding }) => ({
    file: displayPath(file),
    title,
    findings: [finding],
    notes: [],
  }));
}

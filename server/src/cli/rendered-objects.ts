// The report entries of one rendered object (an overlay's, a chart's): one per source file that its
// findings or its dry-run differences land on, and the object itself at its origin. One place for
// the command line's overlays and charts, so both report a rendered object alike.
import {
  appliedBy,
  differenceFindings,
  locateOptions,
  objectIdentity,
  relocateFindings,
  renderedObjectAnalysis,
  unjudgedOn,
  type RenderedApply,
  renderFailureFindings,
  renderFailurePlaces,
  type AppliedBy,
  type Finding,
  type RelocatedFinding,
  type RenderFailureSource,
} from '../core/findings';
import type { LocateOptions, ManifestResource } from '../core/manifest/manifest';
import type { SourceMap } from '../core/sources/source-map';
import { verifyResource, type ClusterConnection, type ClusterProblem } from '../cluster';
import { objectTitle, type ObjectReads } from './facts';
import { displayPath } from './files';
import { liveOf, withAppliers, withReason, type CheckedObject, type RenderedFrom, type Verification } from './report';

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
  /** Who applies the live object (core/findings/applied-by.ts): on each of its entries. */
  readonly appliedBy?: readonly AppliedBy[];
  readonly rendered: RenderedFrom;
  /** Whether the rendered object exists in the cluster, when the facts said. */
  readonly live?: 'exists' | 'absent';
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
      ...(r.live !== undefined ? { live: r.live } : {}),
      ...(r.notJudged !== undefined ? { notJudged: r.notJudged } : {}),
      ...withAppliers(r.appliedBy ?? []),
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

/** One rendered object to judge: what its target sends, and where its entries go. */
export interface RenderedObjectJudgement {
  readonly resource: ManifestResource;
  /** What the target sends and how (an overlay: as the user applies; a chart: as their Helm does). */
  readonly apply: RenderedApply;
  readonly sourceMap: SourceMap;
  /** The target as the report names it (`release web in namespace shop (Helm 4: …)`). */
  readonly label: string;
  readonly rendered: RenderedFrom;
  readonly wanted?: ReadonlySet<string>;
  /** --verify: the connection the dry runs go to. */
  readonly verifier: ClusterConnection | undefined;
}

/**
 * One rendered object judged, for an overlay's and a chart's objects alike: its facts read (a
 * refused read makes it not judged, the others go on), the analysis of what its target sends, the
 * findings moved onto the source lines, and --verify's dry run of the object as sent, in the
 * target's mode, compared with the findings on the rendered object before they moved.
 */
export async function judgeRenderedObject(
  reads: ObjectReads,
  j: RenderedObjectJudgement,
): Promise<{ ok: true; entries: CheckedObject[] } | { ok: false; problem: ClusterProblem }> {
  const { resource, apply, sourceMap, label, rendered } = j;
  const wanted = j.wanted ? { wanted: j.wanted } : {};
  const answer = await reads.read(resource);
  if (!answer.ok) {
    if (!('refused' in answer)) return { ok: false, problem: answer.problem };
    const entries = renderedObjectEntries({
      resource,
      findings: [],
      verification: undefined,
      sourceMap,
      options: locateOptions(resource, undefined),
      title: `${objectTitle(resource, undefined, '')} in ${label}`,
      notes: [],
      notJudged: answer.refused,
      rendered,
      ...wanted,
    });
    return { ok: true, entries };
  }
  const facts = answer.facts;
  const found = renderedObjectAnalysis(resource, facts, apply);
  const options = locateOptions(resource, facts.schema);
  const verified = j.verifier
    ? await verifyResource(j.verifier, resource, found, facts, apply.settings)
    : { ok: true as const, verification: undefined };
  if (!verified.ok) return { ok: false, problem: verified.problem };
  const entries = renderedObjectEntries({
    resource,
    findings: relocateFindings(found, resource, resource.documentIndex, sourceMap, options),
    verification: verified.verification,
    sourceMap,
    options,
    title: `${answer.title} in ${label}`,
    notes: answer.notes,
    ...liveOf(facts),
    ...withReason(unjudgedOn(resource, facts, apply.settings)),
    appliedBy: appliedBy(facts),
    rendered,
    ...wanted,
  });
  return { ok: true, entries };
}

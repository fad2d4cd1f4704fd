// What one run of `check` found, before it is printed: every file, every object in it with its
// findings, notes and (with --verify) the server's dry-run answer. The printers (format-*.ts) turn
// this one record into text, JSON, SARIF, GitHub annotations or a GitLab Code Quality report.
import type { Finding, ObjectIdentity, Severity } from '../core/findings/analysis';
import type { ForcePreview } from '../core/findings/force-preview';
import type { ApplyMode } from '../core/ssa/predict';

// The dry-run comparison is the editor's too (core/findings/verification.ts): its records, as reported.
import type { Verification } from '../core/findings/verification';
export type { Verification, VerificationDifference } from '../core/findings/verification';

/** One object of a checked file, or the text problems of a file (then without `object`). */
export interface CheckedObject {
  /** The file as the user named it: relative to the working directory when inside it, `/` separated. */
  readonly file: string;
  readonly object?: ObjectIdentity;
  /** How kubectl names it: `deployments.apps/web (namespace default)`; the file for text problems. */
  readonly title: string;
  readonly findings: readonly Finding[];
  readonly verification?: Verification;
  /** Why the object could not be checked fully (not in the snapshot, no schema for its group-version). */
  readonly notes: readonly string[];
  /**
   * What `kubectl apply --server-side --force-conflicts` would take from each other manager and
   * who takes it back: set for an object with a field conflict (core/findings/force-preview.ts).
   */
  readonly forcePreview?: ForcePreview;
  /** Set when the object was rendered (an overlay, a chart): `file` is then the source file the findings are on. */
  readonly rendered?: RenderedFrom;
}

/** The rendered object a source file's findings were found on. */
export interface RenderedFrom {
  /** As messages name it: `overlay production`, `release web`. */
  readonly target: string;
  /** The kustomization folder or chart, as `file` is written. */
  readonly root: string;
  /** The object's document in the rendered stream (zero-based). */
  readonly index: number;
}

export type ReportSource =
  | { readonly kind: 'cluster'; readonly context: string; readonly server: string }
  | { readonly kind: 'snapshot'; readonly directory: string; readonly context?: string; readonly server?: string };

export interface CheckReport {
  readonly mode: ApplyMode;
  readonly fieldManager: string;
  readonly source: ReportSource;
  readonly files: readonly string[];
  readonly objects: readonly CheckedObject[];
}

export interface ReportSummary {
  readonly errors: number;
  readonly warnings: number;
  readonly information: number;
  /** Objects whose dry run the server answered differently from the prediction. */
  readonly disagreements: number;
  readonly objects: number;
  readonly files: number;
}

export function summarize(report: CheckReport): ReportSummary {
  const counts: Record<Severity, number> = { error: 0, warning: 0, information: 0 };
  let disagreements = 0;
  // A rendered object whose findings land in several source files is one object (and one disagreement).
  const disagreeing = new Set<string>();
  for (const o of report.objects) {
    for (const f of o.findings) counts[f.severity]++;
    if (o.verification && !o.verification.agrees) {
      const key = o.rendered ? renderedKey(o.rendered) : undefined;
      if (!key || !disagreeing.has(key)) disagreements++;
      if (key) disagreeing.add(key);
      counts.error += o.verification.differences.length;
    }
  }
  return {
    errors: counts.error,
    warnings: counts.warning,
    information: counts.information,
    disagreements,
    objects: countObjects(report.objects),
    files: report.files.length,
  };
}

function renderedKey(rendered: RenderedFrom): string {
  return JSON.stringify([rendered.root, rendered.target, rendered.index]);
}

/**
 * Objects checked: a rendered object whose findings land in several source files (a patch, the
 * base, the kustomization) is listed once per file but is one object of one overlay.
 */
function countObjects(objects: readonly CheckedObject[]): number {
  const rendered = new Set<string>();
  let plain = 0;
  for (const o of objects) {
    if (!o.object) continue;
    if (o.rendered) rendered.add(renderedKey(o.rendered));
    else plain++;
  }
  return plain + rendered.size;
}

/** 0 clean, 1 when something would fail or deserves a look (errors, warnings); information alone is clean. */
export function exitCodeFor(summary: ReportSummary): 0 | 1 {
  return summary.errors + summary.warnings > 0 ? 1 : 0;
}

/** What the facts were read from, as the summary lines say it. */
export function againstWhat(source: ReportSource): string {
  return source.kind === 'cluster' ? `context ${source.context}` : `snapshot ${source.directory}`;
}

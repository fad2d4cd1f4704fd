// What one run of `check` found, before it is printed: every file, every object in it with its
// findings, notes and (with --verify) the server's dry-run answer. The printers (format-*.ts) turn
// this one record into text, JSON, SARIF, GitHub annotations or a GitLab Code Quality report.
import {
  meansNotJudged,
  type AppliedBy,
  type ContextTrouble,
  type FieldState,
  type ResourceFacts,
  type Finding,
  type FindingCode,
  type ForcePreview,
  type ObjectIdentity,
  type Severity,
  type Verification,
} from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import type { ApplyMode } from '../core/ssa/predict';

// The dry-run comparison is the editor's too (core/findings/verification.ts): its records, as reported.
export type { Verification, VerificationDifference } from '../core/findings';

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
  /**
   * Why the object, or the input (then without `object`), was not judged when no finding says so:
   * facts the cluster or the snapshot did not give (core/findings/analysis.ts `unjudgedOn`), a
   * rendered source no overlay or chart renders. A finding whose code means not judged (the
   * catalogue's mark) says it by itself.
   */
  readonly notJudged?: string;
  /** Whether the object exists in the cluster (or snapshot) it was judged against, when the facts said. */
  readonly live?: 'exists' | 'absent';
  /**
   * The fields the manifest sets as this cluster holds them ('missing': the object is not there),
   * kept only when several contexts are compared (cli/fleet.ts); never printed as such.
   */
  readonly fields?: readonly FieldState[] | 'missing';
  /** The kubeconfig context the entry was judged against, when the check asked several (cli/fleet.ts). */
  readonly context?: string;
  /**
   * Who really applies the live object (an Argo CD Application, a Flux Kustomization or HelmRelease,
   * a Helm release) and its policy, as the editor's hover says (core/findings/applied-by.ts).
   */
  readonly appliedBy?: readonly AppliedBy[];
}

/** `[prod] deployments.apps/web (namespace default)`: an entry's title, naming its context in a fleet check. */
export function titleOf(o: Pick<CheckedObject, 'title' | 'context'>): string {
  return o.context !== undefined ? `[${o.context}] ${o.title}` : o.title;
}

/** Whether the object exists, as an entry records it when the facts say. */
export function liveOf(facts: Pick<ResourceFacts, 'live'>): Pick<CheckedObject, 'live'> {
  return facts.live.state === 'exists' || facts.live.state === 'absent' ? { live: facts.live.state } : {};
}

/** `{ appliedBy }` for an entry when a tool is seen applying the object, else nothing. */
export function withAppliers(appliers: readonly AppliedBy[]): { appliedBy?: readonly AppliedBy[] } {
  return appliers.length > 0 ? { appliedBy: appliers } : {};
}

/** `{ notJudged }` for an entry when there is a reason, else nothing. */
export function withReason(reason: string | undefined): { notJudged?: string } {
  return reason !== undefined ? { notJudged: reason } : {};
}

/** An object or an input the check did not judge, and why: one line of the summary's list. */
export interface NotJudged {
  readonly file: string;
  /** Where, when a finding says it. */
  readonly range?: Range;
  readonly title: string;
  /** The finding that says it, when one does. */
  readonly code?: FindingCode;
  readonly reason: string;
  /** The context it was not judged in, in a fleet check. */
  readonly context?: string;
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
  | { readonly kind: 'snapshot'; readonly directory: string; readonly context?: string; readonly server?: string }
  /** Several contexts at once (cli/fleet.ts): each entry of the report names its own. */
  | { readonly kind: 'fleet'; readonly contexts: readonly FleetContext[] };

/** One context of a fleet check, and whether it could be judged at all. */
export interface FleetContext {
  readonly context: string;
  /** What the facts were read from: a cluster or a snapshot, as for one context. */
  readonly source?: Exclude<ReportSource, { kind: 'fleet' }>;
  /** Why nothing was judged in this context (unreachable, refused, timed out): absent when it was judged. */
  readonly problem?: { readonly state: ContextTrouble; readonly message: string };
}

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
  /** Objects read from the files and renders, judged or not. */
  readonly objects: number;
  /** Objects judged: every object but those listed as not judged. */
  readonly judged: number;
  /** Objects and inputs not judged (the length of `notJudged(report)`). */
  readonly notJudged: number;
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
      const key = o.rendered ? renderedKey(o.rendered, o.context) : undefined;
      if (!key || !disagreeing.has(key)) disagreements++;
      if (key) disagreeing.add(key);
      counts.error += o.verification.differences.length;
    }
  }
  const { objects, judged } = countObjects(report.objects);
  return {
    errors: counts.error,
    warnings: counts.warning,
    information: counts.information,
    disagreements,
    objects,
    judged,
    notJudged: notJudged(report).length,
    files: report.files.length,
  };
}

/** One rendered object of one context: its entries in several source files share it. */
function renderedKey(rendered: RenderedFrom, context: string | undefined): string {
  return JSON.stringify([rendered.root, rendered.target, rendered.index, context ?? null]);
}

/** Whether an entry says its object or input was not judged: a finding of a code that means it, or a reason. */
function unjudged(o: CheckedObject): boolean {
  return o.notJudged !== undefined || o.findings.some((f) => meansNotJudged(f.code));
}

/**
 * Objects checked, and those of them judged: a rendered object whose findings land in several
 * source files (a patch, the base, the kustomization) is listed once per file but is one object of
 * one overlay, not judged when any of its entries says so.
 */
function countObjects(objects: readonly CheckedObject[]): { objects: number; judged: number } {
  const rendered = new Map<string, boolean>();
  let plain = 0;
  let plainJudged = 0;
  for (const o of objects) {
    if (!o.object) continue;
    if (o.rendered) {
      const key = renderedKey(o.rendered, o.context);
      rendered.set(key, (rendered.get(key) ?? true) && !unjudged(o));
    } else {
      plain++;
      if (!unjudged(o)) plainJudged++;
    }
  }
  return { objects: plain + rendered.size, judged: plainJudged + [...rendered.values()].filter(Boolean).length };
}

/**
 * Every object and input not judged, with why, in the report's order: each finding whose code
 * means it (the catalogue's `notJudged` mark, which the editor's document state reads too), and each
 * entry's own reason. A failure shown in two places (a chart's Chart.yaml and the template line
 * helm names) is one input, listed at the place the tool named.
 */
export function notJudged(report: CheckReport): NotJudged[] {
  const listed = new Map<string, NotJudged>();
  for (const [i, o] of report.objects.entries()) {
    // A plain object is one entry; a rendered object's entries share its key; an input's entries its title.
    const which = o.rendered ? renderedKey(o.rendered, o.context) : o.object ? i : '';
    const context = o.context !== undefined ? { context: o.context } : {};
    for (const f of o.findings) {
      if (!meansNotJudged(f.code)) continue;
      const key = JSON.stringify([o.title, f.code, f.message, which, o.context]);
      // The later place is the one the tool's words name (render-failure.ts lists the source's own file first).
      listed.delete(key);
      listed.set(key, { file: o.file, range: f.range, title: o.title, code: f.code, reason: f.message, ...context });
    }
    if (o.notJudged !== undefined) {
      const key = JSON.stringify([o.title, '', o.notJudged, which, o.context]);
      if (!listed.has(key)) listed.set(key, { file: o.file, title: o.title, reason: o.notJudged, ...context });
    }
  }
  return [...listed.values()];
}

/**
 * 0 clean, 1 when something would fail or deserves a look (errors, warnings) or was not judged;
 * information alone is clean. What was not judged is never counted as clean.
 */
export function exitCodeFor(summary: ReportSummary): 0 | 1 {
  return summary.errors + summary.warnings > 0 || summary.notJudged > 0 ? 1 : 0;
}

/** What the facts were read from, as the summary lines say it. */
export function againstWhat(source: ReportSource): string {
  switch (source.kind) {
    case 'cluster':
      return `context ${source.context}`;
    case 'snapshot':
      return `snapshot ${source.directory}`;
    case 'fleet':
      return `${source.contexts.length} contexts (${source.contexts.map((c) => c.context).join(', ')})`;
  }
}

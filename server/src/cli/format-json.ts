// `--format json`: the public, versioned record of a check, described by
// schemas/findings.schema.json. Every field is copied here by name from the internal records, never
// spread: a field added to Finding (or to any record it holds) for the editor's sake stays out of
// the output until it is added here and to the schema.
//
// Versioning, as the schema's `version` says: it changes when a field changes meaning or
// disappears; a new optional field does not change it. So a new field (say, the rendered source a
// finding came from) is added as an optional property of the schema's `finding` and one line in
// publicFinding below, with version 1 kept; renaming, retyping or removing a field means version 2.
import type { AppliedBy, Finding, FindingCode, ForcePreview, ObjectIdentity, Severity } from '../core/findings';
import type { JsonValue } from '../core/json';
import type { Range } from '../core/manifest/manifest';
import type { ManagerIdentity } from '../core/ssa/messages';
import type { ApplyMode } from '../core/ssa/predict';
import { jsonText } from './printable';
import {
  notJudged,
  summarize,
  type CheckedObject,
  type CheckReport,
  type RenderedFrom,
  type ReportSource,
  type ReportSummary,
  type Verification,
} from './report';

/** schemas/findings.schema.json `version`. */
export const jsonReportVersion = 1;

export interface PublicPosition {
  readonly line: number;
  /** UTF-16 code units from the start of the line. */
  readonly character: number;
}

/** Zero-based, as in the Language Server Protocol. */
export interface PublicRange {
  readonly start: PublicPosition;
  readonly end: PublicPosition;
}

export interface PublicObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface PublicManager {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion?: string;
  readonly subresource?: string;
}

/** The schema's `finding`. */
export interface PublicFinding {
  readonly file: string;
  readonly code: FindingCode;
  readonly severity: Severity;
  readonly message: string;
  readonly range: PublicRange;
  readonly object?: PublicObjectIdentity;
  readonly path?: string;
  readonly manager?: PublicManager;
  readonly liveValue?: JsonValue;
  readonly manifestValue?: JsonValue;
  readonly serverMessage?: string;
  readonly docs?: string;
  /** The rendered object the finding was found on, when `file` is a source of an overlay or chart. */
  readonly rendered?: PublicRenderedFrom;
  /** The kubeconfig context it was found in, when the check asked several. */
  readonly context?: string;
}

/** The schema's `rendered`: which rendered object a source file's finding was found on. */
export interface PublicRenderedFrom {
  readonly target: string;
  readonly root: string;
  readonly index: number;
}

export interface PublicVerification {
  readonly agrees: boolean;
  readonly serverAnswer: string;
  readonly differences: readonly { readonly message: string; readonly range: PublicRange; readonly path?: string }[];
}

export interface PublicObject {
  readonly file: string;
  readonly title: string;
  readonly object?: PublicObjectIdentity;
  readonly verification?: PublicVerification;
  readonly notes: readonly string[];
  readonly rendered?: PublicRenderedFrom;
  readonly forcePreview?: PublicForcePreview;
  /** Why the object or input was not judged, when no finding says so. */
  readonly notJudged?: string;
  readonly context?: string;
  readonly appliedBy?: readonly PublicAppliedBy[];
}

/** The schema's `appliedBy`: a tool that applies the live object, and its policy as read or why it is unknown. */
export interface PublicAppliedBy {
  readonly tool: 'argocd' | 'flux-kustomize' | 'flux-helm' | 'helm';
  readonly name: string;
  readonly namespace?: string;
  readonly maybe?: true;
  readonly evidence: string;
  readonly text: string;
  readonly policy?: {
    readonly state: 'read' | 'unknown';
    readonly reason?: string;
    readonly name?: string;
    readonly namespace?: string;
    readonly automated?: boolean;
    readonly selfHeal?: boolean;
    readonly prune?: boolean;
    readonly serverSideApply?: boolean;
    readonly respectIgnoreDifferences?: boolean;
    readonly ignoreDifferences?: readonly {
      readonly group?: string;
      readonly kind: string;
      readonly name?: string;
      readonly namespace?: string;
      readonly jsonPointers: readonly string[];
      readonly jqPathExpressions: readonly string[];
      readonly managedFieldsManagers: readonly string[];
    }[];
    readonly interval?: string;
    readonly suspend?: boolean;
    readonly force?: boolean;
    readonly path?: string;
    readonly driftDetection?: 'disabled' | 'warn' | 'enabled';
    readonly driftIgnore?: readonly {
      readonly paths: readonly string[];
      readonly target?: Readonly<Record<string, string>>;
    }[];
  };
}

/** The schema's `notJudged` entry: an object or an input the check did not judge, and why. */
export interface PublicNotJudged {
  readonly file: string;
  readonly title: string;
  readonly reason: string;
  /** The finding that says it, when one does. */
  readonly code?: FindingCode;
  readonly range?: PublicRange;
  readonly context?: string;
}

/** The schema's `forcePreview`: what --force-conflicts takes from whom, and who takes it back. */
export interface PublicForcePreview {
  readonly losses: readonly {
    readonly manager: string;
    readonly operation: 'Apply' | 'Update';
    readonly subresource?: string;
    readonly apiVersion?: string;
    readonly time?: string;
    readonly fields: readonly {
      readonly path: string;
      readonly liveValue?: JsonValue;
      readonly manifestValue?: JsonValue;
      readonly withoutForce?: boolean;
    }[];
    readonly takesBack?: {
      readonly certainty: 'will' | 'may';
      readonly kind: 'autoscaler' | 'controller' | 'gitops';
      readonly by: string;
      readonly reason: string;
      readonly paths: readonly string[];
    };
    readonly note?: string;
  }[];
  readonly uncertain: readonly {
    readonly manager: string;
    readonly operation: 'Apply' | 'Update';
    readonly subresource?: string;
    readonly paths: readonly string[];
  }[];
  readonly stillRefused: readonly string[];
  readonly command: string;
}

type PublicSingleSource =
  | { readonly kind: 'cluster'; readonly context: string; readonly server: string }
  | { readonly kind: 'snapshot'; readonly directory: string; readonly context?: string; readonly server?: string };

export type PublicSource =
  | PublicSingleSource
  | {
      readonly kind: 'fleet';
      readonly contexts: readonly {
        readonly context: string;
        readonly source?: PublicSingleSource;
        readonly problem?: { readonly state: string; readonly message: string };
      }[];
    };

/** The whole output. */
export interface JsonReport {
  readonly version: typeof jsonReportVersion;
  readonly mode: ApplyMode;
  readonly fieldManager: string;
  readonly source: PublicSource;
  readonly summary: ReportSummary;
  readonly findings: readonly PublicFinding[];
  /** Every object checked, with or without findings. */
  readonly objects: readonly PublicObject[];
  /** Every object and input not judged, with why (as many as `summary.notJudged`). */
  readonly notJudged: readonly PublicNotJudged[];
}

/** Only the properties that are set: the schema has no nulls, and an absent field is left out. */
function defined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}

function publicRange(r: Range): PublicRange {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function publicObjectIdentity(o: ObjectIdentity): PublicObjectIdentity {
  return defined({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, namespace: o.namespace });
}

function publicManager(m: ManagerIdentity): PublicManager {
  return defined({ manager: m.manager, operation: m.operation, apiVersion: m.apiVersion, subresource: m.subresource });
}

function publicRendered(r: RenderedFrom): PublicRenderedFrom {
  return { target: r.target, root: r.root, index: r.index };
}

/** One finding as the public record has it. */
export function publicFinding(file: string, f: Finding, rendered?: RenderedFrom, context?: string): PublicFinding {
  return defined({
    file,
    code: f.code,
    severity: f.severity,
    message: f.message,
    range: publicRange(f.range),
    object: f.object && publicObjectIdentity(f.object),
    path: f.path,
    manager: f.manager && publicManager(f.manager),
    liveValue: f.liveValue,
    manifestValue: f.manifestValue,
    serverMessage: f.serverMessage,
    docs: f.docs,
    rendered: rendered && publicRendered(rendered),
    context,
  });
}

function publicVerification(v: Verification): PublicVerification {
  return {
    agrees: v.agrees,
    serverAnswer: v.serverAnswer,
    differences: v.differences.map((d) => defined({ message: d.message, range: publicRange(d.range), path: d.path })),
  };
}

function publicForcePreview(p: ForcePreview): PublicForcePreview {
  return {
    losses: p.losses.map((l) =>
      defined({
        manager: l.manager,
        operation: l.operation,
        subresource: l.subresource,
        apiVersion: l.apiVersion,
        time: l.time,
        fields: l.fields.map((f) =>
          defined({
            path: f.path,
            liveValue: f.liveValue,
            manifestValue: f.manifestValue,
            withoutForce: f.withoutForce,
          }),
        ),
        takesBack: l.takesBack && {
          certainty: l.takesBack.certainty,
          kind: l.takesBack.kind,
          by: l.takesBack.by,
          reason: l.takesBack.reason,
          paths: [...l.takesBack.paths],
        },
        note: l.note,
      }),
    ),
    uncertain: p.uncertain.map((u) =>
      defined({ manager: u.manager, operation: u.operation, subresource: u.subresource, paths: [...u.paths] }),
    ),
    stillRefused: [...p.stillRefused],
    command: p.command,
  };
}

function publicObject(o: CheckedObject): PublicObject {
  return defined({
    file: o.file,
    title: o.title,
    object: o.object && publicObjectIdentity(o.object),
    verification: o.verification && publicVerification(o.verification),
    notes: [...o.notes],
    rendered: o.rendered && publicRendered(o.rendered),
    forcePreview: o.forcePreview && publicForcePreview(o.forcePreview),
    notJudged: o.notJudged,
    context: o.context,
    appliedBy: o.appliedBy && o.appliedBy.map(publicAppliedBy),
  });
}

function publicAppliedBy(a: AppliedBy): PublicAppliedBy {
  return defined({
    tool: a.tool,
    name: a.name,
    namespace: a.namespace,
    maybe: a.maybe,
    evidence: a.evidence,
    text: a.text,
    policy: a.policy && publicPolicy(a.policy),
  });
}

function publicPolicy(p: NonNullable<AppliedBy['policy']>): NonNullable<PublicAppliedBy['policy']> {
  if (p.state === 'unknown') return { state: 'unknown', reason: p.reason };
  const policy = p.policy;
  const common = { state: 'read' as const, name: policy.name, namespace: policy.namespace };
  switch (policy.kind) {
    case 'argocd':
      return {
        ...common,
        automated: policy.automated,
        selfHeal: policy.selfHeal,
        prune: policy.prune,
        serverSideApply: policy.serverSideApply,
        respectIgnoreDifferences: policy.respectIgnoreDifferences,
        ignoreDifferences: policy.ignoreDifferences.map((r) =>
          defined({
            group: r.group,
            kind: r.kind,
            name: r.name,
            namespace: r.namespace,
            jsonPointers: [...r.jsonPointers],
            jqPathExpressions: [...r.jqPathExpressions],
            managedFieldsManagers: [...r.managedFieldsManagers],
          }),
        ),
      };
    case 'flux-kustomize':
      return {
        ...common,
        interval: policy.interval,
        suspend: policy.suspend,
        force: policy.force,
        prune: policy.prune,
        path: policy.path,
      };
    case 'flux-helm':
      return {
        ...common,
        interval: policy.interval,
        suspend: policy.suspend,
        driftDetection: policy.driftDetection,
        driftIgnore: policy.driftIgnore.map((rule) => ({
          paths: [...rule.paths],
          ...(rule.target ? { target: { ...rule.target } } : {}),
        })),
      };
  }
}

function publicSource(s: ReportSource): PublicSource {
  switch (s.kind) {
    case 'cluster':
      return { kind: 'cluster', context: s.context, server: s.server };
    case 'snapshot':
      return defined({ kind: 'snapshot' as const, directory: s.directory, context: s.context, server: s.server });
    case 'fleet':
      return {
        kind: 'fleet',
        contexts: s.contexts.map((c) =>
          defined({
            context: c.context,
            source: c.source && (publicSource(c.source) as PublicSingleSource),
            problem: c.problem && { state: c.problem.state, message: c.problem.message },
          }),
        ),
      };
  }
}

export function toJsonReport(report: CheckReport): JsonReport {
  const s = summarize(report);
  return {
    version: jsonReportVersion,
    mode: report.mode,
    fieldManager: report.fieldManager,
    source: publicSource(report.source),
    summary: {
      errors: s.errors,
      warnings: s.warnings,
      information: s.information,
      disagreements: s.disagreements,
      objects: s.objects,
      judged: s.judged,
      notJudged: s.notJudged,
      files: s.files,
    },
    findings: report.objects.flatMap((o) => o.findings.map((f) => publicFinding(o.file, f, o.rendered, o.context))),
    objects: report.objects.map(publicObject),
    notJudged: notJudged(report).map((n) =>
      defined({
        file: n.file,
        title: n.title,
        reason: n.reason,
        code: n.code,
        range: n.range && publicRange(n.range),
        context: n.context,
      }),
    ),
  };
}

export function formatJson(report: CheckReport): string {
  return `${jsonText(toJsonReport(report), 2)}\n`;
}

// The findings of a whole check (many files, many objects) as a user reads them: compiler-style
// text, JSON for scripts, SARIF 2.1.0 for code-scanning services. Pure: the command line gathers
// the records and prints what these functions return; nothing here touches files or a cluster.
import { docsLinks, type Finding, type FindingCode, type ObjectIdentity, type Severity } from './analysis';
import type { Range } from '../manifest/manifest';
import type { ApplyMode } from '../ssa/predict';

/** Where the server's dry-run answer parts from the prediction, on the range it concerns. */
export interface VerificationDifference {
  readonly message: string;
  readonly range: Range;
  /** The field, in the server's notation, when the difference is about one. */
  readonly path?: string;
}

/** What the server answered to a dry run of the object, compared with the prediction. */
export interface Verification {
  readonly agrees: boolean;
  /** The server's answer in its own words (`accepted`, or its Status message). */
  readonly serverAnswer: string;
  readonly differences: readonly VerificationDifference[];
}

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
  /** Set when the object was rendered (an overlay): `file` is then the source file the findings are on. */
  readonly rendered?: RenderedFrom;
}

/** The rendered object a source file's findings were found on. */
export interface RenderedFrom {
  /** As messages name it: `overlay production`. */
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

/** A finding in a report: the editor's record plus the file it is in. */
export type FileFinding = Finding & { readonly file: string; readonly rendered?: RenderedFrom };

/** Shown for a dry-run answer the prediction did not foresee; not a code the analysis itself gives. */
export const dryRunDiffersCode = 'dry-run-differs' as const;

export interface RuleDescription {
  readonly title: string;
  readonly description: string;
  readonly severity: Severity;
  readonly docs: string;
}

const syntaxDocs = 'https://kubernetes.io/docs/concepts/overview/working-with-objects/';

/** Every code the analysis can give, described once: SARIF rules, `--help`, the JSON schema's enum. */
export const findingRules: Readonly<Record<FindingCode | typeof dryRunDiffersCode, RuleDescription>> = {
  'field-conflict': {
    title: 'Server-Side Apply field conflict',
    description: 'The manifest sets a field that another field manager owns with a different value: kubectl apply --server-side answers 409 Conflict.',
    severity: 'error',
    docs: docsLinks.ssaConflicts,
  },
  'owned-by-release': {
    title: 'The object belongs to another Helm release',
    description: 'A chart renders an object that exists without this release\'s ownership metadata (meta.helm.sh/release-name): helm install or upgrade stops before sending anything.',
    severity: 'error',
    docs: 'https://helm.sh/docs/faq/changes_since_helm2/#improved-upgrade-strategy-3-way-strategic-merge-patches',
  },
  'already-exists': {
    title: 'The object already exists',
    description: 'kubectl create answers 409 AlreadyExists: an object of this kind and name is already in the cluster.',
    severity: 'error',
    docs: docsLinks.create,
  },
  exists: {
    title: 'The object exists',
    description: 'The object is already in the cluster; the finding names its field managers.',
    severity: 'information',
    docs: docsLinks.fieldManagement,
  },
  'stale-resource-version': {
    title: 'Stale metadata.resourceVersion',
    description: 'The manifest carries a resourceVersion the object has moved past: the optimistic lock answers 409 Conflict.',
    severity: 'error',
    docs: docsLinks.concurrency,
  },
  'uid-mismatch': {
    title: 'metadata.uid of another object',
    description: 'The manifest carries the uid of an object that was deleted: the server answers 409 Conflict when no object has that name, and 422 Invalid (the uid is immutable) when it was created again.',
    severity: 'error',
    docs: docsLinks.concurrency,
  },
  'would-delete': {
    title: 'The apply would delete a field',
    description: 'The field manager set this field last time, the manifest no longer does and nobody else owns it: the apply removes it.',
    severity: 'warning',
    docs: docsLinks.fieldManagement,
  },
  'controlled-by': {
    title: 'Managed by a controller',
    description: 'The live object has a controller owner reference: the controller will revert changes applied by hand.',
    severity: 'warning',
    docs: docsLinks.ownerReferences,
  },
  'kind-not-served': {
    title: 'Kind not served',
    description: 'The cluster does not serve this apiVersion and kind.',
    severity: 'warning',
    docs: docsLinks.apiVersions,
  },
  'render-failed': {
    title: 'The source does not render',
    description: 'kustomize build (or helm template) refused the kustomization or chart: what it would send cannot be checked, and applying it would fail the same way.',
    severity: 'error',
    docs: 'https://kubectl.docs.kubernetes.io/references/kustomize/',
  },
  'invalid-manifest': {
    title: 'The server refuses the manifest',
    description: 'The manifest does not fit the schema the cluster serves, so the server refuses it before checking ownership.',
    severity: 'error',
    docs: docsLinks.fieldManagement,
  },
  'yaml-syntax': {
    title: 'YAML syntax error',
    description: 'The file does not parse as YAML.',
    severity: 'error',
    docs: syntaxDocs,
  },
  'yaml-decode': {
    title: 'YAML that kubectl refuses',
    description: 'The YAML parses, but kubectl would refuse to decode it.',
    severity: 'error',
    docs: syntaxDocs,
  },
  'duplicate-key': {
    title: 'Duplicate key',
    description: 'A key is written twice in one map; kubectl silently keeps the last one.',
    severity: 'warning',
    docs: syntaxDocs,
  },
  'too-large': {
    title: 'Too large to analyse',
    description: 'The document is larger, nests deeper or expands through aliases further than the analysis takes on; nothing is said about it.',
    severity: 'warning',
    docs: syntaxDocs,
  },
  'generate-name-apply': {
    title: 'generateName with kubectl apply',
    description: 'kubectl apply (client- or server-side) refuses an object with generateName and no name before sending it: "cannot use generate name with apply".',
    severity: 'error',
    docs: docsLinks.generateName,
  },
  'secret-data-unverified': {
    title: 'Secret data owned by another manager',
    description: 'Another field manager owns Secret data keys the manifest sets. Secret values are never read, so only a dry run can tell whether the values differ and the apply conflicts.',
    severity: 'warning',
    docs: docsLinks.ssaConflicts,
  },
  [dryRunDiffersCode]: {
    title: 'The server answers differently',
    description: 'With --verify: the dry run of the manifest got another answer from the API server than the prediction.',
    severity: 'error',
    docs: docsLinks.ssaConflicts,
  },
};

export function summarize(report: CheckReport): ReportSummary {
  let errors = 0;
  let warnings = 0;
  let information = 0;
  let disagreements = 0;
  const disagreeing = new Set<string>();
  for (const o of report.objects) {
    for (const f of o.findings) {
      if (f.severity === 'error') errors++;
      else if (f.severity === 'warning') warnings++;
      else information++;
    }
    if (o.verification && !o.verification.agrees) {
      const key = o.rendered ? JSON.stringify([o.rendered.root, o.rendered.target, o.rendered.index]) : undefined;
      if (!key || !disagreeing.has(key)) disagreements++;
      if (key) disagreeing.add(key);
      errors += o.verification.differences.length;
    }
  }
  return { errors, warnings, information, disagreements, objects: countObjects(report.objects), files: report.files.length };
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
    if (o.rendered) rendered.add(JSON.stringify([o.rendered.root, o.rendered.target, o.rendered.index]));
    else plain++;
  }
  return plain + rendered.size;
}

/** 0 clean, 1 when something would fail or deserves a look (errors, warnings); information alone is clean. */
export function exitCodeFor(summary: ReportSummary): 0 | 1 {
  return summary.errors + summary.warnings > 0 ? 1 : 0;
}

const position = (file: string, r: Range) => `${file}:${r.start.line + 1}:${r.start.character + 1}`;

export interface TextOptions {
  /** The least severe finding printed (default: every finding). The summary counts them all. */
  readonly minimumSeverity?: Severity;
  /** How the reader gets the findings left out, by severity, e.g. `--verbose`: said in the summary. */
  readonly shownWith?: Partial<Record<Severity, string>>;
}

const severityRank: Record<Severity, number> = { information: 0, warning: 1, error: 2 };

/**
 * Compiler-style text: a header line naming each object, then one `file:line:col severity code
 * message` line per finding (1-based line and column, so editors and CI log viewers link them),
 * then one summary line. Objects without findings or notes are left out, and so are findings less
 * severe than `minimumSeverity`: a clean run over a large repository is then its summary line.
 */
export function formatText(report: CheckReport, options: TextOptions = {}): string {
  const minimum = severityRank[options.minimumSeverity ?? 'information'];
  const shown = (severity: Severity) => severityRank[severity] >= minimum;
  const blocks: string[] = [];
  for (const o of report.objects) {
    const lines: string[] = [];
    const sorted = o.findings.filter((f) => shown(f.severity)).sort((a, b) => comparePositions(a.range, b.range));
    for (const f of sorted) lines.push(`${position(o.file, f.range)} ${f.severity} ${f.code} ${f.message}`);
    if (o.verification) {
      for (const d of o.verification.differences) lines.push(`${position(o.file, d.range)} error ${dryRunDiffersCode} ${d.message}`);
    }
    for (const n of o.notes) lines.push(`note: ${n}`);
    if (lines.length === 0) continue;
    let title = o.title;
    if (o.verification) title += o.verification.agrees ? ' — the dry run agrees' : ` — the dry run answers: ${o.verification.serverAnswer}`;
    blocks.push([title, ...lines].join('\n'));
  }
  const s = summarize(report);
  const hidden = (severity: Severity, count: number) =>
    count > 0 && !shown(severity) ? ` (not shown${options.shownWith?.[severity] ? `; ${options.shownWith[severity]} shows them` : ''})` : '';
  const counts = [
    plural(s.errors, 'error'),
    plural(s.warnings, 'warning') + hidden('warning', s.warnings),
    `${s.information} information${hidden('information', s.information)}`,
  ];
  const checked = `${plural(s.objects, 'object')} in ${plural(s.files, 'file')}`;
  const against = report.source.kind === 'cluster' ? `context ${report.source.context}` : `snapshot ${report.source.directory}`;
  blocks.push(`${counts.join(', ')} — ${checked}, ${report.mode} as ${JSON.stringify(report.fieldManager)}, against ${against}`);
  return `${blocks.join('\n\n')}\n`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function comparePositions(a: Range, b: Range): number {
  return a.start.line - b.start.line || a.start.character - b.start.character;
}

/** The JSON output, described by schemas/findings.schema.json. */
export interface JsonReport {
  readonly version: 1;
  readonly mode: ApplyMode;
  readonly fieldManager: string;
  readonly source: ReportSource;
  readonly summary: ReportSummary;
  /** The editor's Finding records, each with its file; ranges are zero-based, as in LSP. */
  readonly findings: readonly FileFinding[];
  /** Every object checked, with or without findings. */
  readonly objects: readonly {
    readonly file: string;
    readonly title: string;
    readonly object?: ObjectIdentity;
    readonly verification?: Verification;
    readonly notes: readonly string[];
    readonly rendered?: RenderedFrom;
  }[];
}

export function toJsonReport(report: CheckReport): JsonReport {
  return {
    version: 1,
    mode: report.mode,
    fieldManager: report.fieldManager,
    source: report.source,
    summary: summarize(report),
    findings: report.objects.flatMap((o) => o.findings.map((f) => ({ file: o.file, ...f, ...(o.rendered ? { rendered: o.rendered } : {}) }))),
    objects: report.objects.map((o) => ({
      file: o.file,
      title: o.title,
      ...(o.object ? { object: o.object } : {}),
      ...(o.verification ? { verification: o.verification } : {}),
      notes: o.notes,
      ...(o.rendered ? { rendered: o.rendered } : {}),
    })),
  };
}

export function formatJson(report: CheckReport): string {
  return `${JSON.stringify(toJsonReport(report), null, 2)}\n`;
}

export interface SarifOptions {
  readonly toolVersion: string;
  /** `file:///work/repo/`: what relative file names are relative to (SARIF originalUriBaseIds). */
  readonly baseUri: string;
}

const sarifLevels: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note' };
const informationUri = 'https://kubernetes.io/docs/reference/using-api/server-side-apply/';

/**
 * SARIF 2.1.0 (OASIS), as code-scanning services read it: one run, every finding code a rule with
 * its help link, each finding a result with a 1-based region in the file (columns in UTF-16 code
 * units, SARIF's default columnKind, as the editor counts them).
 */
export function toSarif(report: CheckReport, options: SarifOptions): JsonSarifLog {
  const ruleIds = Object.keys(findingRules) as (keyof typeof findingRules)[];
  const rules = ruleIds.map((id) => {
    const rule = findingRules[id];
    return {
      id,
      name: rule.title,
      shortDescription: { text: rule.title },
      fullDescription: { text: rule.description },
      helpUri: rule.docs,
      defaultConfiguration: { level: sarifLevels[rule.severity] },
    };
  });
  const results: SarifResult[] = [];
  const artifactLocation = (file: string) =>
    file.startsWith('/') ? { uri: new URL(`file://${encodeURI(file)}`).href } : { uri: encodeURI(file), uriBaseId: 'SRCROOT' };
  const region = (r: Range) => ({
    startLine: r.start.line + 1,
    startColumn: r.start.character + 1,
    endLine: r.end.line + 1,
    endColumn: r.end.character + 1,
  });
  for (const o of report.objects) {
    for (const f of o.findings) {
      const properties: Record<string, unknown> = {};
      if (f.object) properties.object = f.object;
      if (f.path !== undefined) properties.path = f.path;
      if (f.manager) properties.manager = f.manager;
      if (f.liveValue !== undefined) properties.liveValue = f.liveValue;
      if (f.manifestValue !== undefined) properties.manifestValue = f.manifestValue;
      if (f.serverMessage !== undefined) properties.serverMessage = f.serverMessage;
      results.push({
        ruleId: f.code,
        ruleIndex: ruleIds.indexOf(f.code),
        level: sarifLevels[f.severity],
        message: { text: `${o.title}: ${f.message}` },
        locations: [{ physicalLocation: { artifactLocation: artifactLocation(o.file), region: region(f.range) } }],
        // A finding on a source file was found on a rendered object: that object, in the folder it is
        // rendered from, is the related location.
        ...(o.rendered
          ? {
              relatedLocations: [
                {
                  id: 1,
                  message: { text: `${o.title}: object ${o.rendered.index + 1} rendered from ${o.rendered.root}` },
                  physicalLocation: { artifactLocation: artifactLocation(o.rendered.root) },
                  logicalLocations: [{ name: o.object?.name ?? '', fullyQualifiedName: `${o.rendered.target}/${o.object ? `${o.object.kind}/${o.object.namespace ?? ''}/${o.object.name}` : o.rendered.index}`, kind: 'object' }],
                },
              ],
            }
          : {}),
        ...(Object.keys(properties).length ? { properties } : {}),
      });
    }
    for (const d of o.verification?.differences ?? []) {
      results.push({
        ruleId: dryRunDiffersCode,
        ruleIndex: ruleIds.indexOf(dryRunDiffersCode),
        level: 'error',
        message: { text: `${o.title}: ${d.message}` },
        locations: [{ physicalLocation: { artifactLocation: artifactLocation(o.file), region: region(d.range) } }],
        properties: { serverAnswer: o.verification?.serverAnswer ?? '', ...(d.path !== undefined ? { path: d.path } : {}) },
      });
    }
  }
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'kube-conflict-hints', version: options.toolVersion, informationUri, rules } },
        originalUriBaseIds: { SRCROOT: { uri: options.baseUri } },
        results,
      },
    ],
  };
}

interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: 'error' | 'warning' | 'note';
  message: { text: string };
  locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region: Record<string, number> } }[];
  relatedLocations?: unknown[];
  properties?: Record<string, unknown>;
}

export interface JsonSarifLog {
  $schema: string;
  version: '2.1.0';
  runs: unknown[];
}

export function formatSarif(report: CheckReport, options: SarifOptions): string {
  return `${JSON.stringify(toSarif(report, options), null, 2)}\n`;
}

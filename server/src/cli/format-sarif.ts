// `--format sarif`: SARIF 2.1.0 (OASIS), as code-scanning services read it. The rules are the rule
// catalogue, each with its help link and default level; the results are the findings.
import {
  dryRunDiffersCode,
  findingCatalogue,
  findingCodes,
  forceLine,
  lossOf,
  type FindingCode,
  type Severity,
} from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import { jsonText } from './printable';
import { notJudged, summarize, titleOf, type CheckReport } from './report';

export interface SarifOptions {
  readonly toolVersion: string;
  /** `file:///work/repo/`: what relative file names are relative to (SARIF originalUriBaseIds). */
  readonly baseUri: string;
}

const sarifLevels: Record<Severity, 'error' | 'warning' | 'note'> = {
  error: 'error',
  warning: 'warning',
  information: 'note',
};
const informationUri = 'https://kubernetes.io/docs/reference/using-api/server-side-apply/';

export interface SarifRule {
  id: FindingCode;
  name: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  helpUri: string;
  defaultConfiguration: { level: 'error' | 'warning' | 'note' };
}

interface SarifResult {
  ruleId: FindingCode;
  ruleIndex: number;
  level: 'error' | 'warning' | 'note';
  message: { text: string };
  locations: {
    physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region: Record<string, number> };
  }[];
  relatedLocations?: unknown[];
  properties?: Record<string, unknown>;
}

export interface JsonSarifLog {
  $schema: string;
  version: '2.1.0';
  runs: {
    tool: { driver: { name: string; version: string; informationUri: string; rules: SarifRule[] } };
    originalUriBaseIds: Record<string, { uri: string }>;
    results: SarifResult[];
    /** The run's counts, and every object or input not judged with why (SARIF's property bag, 3.8). */
    properties: {
      judged: number;
      notJudged: number;
      notJudgedList: { file: string; title: string; reason: string; code?: FindingCode; startLine?: number }[];
    };
  }[];
}

/** Every code of the catalogue as a SARIF rule, in catalogue order (results point at them by index). */
export function sarifRules(): SarifRule[] {
  return findingCodes.map((id) => {
    const rule = findingCatalogue[id];
    return {
      id,
      name: rule.title,
      shortDescription: { text: rule.title },
      fullDescription: { text: rule.description },
      helpUri: rule.docs,
      defaultConfiguration: { level: sarifLevels[rule.severity] },
    };
  });
}

/**
 * One run, every finding code a rule with its help link, each finding a result with a 1-based
 * region in the file (columns in UTF-16 code units, SARIF's default columnKind, as the editor
 * counts them).
 */
export function toSarif(report: CheckReport, options: SarifOptions): JsonSarifLog {
  const rules = sarifRules();
  const results: SarifResult[] = [];
  const artifactLocation = (file: string) =>
    file.startsWith('/')
      ? { uri: new URL(`file://${encodeURI(file)}`).href }
      : { uri: encodeURI(file), uriBaseId: 'SRCROOT' };
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
      if (o.context !== undefined) properties.context = o.context;
      // A field conflict's way out by force: what it takes from this manager, who takes it back, the command.
      const loss = f.code === 'field-conflict' && o.forcePreview ? lossOf(o.forcePreview, f) : undefined;
      if (loss && o.forcePreview) {
        properties.forcePreview = {
          text: forceLine(o.forcePreview, f),
          manager: loss.manager,
          operation: loss.operation,
          ...(loss.subresource ? { subresource: loss.subresource } : {}),
          ...(loss.time ? { time: loss.time } : {}),
          ...(loss.takesBack?.paths.includes(f.path!) ? { takesBack: loss.takesBack } : {}),
          command: o.forcePreview.command,
        };
      }
      results.push({
        ruleId: f.code,
        ruleIndex: findingCodes.indexOf(f.code),
        level: sarifLevels[f.severity],
        message: { text: `${titleOf(o)}: ${f.message}` },
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
                  logicalLocations: [
                    {
                      name: o.object?.name ?? '',
                      fullyQualifiedName: `${o.rendered.target}/${o.object ? `${o.object.kind}/${o.object.namespace ?? ''}/${o.object.name}` : o.rendered.index}`,
                      kind: 'object',
                    },
                  ],
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
        ruleIndex: findingCodes.indexOf(dryRunDiffersCode),
        level: sarifLevels[findingCatalogue[dryRunDiffersCode].severity],
        message: { text: `${titleOf(o)}: ${d.message}` },
        locations: [{ physicalLocation: { artifactLocation: artifactLocation(o.file), region: region(d.range) } }],
        properties: {
          serverAnswer: o.verification?.serverAnswer ?? '',
          ...(o.context !== undefined ? { context: o.context } : {}),
          ...(d.path !== undefined ? { path: d.path } : {}),
        },
      });
    }
  }
  const summary = summarize(report);
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'kube-conflict-hints', version: options.toolVersion, informationUri, rules } },
        originalUriBaseIds: { SRCROOT: { uri: options.baseUri } },
        results,
        // A result needs a rule, and "not judged" is no rule of the catalogue: what a finding says
        // is its result above; the run's properties list them all, the reasons without a finding too.
        properties: {
          judged: summary.judged,
          notJudged: summary.notJudged,
          notJudgedList: notJudged(report).map((n) => ({
            file: n.file,
            title: n.title,
            reason: n.reason,
            ...(n.code ? { code: n.code } : {}),
            ...(n.range ? { startLine: n.range.start.line + 1 } : {}),
            ...(n.context !== undefined ? { context: n.context } : {}),
          })),
        },
      },
    ],
  };
}

export function formatSarif(report: CheckReport, options: SarifOptions): string {
  return `${jsonText(toSarif(report, options), 2)}\n`;
}

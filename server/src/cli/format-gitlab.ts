// `--format gitlab`: GitLab's Code Quality report (a JSON array of issues), for a job's
// `artifacts: reports: codequality:`, so the merge request shows the findings. GitLab's scale has
// five severities; an error (the API server will answer 409) is `critical`, a warning `major`,
// information `info`. The fingerprint identifies an issue across pipelines: it leaves the line out,
// so an edit above a finding does not make it a new one.
import { createHash } from 'node:crypto';
import { dryRunDiffersCode, type Severity } from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import { jsonText } from './printable';
import { titleOf, type CheckReport } from './report';

export interface CodeQualityIssue {
  description: string;
  check_name: string;
  fingerprint: string;
  severity: 'info' | 'minor' | 'major' | 'critical' | 'blocker';
  location: {
    path: string;
    positions: { begin: { line: number; column: number }; end: { line: number; column: number } };
  };
}

const severities: Record<Severity, CodeQualityIssue['severity']> = {
  error: 'critical',
  warning: 'major',
  information: 'info',
};

export function toCodeQuality(report: CheckReport): CodeQualityIssue[] {
  const issues: CodeQualityIssue[] = [];
  const add = (
    file: string,
    title: string,
    code: string,
    severity: CodeQualityIssue['severity'],
    message: string,
    range: Range,
    path?: string,
  ) => {
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([file, title, code, path ?? '', message]))
      .digest('hex')
      .slice(0, 32);
    issues.push({
      description: `${title}: ${message}`,
      check_name: `kube-conflict-hints/${code}`,
      fingerprint,
      severity,
      location: {
        path: file,
        positions: {
          begin: { line: range.start.line + 1, column: range.start.character + 1 },
          end: { line: range.end.line + 1, column: range.end.character + 1 },
        },
      },
    });
  };
  for (const o of report.objects) {
    for (const f of o.findings) add(o.file, titleOf(o), f.code, severities[f.severity], f.message, f.range, f.path);
    for (const d of o.verification?.differences ?? [])
      add(o.file, titleOf(o), dryRunDiffersCode, 'critical', d.message, d.range, d.path);
    // Not judged, and no finding says so (a finding's issue says it by itself): an issue on the file's first line.
    if (o.notJudged !== undefined)
      add(o.file, titleOf(o), 'not-judged', 'major', o.notJudged, {
        start: { line: 0, character: 0 },
        end: { line: 0, character: 0 },
      });
  }
  return issues;
}

export function formatGitlab(report: CheckReport): string {
  return `${jsonText(toCodeQuality(report), 2)}\n`;
}

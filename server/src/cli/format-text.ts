// `--format text` (the default): compiler-style lines for CI logs and terminals.
import { dryRunDiffersCode, forceLine, type Severity } from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import { printableLine } from './printable';
import { againstWhat, notJudged, summarize, type CheckReport } from './report';

export interface TextOptions {
  /** The least severe finding printed (default: every finding). The summary counts them all. */
  readonly minimumSeverity?: Severity;
  /** How the reader gets the findings left out, by severity, e.g. `--verbose`: said in the summary. */
  readonly shownWith?: Partial<Record<Severity, string>>;
}

const severityRank: Record<Severity, number> = { information: 0, warning: 1, error: 2 };

const position = (file: string, r: Range) => `${file}:${r.start.line + 1}:${r.start.character + 1}`;

/**
 * Compiler-style text: a header line naming each object, then one `file:line:col severity code
 * message` line per finding (1-based line and column, so editors and CI log viewers link them),
 * then one summary line (the objects judged), and under it one line per object or input not judged,
 * with its place and why. Objects without findings or notes are left out, and so are findings less
 * severe than `minimumSeverity`: a clean run over a large repository is then its summary line.
 */
export function formatText(report: CheckReport, options: TextOptions = {}): string {
  const minimum = severityRank[options.minimumSeverity ?? 'information'];
  const shown = (severity: Severity) => severityRank[severity] >= minimum;
  const blocks: string[] = [];
  for (const o of report.objects) {
    const lines: string[] = [];
    const sorted = o.findings.filter((f) => shown(f.severity)).sort((a, b) => comparePositions(a.range, b.range));
    for (const f of sorted) {
      lines.push(`${position(o.file, f.range)} ${f.severity} ${f.code} ${f.message}`);
      // Under each conflict: what forcing would take from that manager, and who takes it back.
      const forcing = f.code === 'field-conflict' && o.forcePreview ? forceLine(o.forcePreview, f) : undefined;
      if (forcing) lines.push(`  ${forcing}`);
    }
    if (o.forcePreview && sorted.some((f) => f.code === 'field-conflict'))
      lines.push(`  to force: ${o.forcePreview.command}`);
    if (o.verification) {
      for (const d of o.verification.differences)
        lines.push(`${position(o.file, d.range)} error ${dryRunDiffersCode} ${d.message}`);
    }
    for (const n of o.notes) lines.push(`note: ${n}`);
    if (lines.length === 0) continue;
    let title = o.title;
    if (o.verification)
      title += o.verification.agrees
        ? ' — the dry run agrees'
        : ` — the dry run answers: ${o.verification.serverAnswer}`;
    // File and object names are the repository's: each line is printed as one line of plain text.
    blocks.push([title, ...lines].map(printableLine).join('\n'));
  }
  const s = summarize(report);
  const hidden = (severity: Severity, count: number) =>
    count > 0 && !shown(severity)
      ? ` (not shown${options.shownWith?.[severity] ? `; ${options.shownWith[severity]} shows them` : ''})`
      : '';
  const counts = [
    plural(s.errors, 'error'),
    plural(s.warnings, 'warning') + hidden('warning', s.warnings),
    `${s.information} information${hidden('information', s.information)}`,
  ];
  const checked = `${plural(s.judged, 'object')} judged in ${plural(s.files, 'file')}`;
  const summary = `${counts.join(', ')} — ${checked}, ${report.mode} as ${JSON.stringify(report.fieldManager)}, against ${againstWhat(report.source)}`;
  // What was not judged is listed under the summary, each with its place and why, whatever --min-severity says.
  const unjudged = notJudged(report);
  if (unjudged.length === 0) blocks.push(printableLine(summary));
  else {
    const lines = unjudged.map(
      (n) => `  ${n.range ? position(n.file, n.range) : n.file} ${n.title}: ${n.code ? `${n.code} ` : ''}${n.reason}`,
    );
    blocks.push([`${summary}; ${unjudged.length} not judged:`, ...lines].map(printableLine).join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function comparePositions(a: Range, b: Range): number {
  return a.start.line - b.start.line || a.start.character - b.start.character;
}

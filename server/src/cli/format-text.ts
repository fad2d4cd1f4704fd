// `--format text` (the default): compiler-style lines for CI logs and terminals.
import {
  contextsLabel,
  dryRunDiffersCode,
  fleetCell,
  forceLine,
  meansNotJudged,
  mergeAcrossContexts,
  type Severity,
} from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import { printableLine } from './printable';
import { objectKey } from './fleet';
import { againstWhat, notJudged, summarize, titleOf, type CheckedObject, type CheckReport } from './report';

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
  const blocks: string[] = report.source.kind === 'fleet' ? fleetBlocks(report, shown) : [];
  for (const o of report.source.kind === 'fleet' ? [] : report.objects) {
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
  const table = fleetTable(report);
  if (table) blocks.push(table);
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
      (n) =>
        `  ${n.range ? position(n.file, n.range) : n.file} ${titleOf(n)}: ${n.code ? `${n.code} ` : ''}${n.reason}`,
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

/**
 * A fleet's findings, one block per object: its title, then each finding once, naming the contexts
 * it holds in (`[prod-eu, prod-us]`), so that what differs between clusters stands out.
 */
function fleetBlocks(report: CheckReport, shown: (severity: Severity) => boolean): string[] {
  const groups = new Map<string, CheckedObject[]>();
  for (const o of report.objects) {
    const key = objectKey(o);
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  const blocks: string[] = [];
  for (const entries of groups.values()) {
    const file = entries[0].file;
    const lines: string[] = [];
    const merged = mergeAcrossContexts(
      entries.map((o) => ({ context: o.context ?? '', findings: o.findings.filter((f) => shown(f.severity)) })),
    ).sort((a, b) => comparePositions(a.finding.range, b.finding.range));
    // A finding of no one context (what differs between them) names its contexts in its words.
    for (const { finding: f, contexts } of merged) {
      const named = contexts.filter((c) => c !== '');
      lines.push(
        `${position(file, f.range)} ${f.severity} ${f.code} ${named.length > 0 ? `${contextsLabel(named)} ` : ''}${f.message}`,
      );
    }
    for (const o of entries) {
      const tag = contextsLabel([o.context ?? '']);
      if (o.forcePreview && o.findings.some((f) => f.code === 'field-conflict' && shown(f.severity)))
        lines.push(`  ${tag} to force: ${o.forcePreview.command}`);
      if (o.verification) {
        lines.push(
          `  ${tag} ${o.verification.agrees ? 'the dry run agrees' : `the dry run answers: ${o.verification.serverAnswer}`}`,
        );
        for (const d of o.verification.differences)
          lines.push(`${position(o.file, d.range)} error ${dryRunDiffersCode} ${tag} ${d.message}`);
      }
      for (const n of o.notes) lines.push(`note: ${tag} ${n}`);
    }
    if (lines.length === 0) continue;
    blocks.push([entries[0].title, ...lines].map(printableLine).join('\n'));
  }
  return blocks;
}

/** Each object in each context, one word or two a cell: clean, conflict with whom, exists, missing, unreachable. */
function fleetTable(report: CheckReport): string {
  if (report.source.kind !== 'fleet') return '';
  const contexts = report.source.contexts;
  const rows = new Map<string, { title: string; cells: Map<string, string> }>();
  for (const o of report.objects) {
    if (!o.object) continue;
    const key = objectKey({ ...o, file: o.rendered ? '' : o.file });
    const row = rows.get(key) ?? { title: o.title, cells: new Map<string, string>() };
    const entry = {
      findings: o.findings,
      notJudged: o.notJudged !== undefined || o.findings.some((f) => meansNotJudged(f.code)),
      ...(o.live !== undefined ? { live: o.live } : {}),
    };
    // A rendered object's entries in several source files are one object: the worst cell stands.
    const cell = fleetCell(entry);
    const before = row.cells.get(o.context ?? '');
    if (before === undefined || before === 'exists' || before === 'missing' || before === 'judged')
      row.cells.set(o.context ?? '', cell);
    rows.set(key, row);
  }
  const header = ['object', ...contexts.map((c) => c.context)];
  const table = [...rows.values()].map((r) => [
    r.title,
    ...contexts.map((c) => (c.problem ? fleetCell('absent', c.problem.state) : (r.cells.get(c.context) ?? '-'))),
  ]);
  if (table.length === 0) return '';
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells: readonly string[]) =>
    printableLine(cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  '));
  return [line(header), ...table.map(line)].join('\n');
}

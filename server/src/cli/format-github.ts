// `--format github`: GitHub Actions workflow commands, one per finding, so a check run in a
// workflow annotates the pull request's lines (`::warning file=k8s/web.yaml,line=9,col=13,...::...`).
// The runner reads these from the step's output; outside a workflow they are plain lines.
//
// Escaping, as the runner decodes it: in the message `%`, CR and LF become %25, %0D and %0A (a
// message keeps its colons and commas); a property value also escapes `:` and `,` (%3A, %2C), which
// would otherwise end the property. Lines and columns are 1-based, columns in UTF-16 code units as
// the editor counts them.
import { dryRunDiffersCode, ruleFor, type Severity } from '../core/findings';
import type { Range } from '../core/manifest/manifest';
import { printableKeepingBreaks, printableLine } from './printable';
import { againstWhat, summarize, titleOf, type CheckReport } from './report';

const commands: Record<Severity, 'error' | 'warning' | 'notice'> = {
  error: 'error',
  warning: 'warning',
  information: 'notice',
};

export function escapeData(value: string): string {
  return printableKeepingBreaks(value).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function escapeProperty(value: string): string {
  return escapeData(value).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

function command(name: string, properties: Record<string, string | number>, message: string): string {
  const props = Object.entries(properties)
    .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
    .join(',');
  return `::${name}${props ? ` ${props}` : ''}::${escapeData(message)}`;
}

function location(file: string, r: Range): Record<string, number | string> {
  return {
    file,
    line: r.start.line + 1,
    col: r.start.character + 1,
    endLine: r.end.line + 1,
    endColumn: r.end.character + 1,
  };
}

export function formatGithub(report: CheckReport): string {
  const lines: string[] = [];
  for (const o of report.objects) {
    for (const f of o.findings) {
      lines.push(
        command(
          commands[f.severity],
          { ...location(o.file, f.range), title: `${ruleFor(f.code).title} (${f.code})` },
          `${titleOf(o)}: ${f.message}`,
        ),
      );
    }
    for (const d of o.verification?.differences ?? []) {
      lines.push(
        command(
          'error',
          { ...location(o.file, d.range), title: `${ruleFor(dryRunDiffersCode).title} (${dryRunDiffersCode})` },
          `${titleOf(o)}: ${d.message}`,
        ),
      );
    }
    // Not judged, and no finding says so (a finding's annotation says it by itself): a warning on the file.
    if (o.notJudged !== undefined)
      lines.push(command('warning', { file: o.file, title: 'Not judged' }, `${titleOf(o)}: ${o.notJudged}`));
    for (const n of o.notes)
      if (n !== o.notJudged)
        lines.push(command('notice', { file: o.file, title: 'Not fully checked' }, `${titleOf(o)}: ${n}`));
  }
  const s = summarize(report);
  const unjudged = s.notJudged > 0 ? `, ${s.notJudged} not judged` : '';
  lines.push(
    printableLine(
      `kube-conflict-hints: ${s.errors} error(s), ${s.warnings} warning(s), ${s.information} information — ${s.judged} object(s) judged${unjudged} in ${s.files} file(s), ${report.mode} as ${JSON.stringify(report.fieldManager)}, against ${againstWhat(report.source)}`,
    ),
  );
  return `${lines.join('\n')}\n`;
}

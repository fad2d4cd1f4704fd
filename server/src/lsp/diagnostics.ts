// Findings become diagnostics. Each carries its finding in `data`, so code actions read what was
// found instead of re-deriving it (or, worse, parsing the message).
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver/node';
import { ruleFor, shownAsHint, type Finding, type Severity } from '../core/findings';
import type { Settings } from '../protocol';

export const diagnosticSource = 'kube-conflict-hints';

const severities: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
};

// Nothing that changes on every keystroke (a document version) goes into a diagnostic: the same
// findings give the same diagnostics, which the pull handler answers as unchanged. A fix is built
// from the document's current analysis, never from a version remembered here. The finding rides
// without what the diagnostic itself says (its message and range): a file of 500 existing objects
// is a report of 675 diagnostics, sent whole whenever one of them moves, and read whole by the
// editor; findingOf puts them back.
export interface DiagnosticData {
  readonly finding: Omit<Finding, 'message' | 'range'>;
}

/**
 * `chosen`: the user's severity setting. A quiet code (news, such as "the object exists") that it
 * does not name is a hint, which editors keep off their list of problems.
 */
export function toDiagnostic(finding: Finding, chosen: Settings['severity'] | undefined): Diagnostic {
  const { message, range, ...rest } = finding;
  const data: DiagnosticData = { finding: rest };
  return {
    range,
    severity: shownAsHint(finding.code, chosen) ? DiagnosticSeverity.Hint : severities[finding.severity],
    code: finding.code,
    codeDescription: { href: finding.docs ?? ruleFor(finding.code).docs },
    source: diagnosticSource,
    message,
    data,
  };
}

/** The finding a diagnostic of ours carries, with the message and range the diagnostic shows. */
export function findingOf(diagnostic: Diagnostic): Finding | undefined {
  if (diagnostic.source !== diagnosticSource) return undefined;
  const data = diagnostic.data as Partial<DiagnosticData> | undefined;
  return data?.finding && { ...data.finding, message: diagnostic.message, range: diagnostic.range };
}

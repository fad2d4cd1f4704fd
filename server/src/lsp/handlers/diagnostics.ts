// Diagnostics, pulled by the client (`textDocument/diagnostic`) or pushed to clients that cannot
// pull: the findings the document's source gives (document-service.ts), whatever kind of file it
// is, shown with the user's severities, marked while the facts are old, and the document's state
// (judged, old, not judged) sent when it changes.
import {
  DocumentDiagnosticReportKind,
  type Connection,
  type Diagnostic,
  type DocumentDiagnosticReport,
} from 'vscode-languageserver/node';
import { meansNotJudged, restsOnCluster, ruleFor, type Finding } from '../../core/findings';
import { notifications, sendNotification, type DocumentStateParams } from '../../protocol';
import { isHeldBack } from '../document-analysis';
import type { DocumentService } from '../document-service';
import { toDiagnostic } from '../diagnostics';
import type { ComputedDiagnostics } from '../push-diagnostics';
import type { Workspace } from '../workspace';

export class DiagnosticsHandler {
  /** Per open document: the last full report's id and its diagnostics as sent. */
  private readonly reported = new Map<string, { resultId: string; items: readonly Diagnostic[] }>();
  private nextResultId = 1;
  /**
   * Each finding's diagnostic, per the severity setting it was made with: a finding the analysis
   * kept (every document but the one typed in) gives the very diagnostic it gave before, which
   * the pull handler then knows unchanged without printing it.
   */
  private readonly diagnosticOf = new WeakMap<Finding, { severity: string; diagnostic: Diagnostic }>();

  private readonly states: DocumentStates;

  constructor(
    connection: Connection,
    private readonly workspace: Workspace,
    private readonly service: DocumentService,
  ) {
    this.states = new DocumentStates(connection);
    connection.languages.diagnostics.on(async (params): Promise<DocumentDiagnosticReport> => {
      const uri = params.textDocument.uri;
      const items = (await this.of(uri))?.diagnostics ?? [];
      // A keystroke that changes no finding (most of them) is answered "unchanged", as LSP 3.17
      // allows a client that says which report it holds: the editor keeps what it shows, and
      // nothing is sent or read again.
      const last = this.reported.get(uri);
      if (last && params.previousResultId === last.resultId && sameDiagnostics(last.items, items))
        return { kind: DocumentDiagnosticReportKind.Unchanged, resultId: last.resultId };
      const resultId = String(this.nextResultId++);
      if (this.workspace.documents.get(uri)) this.reported.set(uri, { resultId, items });
      return { kind: DocumentDiagnosticReportKind.Full, resultId, items };
    });
    workspace.documents.onDidClose((e) => {
      this.reported.delete(e.document.uri);
      this.states.forget(e.document.uri);
    });
  }

  /** The one path to a document's diagnostics, pulled by the client or pushed to it. Undefined when it is not open. */
  async of(uri: string): Promise<ComputedDiagnostics | undefined> {
    const document = this.workspace.documents.get(uri);
    if (!document) return undefined;
    // The settings are asked for once per answer (each question is a round trip to the editor).
    const settings = await this.workspace.settingsFor(uri);
    const findings = await this.service.findings(document, settings);
    // While the cluster does not answer, what rests on its facts says since when they are old.
    const stale = await this.workspace.stalenessOf(uri, settings);
    // A syntax error another language service underlines is not shown twice; the state counts it.
    const ours = findings.filter((f) => !isHeldBack(f));
    const shown = stale
      ? ours.map((f) => (restsOnCluster(f.code) ? { ...f, message: `${f.message} (${stale})` } : f))
      : ours;
    const { severity } = settings;
    this.states.report(
      uri,
      documentState(uri, findings, stale ?? this.workspace.fleetStalenessOf(uri), this.workspace.fleetTroubleOf(uri)),
    );
    const severityKey = JSON.stringify(severity) ?? '';
    const diagnostics = shown.map((f) => {
      const known = this.diagnosticOf.get(f);
      if (known?.severity === severityKey) return known.diagnostic;
      const diagnostic = toDiagnostic(f, severity);
      this.diagnosticOf.set(f, { severity: severityKey, diagnostic });
      return diagnostic;
    });
    return { version: document.version, diagnostics };
  }
}

/**
 * Whether two reports would be sent as the same JSON: each diagnostic the one sent before, or
 * printed the same (a document analysed again gives new findings that may say the same).
 */
function sameDiagnostics(a: readonly Diagnostic[], b: readonly Diagnostic[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && JSON.stringify(a[i]) !== JSON.stringify(b[i])) return false;
  return true;
}

/**
 * A document's state from what its diagnostics are made of: not judged beats old, old beats judged.
 * `fleetTrouble`: judged in several contexts, the ones that gave nothing and why (not judged there).
 */
function documentState(
  uri: string,
  findings: readonly Finding[],
  stale: string | undefined,
  fleetTrouble?: string,
): DocumentStateParams {
  const notJudged = findings.find((f) => meansNotJudged(f.code));
  if (!notJudged && fleetTrouble) return { uri, state: 'not-judged', reason: fleetTrouble };
  if (notJudged)
    return {
      uri,
      state: 'not-judged',
      reason: `${ruleFor(notJudged.code).title}: ${notJudged.message}${isHeldBack(notJudged) ? ` (${notJudged.heldBack})` : ''}`,
    };
  if (stale) return { uri, state: 'old', reason: `Judged on old facts: ${stale}.` };
  return { uri, state: 'judged' };
}

/** Each open document's state, sent to the client when it changes. */
class DocumentStates {
  private readonly sent = new Map<string, string>();

  constructor(private readonly connection: Connection) {}

  report(uri: string, state: DocumentStateParams): void {
    const key = JSON.stringify(state);
    if (this.sent.get(uri) === key) return;
    this.sent.set(uri, key);
    void sendNotification(this.connection, notifications.documentState, state);
  }

  forget(uri: string): void {
    this.sent.delete(uri);
  }
}

// Diagnostics, pulled by the client (`textDocument/diagnostic`) or pushed to clients that cannot
// pull. A document's diagnostics are the findings of every document source, in order: the manifest
// analysis, then the dry-run answers. A new kind of input (a rendered chart or kustomization, say)
// adds its source to the list in server.ts; this handler does not change.
import { DocumentDiagnosticReportKind, type Connection, type DocumentDiagnosticReport } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Finding } from '../../core/findings/analysis';
import { toDiagnostic } from '../diagnostics';
import type { LoadProgress } from '../progress';
import type { ComputedDiagnostics } from '../push-diagnostics';
import type { Workspace } from '../workspace';

/** Something with findings to show on an open document. */
export interface DocumentSource {
  findings(document: TextDocument): readonly Finding[] | Promise<readonly Finding[]>;
}

/** The manifest analysis of the document's text (and, meanwhile, the load progress it shows). */
export function manifestFindings(workspace: Workspace, progress: LoadProgress): DocumentSource {
  return {
    async findings(document) {
      const state = await workspace.analysisOf(document.uri);
      if (!state) return [];
      progress.observe(document.uri, state.analysis.resources);
      return state.analysis.findings;
    },
  };
}

export class DiagnosticsHandler {
  constructor(
    connection: Connection,
    private readonly workspace: Workspace,
    private readonly sources: readonly DocumentSource[],
  ) {
    connection.languages.diagnostics.on(async (params): Promise<DocumentDiagnosticReport> => {
      const computed = await this.of(params.textDocument.uri);
      return { kind: DocumentDiagnosticReportKind.Full, items: computed?.diagnostics ?? [] };
    });
  }

  /** The one path to a document's diagnostics, pulled by the client or pushed to it. Undefined when it is not open. */
  async of(uri: string): Promise<ComputedDiagnostics | undefined> {
    const document = this.workspace.documents.get(uri);
    if (!document) return undefined;
    const findings: Finding[] = [];
    for (const source of this.sources) findings.push(...(await source.findings(document)));
    const version = document.version;
    return { version, diagnostics: findings.map((f) => toDiagnostic(f, version)) };
  }
}

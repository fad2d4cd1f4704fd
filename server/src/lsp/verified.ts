// Dry-run confirmation as the editor sees it: on request or on save, the document's resources are
// sent as dry runs (verify.ts); the server's answers that differ from the prediction are kept for
// that version of the document and shown with its diagnostics until it changes or closes.
import type { Connection } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { redactText } from '../cluster';
import type { Finding } from '../core/findings';
import type { VerifyResult } from '../protocol';
import type { RefreshScheduler } from './refresh';
import { verifyDocument } from './verify';
import type { Workspace } from './workspace';

export class DryRunAnswers {
  /** The server's own dry-run answers where they differed from the prediction, per document version. */
  private readonly verified = new Map<string, { version: number; findings: Finding[] }>();

  constructor(
    private readonly connection: Connection,
    private readonly workspace: Workspace,
    private readonly refresh: RefreshScheduler,
  ) {}

  async verify(uri: string): Promise<VerifyResult> {
    const state = await this.workspace.analysisOf(uri);
    if (!state || !state.session) {
      const why = this.workspace.clusterAccess
        ? 'No Kubernetes object in this document.'
        : 'No cluster access in this workspace.';
      return { agreed: 0, differences: [], failed: [why] };
    }
    const { findings, ...result } = await verifyDocument(state.session, state.settings, state.analysis);
    this.verified.set(uri, { version: state.document.version, findings });
    for (const line of result.differences) this.connection.console.warn(redactText(`verify: ${line}`));
    for (const line of result.failed) this.connection.console.warn(redactText(`verify: could not verify ${line}`));
    this.connection.console.info(
      `verify: ${result.agreed} resource(s) answered as predicted, ${result.differences.length} differed`,
    );
    this.refresh.schedule();
    return result;
  }

  /** `kubeConflictHints.verifyOnSave`. */
  async saved(uri: string): Promise<void> {
    if ((await this.workspace.settingsFor(uri)).verifyOnSave) await this.verify(uri);
  }

  /** The answers for this very version of the document (shown with a manifest's findings: manifest-source.ts); an edit makes them stale. */
  findings(document: TextDocument): readonly Finding[] {
    const confirmed = this.verified.get(document.uri);
    return confirmed?.version === document.version ? confirmed.findings : [];
  }

  forget(uri: string): void {
    this.verified.delete(uri);
  }
}

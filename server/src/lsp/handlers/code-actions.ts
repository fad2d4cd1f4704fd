// Code actions: the quick fixes and fix-all that ../code-actions.ts builds from the findings each
// diagnostic carries and the document's current analysis.
import type { Connection } from 'vscode-languageserver/node';
import { codeActions } from '../code-actions';
import type { Workspace } from '../workspace';

export function serveCodeActions(connection: Connection, workspace: Workspace): void {
  connection.onCodeAction(async (params) => {
    const state = await workspace.analysisOf(params.textDocument.uri);
    if (!state) return [];
    return codeActions(params, state.document, state.analysis);
  });
}

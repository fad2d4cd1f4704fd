// Code actions: the quick fixes and fix-all that ../code-actions.ts builds from the findings each
// diagnostic carries and the document's current analysis.
import type { Connection } from 'vscode-languageserver/node';
import { codeActions } from '../code-actions';
import type { RenderedSources } from '../rendered';
import type { Workspace } from '../workspace';

export function serveCodeActions(connection: Connection, workspace: Workspace, rendered: RenderedSources): void {
  connection.onCodeAction(async (params) => {
    const document = workspace.documents.get(params.textDocument.uri);
    // On a rendered source the fixes edit the line that sets the field (a values key, a patch's field).
    const onRendered = document && (await rendered.codeActions(params, document));
    if (onRendered) return onRendered;
    const state = await workspace.analysisOf(params.textDocument.uri);
    if (!state) return [];
    return codeActions(params, state.document, state.analysis);
  });
}

// Code lenses (`kubeConflictHints.codeLens`): above each resource, a summary of its conflicts and
// of who manages the live object, as the document's source says.
import type { CodeLens, Connection } from 'vscode-languageserver/node';
import type { DocumentService } from '../document-service';
import type { Workspace } from '../workspace';

export function serveCodeLenses(connection: Connection, workspace: Workspace, service: DocumentService): void {
  connection.onCodeLens(async (params): Promise<CodeLens[]> => {
    const document = workspace.documents.get(params.textDocument.uri);
    if (!document) return [];
    return service.codeLenses(document);
  });
}

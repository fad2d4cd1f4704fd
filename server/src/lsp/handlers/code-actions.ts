// Code actions: the fixes the document's source builds from the findings each diagnostic carries
// (a manifest's own fields, or on a rendered source the line that sets the field: a values key, a
// patch's field).
import type { Connection } from 'vscode-languageserver/node';
import type { DocumentService } from '../document-service';
import type { Workspace } from '../workspace';

export function serveCodeActions(connection: Connection, workspace: Workspace, service: DocumentService): void {
  connection.onCodeAction(async (params) => {
    const document = workspace.documents.get(params.textDocument.uri);
    if (!document) return [];
    return service.codeActions(document, params);
  });
}

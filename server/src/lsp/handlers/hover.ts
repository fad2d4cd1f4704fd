// Hovers: on a field, who owns it and what the live object holds; on the object's identity, the
// object itself; on a line of a template, values file or patch, the rendered field's. The
// document's source answers; this handler only says when the facts are old.
import type { Connection, Hover } from 'vscode-languageserver/node';
import type { DocumentService } from '../document-service';
import { notLive } from '../stale';
import type { Workspace } from '../workspace';

export function serveHovers(connection: Connection, workspace: Workspace, service: DocumentService): void {
  connection.onHover(async (params): Promise<Hover | null> => {
    const document = workspace.documents.get(params.textDocument.uri);
    const hover = document ? await service.hover(document, params.position) : null;
    // While the cluster does not answer, owners and live values are as it last said.
    const stale = hover && (await workspace.stalenessOf(params.textDocument.uri));
    if (!hover || !stale || typeof hover.contents !== 'object' || !('kind' in hover.contents)) return hover;
    return {
      ...hover,
      contents: {
        kind: hover.contents.kind,
        value: `${notLive(stale, hover.contents.kind)}\n\n${hover.contents.value}`,
      },
    };
  });
}

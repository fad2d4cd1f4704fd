// Ownership hints (`kubeConflictHints.ownershipHints`): at the end of each line whose field another
// field manager owns on the live object, that manager and how long ago, like a blame view. The hints
// come from the document's source (on a template, values file or patch: from the rendered objects),
// only for the lines the editor asks about; while its cluster does not answer, each says since when
// it is old.
import type { Connection, InlayHint } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DocumentService } from '../document-service';
import { notLive } from '../stale';
import type { Workspace } from '../workspace';

export function serveInlayHints(connection: Connection, workspace: Workspace, service: DocumentService): void {
  connection.languages.inlayHint.on(async (params): Promise<InlayHint[]> => {
    const uri = params.textDocument.uri;
    const document = workspace.documents.get(uri);
    if (!document || !(await workspace.settingsFor(uri)).ownershipHints) return [];
    const hints = await service.ownershipHints(
      document,
      { start: params.range.start.line, end: params.range.end.line },
      Date.now(),
    );
    // While the cluster does not answer, the owners are as it last said: marked as findings and hovers are.
    const stale = hints.length > 0 ? await workspace.stalenessOf(uri) : undefined;
    return hints.map((h) => ({
      position: { line: h.line, character: lineLength(document, h.line) },
      label: stale ? `${h.label} (${stale})` : h.label,
      tooltip: { kind: 'markdown', value: stale ? `${notLive(stale, 'markdown')}\n\n${h.tooltip}` : h.tooltip },
      paddingLeft: true,
    }));
  });
}

/** Where the line ends, before its line break: the hint follows the whole line, as a blame annotation does. */
function lineLength(document: TextDocument, line: number): number {
  return document
    .getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } })
    .replace(/\r?\n$/, '').length;
}

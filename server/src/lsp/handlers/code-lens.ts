// Code lenses (`kubeConflictHints.codeLens`): above each resource, a summary of its conflicts and
// of who manages the live object. Only where a cluster session serves the document.
import type { CodeLens, Connection } from 'vscode-languageserver/node';
import { managerNames } from '../../core/findings';
import { absoluteRange, type ManifestResource } from '../../core/manifest/manifest';
import type { AnalyzedResource } from '../document-analysis';
import type { Workspace } from '../workspace';

export function serveCodeLenses(connection: Connection, workspace: Workspace): void {
  connection.onCodeLens(async (params): Promise<CodeLens[]> => {
    const state = await workspace.analysisOf(params.textDocument.uri);
    if (!state || !state.settings.codeLens || !state.session) return [];
    return state.analysis.resources.flatMap(({ resource, facts, findings }) => {
      const title = codeLensTitle(resource, facts, findings);
      // Above the object's first line (a document's range starts at its `---`).
      const start = absoluteRange(resource, resource.root.entries[0]?.keyRange ?? resource.root.range).start;
      return title ? [{ range: { start, end: start }, command: { title, command: '' } }] : [];
    });
  });
}

function codeLensTitle(resource: ManifestResource, facts: AnalyzedResource['facts'], findings: AnalyzedResource['findings']): string | undefined {
  if (!facts || facts.kind.state !== 'served') return undefined;
  if (facts.live.state === 'absent') return 'new object: nothing to conflict with';
  if (facts.live.state !== 'exists') return undefined;
  const conflicts = findings.filter((f) => f.code === 'field-conflict').length;
  const errors = findings.filter((f) => f.severity === 'error').length;
  const managers = managerNames(facts.live.object);
  const parts = [
    conflicts > 0 ? `${conflicts} field conflict${conflicts === 1 ? '' : 's'}` : errors > 0 ? `${errors} error${errors === 1 ? '' : 's'}` : 'no conflicts',
    managers.length > 0 ? `managed by ${managers.join(', ')}` : 'no recorded owners',
  ];
  void resource;
  return parts.join(' · ');
}

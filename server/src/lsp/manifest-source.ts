// A file of Kubernetes objects as a document source: its own text analysed (document-analysis.ts,
// through the workspace), the dry-run answers kept for its version (verified.ts), hovers from
// core/findings/hover-text.ts, fixes from code-actions.ts, lenses and ownership hints on its
// objects. Any file no other source claims is read as one: a file without objects says nothing.
import type { CodeAction, CodeActionParams, CodeLens, Hover, Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  fieldHover,
  managerNames,
  nodeAt,
  objectHover,
  ownershipHints,
  type Finding,
  type LineSpan,
  type OwnershipHint,
} from '../core/findings';
import { absoluteRange, isIdentityPath, type ManifestResource } from '../core/manifest/manifest';
import { codeActions } from './code-actions';
import type { AnalyzedResource } from './document-analysis';
import type { DocumentSource } from './document-service';
import type { LoadProgress } from './progress';
import type { DryRunAnswers } from './verified';
import { resourceAt, type Workspace } from './workspace';

export class ManifestSource implements DocumentSource {
  constructor(
    private readonly workspace: Workspace,
    private readonly progress: LoadProgress,
    private readonly dryRuns: DryRunAnswers,
  ) {}

  claims(): boolean {
    return true;
  }

  /** The analysis of the text (and, meanwhile, the load progress it shows), then the dry-run answers. */
  async findings(document: TextDocument): Promise<readonly Finding[]> {
    const state = await this.workspace.analysisOf(document.uri);
    if (state) this.progress.observe(document.uri, state.analysis.resources);
    return [...(state?.analysis.findings ?? []), ...this.dryRuns.findings(document)];
  }

  /** On a field, who owns it and what the live object holds; on the object's identity (kind, apiVersion, metadata, its name), the object itself. */
  async hover(document: TextDocument, position: Position): Promise<Hover | null> {
    const state = await this.workspace.analysisOf(document.uri);
    const hit = state && resourceAt(state.analysis.resources, position);
    if (!hit) return null;
    const now = Date.now();
    const at = nodeAt(hit.resource, position, hit.facts?.schema);
    const value =
      !at || isIdentityPath(at.path)
        ? objectHover(hit.resource, hit.facts, now)
        : fieldHover(hit.resource, hit.facts, at.path, at.node, now);
    return { contents: { kind: 'markdown', value }, ...(at ? { range: at.keyRange } : {}) };
  }

  async codeActions(document: TextDocument, params: CodeActionParams): Promise<CodeAction[]> {
    const state = await this.workspace.analysisOf(document.uri);
    if (!state) return [];
    return codeActions(params, state.document, state.analysis);
  }

  /** `kubeConflictHints.codeLens`: above each object, its conflicts and who manages the live one. Only where a cluster session serves the document. */
  async codeLenses(document: TextDocument): Promise<CodeLens[]> {
    const state = await this.workspace.analysisOf(document.uri);
    if (!state || !state.settings.codeLens || !state.session) return [];
    return state.analysis.resources.flatMap(({ resource, facts, findings }) => {
      const title = codeLensTitle(resource, facts, findings);
      // Above the object's first line (a document's range starts at its `---`).
      const start = absoluteRange(resource, resource.root.entries[0]?.keyRange ?? resource.root.range).start;
      return title ? [{ range: { start, end: start }, command: { title, command: '' } }] : [];
    });
  }

  /** Only where a cluster session serves the document. */
  async ownershipHints(document: TextDocument, lines: LineSpan, now: number): Promise<readonly OwnershipHint[]> {
    const state = await this.workspace.analysisOf(document.uri);
    if (!state?.session) return [];
    return state.analysis.resources.flatMap(({ resource, facts }) =>
      facts?.live.state === 'exists' && resource.range.start.line <= lines.end && resource.range.end.line >= lines.start
        ? ownershipHints(resource, facts.live.object, facts.schema, state.settings, now, lines)
        : [],
    );
  }
}

function codeLensTitle(
  resource: ManifestResource,
  facts: AnalyzedResource['facts'],
  findings: AnalyzedResource['findings'],
): string | undefined {
  if (!facts || facts.kind.state !== 'served') return undefined;
  if (facts.live.state === 'absent') return 'new object: nothing to conflict with';
  if (facts.live.state !== 'exists') return undefined;
  const conflicts = findings.filter((f) => f.code === 'field-conflict').length;
  const errors = findings.filter((f) => f.severity === 'error').length;
  const managers = managerNames(facts.live.object);
  const parts = [
    conflicts > 0
      ? `${conflicts} field conflict${conflicts === 1 ? '' : 's'}`
      : errors > 0
        ? `${errors} error${errors === 1 ? '' : 's'}`
        : 'no conflicts',
    managers.length > 0 ? `managed by ${managers.join(', ')}` : 'no recorded owners',
  ];
  void resource;
  return parts.join(' · ');
}

// A file of Kubernetes objects as a document source: its own text analysed (document-analysis.ts,
// through the workspace), the dry-run answers kept for its version (verified.ts), hovers from
// core/findings/hover-text.ts, fixes from code-actions.ts, lenses and ownership hints on its
// objects. Any file no other source claims is read as one: a file without objects says nothing.
import type { CodeAction, CodeActionParams, CodeLens, Hover, Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  appliedByLens,
  fieldHover,
  fleetFieldHover,
  fleetObjectHover,
  managerNames,
  nodeAt,
  objectHover,
  ownershipHints,
  type Finding,
  type LineSpan,
  type OwnershipHint,
} from '../core/findings';
import { absoluteRange, hasNodeTree, isIdentityPath, type ManifestResource } from '../core/manifest/manifest';
import type { Settings } from '../protocol';
import { codeActions } from './code-actions';
import type { AnalyzedResource } from './document-analysis';
import type { DocumentSource } from './document-service';
import { fleetCells } from './fleet';
import type { LoadProgress } from './progress';
import type { DryRunAnswers } from './verified';
import { documentLines, resourceAt, type Workspace } from './workspace';

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
  async findings(document: TextDocument, settings: Settings): Promise<readonly Finding[]> {
    const state = await this.workspace.analysisOf(document.uri, settings);
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
    if (state.fleet) {
      // Several contexts: one table, a row per context (its live value and owners, or its state).
      const i = state.analysis.resources.indexOf(hit);
      const columns = state.fleet.map((c) => ({
        context: c.context,
        facts: c.analysis.resources[i]?.facts,
        findings: c.analysis.resources[i]?.findings ?? [],
        ...(c.trouble ? { trouble: c.trouble } : {}),
      }));
      const table =
        !at || isIdentityPath(at.path)
          ? fleetObjectHover(hit.resource, columns)
          : fleetFieldHover(hit.resource, at.path, at.node, columns);
      // A context judged on old facts says so first, as one context's hover does.
      const old = state.fleet.filter((c) => c.stale).map((c) => `**Not live in ${c.context}: ${c.stale}.**\n\n`);
      return {
        contents: { kind: 'markdown', value: `${old.join('')}${table}` },
        ...(at ? { range: at.keyRange } : {}),
      };
    }
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
    const fleet = state.fleet;
    return state.analysis.resources.flatMap(({ resource, facts, findings }, i) => {
      // Several contexts: each one's cell of the fleet table, side by side.
      const title = fleet
        ? fleetCells(fleet, i)
            .map(({ context, cell }) => `${context}: ${cell}`)
            .join(' · ')
        : codeLensTitle(resource, facts, findings);
      if (!title) return [];
      // Above the object's first line (a document's range starts at its `---`).
      const start = objectStart(resource);
      return [{ range: { start, end: start }, command: { title, command: '' } }];
    });
  }

  /** Only where a cluster session serves the document. */
  async ownershipHints(document: TextDocument, lines: LineSpan, now: number): Promise<readonly OwnershipHint[]> {
    const state = await this.workspace.analysisOf(document.uri);
    // Several contexts: a hint names one manager of one cluster; the hover's table names each one's.
    if (!state?.session || state.fleet) return [];
    // The lines the editor shows: documents elsewhere are passed over without building their node trees.
    const mayHold = documentLines(state.analysis.resources);
    return state.analysis.resources.flatMap(({ resource, facts }, i) =>
      facts?.live.state === 'exists' &&
      mayHold(i, lines.start, lines.end) &&
      resource.range.start.line <= lines.end &&
      resource.range.end.line >= lines.start
        ? ownershipHints(resource, facts.live.object, facts.schema, state.settings, now, lines)
        : [],
    );
  }
}

/**
 * Where an object's first key starts. A document read for its values alone (a block map: no flow
 * collection, anchor, tag or complex key, core/manifest/fast-values.ts) starts its first key at its
 * first character that is not a `---` line, a comment or blank: read there, the code lens of every
 * object of a big file builds no node tree. Any other start is the tree's to say.
 */
export function objectStart(resource: ManifestResource): Position {
  if (!hasNodeTree(resource)) {
    const at = firstContent(resource.documentText);
    if (at) return absoluteRange(resource, { start: at, end: at }).start;
  }
  return absoluteRange(resource, resource.root.entries[0]?.keyRange ?? resource.root.range).start;
}

/** The first character of a document that is not a `---` line, a comment or blank, where it may start a plain key. */
function firstContent(text: string): Position | undefined {
  let line = 0;
  for (let start = 0; start < text.length; line++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let i = start;
    while (i < end && text.charCodeAt(i) === 32) i++;
    const marker = line === 0 && i === start && text.startsWith('---', i) && (i + 3 === end || text[i + 3] === ' ');
    if (i < end && !marker && text[i] !== '#')
      return NOT_A_PLAIN_KEY.includes(text[i]!) ? undefined : { line, character: i - start };
    start = end + 1;
  }
  return undefined;
}

/** A first character that is no plain key's, or a key this reading leaves to the node tree. */
const NOT_A_PLAIN_KEY = '{[-?:,&*!|>%@`"\'#\t\r';

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
  const takes = findings.filter((f) => f.code === 'gitops-takes').length;
  const managers = managerNames(facts.live.object);
  const parts = [
    conflicts > 0
      ? `${conflicts} field conflict${conflicts === 1 ? '' : 's'}`
      : errors > 0
        ? `${errors} error${errors === 1 ? '' : 's'}`
        : 'no conflicts',
    // Checked as a GitOps controller's request (the applier setting): what its sync takes.
    ...(takes > 0 ? [`its GitOps controller takes ${takes} field${takes === 1 ? '' : 's'} at its next sync`] : []),
    managers.length > 0 ? `managed by ${managers.join(', ')}` : 'no recorded owners',
    // Who really applies it: the Argo CD Application, Flux Kustomization or Helm release its marks name.
    ...[appliedByLens(facts)].filter((words) => words !== undefined),
  ];
  void resource;
  return parts.join(' · ');
}

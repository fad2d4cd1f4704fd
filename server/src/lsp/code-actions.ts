// Quick fixes, built from the finding each diagnostic carries and the current parse of the text:
// give a contested field up (remove it), share it (take the live value), preview forcing it (a
// command: what --force-conflicts takes and who takes it back), remove a stale
// resourceVersion/uid; keep Git's value of a field a GitOps controller will take back, or leave it to
// Git, or annotate it for Flux to leave alone (kustomize.toolkit.fluxcd.io/ssa: IfNotPresent); all
// contested fields of a resource or of the file at once (also as
// source.fixAll). Edits come from core/manifest/edits.ts, which refuses rather than produce a wrong edit;
// the file-wide removal is its removeFieldsInFileEdits, the one that checks List items together.
import {
  CodeActionKind,
  type CodeAction,
  type CodeActionParams,
  type Diagnostic,
  type TextEdit,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  fluxKeepAnnotation,
  fluxMayKeepLive,
  locateOptions,
  showValue,
  type Finding,
  type FleetFinding,
} from '../core/findings';
import {
  removeFieldEdits,
  removeFieldsEdits,
  removeFieldsInFileEdits,
  replaceValueEdits,
  setFieldEdits,
  type EditResult,
} from '../core/manifest/edits';
import { describeManager } from '../core/ssa/messages';
import { requests, type ForcePreviewParams } from '../protocol';
import type { AnalyzedResource, DocumentAnalysis } from './document-analysis';
import { findingOf, toDiagnostic } from './diagnostics';
import { documentLines } from './workspace';

export const codeActionKinds = [CodeActionKind.QuickFix, CodeActionKind.SourceFixAll] as const;

const contested = (f: Finding) => f.code === 'field-conflict' && f.path !== undefined;

export function codeActions(
  params: CodeActionParams,
  document: TextDocument,
  analysis: DocumentAnalysis,
): CodeAction[] {
  const text = document.getText();
  const uri = document.uri;
  const only = params.context.only;
  const wants = (kind: string) => !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
  const actions: CodeAction[] = [];
  const edit = (edits: readonly TextEdit[]) => ({ changes: { [uri]: [...edits] } });

  if (wants(CodeActionKind.QuickFix)) {
    for (const diagnostic of params.context.diagnostics) {
      const finding = findingOf(diagnostic);
      const owner = finding && ownerOf(analysis, finding);
      if (!finding || !owner) continue;
      const options = locateOptions(owner.resource, owner.facts?.schema);
      const offer = (title: string, result: EditResult, preferred = false) =>
        actions.push(quickFix(title, diagnostic, result, uri, preferred));
      // Flux leaves an existing object alone with `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` on it.
      const offerFluxKeep = () =>
        offer(
          `Annotate ${fluxKeepAnnotation.key}: ${fluxKeepAnnotation.value} (Flux leaves the live object alone)`,
          setFieldEdits(
            text,
            owner.resource,
            [
              { kind: 'field', name: 'metadata' },
              { kind: 'field', name: 'annotations' },
              { kind: 'field', name: fluxKeepAnnotation.key },
            ],
            fluxKeepAnnotation.value,
          ),
        );
      if (contested(finding)) {
        // Judged in several contexts: the fix says in which the owner and the live value are.
        const where = contextsOf(finding);
        const who = `${finding.manager ? describeManager(finding.manager) : 'its owner'}${where ? ` in ${where}` : ''}`;
        offer(
          `Remove ${finding.path} (leave it to ${who})`,
          removeFieldEdits(text, owner.resource, finding.path!, options),
          isAutoscalerReplicas(finding),
        );
        if (finding.liveValue !== undefined) {
          offer(
            `Use the live value ${showValue(finding.liveValue)}${where ? ` of ${where}` : ''} for ${finding.path} (share ownership with ${who})`,
            replaceValueEdits(text, owner.resource, finding.path!, finding.liveValue, options),
          );
        }
        // Forcing is the other way out of a conflict: show first what it takes and who takes it back
        // (with several contexts, in each context the conflict holds in: each forces its own cluster).
        for (const context of (finding as Partial<FleetFinding>).contexts ?? [undefined]) {
          const title = context === undefined ? 'Preview forcing…' : `Preview forcing in ${context}…`;
          const args: ForcePreviewParams = {
            uri,
            position: diagnostic.range.start,
            ...(typeof context === 'string' ? { context } : {}),
          };
          actions.push({
            title,
            kind: CodeActionKind.QuickFix,
            diagnostics: [diagnostic],
            command: { title, command: requests.forcePreview.command, arguments: [args] },
          });
        }
        // (A field contested in several contexts by different owners is one field.)
        const all = [...new Set(owner.findings.filter(contested).map((f) => f.path!))];
        if (all.length > 1) {
          offer(
            `Remove all ${all.length} contested fields of ${owner.resource.kind} ${JSON.stringify(owner.resource.name ?? '')}`,
            removeFieldsEdits(text, owner.resource, all, options),
          );
        }
      } else if (
        (finding.code === 'gitops-fight' || finding.code === 'gitops-fight-at-sync') &&
        finding.path === '.spec.replicas'
      ) {
        // The fight ends when Git leaves replicas to the autoscaler.
        offer(
          'Remove replicas from Git (leave it to the autoscaler)',
          removeFieldEdits(text, owner.resource, finding.path, options),
          true,
        );
        if (fluxMayKeepLive(finding)) offerFluxKeep();
      } else if (finding.code === 'gitops-takes' && fluxMayKeepLive(finding)) {
        offerFluxKeep();
      } else if (finding.code === 'gitops-reverts' && finding.path !== undefined) {
        // The controller will not keep the change: take Git's value, or leave the field to Git.
        if (finding.liveValue !== undefined)
          offer(
            `Keep Git's value ${showValue(finding.liveValue)} for ${finding.path}`,
            replaceValueEdits(text, owner.resource, finding.path, finding.liveValue, options),
            true,
          );
        offer(
          `Remove ${finding.path} (leave it to Git)`,
          removeFieldEdits(text, owner.resource, finding.path, options),
          finding.liveValue === undefined,
        );
      } else if (finding.code === 'stale-resource-version' || finding.code === 'uid-mismatch') {
        const field = finding.code === 'stale-resource-version' ? '.metadata.resourceVersion' : '.metadata.uid';
        offer(
          `Remove ${field.slice(1)} (apply to whatever version is live)`,
          removeFieldEdits(text, owner.resource, field, options),
          true,
        );
      }
    }
    // Editors ask for code actions at every cursor move; the file-wide edit (each removal is
    // checked by reading the edited text again) is only worth building next to a conflict.
    const nearConflict = params.context.diagnostics.some((d) => findingOf(d)?.code === 'field-conflict');
    const fileWide = nearConflict ? fileWideRemoval(text, analysis) : undefined;
    if (fileWide && fileWide.count > 1) {
      actions.push({
        title: `Remove all ${fileWide.count} contested fields in this file`,
        kind: CodeActionKind.QuickFix,
        edit: edit(fileWide.edits),
      });
    }
  }

  if (only?.some((o) => o === CodeActionKind.SourceFixAll || o === CodeActionKind.Source)) {
    const fileWide = fileWideRemoval(text, analysis);
    if (fileWide && fileWide.count > 0) {
      actions.push({
        title: `Remove all ${fileWide.count} contested fields in this file`,
        kind: CodeActionKind.SourceFixAll,
        diagnostics: fileWide.findings.map((f) => toDiagnostic(f, undefined)),
        edit: edit(fileWide.edits),
      });
    }
  }
  return actions;
}

/** The contexts a finding of a document judged in several holds in (`prod-eu, prod-us`); undefined for one context. */
function contextsOf(finding: Finding): string | undefined {
  const contexts = (finding as Partial<FleetFinding>).contexts;
  return Array.isArray(contexts) && contexts.length > 0 ? contexts.join(', ') : undefined;
}

/** The autoscaler owning replicas is the one case where giving the field up is the known right answer. */
/**
 * A quick fix for a diagnostic, editing one document. A fix that cannot be made safely (a value
 * that comes through an alias, say) is still listed, disabled, with the reason: the user learns
 * why rather than finding nothing.
 */
export function quickFix(
  title: string,
  diagnostic: Diagnostic,
  result: EditResult,
  uri: string,
  preferred = false,
): CodeAction {
  return result.edits
    ? {
        title,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        isPreferred: preferred,
        edit: { changes: { [uri]: [...result.edits] } },
      }
    : { title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic], disabled: { reason: result.reason } };
}

/** The replicas an autoscaler sets through the scale subresource: leaving them to it is the fix to prefer. */
export function isAutoscalerReplicas(f: Finding): boolean {
  return f.path === '.spec.replicas' && f.manager?.subresource === 'scale';
}

/**
 * The resource whose range holds the finding's line. Only the documents that may hold it are asked
 * for their range (workspace.ts documentLines): a code action in a 2,000-document file builds no
 * node tree of the documents above it.
 */
function ownerOf(analysis: DocumentAnalysis, finding: Finding): AnalyzedResource | undefined {
  const line = finding.range.start.line;
  const mayHold = documentLines(analysis.resources);
  return analysis.resources.find(
    ({ resource: { range } }, i) => mayHold(i, line, line) && range.start.line <= line && line <= range.end.line,
  );
}

function fileWideRemoval(
  text: string,
  analysis: DocumentAnalysis,
): { edits: readonly TextEdit[]; count: number; findings: Finding[] } | undefined {
  const owners = analysis.resources
    .map((owner) => ({ owner, mine: onePerPath(owner.findings.filter(contested)) }))
    .filter(({ mine }) => mine.length > 0);
  const result = removeFieldsInFileEdits(
    text,
    owners.map(({ owner, mine }) => ({
      resource: owner.resource,
      paths: mine.map((f) => f.path!),
      options: locateOptions(owner.resource, owner.facts?.schema),
    })),
  );
  // What could not go (a field written through a merge, an edit that collides with another
  // item's of the same List) stays, with its diagnostic; the rest of the file is still fixed.
  const findings = owners.flatMap(({ owner, mine }) =>
    mine.filter((f) => !result.skipped.some((s) => s.resource === owner.resource && s.path === f.path)),
  );
  return result.edits.length > 0 ? { edits: result.edits, count: findings.length, findings } : undefined;
}

/** The first finding of each path: a field contested in several contexts is removed once. */
function onePerPath(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => !seen.has(f.path!) && (seen.add(f.path!), true));
}

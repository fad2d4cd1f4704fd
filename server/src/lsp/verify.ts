// Confirmation on demand: send each resource of a document as a dry-run apply (or a dry-run create
// in create mode) and compare the server's answer with the prediction. The server is the judge:
// where it disagrees, its answer becomes a finding and the difference is reported.
import { rangeFor, type Finding } from '../core/findings/analysis';
import { describeManager } from '../core/ssa/messages';
import type { Settings, VerifyResult } from '../protocol';
import type { DocumentAnalysis } from './document-analysis';
import type { Session } from './session';

export interface VerifyOutcome extends VerifyResult {
  /** The server's answers where they differ from the prediction, as findings to show. */
  findings: Finding[];
}

export async function verifyDocument(session: Session, settings: Settings, analysis: DocumentAnalysis): Promise<VerifyOutcome> {
  const out: VerifyOutcome = { agreed: 0, differences: [], failed: [], findings: [] };
  await Promise.all(
    analysis.resources.map(async ({ resource, findings }) => {
      if (!resource.name && !resource.generateName) return;
      const label = `${resource.kind} ${JSON.stringify(resource.name ?? resource.generateName)}`;
      const manifest = { object: resource.object };
      const options = { fieldManager: settings.fieldManager };
      const answer = settings.applyMode === 'create' ? await session.connection.dryRunCreate(manifest, options) : await session.connection.dryRunApply(manifest, options);
      // A 404 for the namespace is an answer about the manifest, which the prediction may have foreseen.
      if (answer.outcome === 'rejected' && answer.causes.length === 0 && answer.problem.kind !== 'other' && answer.problem.kind !== 'notFound') {
        out.failed.push(`${label}: ${answer.problem.message}`);
        return;
      }
      const predicted = new Set(findings.flatMap(expectedAnswerKeys));
      const actual = new Set<string>();
      let serverMessage = '';
      if (answer.outcome === 'conflict') {
        serverMessage = answer.message;
        if (answer.conflict === 'fieldManager') for (const c of answer.causes) actual.add(`${c.message.replace(/^conflicts? with /, '')}: ${c.field}`);
        else actual.add(answer.conflict);
      } else if (answer.outcome === 'rejected') {
        serverMessage = answer.problem.message;
        actual.add(`rejected: ${answer.problem.reason ?? answer.problem.kind}`);
      }
      const missing = [...actual].filter((k) => !predicted.has(k));
      const extra = [...predicted].filter((k) => !actual.has(k));
      if (missing.length === 0 && extra.length === 0) {
        out.agreed++;
        return;
      }
      out.differences.push(
        `${label}: the server answered ${actual.size ? [...actual].join('; ') : 'success'}; predicted ${predicted.size ? [...predicted].join('; ') : 'success'}`,
      );
      out.findings.push({
        code: 'dry-run-differs',
        severity: actual.size ? 'error' : 'information',
        message: actual.size ? `The API server answered (dry run): ${serverMessage}` : 'The API server accepts this manifest (dry run), unlike the prediction',
        range: rangeFor(resource, [{ kind: 'field', name: 'kind' }], undefined).value,
        ...(serverMessage ? { serverMessage } : {}),
      });
    }),
  );
  return out;
}

/** What a finding says the server will answer, in the same keys as the server's answers above. */
function expectedAnswerKeys(f: Finding): string[] {
  switch (f.code) {
    case 'field-conflict':
      return f.manager && f.path ? [`${describeManager(f.manager)}: ${f.path}`] : [];
    case 'already-exists':
      return ['alreadyExists'];
    case 'namespace-not-found':
    case 'namespace-from-files':
      // The dry run creates nothing: a Namespace among the open documents is not there for it either.
      return ['rejected: NotFound'];
    case 'stale-resource-version':
      return ['resourceVersion'];
    case 'uid-mismatch':
      // No such object: 409 uid mismatch. Another incarnation of it: 422, the uid is immutable.
      return [f.liveValue === undefined ? 'uid' : 'rejected: Invalid'];
    default:
      return [];
  }
}

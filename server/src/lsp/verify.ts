// Confirmation on demand: each resource of a document sent as the command line's --verify sends it
// (cluster/dry-run.ts: the facts read to the end, the same request, the same comparison), so the
// editor and the command line cannot judge one answer apart. What is the editor's own is the
// presentation: a line per resource for the log and the differences as findings on their lines.
import { verifyResource } from '../cluster';
import { analyzeResource, differenceFindings, type Finding } from '../core/findings';
import { objectTarget } from '../core/manifest/manifest';
import type { Settings, VerifyResult } from '../protocol';
import type { DocumentAnalysis } from './document-analysis';
import type { Session } from './session';

export interface VerifyOutcome extends VerifyResult {
  /** The server's answers where they differ from the prediction, as findings to show. */
  findings: Finding[];
}

/**
 * The command line offers no dry-run update for plain manifests either (`--verify` refuses
 * `--mode clientSide`): client-side apply sends a patch computed from the last-applied annotation,
 * which a dry run of the whole object would not reproduce.
 */
export const clientSideNotVerified =
  'A dry run confirms the serverSide and create modes; a dry-run update is not offered.';

export async function verifyDocument(
  session: Session,
  settings: Settings,
  analysis: DocumentAnalysis,
): Promise<VerifyOutcome> {
  const out: VerifyOutcome = { agreed: 0, differences: [], failed: [], findings: [] };
  if (settings.applyMode === 'clientSide') return { ...out, failed: [clientSideNotVerified] };
  await Promise.all(
    analysis.resources.map(async ({ resource }) => {
      const label = `${resource.kind} ${JSON.stringify(resource.name ?? resource.generateName ?? '')}`;
      const loaded = await session.facts.read(objectTarget(resource));
      if (!loaded.ok) {
        out.failed.push(`${label}: ${loaded.problem.message}`);
        return;
      }
      // Judged on the facts as read to the end, as the command line judges them.
      const findings = analyzeResource(resource, loaded.facts, settings);
      const verified = await verifyResource(session.connection, resource, findings, loaded.facts, settings);
      if (!verified.ok) {
        out.failed.push(`${label}: ${verified.problem.message}`);
        return;
      }
      if (verified.notSent !== undefined) {
        out.failed.push(`${label}: ${verified.notSent}`);
        return;
      }
      const verification = verified.verification;
      if (!verification) return;
      if (verification.agrees) {
        out.agreed++;
        return;
      }
      out.differences.push(
        `${label}: the server answered ${verification.serverAnswer}; ${verification.differences.map((d) => d.message).join('; ')}`,
      );
      out.findings.push(...differenceFindings(verification));
    }),
  );
  return out;
}

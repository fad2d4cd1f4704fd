// --verify: the server's own answer to a dry run of the manifest (dryRun=All, nothing is stored),
// set beside the prediction. Where they part, the server is right, and the report says so on the
// line the server's answer concerns.
import { rangeFor, type Finding } from '../core/findings/analysis';
import { firstCharacter, type ManifestResource, type Range } from '../core/manifest/manifest';
import { parsePath } from '../core/ssa/path';
import type { Verification, VerificationDifference } from './report';
import type { AnalysisSettings } from '../core/findings/analysis';
import type { ClusterConnection, ClusterProblem, DryRunManifest, DryRunOutcome } from '../cluster';
import type { SchemaModel } from '../core/ssa/schema';
import type { FactsReader } from './facts';

/** The 409s and refusals the prediction can name, by the finding code that names them. */
const refusalCodes = new Set(['field-conflict', 'already-exists', 'stale-resource-version', 'uid-mismatch', 'invalid-manifest', 'namespace-not-found', 'namespace-from-files']);

export type VerifyResult = { ok: true; verification: Verification } | { ok: false; problem: ClusterProblem };

export function compareWithServer(
  resource: ManifestResource,
  findings: readonly Finding[],
  outcome: DryRunOutcome,
  schema: SchemaModel | undefined,
): VerifyResult {
  const predicted = findings.filter((f) => refusalCodes.has(f.code));
  const whole = firstCharacter(resource.range);
  const differences: VerificationDifference[] = [];

  if (outcome.outcome === 'rejected') {
    // No answer about the manifest at all: the check cannot go on (unreachable, not allowed to patch).
    if (['unreachable', 'unauthenticated', 'forbidden', 'configuration'].includes(outcome.problem.kind)) return { ok: false, problem: outcome.problem };
    const answer = outcome.problem.message;
    // A dry run creates nothing: the Namespace among the files is not there for it either.
    const foreseen = outcome.problem.reason === 'NotFound' ? ['invalid-manifest', 'namespace-not-found', 'namespace-from-files'] : ['invalid-manifest'];
    if (!predicted.some((f) => foreseen.includes(f.code))) {
      differences.push({ message: `the server refuses the manifest: ${answer}; the prediction did not foresee it`, range: whole });
    }
    return { ok: true, verification: { agrees: differences.length === 0, serverAnswer: answer, differences } };
  }

  if (outcome.outcome === 'accepted') {
    for (const f of predicted) {
      differences.push({
        message: `the server accepts the dry run, though the prediction says ${f.code}${f.path ? ` on ${f.path}` : ''}`,
        range: f.range,
        ...(f.path !== undefined ? { path: f.path } : {}),
      });
    }
    return { ok: true, verification: { agrees: differences.length === 0, serverAnswer: 'accepted', differences } };
  }

  const answer = outcome.message;
  const expectedCode = {
    fieldManager: 'field-conflict',
    alreadyExists: 'already-exists',
    resourceVersion: 'stale-resource-version',
    uid: 'uid-mismatch',
    other: undefined,
  }[outcome.conflict];
  if (outcome.conflict === 'fieldManager') {
    const predictedPaths = new Set(predicted.filter((f) => f.code === 'field-conflict').map((f) => f.path ?? ''));
    const serverPaths = new Set(outcome.causes.map((c) => c.field));
    for (const cause of outcome.causes) {
      if (predictedPaths.has(cause.field)) continue;
      differences.push({
        message: `the server names a conflict the prediction missed: ${cause.field} (${cause.message})`,
        range: rangeOfPath(resource, cause.field, schema) ?? whole,
        path: cause.field,
      });
    }
    for (const f of predicted.filter((p) => p.code === 'field-conflict' && !serverPaths.has(p.path ?? ''))) {
      differences.push({ message: `the server does not name ${f.path ?? 'this field'} among the conflicts`, range: f.range, ...(f.path !== undefined ? { path: f.path } : {}) });
    }
  } else if (!expectedCode || !predicted.some((f) => f.code === expectedCode)) {
    differences.push({ message: `the server answers 409: ${answer}; the prediction did not foresee it`, range: whole });
  }
  return { ok: true, verification: { agrees: differences.length === 0, serverAnswer: answer, differences } };
}

/**
 * --verify: the server's dry-run answer for one object beside its prediction (nothing without a
 * verifier, for a kind not served, or an object without a name). Plain manifests, overlays' and
 * charts' rendered objects go the same way, sent as the mode says: `serverSide` an apply, `create`
 * a create, `clientSide` an update (as client-side apply and Helm 3 send it: a patch of the object
 * that exists, else a create). `manifest` is what is sent when it is not the document as written
 * (a chart's object with the release's ownership metadata Helm adds).
 */
export async function verifyResource(
  resource: ManifestResource,
  findings: readonly Finding[],
  answer: Extract<Awaited<ReturnType<FactsReader['read']>>, { ok: true }>,
  settings: AnalysisSettings,
  verifier: ClusterConnection | undefined,
  // The text goes as written (duplicates, scalars) when the document is the object itself.
  manifest: DryRunManifest = resource.itemIndex === undefined ? { object: resource.object, text: resource.documentText } : { object: resource.object },
): Promise<{ ok: true; verification?: Verification } | { ok: false; problem: ClusterProblem }> {
  if (!verifier || answer.facts.kind.state !== 'served' || resource.name === undefined) return { ok: true };
  const options = { fieldManager: settings.fieldManager, fieldValidation: 'Strict' as const };
  const outcome =
    settings.applyMode === 'create' || (settings.applyMode === 'clientSide' && answer.facts.live.state !== 'exists')
      ? await verifier.dryRunCreate(manifest, options)
      : settings.applyMode === 'clientSide'
        ? await verifier.dryRunPatch(manifest, options)
        : await verifier.dryRunApply(manifest, options);
  const compared = compareWithServer(resource, findings, outcome, answer.facts.schema);
  return compared.ok ? { ok: true, verification: compared.verification } : compared;
}

/** Where the manifest writes a field the server names, or its nearest written ancestor. */
function rangeOfPath(resource: ManifestResource, serverPath: string, schema: SchemaModel | undefined): Range | undefined {
  const path = parsePath(serverPath);
  return path ? rangeFor(resource, path, schema).key : undefined;
}


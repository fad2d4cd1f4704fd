// The server's own answer to a dry run of a manifest (dryRun=All, nothing is stored), set beside the
// prediction. Where they part, the server is right. One comparison for the editor's "Confirm with a
// dry-run apply" and the command line's --verify, so the two can never judge the same answer apart;
// each only presents the result (diagnostics, report records).
import type { ManifestResource, Range } from '../manifest/manifest';
import { firstCharacter } from '../manifest/manifest';
import { parsePath } from '../ssa/path';
import { describeManager, type ConflictCause } from '../ssa/messages';
import type { SchemaModel } from '../ssa/schema';
import type { Finding } from './finding';
import { rangeFor } from './locate';
import { defaultSeverity, dryRunDiffersCode } from './catalogue';

/** The server's answer, as the verifier returns it (plain data; `P` is the cluster's problem record). */
export type DryRunAnswer<P extends { kind: string; message: string; reason?: string }> =
  | { outcome: 'accepted' }
  | {
      outcome: 'conflict';
      conflict: 'fieldManager' | 'alreadyExists' | 'resourceVersion' | 'uid' | 'other';
      message: string;
      causes: readonly ConflictCause[];
    }
  | { outcome: 'rejected'; problem: P; causes: readonly ConflictCause[] };

export interface VerificationDifference {
  readonly message: string;
  readonly range: Range;
  /** The field, in the server's notation, when the difference is about one. */
  readonly path?: string;
}

/** What the server answered to a dry run of the object, compared with the prediction. */
export interface Verification {
  readonly agrees: boolean;
  /** The server's answer in its own words (`accepted`, or its Status message). */
  readonly serverAnswer: string;
  readonly differences: readonly VerificationDifference[];
}

/** The 409s and refusals the prediction can name, by the finding code that names them. */
const refusalCodes = new Set([
  'forbidden',
  'field-conflict',
  'already-exists',
  'stale-resource-version',
  'uid-mismatch',
  'invalid-manifest',
  'namespace-not-found',
  'namespace-from-files',
  'validation-rule-fails',
  'field-immutable',
  // The object the request would store: its built-in validation (422), Pod Security admission (403).
  'invalid-merged-object',
  'pod-security-forbidden',
]);

/** Problems that are no answer about the manifest at all: the object could not be verified. */
const noAnswer = new Set(['unreachable', 'unauthenticated', 'forbidden', 'configuration']);

/**
 * The server stops at its first refusal, so the comparison asks that the refusal it gave was
 * foreseen; for field conflicts, that the server names exactly the conflicts predicted, each with
 * the manager the prediction names (the owner is what the user acts on). An accepted dry run
 * disagrees with every predicted refusal.
 */
export function compareWithServer<P extends { kind: string; message: string; reason?: string }>(
  resource: ManifestResource,
  findings: readonly Finding[],
  outcome: DryRunAnswer<P>,
  schema: SchemaModel | undefined,
): { ok: true; verification: Verification } | { ok: false; problem: P } {
  const predicted = findings.filter((f) => refusalCodes.has(f.code));
  const whole = firstCharacter(resource.range);
  const differences: VerificationDifference[] = [];
  const done = (serverAnswer: string) => ({
    ok: true as const,
    verification: { agrees: differences.length === 0, serverAnswer, differences },
  });

  if (outcome.outcome === 'rejected') {
    // The user may not send the request: the answer the prediction gave, when it gave it in the
    // server's words. A 403 the prediction did not give says nothing of the manifest.
    const refusal = outcome.problem.kind === 'forbidden' ? outcome.problem.message : undefined;
    if (
      refusal &&
      predicted.some((f) => f.code === 'forbidden' && f.serverMessage && refusal.includes(f.serverMessage))
    )
      return done(refusal);
    // Pod Security admission refuses a Pod with a 403 too: an answer about the manifest, not a permission the user lacks.
    const podSecurity =
      outcome.problem.kind === 'forbidden' && / is forbidden: violates PodSecurity "/.test(outcome.problem.message);
    if (noAnswer.has(outcome.problem.kind) && !podSecurity) return { ok: false, problem: outcome.problem };
    const answer = outcome.problem.message;
    // A uid of another incarnation of the object: the server refuses it as immutable (422 Invalid), not with a 409.
    // A missing namespace: 404 NotFound. A dry run creates nothing, so a Namespace among the files
    // checked together is not there for it either.
    // A CRD validation rule: the server's 422 lists the failure in the words the finding carries;
    // a rule the product could not evaluate, or the data of an immutable Secret, leaves a 422 possible.
    const foreseen =
      predicted.some(
        (f) =>
          f.code === 'invalid-manifest' ||
          (f.code === 'validation-rule-fails' &&
            outcome.problem.reason === 'Invalid' &&
            (f.serverMessage === undefined || answer.includes(f.serverMessage))) ||
          (f.code === 'uid-mismatch' && f.liveValue !== undefined && outcome.problem.reason === 'Invalid') ||
          // A field the server keeps as it was (422 Invalid).
          (f.code === 'field-immutable' && outcome.problem.reason === 'Invalid') ||
          ((f.code === 'namespace-not-found' || f.code === 'namespace-from-files') &&
            outcome.problem.reason === 'NotFound') ||
          // The stored object's built-in validation, in the words of the cause the finding carries.
          (f.code === 'invalid-merged-object' &&
            outcome.problem.reason === 'Invalid' &&
            (f.serverMessage === undefined || answer.includes(f.serverMessage))) ||
          (f.code === 'pod-security-forbidden' &&
            podSecurity &&
            (f.serverMessage === undefined || answer.includes(f.serverMessage))),
      ) ||
      (outcome.problem.reason === 'Invalid' &&
        findings.some((f) => f.code === 'validation-rule-unknown' || f.code === 'secret-immutable-data-unverified'));
    if (!foreseen)
      differences.push({
        message: `the server refuses the manifest: ${answer}; the prediction did not foresee it`,
        range: whole,
      });
    return done(answer);
  }

  if (outcome.outcome === 'accepted') {
    for (const f of predicted) {
      differences.push({
        message: `the server accepts the dry run, though the prediction says ${f.code}${f.path ? ` on ${f.path}` : ''}`,
        range: f.range,
        ...(f.path !== undefined ? { path: f.path } : {}),
      });
    }
    return done('accepted');
  }

  const answer = outcome.message;
  if (outcome.conflict === 'fieldManager') {
    const key = (manager: string, path: string) => `${manager}\u0000${path}`;
    const predictedConflicts = predicted.filter((f) => f.code === 'field-conflict');
    const predictedKeys = new Set(
      predictedConflicts.map((f) => key(f.manager ? describeManager(f.manager) : '', f.path ?? '')),
    );
    const serverKeys = new Set(outcome.causes.map((c) => key(c.message.replace(/^conflicts? with /, ''), c.field)));
    for (const cause of outcome.causes) {
      if (predictedKeys.has(key(cause.message.replace(/^conflicts? with /, ''), cause.field))) continue;
      differences.push({
        message: `the server names a conflict the prediction missed: ${cause.field} (${cause.message})`,
        range: rangeOfPath(resource, cause.field, schema) ?? whole,
        path: cause.field,
      });
    }
    for (const f of predictedConflicts) {
      if (serverKeys.has(key(f.manager ? describeManager(f.manager) : '', f.path ?? ''))) continue;
      differences.push({
        message: `the server does not name ${f.path ?? 'this field'}${f.manager ? ` with ${describeManager(f.manager)}` : ''} among the conflicts`,
        range: f.range,
        ...(f.path !== undefined ? { path: f.path } : {}),
      });
    }
    return done(answer);
  }
  const expectedCode = {
    alreadyExists: 'already-exists',
    resourceVersion: 'stale-resource-version',
    uid: 'uid-mismatch',
    other: undefined,
  }[outcome.conflict];
  if (!expectedCode || !predicted.some((f) => f.code === expectedCode)) {
    differences.push({ message: `the server answers 409: ${answer}; the prediction did not foresee it`, range: whole });
  }
  return done(answer);
}

/** The differences as findings, on the lines they concern (the editor shows them as diagnostics). */
export function differenceFindings(verification: Verification): Finding[] {
  return verification.differences.map((d) => ({
    code: dryRunDiffersCode,
    severity: defaultSeverity(dryRunDiffersCode),
    message: d.message,
    range: d.range,
    ...(d.path !== undefined ? { path: d.path } : {}),
  }));
}

/** Where the manifest writes a field the server names, or its nearest written ancestor. */
function rangeOfPath(
  resource: ManifestResource,
  serverPath: string,
  schema: SchemaModel | undefined,
): Range | undefined {
  const path = parsePath(serverPath);
  return path ? rangeFor(resource, path, schema).key : undefined;
}

// One dry run per object, sent as the user's tool sends it, and the server's answer compared with
// the prediction (core/findings/verification.ts). The editor's "Confirm with a dry-run apply" and
// the command line's --verify both come here, so they send the same request and judge its answer
// alike; they differ only in how they show the result.
import {
  compareWithServer,
  type AnalysisSettings,
  type Finding,
  type ResourceFacts,
  type Verification,
} from '../core/findings';
import type { ManifestResource } from '../core/manifest/manifest';
import type { ClusterConnection } from './connection';
import type { DryRunManifest } from './verifier';
import type { ClusterProblem, DryRunOutcome } from './types';

/**
 * What is sent: the object as kubectl sends it, JSON of the manifest as kubectl decodes it (the
 * parser's object: YAML 1.1 scalars, the last of two equal keys; `kubectl apply --server-side
 * -v=9` shows this body, under `application/apply-patch+yaml`), never the document's text.
 * The text would be judged apart from kubectl: the server's strict decoding refuses a key written
 * twice that kubectl silently drops. And the API server cannot audit a PATCH whose body is not
 * JSON: it records the patch as a JSON `requestObject` (apiserver audit/context.go
 * LogRequestPatch), so wherever the audit policy logs request bodies (Secrets, as often) the JSON
 * backend fails to encode the event ("Error in audit plugin 'log' ... error calling MarshalJSON
 * for type *runtime.Unknown") and drops it: the dry run would leave no trace in the audit log.
 */
export function dryRunManifestOf(resource: ManifestResource): DryRunManifest {
  return { object: resource.object };
}

/**
 * The request the mode says, with kubectl's default `fieldValidation=Strict` (an unknown or
 * duplicate field is a refusal, as `kubectl apply` makes it): `serverSide` an apply, `create` a
 * create, `clientSide` an update (as client-side apply and Helm 3 send it: a patch of the object
 * that exists, else a create).
 */
export function sendDryRun(
  connection: Pick<ClusterConnection, 'dryRunApply' | 'dryRunCreate' | 'dryRunPatch'>,
  manifest: DryRunManifest,
  settings: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'>,
  liveExists: boolean,
): Promise<DryRunOutcome> {
  const options = { fieldManager: settings.fieldManager, fieldValidation: 'Strict' as const };
  if (createsIn(settings, liveExists))
    return connection.dryRunCreate(sentManifest(manifest, settings, liveExists), options);
  if (settings.applyMode === 'clientSide') return connection.dryRunPatch(manifest, options);
  return connection.dryRunApply(manifest, options);
}

const createsIn = (settings: Pick<AnalysisSettings, 'applyMode'>, liveExists: boolean): boolean =>
  settings.applyMode === 'create' || (settings.applyMode === 'clientSide' && !liveExists);

/**
 * The object the dry run sends in this mode. kubectl clears a new object's resourceVersion before
 * it sends it (its resource helper's `Create(namespace, modify=true, obj)`, for `kubectl create`
 * and for `kubectl apply` of a new object), so a create goes without it and never hears the
 * storage's 500 for it; an apply or a patch sends the object whole.
 */
export function sentManifest(
  manifest: DryRunManifest,
  settings: Pick<AnalysisSettings, 'applyMode'>,
  liveExists: boolean,
): DryRunManifest {
  const meta = manifest.object.metadata;
  if (
    !createsIn(settings, liveExists) ||
    typeof meta !== 'object' ||
    meta === null ||
    Array.isArray(meta) ||
    !('resourceVersion' in meta)
  )
    return manifest;
  const { resourceVersion: _cleared, ...rest } = meta;
  return { object: { ...manifest.object, metadata: rest } };
}

/**
 * `verification`: the server's answer beside the prediction. `notSent`: why the object was not sent
 * though it would have been (a name or namespace the API server refuses never reaches a URL), so it
 * is not verified. Neither: nothing to verify (a kind not served, no name to apply to).
 */
export type VerifyAnswer =
  { ok: true; verification?: Verification; notSent?: string } | { ok: false; problem: ClusterProblem };

/**
 * The server's dry-run answer for one object beside its findings. Nothing for a kind not served
 * (the prediction already says so), nor for an object without a name in the apply modes (there is
 * nothing to apply to, and kubectl refuses to send it); a create with generateName is sent, since
 * `kubectl create` sends it and the server may still refuse it.
 * `manifest` is what is sent when it is not the document as written (a chart's object with the
 * release's ownership metadata Helm adds).
 */
export async function verifyResource(
  connection: ClusterConnection,
  resource: ManifestResource,
  findings: readonly Finding[],
  facts: ResourceFacts,
  settings: Pick<AnalysisSettings, 'fieldManager' | 'applyMode'>,
  manifest: DryRunManifest = dryRunManifestOf(resource),
): Promise<VerifyAnswer> {
  if (facts.kind.state !== 'served') return { ok: true };
  if (resource.name === undefined && !(settings.applyMode === 'create' && resource.generateName !== undefined))
    return { ok: true };
  // The server never heard of this object: its refusal of the name is the prediction's own finding,
  // and counting it as the server's agreement would claim a dry run that was never sent.
  if (facts.live.state === 'invalidName') return { ok: true, notSent: facts.live.message };
  const outcome = await sendDryRun(connection, manifest, settings, facts.live.state === 'exists');
  // The verifier's own check of the path (a create's namespace, a default namespace): nothing was sent either.
  if (outcome.outcome === 'rejected' && outcome.problem.kind === 'invalidName')
    return { ok: true, notSent: outcome.problem.message };
  return compareWithServer(resource, findings, outcome, facts.schema);
}

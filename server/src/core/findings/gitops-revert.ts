// For someone applying or editing by hand an object a GitOps controller applies: what will happen to
// the change, and when. Made from the live object's owners (the controller's fields are what Git
// set at its last sync) and the policy of the controller's object as read (ResourceFacts.appliers):
// - Flux kustomize-controller, at its next reconciliation (every `spec.interval`), first hands every
//   managedFields entry whose manager starts with `kubectl` (kubectl, kubectl-edit,
//   kubectl-client-side-apply …) to itself, then applies Git with force: a field Git sets goes back
//   to Git's value, and a field only kubectl set is removed (Git does not set it), unless another
//   manager also owns it. The object's `kustomize.toolkit.fluxcd.io/ssa` annotation changes that:
//   `Merge` keeps the fields Git does not set, `IfNotPresent` and `Ignore` leave the object alone
//   (fluxcd/pkg ssa manager_apply.go; kustomize-controller v1.9.6; the corpus in test/differential/gitops).
// - Argo CD puts back the fields its last sync wrote whose value the change makes differ: within about
//   5 s with self-heal, at the next sync otherwise. `ignoreDifferences` hides the drift from the
//   comparison, so self-heal does not start for it, but a sync for another reason writes Git's value
//   again — unless `RespectIgnoreDifferences=true` (argo-cd docs: sync-options, diff-strategies;
//   argo-cd#7820). Fields Git does not set are left alone.
// - Flux helm-controller corrects the fields it wrote when `spec.driftDetection.mode` is `enabled`,
//   except on an object marked `helm.toolkit.fluxcd.io/driftDetection: disabled` (helm-controller
//   internal/action/diff.go: fluxcd/pkg/ssa jsondiff with that exclusion, then a JSON patch as
//   helm-controller; the corpus in test/differential/gitops-reverts.test.ts).
// A policy that could not be read says nothing here (the hover says it is unknown): never a guess.
import { jsonEqual, type JsonObject } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import type {
  ApplierPolicy,
  ArgoApplicationPolicy,
  FluxHelmReleasePolicy,
  FluxKustomizationPolicy,
} from '../gitops/model';
import { argoIgnores, fluxSsaAnnotation, fluxSsaModeOf, helmDriftExcluded, jsonPointerOf } from '../gitops/policy';
import { defaultSeverity } from './catalogue';
import type { ResourceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldState } from './fleet';
import { showValue } from './show-value';

export interface RevertInput {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  readonly facts: ResourceFacts;
  readonly live: JsonObject;
  /** The manifest's fields as the live object holds them (fleet.ts fieldStates), read once for both judgements. */
  readonly fields: readonly FieldState[];
  /** The field manager the user applies as. */
  readonly fieldManager: string;
}

/** One warning per field the controller will take back, on the field's key. */
export function revertFindings(input: RevertInput): Finding[] {
  const policies = (input.facts.appliers?.policies ?? []).flatMap((p) => (p.state === 'read' ? [p.policy] : []));
  if (policies.length === 0) return [];
  const fields = input.fields;
  const out: Finding[] = [];
  for (const policy of policies) {
    for (const field of fields) {
      const said = judgeField(policy, field, input);
      if (said)
        out.push({
          code: 'gitops-reverts',
          severity: defaultSeverity('gitops-reverts'),
          message: said,
          range: field.range,
          object: input.object,
          path: field.path,
          ...(field.live !== undefined ? { liveValue: field.live } : {}),
          ...(field.manifest !== undefined ? { manifestValue: field.manifest } : {}),
        });
    }
  }
  return out;
}

function judgeField(policy: ApplierPolicy, field: FieldState, input: RevertInput): string | undefined {
  switch (policy.kind) {
    case 'flux-kustomize':
      return fluxKustomization(policy, field, input);
    case 'argocd':
      return argoApplication(policy, field, input);
    case 'flux-helm':
      return fluxHelmRelease(policy, field, input);
  }
}

/** Whether the manifest writes another value than the live one (a field the live object lacks included). */
function changes(field: FieldState): boolean {
  return field.manifest !== undefined && (field.live === undefined || !jsonEqual(field.live, field.manifest));
}

function owns(field: FieldState, manager: string): boolean {
  return field.owners.some((o) => o === manager);
}

function fluxKustomization(policy: FluxKustomizationPolicy, field: FieldState, input: RevertInput): string | undefined {
  if (policy.suspend) return undefined;
  const mode = fluxSsaModeOf(input.live);
  if (mode === 'Ignore' || mode === 'IfNotPresent') return undefined;
  const who = `Flux Kustomization ${policy.namespace}/${policy.name}`;
  const when = `at its next reconciliation, every ${policy.interval}`;
  const gitSets = owns(field, 'kustomize-controller');
  if (gitSets) {
    if (!changes(field)) return undefined;
    return `${who} puts ${field.path} back to ${showValue(field.live!)} (Git's value) ${when}: kustomize-controller applies Git with force, so the manifest's ${showValue(field.manifest!)} does not stay.`;
  }
  // Not Git's field: kept with `Merge`, or when the user's manager is not one Flux takes over.
  if (mode === 'Merge' || !input.fieldManager.startsWith('kubectl')) return undefined;
  // Another manager that Flux does not take over keeps the field (it owns it too).
  const keptBy = field.owners.filter((o) => !isFluxCleaned(o) && o !== input.fieldManager);
  if (keptBy.length > 0) return undefined;
  return `${who} removes ${field.path} ${when}: Git does not set it, and Flux takes over kubectl's fields before each apply, then prunes those Git no longer sets. Put it in Git, or annotate the object ${fluxSsaAnnotation}: Merge to keep fields Git does not set.`;
}

/** The managers kustomize-controller's cleanup hands to itself: by name prefix (their subresource entries are kept). */
function isFluxCleaned(owner: string): boolean {
  if (owner.includes(' (')) return false;
  return owner.startsWith('kubectl') || owner.startsWith('before-first-apply') || owner === 'kustomize-controller';
}

function argoApplication(policy: ArgoApplicationPolicy, field: FieldState, input: RevertInput): string | undefined {
  if (!owns(field, 'argocd-controller') || !changes(field)) return undefined;
  const who = `Argo CD application ${policy.name}`;
  if (argoIgnores(policy, input.resource, jsonPointerOf(field.path), input.fieldManager)) {
    if (policy.respectIgnoreDifferences) return undefined;
    return `${who} ignores ${field.path} in its diff (ignoreDifferences), so self-heal does not start for it, but the next sync for any other reason writes Git's ${showValue(field.live!)} again: add RespectIgnoreDifferences=true to the Application's syncOptions to keep the live value.`;
  }
  if (policy.automated && policy.selfHeal)
    return `${who} (self-heal on) will put back ${field.path} within about 5 s: Git's ${showValue(field.live!)}, not the manifest's ${showValue(field.manifest!)}.`;
  if (policy.automated)
    return `${who} (automated, self-heal off) puts back ${field.path} to Git's ${showValue(field.live!)} at its next sync (a new commit); until then it shows OutOfSync.`;
  return `${who} (manual sync) puts back ${field.path} to Git's ${showValue(field.live!)} at the next sync anyone starts; until then it shows OutOfSync.`;
}

function fluxHelmRelease(policy: FluxHelmReleasePolicy, field: FieldState, input: RevertInput): string | undefined {
  if (policy.suspend || policy.driftDetection !== 'enabled' || helmDriftExcluded(input.live)) return undefined;
  if (!owns(field, 'helm-controller') || !changes(field)) return undefined;
  return `Flux HelmRelease ${policy.namespace}/${policy.name} corrects drift (driftDetection enabled): ${field.path} goes back to ${showValue(field.live!)} at its next reconciliation, every ${policy.interval}.`;
}

// For the repository a GitOps controller applies from (`check --applier flux`, or the applier
// detected from the Flux Kustomization or Argo CD Application whose path holds the file): what the
// controller's own request will do when it syncs the manifest. The controller forces its apply, so
// there is no 409 to predict; instead each field it takes from another manager is said, as
// information, on the field's line (`Flux kustomize-controller takes .spec.replicas from
// kubectl-edit (5 → 3) at its next reconciliation`), and each field it removes that another manager
// set (Flux hands kubectl's fields to itself before it applies, then prunes what Git does not set)
// on the object's name. Computed by the controller's request as controller-apply.ts predicts it
// (Flux's cleanup and `ssa:` annotations, Argo CD's migration, ignoreDifferences with
// RespectIgnoreDifferences, Helm's forced upgrade), which the differential suite holds to the
// controllers' own apply code on the real API server.
import type { JsonObject, JsonValue } from '../json';
import type { ManifestResource, Range } from '../manifest/manifest';
import { controllerManagers, controllerSend } from '../gitops/controller-request';
import { predictControllerApply } from '../gitops/controller-apply';
import type { ArgoApplicationPolicy, ControllerApplier } from '../gitops/model';
import { fluxSsaAnnotation, jsonPointerOf } from '../gitops/policy';
import { pathElementKey } from '../ssa/field-set';
import type { ManagerIdentity } from '../ssa/messages';
import { formatPath, type FieldPath } from '../ssa/path';
import type { SchemaModel } from '../ssa/schema';
import { defaultSeverity } from './catalogue';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldRange } from './locate';
import { showValue } from './show-value';

export interface TakesInput {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  readonly applier: ControllerApplier;
  readonly live: JsonObject | undefined;
  readonly schema: SchemaModel;
  readonly resourceName: { readonly group: string; readonly resource: string };
  at(path: FieldPath): FieldRange;
  nameRange(): Range;
}

/** Who the controller is, in a finding's words: `Flux kustomize-controller`, `Argo CD application shop`. */
export function controllerWho(applier: ControllerApplier): string {
  const p = applier.policy;
  switch (applier.name) {
    case 'flux':
      return p?.kind === 'flux-kustomize' ? `Flux Kustomization ${p.namespace}/${p.name}` : 'Flux kustomize-controller';
    case 'flux-helm':
      return p?.kind === 'flux-helm' ? `Flux HelmRelease ${p.namespace}/${p.name}` : 'Flux helm-controller';
    case 'argocd':
    case 'argocd-ssa':
      return p?.kind === 'argocd' ? `Argo CD application ${p.name}` : 'Argo CD';
  }
}

/** When it sends the request. */
export function controllerWhen(applier: ControllerApplier): string {
  const p = applier.policy;
  switch (applier.name) {
    case 'flux':
    case 'flux-helm':
      return p && 'interval' in p && p.interval
        ? `at its next reconciliation (every ${p.interval})`
        : 'at its next reconciliation';
    case 'argocd':
    case 'argocd-ssa':
      return 'at its next sync';
  }
}

/** One information finding per field the controller takes from another manager. */
export function takesFindings(input: TakesInput): Finding[] {
  const { resource, applier, live } = input;
  if (!live) return [];
  const send = controllerSend(applier, resource.object, live);
  const predicted = predictControllerApply({
    live,
    manifest: send.manifest,
    request: send.request,
    schema: input.schema,
    resource: input.resourceName,
  });
  if (predicted.outcome !== 'applied') return [];
  const own = controllerManagers[applier.name];
  const changed = new Map(predicted.changed.map((c) => [formatPath(c.path), c]));
  const isRemoved = (path: FieldPath) => predicted.removed.some((r) => within(path, r));
  const takes = new Map<string, Take>();
  const note = (
    path: FieldPath,
    from: ManagerIdentity,
    before: JsonValue | undefined,
    after: JsonValue | undefined,
    gone: boolean,
  ) => {
    const key = formatPath(path);
    const known = takes.get(key);
    if (known) {
      if (!known.from.some((f) => sameManager(f, from))) known.from.push(from);
      return;
    }
    takes.set(key, { path, key, from: [from], before, after, gone });
  };
  for (const c of predicted.taken) {
    if (c.manager.manager === own) continue;
    note(c.path, c.manager, c.liveValue, c.manifestValue, false);
  }
  for (const h of predicted.handedOver) {
    if (h.from.manager === own) continue;
    for (const path of h.paths) {
      const key = formatPath(path);
      const change = changed.get(key);
      if (change) note(path, h.from, change.before, change.after, change.after === undefined);
      else if (isRemoved(path)) note(path, h.from, undefined, undefined, true);
    }
  }
  // One finding for the top-most field of a taken subtree (a list item, a map), not each leaf in it.
  const all = [...takes.values()];
  const topMost = all.filter(
    (t) => !all.some((o) => o !== t && o.path.length < t.path.length && within(t.path, o.path)),
  );
  const who = controllerWho(applier);
  const when = controllerWhen(applier);
  return topMost.map((t) => {
    const from = t.from.map(managerLabel).join(', ');
    const values =
      t.before !== undefined && t.after !== undefined ? ` (${showValue(t.before)} → ${showValue(t.after)})` : '';
    const where = input.at(t.path);
    const written = !t.gone && where.node !== undefined;
    const message = t.gone
      ? `${who} removes ${t.key} ${when}: ${from} set it, the controller takes it over and Git does not set it.${keepHint(applier, input.resource, t)}`
      : `${who} takes ${t.key} from ${from}${values} ${when}.${keepHint(applier, input.resource, t)}`;
    return {
      code: 'gitops-takes',
      severity: defaultSeverity('gitops-takes'),
      message,
      range: written ? (where.node === 'scalar' ? where.value : where.key) : input.nameRange(),
      object: input.object,
      path: t.key,
      manager: t.from[0]!,
      ...(t.before !== undefined ? { liveValue: t.before } : {}),
      ...(t.after !== undefined ? { manifestValue: t.after } : {}),
    };
  });
}

interface Take {
  readonly path: FieldPath;
  readonly key: string;
  readonly from: ManagerIdentity[];
  readonly before: JsonValue | undefined;
  readonly after: JsonValue | undefined;
  readonly gone: boolean;
}

/** Whether `path` is `prefix` or below it, element by element (a key may hold dots: `app.kubernetes.io/name`). */
function within(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((e, i) => pathElementKey(e) === pathElementKey(path[i]!));
}

function sameManager(a: ManagerIdentity, b: ManagerIdentity): boolean {
  return a.manager === b.manager && a.operation === b.operation && a.subresource === b.subresource;
}

function managerLabel(m: ManagerIdentity): string {
  return m.subresource ? `${m.manager} (${m.subresource})` : m.manager;
}

/** How to keep the other manager's value, in the controller's own terms. */
function keepHint(applier: ControllerApplier, resource: ManifestResource, t: Take): string {
  if (applier.name === 'flux')
    return ` To leave the live object alone, annotate it ${fluxSsaAnnotation}: IfNotPresent.`;
  if (applier.name === 'argocd' || applier.name === 'argocd-ssa') {
    const pointer = jsonPointerOf(t.key);
    return ` To keep the live value: ${argoKeepSnippet(resource, pointer ? { jsonPointers: [pointer] } : { managedFieldsManagers: [...new Set(t.from.map((f) => f.manager))] }, applier.policy?.kind === 'argocd' ? applier.policy : undefined)}.`;
  }
  return '';
}

/**
 * The Application's `ignoreDifferences` entry that keeps a field's live value, with the sync option
 * that makes Argo CD apply it so (RespectIgnoreDifferences=true), as one copyable line of YAML flow.
 */
export function argoKeepSnippet(
  resource: Pick<ManifestResource, 'apiVersion' | 'kind' | 'name'>,
  keep: { readonly jsonPointers?: readonly string[]; readonly managedFieldsManagers?: readonly string[] },
  policy?: ArgoApplicationPolicy,
): string {
  const group = resource.apiVersion.includes('/') ? resource.apiVersion.slice(0, resource.apiVersion.indexOf('/')) : '';
  const entry = [
    ...(group ? [`group: ${group}`] : []),
    `kind: ${resource.kind}`,
    ...(resource.name !== undefined ? [`name: ${resource.name}`] : []),
    ...(keep.jsonPointers ? [`jsonPointers: [${keep.jsonPointers.join(', ')}]`] : []),
    ...(keep.managedFieldsManagers ? [`managedFieldsManagers: [${keep.managedFieldsManagers.join(', ')}]`] : []),
  ].join(', ');
  const respect = policy?.respectIgnoreDifferences
    ? ''
    : ' and syncPolicy.syncOptions: [RespectIgnoreDifferences=true]';
  return `add to the Application${policy ? ` ${policy.name}` : ''} spec.ignoreDifferences: [{${entry}}]${respect}`;
}

/** The annotation by which Flux leaves an existing object alone, and its value. */
export const fluxKeepAnnotation = { key: fluxSsaAnnotation, value: 'IfNotPresent' } as const;

/**
 * Whether a finding is Flux kustomize-controller taking a field (a take, or a fight over it), which
 * the object's `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` ends: the quick fix adds it.
 */
export function fluxMayKeepLive(finding: Pick<Finding, 'code' | 'message'>): boolean {
  return (
    (finding.code === 'gitops-takes' || finding.code === 'gitops-fight' || finding.code === 'gitops-fight-at-sync') &&
    (finding.message.startsWith('Flux Kustomization ') || finding.message.startsWith('Flux kustomize-controller '))
  );
}

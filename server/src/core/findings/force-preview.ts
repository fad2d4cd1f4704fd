// What `kubectl apply --server-side --force-conflicts` would do to the other managers, before anything
// is sent: which fields each manager loses, and who will write them back afterwards. kubectl asks
// its users to decide on force blind (kubernetes/kubernetes#113612); this is the answer from the
// prediction the findings come from, so the preview lists exactly the conflicts the editor and the
// command line show.
//
// Forcing takes the conflicting fields from their managers: update.go Apply with force removes
// each manager's conflict set from its entry (and drops an entry left empty); the fields the
// last-applied configuration forgives (lastappliedmanager.go) are taken the same way, with or
// without force. Who takes a field back is a judgement on the object around it:
// - an autoscaler: a HorizontalPodAutoscaler whose scaleTargetRef names the object; its controller
//   writes the replicas through the scale subresource as `kube-controller-manager` (the HPA
//   controller's Update sends no fieldManager, so the server takes the user agent's first word,
//   apiserver handlers/create.go prefixFromUserAgent, and client-go's user agent starts with the
//   binary's name);
// - the object's controller (an ownerReference with controller: true);
// - a GitOps controller, which re-applies only when self-heal or drift correction is on: "may".
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { decodeManagedFields } from '../ssa/managed-fields';
import { compareGoStrings } from '../ssa/field-set';
import { formatServerPath, managerIdentifier, type ManagerIdentity } from '../ssa/messages';
import type { ApplyPrediction, FieldConflict } from '../ssa/predict';
import type { ObjectIdentity } from './finding';
import { showValue, showValues } from './show-value';
import { managerRole } from './managers';

/**
 * The HorizontalPodAutoscalers of the object's namespace, as the cluster layer read them
 * (autoscaling/v2, else v1: scaleTargetRef is the same in both), or why they are not known.
 */
export type AutoscalerFacts =
  | { readonly state: 'read'; readonly autoscalers: readonly JsonObject[] }
  | { readonly state: 'unknown'; readonly reason: string };

/** How the user would run the forced apply: the flags their settings give, and the file. */
export interface KubectlInvocation {
  /** The file as the user names it; `-` for the standard input. */
  readonly file: string;
  readonly context?: string;
  readonly namespace?: string;
  readonly kubeconfig?: string;
}

export interface ForcePreviewInput {
  readonly object: ObjectIdentity;
  /** The prediction the findings were made of (prediction.ts `predictionOf`); undefined when there is none. */
  readonly prediction: ApplyPrediction | undefined;
  /** The live object, with its managedFields and ownerReferences. */
  readonly live: JsonObject | undefined;
  readonly fieldManager: string;
  readonly autoscalers: AutoscalerFacts;
  readonly invocation: KubectlInvocation;
}

/** One field a manager loses. */
export interface ForceField {
  /** As the server prints it: `.spec.template.spec.containers[name="app"].image`. */
  readonly path: string;
  readonly liveValue?: JsonValue;
  readonly manifestValue?: JsonValue;
  /** Taken even without --force-conflicts: kubectl's last-applied configuration set it. */
  readonly withoutForce?: boolean;
}

/** Who writes the fields back after the forced apply, and how sure that is. */
export interface TakeBack {
  readonly certainty: 'will' | 'may';
  readonly kind: 'autoscaler' | 'controller' | 'gitops';
  /** The manager that will write them: `kube-controller-manager`. */
  readonly by: string;
  /** `an autoscaler (HorizontalPodAutoscaler web) scales this Deployment` */
  readonly reason: string;
  /** The fields it writes back (all the manager loses, or the replicas alone). */
  readonly paths: readonly string[];
}

/** One manager that would lose fields, as its managedFields entry names it. */
export interface ForceLoss {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly subresource?: string;
  /** The apiVersion its fields are recorded at. */
  readonly apiVersion?: string;
  /** When it last wrote (absent when the server recorded no time). */
  readonly time?: string;
  readonly fields: readonly ForceField[];
  readonly takesBack?: TakeBack;
  /** What the product could not decide about who takes them back (an autoscaler list it could not read). */
  readonly note?: string;
}

/** Fields only the server can decide about (a Secret's values, a manager at a version only it converts). */
export interface UncertainLoss {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly subresource?: string;
  readonly paths: readonly string[];
}

export interface ForcePreview {
  readonly object: ObjectIdentity;
  readonly fieldManager: string;
  readonly losses: readonly ForceLoss[];
  readonly uncertain: readonly UncertainLoss[];
  /** What the server would still answer with --force-conflicts (a stale resourceVersion, a refused value). */
  readonly stillRefused: readonly string[];
  /** The command to copy. */
  readonly command: string;
}

const gitOps: Record<string, string> = {
  'argocd-controller': 'Argo CD applies it again when the Application syncs with self-heal on',
  'argocd-application-controller': 'Argo CD applies it again when the Application syncs with self-heal on',
  'kustomize-controller':
    'Flux (kustomize-controller) applies it again at its next reconciliation unless the Kustomization is suspended',
  'helm-controller': 'Flux (helm-controller) corrects it when the HelmRelease has drift detection enabled',
};

/** Managers that are people or one-off tools: nothing writes their fields back on its own. */
function isOneOff(manager: string): boolean {
  return (
    manager === 'kubectl' ||
    manager.startsWith('kubectl-') ||
    manager === 'helm' ||
    manager === 'before-first-apply' ||
    manager === 'ancient-changes'
  );
}

export function forcePreview(input: ForcePreviewInput): ForcePreview {
  const { object, prediction, live } = input;
  const command = kubectlForceCommand(
    input.invocation,
    input.fieldManager,
    object.namespace !== undefined && object.namespace !== '',
  );
  const stillRefused = (prediction?.statuses ?? [])
    .filter((s) => s.kind !== 'fieldConflict')
    .map((s) => `${s.code}${s.reason ? ` ${s.reason}` : ''}: ${s.message}`);
  if (!prediction)
    return { object, fieldManager: input.fieldManager, losses: [], uncertain: [], stillRefused, command };

  const entries = new Map(
    decodeManagedFields(isJsonObject(live?.metadata) ? live.metadata.managedFields : undefined).entries.map((e) => [
      managerIdentifier(e.identity),
      e,
    ]),
  );
  const groups = new Map<string, { manager: ManagerIdentity; fields: ForceField[] }>();
  const add = (c: FieldConflict, withoutForce: boolean) => {
    const id = managerIdentifier(c.manager);
    const group = groups.get(id) ?? { manager: c.manager, fields: [] };
    const path = formatServerPath(c.path);
    if (group.fields.some((f) => f.path === path)) return;
    group.fields.push({
      path,
      ...(c.liveValue !== undefined ? { liveValue: c.liveValue } : {}),
      ...(c.manifestValue !== undefined ? { manifestValue: c.manifestValue } : {}),
      ...(withoutForce ? { withoutForce: true } : {}),
    });
    groups.set(id, group);
  };
  for (const c of prediction.conflicts) add(c, false);
  for (const c of prediction.forgiven) add(c, true);

  const targeting =
    input.autoscalers.state === 'read' ? autoscalersTargeting(object, input.autoscalers.autoscalers) : [];
  const controller = live ? controllerOf(live) : undefined;
  const losses: ForceLoss[] = [];
  // The server's order of managers (by identifier), as its conflict message lists them.
  for (const id of [...groups.keys()].sort(compareGoStrings)) {
    const { manager, fields } = groups.get(id)!;
    const entry = entries.get(id);
    const paths = fields.map((f) => f.path);
    const judged = judgeTakeBack(manager, paths, object, targeting, input.autoscalers, controller);
    losses.push({
      manager: manager.manager,
      operation: manager.operation,
      ...(manager.subresource ? { subresource: manager.subresource } : {}),
      ...((entry?.apiVersion ?? manager.apiVersion) ? { apiVersion: entry?.apiVersion ?? manager.apiVersion } : {}),
      ...(entry?.time !== undefined ? { time: entry.time } : {}),
      fields,
      ...judged,
    });
  }

  const uncertainGroups = new Map<string, UncertainLoss & { paths: string[] }>();
  for (const c of prediction.uncertain) {
    const id = managerIdentifier(c.manager);
    const group = uncertainGroups.get(id) ?? {
      manager: c.manager.manager,
      operation: c.manager.operation,
      ...(c.manager.subresource ? { subresource: c.manager.subresource } : {}),
      paths: [],
    };
    const path = formatServerPath(c.path);
    if (!group.paths.includes(path)) group.paths.push(path);
    uncertainGroups.set(id, group);
  }
  const uncertain = [...uncertainGroups.keys()].sort(compareGoStrings).map((id) => uncertainGroups.get(id)!);
  return { object, fieldManager: input.fieldManager, losses, uncertain, stillRefused, command };
}

function judgeTakeBack(
  manager: ManagerIdentity,
  paths: readonly string[],
  object: ObjectIdentity,
  targeting: readonly string[],
  autoscalers: AutoscalerFacts,
  controller: { kind: string; name: string } | undefined,
): { takesBack?: TakeBack; note?: string } {
  const viaScale = manager.subresource === 'scale';
  const replicas = paths.filter((p) => p === '.spec.replicas');
  // The autoscaler writes the replicas through /scale, whoever owns them now; the fields a /scale
  // writer owns are the ones the scale subresource maps (`.spec.replicas` for built-in kinds).
  const scaled = viaScale ? paths : replicas;
  if (scaled.length > 0 && targeting.length > 0) {
    const names = targeting.map((n) => `HorizontalPodAutoscaler ${n}`).join(', ');
    return {
      takesBack: {
        certainty: 'will',
        kind: 'autoscaler',
        by: 'kube-controller-manager',
        reason: `an autoscaler (${names}) scales this ${object.kind}`,
        paths: scaled,
      },
    };
  }
  const hpaLike = viaScale && manager.manager === 'kube-controller-manager';
  if (hpaLike && autoscalers.state === 'unknown') {
    return {
      takesBack: {
        certainty: 'may',
        kind: 'autoscaler',
        by: 'kube-controller-manager',
        reason: `kube-controller-manager writes through /scale as an autoscaler does, and whether a HorizontalPodAutoscaler targets this ${object.kind} is unknown (${autoscalers.reason})`,
        paths: scaled,
      },
    };
  }
  const gitOpsReason = gitOps[manager.manager];
  if (gitOpsReason)
    return { takesBack: { certainty: 'may', kind: 'gitops', by: manager.manager, reason: gitOpsReason, paths } };
  if (controller && !isOneOff(manager.manager)) {
    // A built-in controller (kube-controller-manager) of a built-in owner sets its objects again on
    // every sync; another manager under a controller is probably that controller, not certainly.
    const builtIn = manager.manager === 'kube-controller-manager';
    return {
      takesBack: {
        certainty: builtIn ? 'will' : 'may',
        kind: 'controller',
        by: manager.manager,
        reason: `this ${object.kind} is controlled by ${controller.kind} ${controller.name}, whose controller writes it`,
        paths,
      },
    };
  }
  if (hpaLike) return { note: `no HorizontalPodAutoscaler in this namespace targets this ${object.kind} now` };
  return {};
}

/** The names of the HorizontalPodAutoscalers whose scaleTargetRef is the object (kind, name, API group). */
export function autoscalersTargeting(object: ObjectIdentity, autoscalers: readonly JsonObject[]): string[] {
  const names: string[] = [];
  for (const hpa of autoscalers) {
    const spec = isJsonObject(hpa.spec) ? hpa.spec : undefined;
    const ref = spec && isJsonObject(spec.scaleTargetRef) ? spec.scaleTargetRef : undefined;
    if (!ref || ref.kind !== object.kind || ref.name !== object.name) continue;
    // The version does not matter (the HPA scales whatever version serves /scale); the group does.
    if (groupOf(typeof ref.apiVersion === 'string' ? ref.apiVersion : '') !== groupOf(object.apiVersion)) continue;
    const name = isJsonObject(hpa.metadata) && typeof hpa.metadata.name === 'string' ? hpa.metadata.name : '';
    names.push(name);
  }
  return names.sort();
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function controllerOf(live: JsonObject): { kind: string; name: string } | undefined {
  const refs =
    isJsonObject(live.metadata) && Array.isArray(live.metadata.ownerReferences) ? live.metadata.ownerReferences : [];
  for (const ref of refs)
    if (isJsonObject(ref) && ref.controller === true)
      return { kind: String(ref.kind ?? ''), name: String(ref.name ?? '') };
  return undefined;
}

/**
 * The command to copy: `kubectl apply --server-side --force-conflicts --field-manager=M -f FILE`,
 * with the kubeconfig, context and namespace the user's settings choose. A namespace is only
 * passed for an object that names none: kubectl refuses a flag that differs from the manifest's.
 */
export function kubectlForceCommand(
  invocation: KubectlInvocation,
  fieldManager: string,
  objectHasNamespace: boolean,
): string {
  const args = ['kubectl', 'apply', '--server-side', '--force-conflicts', `--field-manager=${fieldManager}`];
  if (invocation.kubeconfig) args.push(`--kubeconfig=${invocation.kubeconfig}`);
  if (invocation.context) args.push(`--context=${invocation.context}`);
  if (invocation.namespace && !objectHasNamespace) args.push(`--namespace=${invocation.namespace}`);
  args.push('-f', invocation.file);
  return args.map(shellQuote).join(' ');
}

/** A word as a POSIX shell reads it back unchanged: bare when safe, else in single quotes. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `kube-controller-manager (Update, scale)`: the manager as the one-line forms name it. */
export function lossLabel(loss: Pick<ForceLoss, 'manager' | 'operation' | 'subresource'>): string {
  return `${loss.manager} (${loss.operation}${loss.subresource ? `, ${loss.subresource}` : ''})`;
}

/**
 * The line the command line prints under a field conflict: what forcing takes from that manager
 * and who takes it back. Undefined when the preview does not list the field.
 */
export function forceLine(
  preview: ForcePreview,
  conflict: { path?: string; manager?: ManagerIdentity },
): string | undefined {
  const loss = lossOf(preview, conflict);
  return loss && `forcing takes ${conflict.path} from ${lossLabel(loss)}${takeBackClause(loss, conflict.path)}`;
}

/** The manager's loss that holds a conflict's field; undefined when the preview does not list it. */
export function lossOf(
  preview: ForcePreview,
  conflict: { path?: string; manager?: ManagerIdentity },
): ForceLoss | undefined {
  if (!conflict.manager || conflict.path === undefined) return undefined;
  const id = managerIdentifier(conflict.manager);
  const loss = preview.losses.find((l) => managerIdentifier(lossIdentity(l)) === id);
  return loss && loss.fields.some((f) => f.path === conflict.path) ? loss : undefined;
}

function lossIdentity(loss: ForceLoss): ManagerIdentity {
  return {
    manager: loss.manager,
    operation: loss.operation,
    ...(loss.operation === 'Update' && loss.apiVersion ? { apiVersion: loss.apiVersion } : {}),
    ...(loss.subresource ? { subresource: loss.subresource } : {}),
  };
}

/** `, which will take it back: ...` for one path, or for all of the manager's fields. */
function takeBackClause(loss: ForceLoss, path?: string): string {
  const it = path === undefined && loss.fields.length > 1 ? 'them' : 'it';
  const back = loss.takesBack;
  if (back && (path === undefined || back.paths.includes(path))) {
    return back.by === loss.manager
      ? `, which ${back.certainty} take ${it} back: ${back.reason}`
      : `; ${back.by} ${back.certainty} set ${it} again: ${back.reason}`;
  }
  const role = managerRole(lossIdentity(loss));
  return `; nothing is known to take ${it} back${loss.note ? ` (${loss.note})` : role ? ` (${role.short})` : ''}`;
}

/** The preview as text: the editor's read-only view and the command's `text`. */
export function renderForcePreview(preview: ForcePreview): string {
  const o = preview.object;
  const lines: string[] = [];
  lines.push(
    `Force preview: ${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name} (${o.apiVersion}), applied as ${JSON.stringify(preview.fieldManager)}`,
  );
  lines.push('');
  const fieldCount = preview.losses.reduce((n, l) => n + l.fields.length, 0);
  if (preview.losses.length === 0)
    lines.push('kubectl apply --server-side --force-conflicts would take no field from another manager.');
  else
    lines.push(
      `kubectl apply --server-side --force-conflicts would take ${fieldCount} field${fieldCount === 1 ? '' : 's'} from ${preview.losses.length} manager${preview.losses.length === 1 ? '' : 's'}:`,
    );
  for (const loss of preview.losses) {
    lines.push('');
    const details = [
      loss.operation,
      loss.subresource ? `subresource ${loss.subresource}` : undefined,
      loss.apiVersion,
      loss.time ? `last written ${loss.time}` : 'no time recorded',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(`${loss.manager} (${details})`);
    for (const f of loss.fields) {
      const [live, manifest] =
        f.liveValue !== undefined && f.manifestValue !== undefined
          ? showValues(f.liveValue, f.manifestValue)
          : [
              f.liveValue !== undefined ? showValue(f.liveValue) : 'unset',
              f.manifestValue !== undefined ? showValue(f.manifestValue) : 'unset',
            ];
      const values =
        f.liveValue !== undefined || f.manifestValue !== undefined ? `  live ${live} → manifest ${manifest}` : '';
      lines.push(
        `  ${f.path}${values}${f.withoutForce ? "  (taken even without --force-conflicts: kubectl's last-applied configuration set it)" : ''}`,
      );
    }
    const back = loss.takesBack;
    if (back) {
      const which = back.paths.length === loss.fields.length ? '' : ` ${back.paths.join(', ')}`;
      lines.push(
        `  ${back.certainty === 'will' ? 'Will be taken back' : 'May be taken back'}${which} by ${back.by}: ${back.reason}.`,
      );
    } else {
      const role = managerRole(lossIdentity(loss));
      lines.push(
        `  Nothing is known to take ${loss.fields.length === 1 ? 'it' : 'them'} back${loss.note ? `: ${loss.note}` : role ? ` (${role.short})` : ''}.`,
      );
    }
  }
  if (preview.uncertain.length > 0) {
    lines.push('');
    lines.push('Only the server can tell whether forcing also takes these (a dry run decides):');
    for (const u of preview.uncertain) lines.push(`  ${lossLabel(u)}: ${u.paths.join(', ')}`);
  }
  if (preview.stillRefused.length > 0) {
    lines.push('');
    lines.push('Forcing does not help against:');
    for (const s of preview.stillRefused) lines.push(`  ${s}`);
  }
  lines.push('');
  lines.push('The command:');
  lines.push(`  ${preview.command}`);
  lines.push('');
  lines.push("Nothing has been sent: this preview comes from the live object's managedFields.");
  return `${lines.join('\n')}\n`;
}

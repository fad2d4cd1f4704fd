// Two writers that keep taking a field from each other: the GitOps controller that applies the
// object from Git, and another active writer — a HorizontalPodAutoscaler scaling it through /scale,
// or a second GitOps controller applying the same object. Each sync forces Git's value back; the
// other sets its own again; the object flaps (flux2#1842, argo-cd#3002, grafana/mimir#7367). Said on
// the line of the field they fight over, naming both and the cycle. Continuous (an error) when the
// controller applies on its own schedule — a Flux Kustomization that is not suspended, an Argo CD
// Application with self-heal — a warning when only a sync that someone starts resets it.
import type { JsonObject } from '../json';
import type { ManifestResource, Range } from '../manifest/manifest';
import type { ApplierPolicy } from '../gitops/model';
import {
  argoIgnores,
  fluxSsaAnnotation,
  fluxSsaModeOf,
  helmDriftExcluded,
  helmDriftIgnores,
  jsonPointerOf,
} from '../gitops/policy';
import { argoKeepSnippet } from './gitops-takes';
import { defaultSeverity } from './catalogue';
import type { ResourceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldState } from './fleet';
import { autoscalersTargeting } from './force-preview';
import { showValue } from './show-value';

export interface FightInput {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  readonly facts: ResourceFacts;
  readonly live: JsonObject;
  /** The manifest's fields as the live object holds them (fleet.ts fieldStates), read once for both judgements. */
  readonly fields: readonly FieldState[];
  /** Where the object's name is written: a fight between two controllers is said there. */
  readonly nameRange: Range;
}

/** The fights over the manifest's fields: one finding per field and pair of writers. */
export function fightFindings(input: FightInput): Finding[] {
  const policies = (input.facts.appliers?.policies ?? []).flatMap((p) => (p.state === 'read' ? [p.policy] : []));
  if (policies.length === 0) return [];
  const out: Finding[] = [];
  const fields = input.fields;
  const replicas = fields.find((f) => f.path === '.spec.replicas');
  const autoscalers = input.facts.autoscalers;
  if (replicas && autoscalers?.state === 'read') {
    const hpas = autoscalersTargeting(input.object, autoscalers.autoscalers);
    for (const policy of policies) {
      const cycle = cycleOf(policy, input, '.spec.replicas');
      if (!cycle || hpas.length === 0) continue;
      const hpa = `HorizontalPodAutoscaler${hpas.length > 1 ? 's' : ''} ${hpas.join(', ')}`;
      const now =
        replicas.live !== undefined && replicas.owners.some((o) => o.endsWith('(scale)'))
          ? ` sets it back to ${showValue(replicas.live)}`
          : ' sets it to its own count';
      const code = cycle.continuous ? 'gitops-fight' : 'gitops-fight-at-sync';
      out.push({
        code,
        severity: defaultSeverity(code),
        message:
          `${cycle.who} sets replicas: ${showValue(replicas.manifest)} ${cycle.when}, and the ${hpa}${now}: ` +
          `they fight over .spec.replicas and the ${input.resource.kind} flaps. Remove replicas from Git and leave it ` +
          `to the autoscaler (the field is then pruned, and the ${input.resource.kind} falls back to 1 replica until the autoscaler scales it)` +
          (policy.kind === 'argocd'
            ? `, or ${argoKeepSnippet(input.resource, { jsonPointers: ['/spec/replicas'] }, policy)}.`
            : policy.kind === 'flux-kustomize'
              ? `, or annotate the object ${fluxSsaAnnotation}: IfNotPresent so that Flux leaves it alone.`
              : `, or add to the HelmRelease ${policy.namespace}/${policy.name} spec.driftDetection.ignore: ` +
                `[{paths: [/spec/replicas], target: {kind: ${input.resource.kind}, name: ${input.object.name ?? ''}}}] ` +
                `so that its drift correction leaves the autoscaler's count (an upgrade of the release still sets the chart's).`),
        range: replicas.range,
        object: input.object,
        path: '.spec.replicas',
        ...(replicas.live !== undefined ? { liveValue: replicas.live } : {}),
        manifestValue: replicas.manifest,
      });
    }
  }
  if (replicas && autoscalers?.state === 'unknown') {
    // Silence here would claim "no fight": say instead that it could not be judged, and why.
    const cycles = policies.flatMap((p) => cycleOf(p, input, '.spec.replicas') ?? []);
    if (cycles.length > 0) {
      const code = 'gitops-fight-unknown';
      out.push({
        code,
        severity: defaultSeverity(code),
        message:
          `${cycles[0]!.who} sets replicas: ${showValue(replicas.manifest)} ${cycles[0]!.when}; whether a ` +
          `HorizontalPodAutoscaler sets it back (a fight) is unknown: ${autoscalers.reason}`,
        range: replicas.range,
        object: input.object,
        path: '.spec.replicas',
        manifestValue: replicas.manifest,
      });
    }
  }
  // Two GitOps controllers applying one object: each sync takes back what the other set.
  const continuous = policies.flatMap((p) => {
    const cycle = cycleOf(p, input);
    return cycle?.continuous ? [cycle] : [];
  });
  if (continuous.length >= 2) {
    const [a, b] = continuous;
    const code = 'gitops-fight';
    out.push({
      code,
      severity: defaultSeverity(code),
      message: `${a!.who} and ${b!.who} both apply this object, each with force: every field where Git differs between them changes owner and value at each sync, back and forth. Leave the object to one of them.`,
      range: input.nameRange,
      object: input.object,
    });
  }
  return out;
}

/** How a controller writes Git's value again: who, how often, and whether on its own. Undefined: it does not. */
function cycleOf(
  policy: ApplierPolicy,
  input: FightInput,
  field?: string,
): { who: string; when: string; continuous: boolean } | undefined {
  switch (policy.kind) {
    case 'flux-kustomize': {
      if (policy.suspend) return undefined;
      const mode = fluxSsaModeOf(input.live);
      if (mode === 'Ignore' || mode === 'IfNotPresent') return undefined;
      return {
        who: `Flux Kustomization ${policy.namespace}/${policy.name}`,
        when: `every ${policy.interval}`,
        continuous: true,
      };
    }
    case 'argocd': {
      const pointer = field === undefined ? undefined : jsonPointerOf(field);
      const ignored = pointer !== undefined && argoIgnores(policy, input.resource, pointer);
      // RespectIgnoreDifferences with the path ignored: Argo CD applies the live value, and the fight ends.
      if (ignored && policy.respectIgnoreDifferences) return undefined;
      const who = `Argo CD application ${policy.name}`;
      if (policy.automated && policy.selfHeal && !ignored)
        return { who, when: 'within about 5 s of every change', continuous: true };
      return { who, when: 'at every sync', continuous: false };
    }
    case 'flux-helm':
      if (policy.suspend || policy.driftDetection !== 'enabled' || helmDriftExcluded(input.live)) return undefined;
      // An ignore rule on the field (helm-controller's advice beside an autoscaler): drift correction leaves it.
      if (field !== undefined && helmDriftIgnores(policy, input.live, field)) return undefined;
      return {
        who: `Flux HelmRelease ${policy.namespace}/${policy.name}`,
        when: `every ${policy.interval}`,
        continuous: true,
      };
  }
}

// Who really applies an object, as the user reads it: a line for the hover, a few words for the code
// lens, and the records `check --format json` carries as `appliedBy`. Made from the facts alone
// (ResourceFacts.appliers: the live object's marks and managers, core/gitops/appliers.ts, and the
// policy of each GitOps object named, read by the cluster layer), so the editor and the command line
// say the same. A policy that could not be read is said to be unknown, with the reason: never guessed.
import type { JsonObject } from '../json';
import type { ApplierFacts, ResourceFacts } from './facts';
import { applierSightings } from '../gitops/appliers';
import type { ApplierKind, ApplierPolicy, ApplierSighting, PolicyFacts } from '../gitops/model';

/** One tool that applies the object, with what is known of its policy. */
export interface AppliedBy {
  readonly tool: ApplierKind;
  /** The Application, Kustomization, HelmRelease or Helm release; '' when only its manager was seen. */
  readonly name: string;
  readonly namespace?: string;
  /** A weak sign (Argo CD's instance label, which Helm charts write too). */
  readonly maybe?: true;
  /** What was seen on the live object. */
  readonly evidence: string;
  /** The sentence the hover shows: `Applied by Argo CD application shop (automated, self-heal, server-side apply)`. */
  readonly text: string;
  /** The policy as read, or why it is unknown; absent for a Helm release, which has none to read. */
  readonly policy?: PolicyFacts;
}

const toolNames: Record<ApplierKind, string> = {
  argocd: 'Argo CD application',
  'flux-kustomize': 'Flux Kustomization',
  'flux-helm': 'Flux HelmRelease',
  helm: 'Helm release',
};

/** The controllers' managers, named when no mark names the object they apply. */
const managerOf: Record<ApplierKind, string> = {
  argocd: 'argocd-controller',
  'flux-kustomize': 'kustomize-controller',
  'flux-helm': 'helm-controller',
  helm: 'helm',
};

/**
 * The facts of who applies a live object: its sightings (core/gitops/appliers.ts) and, for each
 * GitOps object they name, once, the policy `policy` gives (the cluster layer's read, a snapshot's
 * "not saved"); undefined when nothing marks the object. The one composition the editor, the command
 * line and a snapshot share.
 */
export function applierFacts(
  live: JsonObject,
  policy: (sighting: ApplierSighting) => PolicyFacts | undefined,
): ApplierFacts | undefined {
  const sightings = applierSightings(live);
  if (sightings.length === 0) return undefined;
  const seen = new Set<string>();
  const policies: PolicyFacts[] = [];
  for (const sighting of sightings) {
    // Two marks may name the same object: its policy once.
    const key = `${sighting.kind}\u0000${sighting.namespace ?? ''}\u0000${sighting.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const answer = policy(sighting);
    if (answer) policies.push(answer);
  }
  return { sightings, policies };
}

/** The tools that apply the live object, most certain first. */
export function appliedBy(facts: ResourceFacts | undefined): AppliedBy[] {
  const appliers = facts?.appliers;
  if (!appliers || facts.live.state !== 'exists') return [];
  // helm-controller installs its HelmRelease as a Helm release: the release is the HelmRelease's, said once.
  const byFlux = appliers.sightings.some((s) => s.kind === 'flux-helm' && s.name !== '');
  return appliers.sightings
    .filter((s) => !(s.kind === 'helm' && byFlux))
    .map((sighting) => {
      const policy = policyOf(appliers, sighting);
      return {
        tool: sighting.kind,
        name: sighting.name,
        ...(sighting.namespace !== undefined ? { namespace: sighting.namespace } : {}),
        ...(sighting.maybe ? { maybe: true as const } : {}),
        evidence: sighting.evidence,
        text: sentence(sighting, policy),
        ...(policy ? { policy } : {}),
      };
    });
}

/** The hover's lines, one per tool, each with what was seen. */
export function appliedByLines(facts: ResourceFacts | undefined): string[] {
  return appliedBy(facts).map((a) => `${a.text}. _Seen: ${oneLine(a.evidence)}._`);
}

/** The code lens's words: `applied by Argo CD application shop`; undefined when no tool is seen. */
export function appliedByLens(facts: ResourceFacts | undefined): string | undefined {
  const all = appliedBy(facts);
  if (all.length === 0) return undefined;
  return all
    .map((a) => `${a.maybe ? 'maybe applied' : 'applied'} by ${toolNames[a.tool]}${a.name ? ` ${shownName(a)}` : ''}`)
    .join(', ');
}

function policyOf(appliers: ApplierFacts, sighting: ApplierSighting): PolicyFacts | undefined {
  return appliers.policies.find((p) =>
    p.state === 'unknown'
      ? p.sighting.kind === sighting.kind &&
        p.sighting.name === sighting.name &&
        p.sighting.namespace === sighting.namespace
      : p.policy.kind === sighting.kind &&
        p.policy.name === sighting.name &&
        (sighting.namespace === undefined || p.policy.namespace === sighting.namespace),
  );
}

function shownName(s: { readonly name: string; readonly namespace?: string }): string {
  return s.namespace === undefined ? s.name : `${s.namespace}/${s.name}`;
}

function sentence(sighting: ApplierSighting, policy: PolicyFacts | undefined): string {
  const who =
    sighting.name === ''
      ? `${toolNames[sighting.kind]} (its manager ${managerOf[sighting.kind]})`
      : sighting.kind === 'helm'
        ? `${toolNames.helm} ${sighting.name}${sighting.namespace ? ` in namespace ${sighting.namespace}` : ''}`
        : `${toolNames[sighting.kind]} ${shownName(sighting)}`;
  const said = policy?.state === 'read' ? describePolicy(policy.policy) : { interval: '', parts: [] };
  const parts = [
    ...said.parts,
    ...(policy?.state === 'unknown' ? [`policy unknown: ${oneLine(policy.reason)}`] : []),
    ...(sighting.maybe ? ['the label is one Helm charts write too'] : []),
  ];
  return `${sighting.maybe ? 'Maybe applied' : 'Applied'} by ${who}${said.interval}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

/** What the policy says after the name: `automated, self-heal, server-side apply`; ` every 10m` and `prune`. */
function describePolicy(policy: ApplierPolicy): { interval: string; parts: string[] } {
  const parts: string[] = [];
  switch (policy.kind) {
    case 'argocd': {
      parts.push(policy.automated ? 'automated' : 'manual sync');
      if (policy.selfHeal) parts.push('self-heal');
      if (policy.prune) parts.push('prune');
      parts.push(policy.serverSideApply ? 'server-side apply' : 'client-side apply');
      if (policy.respectIgnoreDifferences) parts.push('RespectIgnoreDifferences');
      const rules = policy.ignoreDifferences.length;
      if (rules > 0) parts.push(`${rules} ignoreDifferences ${rules === 1 ? 'rule' : 'rules'}`);
      return { interval: '', parts };
    }
    case 'flux-kustomize': {
      if (policy.suspend) parts.push('suspended');
      if (policy.force) parts.push('force');
      if (policy.prune) parts.push('prune');
      parts.push(`path \`${policy.path === '' ? './' : oneLine(policy.path).replace(/`/g, '')}\``);
      return { interval: every(policy.interval), parts };
    }
    case 'flux-helm': {
      if (policy.suspend) parts.push('suspended');
      parts.push(`drift detection ${policy.driftDetection}`);
      return { interval: every(policy.interval), parts };
    }
  }
}

/** A Go duration as Flux's CRDs accept it (`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`); anything else is not shown. */
function every(interval: string): string {
  return /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(interval) && interval.length <= 32
    ? ` every ${interval}`
    : ' at an interval that cannot be read';
}

/** Text from the cluster on one line, bounded: a hover line and a lens stay one line. */
function oneLine(text: string): string {
  const flat = text.replace(/[\r\n\u2028\u2029]+/g, ' ');
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

// The judgement on a rendered object, one home for the command line and the editor: the object as it
// would be sent (Helm adds its release's ownership metadata), the analysis in the way it would be
// sent (an overlay as the user applies; a chart as the user's Helm does), Helm's own ownership
// check, and every finding moved to the source line that sets its field. Pure: the caller renders
// and brings the facts (the command line waits for them, the editor peeks at its caches).
import { analyzeResource, locateOptions, objectIdentity, type AnalysisSettings, type Finding, type ResourceFacts } from './analysis';
import { helmAppliedObject, releaseOwnershipFinding } from './helm-release';
import { relocateFindings, type RelocatedFinding } from './relocate';
import { locate, type ManifestResource } from '../manifest/manifest';
import type { SourceMap } from '../sources/source-map';

/** How a target's objects are sent. */
export interface RenderedApply {
  /** The user's settings for an overlay; `helm` and Helm's mode for a chart. */
  readonly settings: AnalysisSettings;
  /** For a chart: the release the objects belong to, and which Helm sends them. */
  readonly helm?: { readonly release: string; readonly namespace: string; readonly major: 3 | 4 };
}

/** The analysis settings for a chart rendered by Helm `major` (docs/helm.md): the field manager `helm`, in Helm's mode. */
export function helmApply(helm: { release: string; namespace: string; major: 3 | 4 }, severity?: AnalysisSettings['severity']): RenderedApply {
  return { settings: { fieldManager: 'helm', applyMode: helm.major === 4 ? 'serverSide' : 'clientSide', ...(severity ? { severity } : {}) }, helm };
}

/** What would be sent for a rendered object: for a chart, in the release's namespace with Helm's ownership metadata. */
export function sentResource(rendered: ManifestResource, apply: RenderedApply): ManifestResource {
  if (!apply.helm) return rendered;
  return {
    ...rendered,
    namespace: rendered.namespace ?? apply.helm.namespace,
    object: helmAppliedObject(rendered.object, apply.helm.release, apply.helm.namespace),
  };
}

/**
 * The findings of one sent object (`resource`, from sentResource; document `resource.documentIndex`
 * of the rendered stream), each on the source lines that set its field.
 */
export function renderedObjectFindings(resource: ManifestResource, facts: ResourceFacts, apply: RenderedApply, map: SourceMap): RelocatedFinding[] {
  return relocateFindings(renderedObjectAnalysis(resource, facts, apply), resource, resource.documentIndex, map, locateOptions(resource, facts.schema));
}

/**
 * The findings of one sent object on the rendered object itself, before they move to the sources:
 * what a dry run of the object is compared with.
 */
export function renderedObjectAnalysis(resource: ManifestResource, facts: ResourceFacts, apply: RenderedApply): Finding[] {
  const found = analyzeResource(resource, facts, apply.settings);
  if (apply.helm) {
    const { release, namespace, major } = apply.helm;
    // The analysis speaks of kubectl; here the request is Helm's.
    for (const [i, f] of found.entries()) {
      found[i] = { ...f, message: f.message.replace('kubectl apply --server-side would fail', `helm install and upgrade would fail (Helm ${major} applies server-side)`) };
    }
    const live = facts.live.state === 'exists' ? facts.live.object : undefined;
    const nameRange = locate(resource, [{ kind: 'field', name: 'metadata' }, { kind: 'field', name: 'name' }])?.valueRange ?? resource.range;
    const owned = releaseOwnershipFinding(live, release, namespace, objectIdentity(resource), nameRange);
    if (owned) found.push(owned);
  }
  return found;
}

/** `overlay production`; the folder as `shown` says it when two overlays share a name. */
export function overlayLabels(roots: readonly string[], name: (root: string) => string, shown: (root: string) => string): Map<string, string> {
  const names = roots.map(name);
  return new Map(roots.map((r, i) => [r, `overlay ${names.filter((n) => n === names[i]).length > 1 ? shown(r) : names[i]}`]));
}

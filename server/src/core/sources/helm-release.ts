// Which release a chart is installed as, from what the cluster says (read as metadata only by the
// cluster layer): a chart rendered under the wrong release name or namespace predicts "does not
// exist yet" for every object, a silence that reads as "all clear". So unless the user named both,
// the release is looked for:
//   1. the chart is rendered as the user's settings say (the release: `helmRelease`, else the chart's
//      name; the namespace: the setting, else the context's);
//   2. the live objects of the kinds it renders that Helm sent (label `app.kubernetes.io/managed-by:
//      Helm`) name their release and its namespace in their annotations; those of this chart (their
//      `helm.sh/chart` label names it, or, without one, an object of the same kind and name) make the
//      candidates, and Helm's release records add releases whose objects cannot be listed;
//   3. a candidate counts when the chart, rendered as that release in that namespace, renders an
//      object that exists there and belongs to that release: a match of what Helm would send, not
//      of a name alone.
// One release found: it is used. Several: the editor asks once (and remembers the answer per chart);
// the command line judges the most recent and names the others. None: the settings' guess stays,
// and the target says so.
import type { ManifestResource } from '../manifest/manifest';

export const helmChartLabel = 'helm.sh/chart';

/** An object Helm sent, as its metadata says. */
export interface HelmSighting {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `meta.helm.sh/release-name`. */
  readonly release: string;
  /** `meta.helm.sh/release-namespace`. */
  readonly releaseNamespace: string;
  /** `helm.sh/chart` (`shop-0.1.0`), when the chart sets it. */
  readonly chart?: string;
}

/** A release record's labels (a Secret `sh.helm.release.v1.NAME.vN`, read as metadata only). */
export interface HelmReleaseRecord {
  readonly release: string;
  readonly namespace: string;
  readonly revision: number;
  /** `deployed`, `superseded`, `failed`, `pending-upgrade`… */
  readonly status: string;
}

export interface HelmReleaseSightings {
  readonly records: readonly HelmReleaseRecord[];
  readonly objects: readonly HelmSighting[];
  /** What could not be read (forbidden, unreachable), in the cluster's words. */
  readonly unread: readonly string[];
}

export interface ReleasePlace {
  readonly release: string;
  readonly namespace: string;
}

export interface ReleaseCandidate extends ReleasePlace {
  /** The newest revision's number and status, when a release record is readable. */
  readonly revision?: number;
  readonly status?: string;
}

/** How the release and namespace were settled, as hovers and messages say it. */
export type ReleaseOrigin =
  | { readonly kind: 'settings' }
  | { readonly kind: 'found' }
  /** Several releases of the chart: the one chosen (remembered) or, until then, the first. */
  | { readonly kind: 'chosen'; readonly among: readonly ReleaseCandidate[] }
  | { readonly kind: 'ambiguous'; readonly among: readonly ReleaseCandidate[] }
  /** Nothing in the cluster names a release of this chart (or it could not be asked): the settings' guess. */
  | { readonly kind: 'guessed'; readonly why: string };

/** What a render must say for the release to be matched: its objects' kinds, names and chart label. */
type RenderedObjectFields = Pick<ManifestResource, 'apiVersion' | 'kind' | 'name' | 'namespace' | 'object'>;

/** The kinds to list, namespaced ones of the chart first come first (the cluster layer skips cluster-scoped ones). */
export function sightingKinds(rendered: readonly RenderedObjectFields[]): { apiVersion: string; kind: string }[] {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const r of rendered)
    if (r.apiVersion && r.kind) kinds.set(`${r.apiVersion} ${r.kind}`, { apiVersion: r.apiVersion, kind: r.kind });
  return [...kinds.values()];
}

/** The releases whose live objects look like this chart's (step 2), most likely first. */
export function releaseCandidates(
  chartName: string,
  rendered: readonly RenderedObjectFields[],
  sightings: HelmReleaseSightings,
  want: Partial<ReleasePlace> = {},
): ReleaseCandidate[] {
  const byKind = new Map<string, RenderedObjectFields[]>();
  for (const r of rendered)
    byKind.set(groupKind(r.apiVersion, r.kind), [...(byKind.get(groupKind(r.apiVersion, r.kind)) ?? []), r]);
  const places = new Map<string, ReleasePlace>();
  const add = (place: ReleasePlace) => {
    if (want.release !== undefined && place.release !== want.release) return;
    if (want.namespace !== undefined && place.namespace !== want.namespace) return;
    places.set(placeKey(place), place);
  };
  for (const s of sightings.objects) {
    const same = byKind.get(groupKind(s.apiVersion, s.kind));
    if (!same) continue;
    const ofChart = s.chart !== undefined ? chartOfLabel(s.chart) === chartName : same.some((r) => r.name === s.name);
    if (ofChart) add({ release: s.release, namespace: s.releaseNamespace });
  }
  // A record of a release named as the settings guess (objects not listable, or none of the listed kinds).
  for (const r of sightings.records)
    if (want.release !== undefined ? r.release === want.release : r.release === chartName) add(r);
  const newest = newestRecords(sightings.records);
  return [...places.values()]
    .map((p): ReleaseCandidate => {
      const record = newest.get(placeKey(p));
      return record
        ? { release: p.release, namespace: p.namespace, revision: record.revision, status: record.status }
        : { release: p.release, namespace: p.namespace };
    })
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        (b.revision ?? 0) - (a.revision ?? 0) ||
        a.namespace.localeCompare(b.namespace) ||
        a.release.localeCompare(b.release),
    );
}

/**
 * Whether the chart rendered as `place` is what that release holds (step 3): one of its objects
 * exists in the place it renders to and carries the release's metadata. A release known only from
 * its record (none of its objects could be listed) is taken at its word.
 */
export function confirmsRelease(
  place: ReleasePlace,
  rendered: readonly RenderedObjectFields[],
  sightings: HelmReleaseSightings,
): boolean {
  const ofRelease = sightings.objects.filter(
    (s) => s.release === place.release && s.releaseNamespace === place.namespace,
  );
  if (ofRelease.length === 0)
    return sightings.records.some((r) => r.release === place.release && r.namespace === place.namespace);
  return rendered.some((r) =>
    ofRelease.some(
      (s) =>
        groupKind(s.apiVersion, s.kind) === groupKind(r.apiVersion, r.kind) &&
        s.name === r.name &&
        s.namespace === (r.namespace || place.namespace),
    ),
  );
}

/** `release web in namespace shop`: how every message, hover and lens names a release. */
export function releaseLabel(place: ReleasePlace): string {
  return `release ${place.release} in namespace ${place.namespace}`;
}

/** The words for the candidates of a quick pick or a message: `web in shop (revision 3, deployed)`. */
export function describeCandidate(c: ReleaseCandidate): string {
  const record = c.revision !== undefined ? ` (revision ${c.revision}${c.status ? `, ${c.status}` : ''})` : '';
  return `${c.release} in ${c.namespace}${record}`;
}

export function placeKey(place: ReleasePlace): string {
  return `${place.namespace}/${place.release}`;
}

/** `shop-0.1.0` → `shop` (Helm's `helm.sh/chart` is NAME-VERSION, the version semver, `+` written `_`). */
export function chartOfLabel(label: string): string {
  const m = /^(.*)-v?\d+(\.\d+)*([-_+.][0-9A-Za-z._-]*)?$/.exec(label);
  return m ? m[1]! : label;
}

function groupKind(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  return `${slash < 0 ? '' : apiVersion.slice(0, slash)}/${kind}`;
}

function newestRecords(records: readonly HelmReleaseRecord[]): Map<string, HelmReleaseRecord> {
  const out = new Map<string, HelmReleaseRecord>();
  for (const r of records) {
    const known = out.get(placeKey(r));
    if (!known || r.revision > known.revision) out.set(placeKey(r), r);
  }
  return out;
}

/** Deployed releases first, then those without a readable record, then the rest (failed, uninstalling). */
function rank(c: ReleaseCandidate): number {
  return c.status === 'deployed' ? 0 : c.status === undefined ? 1 : 2;
}

export interface ReleaseSearch<R extends { readonly resources: readonly RenderedObjectFields[] }> {
  readonly chartName: string;
  /** What the user named: both named, nothing is looked for. */
  readonly named: Partial<ReleasePlace>;
  /** The settings' guess: the named release, else the chart's name; the named namespace, else the context's. */
  readonly guess: ReleasePlace;
  /** A choice remembered for this chart (the editor's quick pick): used when it is among the candidates. */
  readonly remembered?: ReleasePlace;
  /** The chart rendered as a release in a namespace; undefined when it did not render. */
  render(place: ReleasePlace): Promise<R | undefined>;
  /** The cluster's sightings for these kinds, or why there are none (the cluster layer's answer as it is). */
  sightings(
    kinds: { apiVersion: string; kind: string }[],
  ): Promise<{ ok: true; value: HelmReleaseSightings } | { ok: false; problem: { message: string } }>;
}

export interface ReleaseFound<R> {
  readonly place: ReleasePlace;
  readonly origin: ReleaseOrigin;
  /** The render of `place` (undefined when it failed: the caller renders it again for the words). */
  readonly rendered: R | undefined;
}

/** Candidates rendered and checked at most: a cluster with many releases of a chart is asked about the likeliest. */
const MAX_CONFIRMED = 6;

/** Steps 1 to 3 above: the release and namespace to render the chart as, and that render. */
export async function findRelease<R extends { readonly resources: readonly RenderedObjectFields[] }>(
  search: ReleaseSearch<R>,
): Promise<ReleaseFound<R>> {
  const first = await search.render(search.guess);
  if (search.named.release !== undefined && search.named.namespace !== undefined)
    return { place: search.guess, origin: { kind: 'settings' }, rendered: first };
  if (!first)
    return { place: search.guess, origin: { kind: 'guessed', why: 'the chart did not render' }, rendered: first };
  const seen = await search.sightings(sightingKinds(first.resources));
  if (!seen.ok) return { place: search.guess, origin: { kind: 'guessed', why: seen.problem.message }, rendered: first };
  const candidates = releaseCandidates(search.chartName, first.resources, seen.value, search.named);
  const confirmed: { candidate: ReleaseCandidate; rendered: R }[] = [];
  for (const candidate of candidates.slice(0, MAX_CONFIRMED)) {
    const same = candidate.release === search.guess.release && candidate.namespace === search.guess.namespace;
    const rendered = same ? first : await search.render(candidate);
    if (rendered && confirmsRelease(candidate, rendered.resources, seen.value)) confirmed.push({ candidate, rendered });
  }
  if (confirmed.length === 0) {
    const why =
      seen.value.unread.length > 0
        ? `no release of chart ${search.chartName} found (not readable: ${seen.value.unread.join('; ')})`
        : `no release of chart ${search.chartName} found in the cluster`;
    return { place: search.guess, origin: { kind: 'guessed', why }, rendered: first };
  }
  const plain = (c: ReleaseCandidate): ReleasePlace => ({ release: c.release, namespace: c.namespace });
  if (confirmed.length === 1)
    return { place: plain(confirmed[0]!.candidate), origin: { kind: 'found' }, rendered: confirmed[0]!.rendered };
  const among = confirmed.map((c) => c.candidate);
  const remembered = search.remembered && confirmed.find((c) => placeKey(c.candidate) === placeKey(search.remembered!));
  if (remembered)
    return { place: plain(remembered.candidate), origin: { kind: 'chosen', among }, rendered: remembered.rendered };
  return {
    place: plain(confirmed[0]!.candidate),
    origin: { kind: 'ambiguous', among },
    rendered: confirmed[0]!.rendered,
  };
}

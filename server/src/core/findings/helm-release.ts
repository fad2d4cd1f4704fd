// What Helm itself checks before it sends a chart's objects, beside what the API server would answer:
// an object that already exists must carry this release's ownership metadata, or `helm install`
// (and `helm upgrade`, for an object new to the release) stops before sending anything ("exists and
// cannot be imported into the current release: invalid ownership metadata", helm's
// pkg/action/validate.go checkOwnership). And Helm adds that metadata to every object it sends
// (setMetadataVisitor), so the prediction runs on the object with it.
import { isJsonObject, type JsonObject } from '../json';
import type { Range } from '../manifest/manifest';
import type { Finding, ObjectIdentity } from './finding';
import { findingCatalogue } from './catalogue';
import { helmManagedByLabel, helmReleaseNameAnnotation, helmReleaseNamespaceAnnotation } from '../gitops/appliers';
import {
  describeCandidate,
  placeKey,
  releaseLabel,
  type ReleaseOrigin,
  type ReleasePlace,
} from '../sources/helm-release';

// Helm's ownership marks are read with the other tools' marks (core/gitops/appliers.ts).
export { helmManagedByLabel, helmReleaseNameAnnotation, helmReleaseNamespaceAnnotation };

/** The object as Helm sends it for release `release` in `namespace`: its ownership label and annotations added. */
export function helmAppliedObject(object: JsonObject, release: string, namespace: string): JsonObject {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  const labels = isJsonObject(metadata.labels) ? metadata.labels : {};
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : {};
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: { ...labels, [helmManagedByLabel]: 'Helm' },
      annotations: {
        ...annotations,
        [helmReleaseNameAnnotation]: release,
        [helmReleaseNamespaceAnnotation]: namespace,
      },
    },
  };
}

/**
 * A finding when the live object is not this release's to take: it belongs to another release, or to
 * no release at all. Helm's own words are in `serverMessage`. Undefined when the object is absent or
 * already this release's.
 */
export function releaseOwnershipFinding(
  live: JsonObject | undefined,
  release: string,
  namespace: string,
  object: ObjectIdentity,
  range: Range,
): Finding | undefined {
  if (!live) return undefined;
  const metadata = isJsonObject(live.metadata) ? live.metadata : {};
  const labels = isJsonObject(metadata.labels) ? metadata.labels : {};
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : {};
  const errors: string[] = [];
  const require = (kind: 'label' | 'annotation', map: JsonObject, key: string, want: string) => {
    const have = map[key];
    if (have === undefined)
      errors.push(
        `${kind} validation error: missing key ${JSON.stringify(key)}: must be set to ${JSON.stringify(want)}`,
      );
    else if (have !== want)
      errors.push(
        `${kind} validation error: key ${JSON.stringify(key)} must equal ${JSON.stringify(want)}: current value is ${JSON.stringify(have)}`,
      );
  };
  require('label', labels, helmManagedByLabel, 'Helm');
  require('annotation', annotations, helmReleaseNameAnnotation, release);
  require('annotation', annotations, helmReleaseNamespaceAnnotation, namespace);
  if (errors.length === 0) return undefined;
  const owner = annotations[helmReleaseNameAnnotation];
  const ownerNamespace = annotations[helmReleaseNamespaceAnnotation];
  const who =
    typeof owner === 'string'
      ? `belongs to release ${owner}${typeof ownerNamespace === 'string' && ownerNamespace !== namespace ? ` (namespace ${ownerNamespace})` : ''}`
      : 'exists and belongs to no Helm release';
  return {
    code: 'owned-by-release',
    severity: findingCatalogue['owned-by-release'].severity,
    message: `${object.kind} ${object.name} ${who}: helm stops before sending anything unless the object is already part of release ${release}`,
    range,
    object,
    path: '.metadata.name',
    serverMessage: `invalid ownership metadata; ${errors.join('; ')}`,
    docs: 'https://helm.sh/docs/faq/changes_since_helm2/#improved-upgrade-strategy-3-way-strategic-merge-patches',
  };
}

/**
 * What the chart's Chart.yaml says of how its release was settled (core/sources/helm-release.ts):
 * one of several releases (a warning naming the others), or none found (a hint: every object is
 * judged as new). Nothing when the settings named it or the cluster holds exactly one.
 */
export function releaseOriginFinding(origin: ReleaseOrigin, place: ReleasePlace, range: Range): Finding | undefined {
  if (origin.kind === 'ambiguous') {
    const others = origin.among.filter((c) => placeKey(c) !== placeKey(place));
    return {
      code: 'release-ambiguous',
      severity: findingCatalogue['release-ambiguous'].severity,
      message: `The chart is installed as ${origin.among.length} releases: ${origin.among.map(describeCandidate).join(', ')}. Judged as ${releaseLabel(place)}; the others (${others.map((c) => `${c.release} in ${c.namespace}`).join(', ')}) are not judged until chosen.`,
      range,
    };
  }
  if (origin.kind === 'guessed') {
    return {
      code: 'release-guessed',
      severity: findingCatalogue['release-guessed'].severity,
      message: `Judged as a new ${releaseLabel(place)}: ${origin.why}.`,
      range,
    };
  }
  return undefined;
}

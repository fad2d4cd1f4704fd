// What the user is told of who really applies an object (server/src/core/findings/applied-by.ts):
// the hover's sentence with the policy, the code lens's words and the records the JSON carries, on
// the live objects and policies the real API server answered (test/fixtures/gitops/detect/
// captured.yaml). A policy that is unknown is said to be, with the reason; the hovers of
// hover-text.ts carry the sentence on the object and on a field a controller owns.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  appliedBy,
  appliedByLens,
  appliedByLines,
  fieldHover,
  objectHover,
} from '../../../../server/src/core/findings';
import type { ResourceFacts } from '../../../../server/src/core/findings';
import { applierSightings } from '../../../../server/src/core/gitops/appliers';
import type { ApplierPolicy, PolicyFacts } from '../../../../server/src/core/gitops/model';
import { applicationPolicy, helmReleasePolicy, kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';

const captured = parse(
  fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'gitops', 'detect', 'captured.yaml'),
    'utf8',
  ),
) as {
  namespace: string;
  controllerNamespace: string;
  app: string;
  objects: Record<string, JsonObject>;
  policies: Record<'application' | 'otherApplication' | 'kustomization' | 'helmRelease', JsonObject>;
};
const ns = captured.namespace;
const read = (policy: ApplierPolicy | undefined): PolicyFacts => ({ state: 'read', policy: policy! });

/** The facts the cluster layer gives for a captured object, with the policies it would have read. */
function factsOf(name: string, policies: PolicyFacts[]): ResourceFacts {
  const live = captured.objects[name]!;
  return {
    kind: { state: 'served', group: '', resource: 'configmaps', namespaced: true },
    live: { state: 'exists', object: live },
    schema: undefined,
    appliers: { sightings: applierSightings(live), policies },
  };
}

test('an Argo CD application: its name and policy, the evidence seen', () => {
  const facts = factsOf('argo-tracked', [read(applicationPolicy(captured.policies.application))]);
  assert.deepEqual(appliedByLines(facts), [
    `Applied by Argo CD application ${captured.app} (automated, self-heal, prune, server-side apply, RespectIgnoreDifferences, 1 ignoreDifferences rule). _Seen: annotation argocd.argoproj.io/tracking-id, manager argocd-controller._`,
  ]);
  assert.equal(appliedByLens(facts), `applied by Argo CD application ${captured.app}`);
  const other = factsOf('argo-other-namespace', [read(applicationPolicy(captured.policies.otherApplication))]);
  assert.equal(
    appliedBy(other)[0]?.text,
    `Applied by Argo CD application ${ns}/billing (manual sync, client-side apply)`,
  );
});

test('a Flux Kustomization every interval, a HelmRelease with its drift detection (its Helm release said once)', () => {
  const flux = factsOf('flux-kustomize', [read(kustomizationPolicy(captured.policies.kustomization))]);
  assert.equal(
    appliedBy(flux)[0]?.text,
    `Applied by Flux Kustomization ${ns}/shop every 10m (prune, path \`./apps/shop\`)`,
  );
  const helm = factsOf('flux-helm', [read(helmReleasePolicy(captured.policies.helmRelease))]);
  assert.deepEqual(
    appliedBy(helm).map((a) => a.text),
    [`Applied by Flux HelmRelease ${ns}/web every 5m (drift detection enabled)`],
  );
  assert.deepEqual(
    appliedBy(factsOf('helm', [])).map((a) => a.text),
    [`Applied by Helm release settings in namespace ${ns}`],
  );
});

test('an unknown policy is said to be unknown with its reason; a maybe says why; a manager alone names no object', () => {
  const sighting = applierSightings(captured.objects['flux-gone']!)[0]!;
  const gone = factsOf('flux-gone', [
    { state: 'unknown', sighting, reason: 'Flux Kustomization x/gone does not exist' },
  ]);
  assert.equal(
    appliedBy(gone)[0]?.text,
    `Applied by Flux Kustomization ${ns}/gone (policy unknown: Flux Kustomization x/gone does not exist)`,
  );
  const label = factsOf('argo-label', []);
  assert.equal(
    appliedBy(label)[0]?.text,
    `Maybe applied by Argo CD application ${captured.app} (the label is one Helm charts write too)`,
  );
  assert.equal(appliedByLens(label), `maybe applied by Argo CD application ${captured.app}`);
  const managerOnly = factsOf('manager-only', []);
  assert.equal(appliedBy(managerOnly)[0]?.text, 'Applied by Flux Kustomization (its manager kustomize-controller)');
  assert.deepEqual(appliedBy(factsOf('plain', [])), []);
  assert.equal(appliedByLens(factsOf('plain', [])), undefined);
});

test('text from the cluster stays on one line; an interval that is no duration is not shown', () => {
  const sighting = applierSightings(captured.objects['flux-gone']!)[0]!;
  const facts = factsOf('flux-gone', [{ state: 'unknown', sighting, reason: 'a\nb\r\nc' }]);
  assert.doesNotMatch(appliedBy(facts)[0]!.text, /[\r\n]/);
  const odd = kustomizationPolicy({
    ...captured.policies.kustomization,
    spec: { interval: '10m\n# x', path: 'a`b\nc' },
  });
  const text = appliedBy(factsOf('flux-kustomize', [read(odd)]))[0]!.text;
  assert.equal(text, `Applied by Flux Kustomization ${ns}/shop at an interval that cannot be read (path \`ab c\`)`);
});

test("the object's hover and the hover of a field a controller owns carry the sentence", () => {
  const facts = factsOf('argo-tracked', [read(applicationPolicy(captured.policies.application))]);
  const [resource] = parseManifestText(
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argo-web\n  namespace: ${ns}\nspec:\n  replicas: 2\n`,
  ).resources;
  const now = Date.parse('2026-12-03T08:00:00Z');
  assert.match(
    objectHover(resource!, facts, now),
    new RegExp(`Applied by Argo CD application ${captured.app} \\(automated`),
  );
  const replicas = resource!.root.entries.find((e) => e.key === 'spec')!;
  const node =
    replicas.value.kind === 'map' ? replicas.value.entries.find((e) => e.key === 'replicas')!.value : undefined;
  const hover = fieldHover(
    resource!,
    facts,
    [
      { kind: 'field', name: 'spec' },
      { kind: 'field', name: 'replicas' },
    ],
    node!,
    now,
  );
  assert.match(hover, /argocd-controller/);
  assert.match(hover, /Applied by Argo CD application/);
});

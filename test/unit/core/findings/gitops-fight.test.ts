// A GitOps controller and an autoscaler fighting over replicas (core/findings/gitops-fight.ts), on
// pieces captured from the real server: the autoscaled Deployment and the HorizontalPodAutoscaler
// that targets it (test/fixtures/force-preview/autoscaled-and-edited.yaml), and the policies of a
// Flux Kustomization and an Argo CD Application (test/fixtures/gitops/detect/captured.yaml), given
// to the analysis as the cluster layer would give them for an object those controllers apply.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { analyzeResource, type ResourceFacts } from '../../../../server/src/core/findings';
import type { ApplierPolicy, ApplierSighting } from '../../../../server/src/core/gitops/model';
import { applicationPolicy, helmReleasePolicy, kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schema } from '../../../support/findings-fixtures';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const history = parse(fs.readFileSync(path.join(fixtures, 'force-preview', 'autoscaled-and-edited.yaml'), 'utf8')) as {
  manifest: string;
  live: JsonObject;
  autoscalers: JsonObject[];
};
const captured = parse(fs.readFileSync(path.join(fixtures, 'gitops', 'detect', 'captured.yaml'), 'utf8')) as {
  policies: Record<string, JsonObject>;
};
const kustomization = kustomizationPolicy(captured.policies.kustomization)!;
const application = applicationPolicy(captured.policies.application)!;

function fights(
  policies: ApplierPolicy[],
  autoscalers: JsonObject[] | string = history.autoscalers,
): { code: string; line: string; message: string }[] {
  const resource = parseManifestText(history.manifest).resources[0]!;
  const sightings: ApplierSighting[] = policies.map((p) => ({
    kind: p.kind,
    name: p.name,
    namespace: p.namespace,
    evidence: 'test',
  }));
  const facts: ResourceFacts = {
    kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
    live: { state: 'exists', object: history.live },
    schema,
    appliers: { sightings, policies: policies.map((policy) => ({ state: 'read', policy })) },
    autoscalers:
      typeof autoscalers === 'string' ? { state: 'unknown', reason: autoscalers } : { state: 'read', autoscalers },
  };
  const lines = history.manifest.split('\n');
  return analyzeResource(resource, facts, { fieldManager: 'kubectl', applyMode: 'serverSide' })
    .filter((f) => f.code.startsWith('gitops-fight'))
    .map((f) => ({ code: f.code, line: lines[f.range.start.line]!.trim(), message: f.message }));
}

test('Flux applies replicas every interval and the autoscaler sets it back: an error on the replicas line, naming both', () => {
  const said = fights([kustomization]);
  assert.equal(said.length, 1);
  assert.equal(said[0]!.code, 'gitops-fight');
  assert.equal(said[0]!.line, 'replicas: 3');
  assert.match(
    said[0]!.message,
    /^Flux Kustomization kch-capture-detect-\w+\/shop sets replicas: 3 every 10m, and the HorizontalPodAutoscaler web sets it back to 5: they fight over \.spec\.replicas and the Deployment flaps\./,
  );
});

test('no autoscaler targeting the object, or a suspended Kustomization: no fight', () => {
  assert.deepEqual(fights([kustomization], []), []);
  assert.deepEqual(fights([{ ...kustomization, suspend: true }]), []);
});

test('Argo CD: self-heal fights (error); without it only each sync resets (warning); RespectIgnoreDifferences on /spec/replicas ends it', () => {
  // As captured, the Application ignores /spec/replicas with RespectIgnoreDifferences: no fight.
  assert.deepEqual(fights([application]), []);
  const plain = { ...application, ignoreDifferences: [], respectIgnoreDifferences: false };
  assert.deepEqual(
    fights([plain]).map((f) => f.code),
    ['gitops-fight'],
  );
  assert.deepEqual(
    fights([{ ...plain, selfHeal: false }]).map((f) => f.code),
    ['gitops-fight-at-sync'],
  );
  // Ignored without RespectIgnoreDifferences: self-heal does not start for it, but each sync resets it.
  assert.deepEqual(
    fights([{ ...application, respectIgnoreDifferences: false }]).map((f) => f.code),
    ['gitops-fight-at-sync'],
  );
});

test('two GitOps controllers applying one object fight over everything Git sets differently, said on its name', () => {
  const said = fights([kustomization, { ...application, ignoreDifferences: [], respectIgnoreDifferences: false }], []);
  assert.equal(said.length, 1);
  assert.equal(said[0]!.line, 'name: web');
  assert.match(said[0]!.message, /^Flux Kustomization .* and Argo CD application .* both apply this object/);
});

test('autoscalers that may not be listed: the replicas line says the fight is unknown and why, never silence', () => {
  const reason = 'HorizontalPodAutoscalers may not be listed here: forbidden';
  const said = fights([kustomization], reason);
  assert.deepEqual(
    said.map((f) => [f.code, f.line]),
    [['gitops-fight-unknown', 'replicas: 3']],
  );
  assert.match(
    said[0]!.message,
    /sets replicas: 3 every 10m; whether a HorizontalPodAutoscaler sets it back .* is unknown: HorizontalPodAutoscalers may not be listed here/,
  );
  // A controller that would not write the replicas back (suspended) starts no fight to be unsure of.
  assert.deepEqual(fights([{ ...kustomization, suspend: true }], reason), []);
});

test('a Flux HelmRelease correcting drift fights the autoscaler, unless its driftDetection.ignore covers /spec/replicas', () => {
  const helmRelease = helmReleasePolicy(
    (
      parse(fs.readFileSync(path.join(fixtures, 'gitops', 'helm-install', 'captured.yaml'), 'utf8')) as {
        helmRelease: JsonObject;
      }
    ).helmRelease,
  )!;
  const said = fights([helmRelease]);
  assert.deepEqual(
    said.map((f) => f.code),
    ['gitops-fight'],
  );
  // The fix in helm-controller's own terms: the ignore rule that ends it, for this object.
  assert.match(
    said[0]!.message,
    /or add to the HelmRelease kch-capture-helm-install\/web spec\.driftDetection\.ignore: \[\{paths: \[\/spec\/replicas\], target: \{kind: Deployment, name: web\}\}\] so that its drift correction leaves the autoscaler's count/,
  );
  const ignoring = { ...helmRelease, driftIgnore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] };
  assert.deepEqual(fights([ignoring]), []);
});

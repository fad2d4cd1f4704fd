// core/gitops/controller-apply.ts on histories captured from the real kube-apiserver and the real
// controllers' apply code (test/fixtures/gitops/controller-apply/, README there): from the object as
// the history left it, Git's text and the controller's request, the prediction must name exactly the
// managedFields the server recorded after the controller's sync and exactly the values it changed.
// The differential suite (test/differential/gitops.test.ts) holds the whole corpus live; these run
// without a cluster, and hold the rules one by one.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  encodeManagedFields,
  normalizeForFlux,
  predictControllerApply,
  withServerDefaults,
  type ControllerApplyPrediction,
} from '../../../../server/src/core/gitops/controller-apply';
import type { ControllerRequest } from '../../../../server/src/core/gitops/model';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { formatPath } from '../../../../server/src/core/ssa/path';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';
import { ownersOf, valueChanges } from '../../../differential/gitops-oracle';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const dir = path.join(fixtures, 'gitops', 'controller-apply');
const schema = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonObject,
  ),
).schema;

interface Fixture {
  scenario: string;
  manifest: string;
  request: ControllerRequest;
  live: JsonObject | null;
  after: JsonObject & { metadata: { managedFields?: unknown[] } };
}

function load(name: string): Fixture {
  return parse(fs.readFileSync(path.join(dir, `${name}.yaml`), 'utf8')) as Fixture;
}

function predict(f: Fixture, request: ControllerRequest = f.request): ControllerApplyPrediction {
  const parsed = parseManifestText(f.manifest);
  assert.equal(parsed.resources.length, 1);
  const resource = parsed.resources[0]!;
  return predictControllerApply({
    live: f.live ?? undefined,
    manifest: resource.object,
    request,
    schema,
    resource: { group: 'apps', resource: 'deployments' },
  });
}

const names = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

test('the fixtures are there', () => {
  assert.ok(names.length >= 12, `only ${names.length} captured histories in ${dir}`);
});

for (const name of names) {
  test(`${name}: owners and values after the sync are the server's`, () => {
    const f = load(name);
    const p = predict(f);
    assert.deepEqual(
      ownersOf(encodeManagedFields(p.owners) as unknown[]),
      ownersOf(f.after.metadata.managedFields),
      f.scenario,
    );
    if (f.live) assert.deepEqual(valueChanges(f.live, p.after), valueChanges(f.live, f.after), f.scenario);
  });
}

test('Flux hands kubectl-edit to kustomize-controller and prunes what Git does not set', () => {
  const p = predict(load('flux-cleanup-prunes-kubectl-edit'));
  assert.equal(p.outcome, 'applied');
  assert.deepEqual(
    p.handedOver.map((h) => `${h.from.manager} ${h.from.operation} → ${h.to.manager} ${h.to.operation}`),
    ['kubectl-edit Update → kustomize-controller Apply'],
  );
  assert.ok(
    p.removed.some((r) => formatPath(r) === '.metadata.annotations.note'),
    p.removed.map(formatPath).join(),
  );
});

test('Flux leaves the cleanup out under ssa: Merge, and the kubectl-edit entry keeps its annotation', () => {
  const f = load('flux-ssa-merge');
  const p = predict(f);
  assert.deepEqual(p.handedOver, []);
  const owners = ownersOf(encodeManagedFields(p.owners) as unknown[]);
  assert.ok(
    owners['kubectl-edit Update']?.includes('f:metadata.f:annotations.f:note'),
    JSON.stringify(owners['kubectl-edit Update']),
  );
  // The same history without the annotation in Git nor on the live object is cleaned up.
  const cleaned = predict({
    ...f,
    manifest: f.manifest
      .replace(/\n\s*kustomize\.toolkit\.fluxcd\.io\/ssa: Merge/, '')
      .replace(/\n\s*annotations:\s*\n/, '\n'),
    live: stripSsa(f.live!),
  });
  assert.ok(cleaned.handedOver.some((h) => h.from.manager === 'kubectl-edit'));
});

test('Flux skips an existing object under ssa: IfNotPresent, and creates a missing one', () => {
  const f = load('flux-ssa-ifnotpresent');
  assert.equal(predict(f).outcome, 'skipped');
  assert.equal(predict({ ...f, live: null }).outcome, 'created');
});

test('a subresource entry is never cleaned up: the HPA keeps replicas when Git drops them', () => {
  const p = predict(load('flux-hpa-replicas-removed'));
  assert.equal(p.outcome, 'unchanged');
  const owners = ownersOf(encodeManagedFields(p.owners) as unknown[]);
  assert.deepEqual(owners['kube-controller-manager Update /scale'], ['f:spec.f:replicas']);
});

test("kubectl scale's /scale entry is kubectl's by name but a subresource's: taken by force, never handed over", () => {
  const p = predict(load('flux-kubectl-scale'));
  assert.deepEqual(p.handedOver, []);
  assert.deepEqual(
    p.taken.map((t) => `${t.manager.manager} /${t.manager.subresource ?? ''} ${formatPath(t.path)}`),
    ['kubectl /scale .spec.replicas'],
  );
});

test("Flux's spec.ignore sends the live value where no other applier owns the path, else leaves it out", () => {
  const adopted = predict(load('flux-ignore-adopts'));
  assert.equal(adopted.sent && (adopted.sent.spec as JsonObject).replicas, 5);
  assert.ok(!adopted.taken.some((t) => formatPath(t.path) === '.spec.replicas'));
  assert.equal(
    predict(load('flux-ignore-unchanged')).outcome,
    'unchanged',
    'a drift of ignored paths only sends nothing',
  );
  const stripped = predict(load('flux-ignore-strips'));
  assert.equal(stripped.sent && (stripped.sent.spec as JsonObject).replicas, undefined);
});

test('Argo CD RespectIgnoreDifferences co-owns replicas at the live value; without it, takes them', () => {
  const f = load('argocd-ssa-respect-replicas');
  const respected = predict(f);
  assert.deepEqual(respected.taken, []);
  const request = { ...f.request, respectIgnoreDifferences: false } as ControllerRequest;
  const forced = predict(f, request);
  assert.deepEqual(
    forced.taken.map(
      (t) => `${t.manager.manager} ${formatPath(t.path)} ${String(t.liveValue)}→${String(t.manifestValue)}`,
    ),
    ['kube-controller-manager .spec.replicas 5→3'],
  );
});

test('Argo CD server-side migrates kubectl-client-side-apply to argocd-controller', () => {
  const p = predict(load('argocd-ssa-migration'));
  assert.ok(
    p.handedOver.some((h) => h.from.manager === 'kubectl-client-side-apply' && h.to.manager === 'argocd-controller'),
  );
  assert.equal(
    p.owners.some((o) => o.identity.manager === 'kubectl-client-side-apply'),
    false,
    'the client-side entry is gone',
  );
});

test('Flux normalization writes the empty structs Go cannot omit, and the server defaults a removed replicas', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    status: {},
  } as JsonObject;
  const normalized = normalizeForFlux(deployment) as {
    spec: JsonObject & { template: { spec: { containers: JsonObject[] } } };
  };
  assert.deepEqual(normalized.spec.strategy, {});
  assert.deepEqual(normalized.spec.template.spec.containers[0]!.resources, {});
  assert.equal((normalized as JsonObject).status, undefined);
  const defaulted = withServerDefaults(deployment) as {
    spec: JsonObject & { template: { spec: { containers: JsonObject[] } } };
  };
  assert.equal(defaulted.spec.replicas, 1);
  assert.equal(defaulted.spec.template.spec.containers[0]!.imagePullPolicy, 'Always');
});

function stripSsa(live: JsonObject): JsonObject {
  const copy = structuredClone(live) as { metadata: { annotations?: Record<string, string> } };
  delete copy.metadata.annotations?.['kustomize.toolkit.fluxcd.io/ssa'];
  return copy as unknown as JsonObject;
}

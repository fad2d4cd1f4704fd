// The reader of ValidatingAdmissionPolicies, bindings and params (cluster/admission-policies.ts),
// on a fake of the two reads it makes: what a peek answers before and after the first read, when
// it announces a change, which params it reads (never Secrets), and a refused list as unknown.
// Against the real server, test/differential/admission-policies.test.ts reads through it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AdmissionPolicies,
  policiesReadNamespace,
  type PolicyReads,
} from '../../../server/src/cluster/admission-policies';
import type { ApiResourceInfo, ClusterResult } from '../../../server/src/cluster';
import type { JsonObject } from '../../../server/src/core/json';

const policy = (name: string, spec: JsonObject = {}): JsonObject => ({
  metadata: { name, resourceVersion: '1' },
  spec: { matchConstraints: { resourceRules: [] }, validations: [], ...spec },
});
const binding = (name: string, policyName: string, spec: JsonObject = {}): JsonObject => ({
  metadata: { name, resourceVersion: '1' },
  spec: { policyName, validationActions: ['Deny'], ...spec },
});
const resource = (kind: string, namespaced: boolean, group = ''): ApiResourceInfo => ({
  group,
  version: 'v1',
  apiVersion: group ? `${group}/v1` : 'v1',
  kind,
  resource: `${kind.toLowerCase()}s`,
  namespaced,
  verbs: [],
  subresources: [],
  shortNames: [],
});

function fake(collections: Record<string, JsonObject[] | 'forbidden'>): PolicyReads & { lists: string[] } {
  const lists: string[] = [];
  return {
    lists,
    listObjects(apiVersion, kind, namespace): Promise<ClusterResult<JsonObject[]>> {
      const key = `${apiVersion}/${kind}/${namespace}`;
      lists.push(key);
      const found = collections[key] ?? [];
      return Promise.resolve(
        found === 'forbidden'
          ? { ok: false, problem: { kind: 'forbidden', message: `${kind} is forbidden` } }
          : { ok: true, value: found },
      );
    },
    resolveKind(apiVersion, kind): Promise<ClusterResult<ApiResourceInfo>> {
      return Promise.resolve({
        ok: true,
        value: resource(
          kind,
          kind !== 'Namespace',
          apiVersion.split('/')[0] === apiVersion ? '' : apiVersion.split('/')[0],
        ),
      });
    },
  };
}

const vap = 'admissionregistration.k8s.io/v1';

test('a peek answers nothing until the first read lands, then the read, announced once', async () => {
  const reads = fake({
    [`${vap}/ValidatingAdmissionPolicy/`]: [policy('p')],
    [`${vap}/ValidatingAdmissionPolicyBinding/`]: [binding('b', 'p')],
  });
  let changes = 0;
  const policies = new AdmissionPolicies(reads, () => changes++);
  assert.equal(policies.peek('team-a'), undefined);
  const loaded = await policies.load('team-a');
  assert.equal(loaded.state, 'known');
  assert.equal(policies.peek('team-a'), loaded);
  assert.equal(changes, 1);
  await policies.load('team-a');
  assert.equal(changes, 1, 'the same policies again are no change');
});

test("params: the paramRef's namespace or the object's; a Secret is never read", async () => {
  const withParams = (kind: string) => policy(`p-${kind}`, { paramKind: { apiVersion: 'v1', kind } });
  const reads = fake({
    [`${vap}/ValidatingAdmissionPolicy/`]: [withParams('ConfigMap'), withParams('Secret')],
    [`${vap}/ValidatingAdmissionPolicyBinding/`]: [
      binding('by-ref', 'p-ConfigMap', { paramRef: { name: 'limits', namespace: 'config' } }),
      binding('by-object', 'p-ConfigMap', { paramRef: { name: 'limits' } }),
      binding('secret', 'p-Secret', { paramRef: { name: 'token' } }),
    ],
    'v1/ConfigMap/config': [{ metadata: { name: 'limits' } }],
  });
  const loaded = await new AdmissionPolicies(reads, () => {}).load('team-a');
  assert.ok(loaded.state === 'known');
  assert.deepEqual(
    loaded.params.map((p) => `${p.kind}/${p.namespace}:${p.objects ? p.objects.length : p.why}`).sort(),
    ['ConfigMap/config:1', 'ConfigMap/team-a:0', 'Secret/team-a:the product never reads Secret values'],
  );
  assert.ok(!reads.lists.some((l) => l.startsWith('v1/Secret')), 'no Secret is listed');
});

test('a list refused: unknown, with its reason', async () => {
  const reads = fake({ [`${vap}/ValidatingAdmissionPolicy/`]: 'forbidden' });
  const loaded = await new AdmissionPolicies(reads, () => {}).load('');
  assert.deepEqual(loaded, { state: 'unknown', why: 'ValidatingAdmissionPolicy is forbidden' });
});

test('the namespace is read for a policy that selects namespaces or reads namespaceObject', () => {
  const known = (policies: JsonObject[], bindings: JsonObject[] = []) =>
    policiesReadNamespace({ state: 'known', policies, bindings, params: [] });
  assert.equal(known([policy('p')]), false);
  assert.equal(
    known([policy('p', { matchConstraints: { namespaceSelector: { matchLabels: { env: 'prod' } } } })]),
    true,
  );
  assert.equal(known([policy('p', { validations: [{ expression: "namespaceObject.metadata.name == 'x'" }] })]), true);
  assert.equal(
    known(
      [policy('p')],
      [
        binding('b', 'p', {
          matchResources: { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Exists' }] } },
        }),
      ],
    ),
    true,
  );
  assert.equal(policiesReadNamespace({ state: 'unknown', why: 'x' }), false);
});

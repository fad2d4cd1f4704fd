// Which admission webhooks match a request (webhooks.ts), as the API server's predicates match
// them. Every rule here was held to the real kube-apiserver by test/differential/admission.test.ts
// (a webhook server recording the calls of dry-run applies): a CREATE rule is not called for the
// apply of an existing object, `configmaps/*` covers the ConfigMap itself, an old object's labels
// meet the objectSelector, a cluster-scoped object is not filtered by the namespaceSelector.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonObject } from '../../../../server/src/core/json';
import {
  matchingWebhooks,
  refusesDryRun,
  selectorMatches,
  type AdmissionRequest,
  type WebhookFacts,
} from '../../../../server/src/core/findings/webhooks';

const hook = (spec: JsonObject, type: 'validating' | 'mutating' = 'validating'): WebhookFacts => ({
  state: 'known',
  webhooks: [{ type, configuration: 'c', spec: { name: 'w.example.com', sideEffects: 'None', ...spec } }],
});
const rule = (over: JsonObject = {}): JsonObject => ({
  operations: ['*'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['configmaps'],
  ...over,
});
const request = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespace: 'team-a',
  namespaceLabels: {},
  newLabels: {},
  oldLabels: undefined,
  ...over,
});
const names = (f: WebhookFacts, r: AdmissionRequest) => matchingWebhooks(f, r).map((m) => `${m.name}:${m.certainty}`);

describe('webhook rules', () => {
  test('the operation: CREATE for a new object, UPDATE for an existing one', () => {
    const create = hook({ rules: [rule({ operations: ['CREATE'] })] });
    assert.deepEqual(names(create, request()), ['w.example.com:will']);
    assert.deepEqual(names(create, request({ operation: 'UPDATE', oldLabels: {} })), []);
  });
  test('resources with subresources: `configmaps/*` covers the ConfigMap, `*/status` does not', () => {
    assert.deepEqual(names(hook({ rules: [rule({ resources: ['configmaps/*'] })] }), request()), [
      'w.example.com:will',
    ]);
    assert.deepEqual(names(hook({ rules: [rule({ resources: ['*/status'] })] }), request()), []);
    assert.deepEqual(names(hook({ rules: [rule({ resources: ['*/*'], apiGroups: ['*'] })] }), request()), [
      'w.example.com:will',
    ]);
  });
  test('scope: a Namespace is cluster-scoped; a namespaced object is not', () => {
    const cluster = hook({ rules: [rule({ scope: 'Cluster', resources: ['*'] })] });
    assert.deepEqual(names(cluster, request()), []);
    assert.deepEqual(names(cluster, request({ resource: 'namespaces', namespace: 'child' })), ['w.example.com:will']);
  });
  test('another version: may under Equivalent, never under Exact', () => {
    const r = request({ group: 'apps', resource: 'deployments' });
    const at = rule({ apiGroups: ['apps'], apiVersions: ['v1beta1'], resources: ['deployments'] });
    assert.deepEqual(names(hook({ rules: [at] }), r), ['w.example.com:may']);
    assert.deepEqual(names(hook({ rules: [at], matchPolicy: 'Exact' }), r), []);
  });
  test('the namespaceSelector, and labels not read', () => {
    const f = hook({ rules: [rule()], namespaceSelector: { matchLabels: { env: 'prod' } } });
    assert.deepEqual(names(f, request({ namespaceLabels: { env: 'prod' } })), ['w.example.com:will']);
    assert.deepEqual(names(f, request({ namespaceLabels: { env: 'dev' } })), []);
    assert.deepEqual(names(f, request({ namespaceLabels: undefined })), ['w.example.com:may']);
    // A cluster-scoped object other than a Namespace is not filtered by it.
    assert.deepEqual(names(f, request({ namespace: '', namespaceLabels: undefined })), ['w.example.com:will']);
  });
  test("the objectSelector: the new or the old object's labels", () => {
    const f = hook({ rules: [rule()], objectSelector: { matchLabels: { app: 'web' } } });
    assert.deepEqual(names(f, request({ newLabels: { app: 'api' } })), []);
    assert.deepEqual(names(f, request({ operation: 'UPDATE', newLabels: { app: 'api' }, oldLabels: { app: 'web' } })), [
      'w.example.com:will',
    ]);
  });
  test('matchConditions make it a "may"', () => {
    const f = hook({ rules: [rule()], matchConditions: [{ name: 'only-app', expression: 'true' }] });
    assert.deepEqual(names(f, request()), ['w.example.com:may']);
  });
  test('mutating webhooks first, as the server calls them; webhook configurations are exempt', () => {
    const f: WebhookFacts = {
      state: 'known',
      webhooks: [
        {
          type: 'validating',
          configuration: 'v',
          spec: { name: 'v.example.com', rules: [rule({ resources: ['*'], apiGroups: ['*'], apiVersions: ['*'] })] },
        },
        {
          type: 'mutating',
          configuration: 'm',
          spec: { name: 'm.example.com', rules: [rule({ resources: ['*'], apiGroups: ['*'], apiVersions: ['*'] })] },
        },
      ],
    };
    assert.deepEqual(names(f, request()), ['m.example.com:will', 'v.example.com:will']);
    assert.deepEqual(
      names(
        f,
        request({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', namespace: '' }),
      ),
      [],
    );
  });
  test('sideEffects Some and Unknown refuse dry runs', () => {
    const [m] = matchingWebhooks(hook({ rules: [rule()], sideEffects: 'Unknown' }), request());
    assert.ok(m && refusesDryRun(m));
    const [n] = matchingWebhooks(hook({ rules: [rule()], sideEffects: 'NoneOnDryRun' }), request());
    assert.ok(n && !refusesDryRun(n));
  });
  test('label selectors', () => {
    const sel: JsonObject = {
      matchExpressions: [
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'team', operator: 'DoesNotExist' },
      ],
    };
    assert.equal(selectorMatches(sel, { env: 'prod' }), true);
    assert.equal(selectorMatches(sel, { env: 'prod', team: 'a' }), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, {}), undefined);
    assert.equal(selectorMatches({}, undefined), true);
  });
});

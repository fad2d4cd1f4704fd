// The admission findings through the analysis and the judgement (admission-judgement.ts): which
// code and severity, where, and when nothing is said. The server's words and which webhooks it
// calls are proven by test/differential/admission.test.ts against the local kube-apiserver.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeResource, namedWebhook, type ResourceFacts } from '../../../../server/src/core/findings';
import { webhookFindings, type AdmissionJudgement } from '../../../../server/src/core/findings/admission-judgement';
import type { WebhookFacts } from '../../../../server/src/core/findings/webhooks';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { compareWithServer } from '../../../../server/src/core/findings/verification';

const webhooks = (operations: string[], sideEffects = 'None'): WebhookFacts => ({
  state: 'known',
  webhooks: [
    {
      type: 'validating',
      configuration: 'policy',
      spec: {
        name: 'check.example.com',
        sideEffects,
        failurePolicy: 'Fail',
        rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps', 'pods'] }],
      },
    },
  ],
});
const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: team-a\n';
const facts = (over: Partial<ResourceFacts>): ResourceFacts => ({
  kind: { state: 'served', group: '', resource: 'configmaps', namespaced: true },
  live: { state: 'absent' },
  schema: undefined,
  ...over,
});
const judge = (text: string, f: ResourceFacts) =>
  analyzeResource(parseManifestText(text).resources[0]!, f, { fieldManager: 'kubectl', applyMode: 'serverSide' });

describe('admission webhooks', () => {
  test('one information finding per webhook, on the kind, naming it', () => {
    const found = judge(configMap, facts({ webhooks: webhooks(['CREATE']) })).filter(
      (f) => f.code === 'admission-webhook',
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]!.severity, 'information');
    assert.deepEqual(found[0]!.range.start, { line: 1, character: 6 });
    assert.deepEqual(namedWebhook(found[0]!), { name: 'check.example.com', certain: true });
    assert.match(found[0]!.message, /failurePolicy Fail.*sideEffects None\)\. Only a dry run can tell what it says\.$/);
  });
  test('an existing object is an UPDATE', () => {
    const live: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'team-a' } };
    const j = (ops: string[]): AdmissionJudgement => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespaced: true,
      namespaceName: 'team-a',
      namespace: undefined,
      manifest: live,
      live,
      mode: 'serverSide',
      webhooks: webhooks(ops),
      policies: undefined,
      stored: undefined,
      afterRefusals: '',
      object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app', namespace: 'team-a' },
      kindRange: () => ({ start: { line: 1, character: 6 }, end: { line: 1, character: 15 } }),
    });
    assert.deepEqual(webhookFindings(j(['CREATE'])), []);
    assert.equal(webhookFindings(j(['UPDATE'])).length, 1);
  });
  test('sideEffects Unknown: a warning that no dry run can ask', () => {
    const found = judge(configMap, facts({ webhooks: webhooks(['*'], 'Unknown') }));
    const w = found.find((f) => f.code === 'webhook-refuses-dry-run');
    assert.equal(w?.severity, 'warning');
    assert.equal(w?.serverMessage, 'admission webhook "check.example.com" does not support dry run');
  });
  test('webhooks not read: nothing said', () => {
    const found = judge(configMap, facts({ webhooks: { state: 'unknown', message: 'forbidden' } }));
    assert.deepEqual(
      found.filter((f) => f.code === 'admission-webhook'),
      [],
    );
  });
});

describe('LimitRange and ResourceQuota', () => {
  const pod = (limit: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources:\n      limits: {cpu: "${limit}"}\n`;
  const policies: ResourceFacts['namespacePolicies'] = {
    state: 'known',
    limitRanges: [{ spec: { limits: [{ type: 'Container', max: { cpu: '500m' }, default: { cpu: '500m' } }] } }],
    quotas: [],
  };
  const podFacts = (p: ResourceFacts['namespacePolicies']) =>
    facts({
      kind: { state: 'served', group: '', resource: 'pods', namespaced: true },
      ...(p ? { namespacePolicies: p } : {}),
    });
  test('a Pod a LimitRange refuses: an error in the server words', () => {
    const found = judge(pod('1'), podFacts(policies)).filter((f) => f.code === 'limit-range-forbidden');
    assert.equal(found.length, 1);
    assert.equal(found[0]!.severity, 'error');
    assert.equal(
      found[0]!.serverMessage,
      'pods "web" is forbidden: maximum cpu usage per Container is 500m, but limit is 1',
    );
    assert.deepEqual(
      judge(pod('500m'), podFacts(policies)).filter((f) => f.code === 'limit-range-forbidden'),
      [],
    );
  });
  test('a Deployment: its Pods refused, a warning', () => {
    const text = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        resources: {requests: {cpu: 300m}}\n`;
    const q: ResourceFacts['namespacePolicies'] = {
      state: 'known',
      limitRanges: [],
      quotas: [
        { metadata: { name: 'compute' }, status: { hard: { 'requests.cpu': '1' }, used: { 'requests.cpu': '0' } } },
      ],
    };
    const found = judge(
      text,
      facts({
        kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
        namespacePolicies: q,
      }),
    );
    const w = found.find((f) => f.code === 'quota-exceeded');
    assert.equal(w?.severity, 'warning');
    assert.match(w!.message, /refuses Pod 4 of 4 Pods \(replicas\) this Deployment creates/);
    assert.equal(
      w?.serverMessage,
      'exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1',
    );
  });
  test('policies not read: nothing said', () => {
    assert.deepEqual(
      judge(pod('1'), podFacts({ state: 'unknown', message: 'forbidden' })).filter(
        (f) => f.code === 'limit-range-forbidden',
      ),
      [],
    );
  });
});

describe('the order of the answers', () => {
  test('an object the server refuses as invalid (422) is answered before the admission plugins', () => {
    const text = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources: {limits: {cpu: "1"}}\n  - name: web\n    image: nginx\n`;
    const found = analyzeResource(
      parseManifestText(text).resources[0]!,
      {
        kind: { state: 'served', group: '', resource: 'pods', namespaced: true },
        live: { state: 'absent' },
        schema: undefined,
        namespacePolicies: {
          state: 'known',
          limitRanges: [{ spec: { limits: [{ type: 'Container', max: { cpu: '500m' }, default: { cpu: '500m' } }] } }],
          quotas: [],
        },
      },
      { fieldManager: 'kubectl', applyMode: 'serverSide' },
    );
    assert.ok(found.some((f) => f.code === 'invalid-merged-object'));
    const limit = found.find((f) => f.code === 'limit-range-forbidden');
    assert.match(limit!.message, /refuses the object as invalid \(422\) first/);
  });
});

describe('the dry run beside the prediction', () => {
  const podText =
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources: {limits: {cpu: "1"}}\n';
  const podFacts = (p?: ResourceFacts['namespacePolicies'], w?: WebhookFacts): ResourceFacts => ({
    kind: { state: 'served', group: '', resource: 'pods', namespaced: true },
    live: { state: 'absent' },
    schema: undefined,
    ...(p ? { namespacePolicies: p } : {}),
    ...(w ? { webhooks: w } : {}),
  });
  const rejected = (message: string) =>
    ({ outcome: 'rejected', problem: { kind: 'forbidden', reason: 'Forbidden', message }, causes: [] }) as const;
  test("a LimitRange's 403 is an answer about the Pod, foreseen by its finding", () => {
    const resource = parseManifestText(podText).resources[0]!;
    const found = judge(
      podText,
      podFacts({
        state: 'known',
        limitRanges: [{ spec: { limits: [{ type: 'Container', max: { cpu: '500m' }, default: { cpu: '500m' } }] } }],
        quotas: [],
      }),
    );
    const verdict = compareWithServer(
      resource,
      found,
      rejected(found.find((f) => f.serverMessage)!.serverMessage!),
      undefined,
    );
    assert.ok(verdict.ok && verdict.verification.agrees, JSON.stringify(verdict));
    const unforeseen = compareWithServer(
      resource,
      [],
      rejected('pods "web" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'),
      undefined,
    );
    assert.ok(unforeseen.ok && !unforeseen.verification.agrees);
  });
  test("a named webhook's denial is foreseen; a 403 of RBAC is no answer", () => {
    const resource = parseManifestText(podText).resources[0]!;
    const found = judge(podText, podFacts(undefined, webhooks(['CREATE'])));
    const denial = compareWithServer(
      resource,
      found,
      rejected('admission webhook "check.example.com" denied the request: no'),
      undefined,
    );
    assert.ok(denial.ok && denial.verification.agrees, JSON.stringify(denial));
    const rbac = compareWithServer(
      resource,
      found,
      rejected(
        'pods "web" is forbidden: User "dev" cannot patch resource "pods" in API group "" in the namespace "team-a"',
      ),
      undefined,
    );
    assert.equal(rbac.ok, false);
  });
});

describe('a LimitRange default that makes the Pod invalid', () => {
  test("a Pod: the server's 422 in its words, as invalid-merged-object", () => {
    const text =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources: {requests: {memory: 300Mi}}\n';
    const found = analyzeResource(
      parseManifestText(text).resources[0]!,
      {
        kind: { state: 'served', group: '', resource: 'pods', namespaced: true },
        live: { state: 'absent' },
        schema: undefined,
        namespacePolicies: {
          state: 'known',
          limitRanges: [{ spec: { limits: [{ type: 'Container', default: { memory: '256Mi' } }] } }],
          quotas: [],
        },
      },
      { fieldManager: 'kubectl', applyMode: 'serverSide' },
    );
    const invalid = found.filter((f) => f.code === 'invalid-merged-object');
    assert.deepEqual(
      invalid.map((f) => f.serverMessage),
      [
        'spec.containers[0].resources.requests: Invalid value: "300Mi": must be less than or equal to memory limit of 256Mi',
      ],
    );
  });
});

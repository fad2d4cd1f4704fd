// ValidatingAdmissionPolicies through the analysis (analyzeResource): which bindings apply, what
// Deny, Warn and Audit give, params, match conditions, and what is said as unknown. The server's
// words below were captured from the local kube-apiserver (v1.34) by
// test/differential/admission-policies.test.ts (KCH_DIFF_VERBOSE=1 prints them), which proves
// every case against it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  analyzeResource,
  type AdmissionPolicyFacts,
  type NamespaceFacts,
  type ResourceFacts,
} from '../../../../server/src/core/findings';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { compareWithServer } from '../../../../server/src/core/findings/verification';

const deployment = (replicas: number, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: team-a${extra}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`;

const policy = (name: string, spec: JsonObject): JsonObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name, resourceVersion: '1' },
  spec: {
    matchConstraints: {
      resourceRules: [
        { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
      ],
    },
    validations: [{ expression: 'object.spec.replicas <= 5', message: 'replicas must be no greater than 5' }],
    ...spec,
  },
});
const binding = (name: string, policyName: string, spec: JsonObject = {}): JsonObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name, resourceVersion: '1' },
  spec: { policyName, validationActions: ['Deny'], ...spec },
});
const known = (policies: JsonObject[], bindings: JsonObject[], params: JsonObject[] = []): AdmissionPolicyFacts => ({
  state: 'known',
  policies,
  bindings,
  params:
    params.length > 0
      ? [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', namespaced: true, objects: params }]
      : [],
});
const namespace = (labels: Record<string, string> = {}): NamespaceFacts => ({
  state: 'exists',
  name: 'team-a',
  labels: { 'kubernetes.io/metadata.name': 'team-a', ...labels },
});
// The schema an existing object's merge is built with (captured: test/fixtures/openapi/README.md).
const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'openapi');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8')) as JsonValue,
  ),
);
const facts = (admissionPolicies: AdmissionPolicyFacts, ns?: NamespaceFacts, live?: JsonObject): ResourceFacts => ({
  kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
  live: live ? { state: 'exists', object: live } : { state: 'absent' },
  schema: live ? schema : undefined,
  admissionPolicies,
  ...(ns ? { namespace: ns } : {}),
});
const judge = (text: string, f: ResourceFacts, applyMode: 'serverSide' | 'create' = 'serverSide') =>
  analyzeResource(parseManifestText(text).resources[0]!, f, { fieldManager: 'kubectl', applyMode }).filter((x) =>
    x.code.startsWith('admission-policy-'),
  );

const replicaLimit = known([policy('replica-limit', {})], [binding('replica-limit-binding', 'replica-limit')]);

describe('admission policies', () => {
  test('Deny: an error in the server words, on the field the expression reads', () => {
    const [f, ...rest] = judge(deployment(6), facts(replicaLimit));
    assert.deepEqual(rest, []);
    assert.equal(f?.code, 'admission-policy-denies');
    assert.equal(f?.severity, 'error');
    assert.equal(
      f?.serverMessage,
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas must be no greater than 5`,
    );
    assert.match(f!.message, /\(422\)/);
    // `replicas: 6` is line 6 (0-based).
    assert.equal(f?.range.start.line, 6);
  });

  test('within the limit: nothing', () => {
    assert.deepEqual(judge(deployment(3), facts(replicaLimit)), []);
  });

  test('reason Forbidden is a 403, with the same words', () => {
    const p = policy('limit', {
      validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Forbidden' }],
    });
    const [f] = judge(deployment(6), facts(known([p], [binding('b', 'limit')])));
    assert.match(f!.message, /\(403\)/);
    assert.match(f!.serverMessage!, / is forbidden: /);
  });

  test('no message: the failed expression', () => {
    const p = policy('limit', { validations: [{ expression: 'object.spec.replicas <= 5' }] });
    const [f] = judge(deployment(6), facts(known([p], [binding('b', 'limit')])));
    assert.match(f!.serverMessage!, /denied request: failed expression: object\.spec\.replicas <= 5$/);
  });

  test('messageExpression', () => {
    const p = policy('limit', {
      validations: [
        {
          expression: 'object.spec.replicas <= 5',
          message: 'unused',
          messageExpression: "'replicas ' + string(object.spec.replicas) + ' is more than 5'",
        },
      ],
    });
    const [f] = judge(deployment(6), facts(known([p], [binding('b', 'limit')])));
    assert.match(f!.serverMessage!, /denied request: replicas 6 is more than 5$/);
  });

  test('Warn: a warning in the server words; Audit: nothing', () => {
    const warn = known([policy('limit', {})], [binding('b', 'limit', { validationActions: ['Warn'] })]);
    const [f] = judge(deployment(6), facts(warn));
    assert.equal(f?.code, 'admission-policy-warns');
    assert.equal(f?.severity, 'warning');
    assert.equal(
      f?.serverMessage,
      "Validation failed for ValidatingAdmissionPolicy 'limit' with binding 'b': replicas must be no greater than 5",
    );
    const audit = known([policy('limit', {})], [binding('b', 'limit', { validationActions: ['Audit'] })]);
    assert.deepEqual(judge(deployment(6), facts(audit)), []);
  });

  test('a binding without its policy, or a policy without a binding: nothing', () => {
    assert.deepEqual(judge(deployment(6), facts(known([policy('limit', {})], []))), []);
    assert.deepEqual(judge(deployment(6), facts(known([], [binding('b', 'limit')]))), []);
  });

  test('resource rules: another resource, an operation not named, an excluded name', () => {
    const other = policy('limit', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['statefulsets'] }],
      },
    });
    assert.deepEqual(judge(deployment(6), facts(known([other], [binding('b', 'limit')]))), []);
    const createOnly = policy('limit', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['*'] }],
      },
    });
    const live = parseManifestText(deployment(2)).resources[0]!.object;
    assert.deepEqual(judge(deployment(6), facts(known([createOnly], [binding('b', 'limit')]), undefined, live)), []);
    assert.equal(judge(deployment(6), facts(known([createOnly], [binding('b', 'limit')]))).length, 1);
    const excluded = policy('limit', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['deployments'] }],
        excludeResourceRules: [
          { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'], resourceNames: ['web'] },
        ],
      },
    });
    assert.deepEqual(judge(deployment(6), facts(known([excluded], [binding('b', 'limit')]))), []);
  });

  test('a rule for another version: unknown under matchPolicy Equivalent, no match under Exact', () => {
    const rules = [{ apiGroups: ['apps'], apiVersions: ['v1beta2'], operations: ['*'], resources: ['deployments'] }];
    const equivalent = policy('limit', { matchConstraints: { resourceRules: rules } });
    const [u, ...rest] = judge(deployment(6), facts(known([equivalent], [binding('b', 'limit')])));
    assert.equal(u?.code, 'admission-policy-unknown');
    assert.deepEqual(rest, []);
    const exact = policy('limit', { matchConstraints: { resourceRules: rules, matchPolicy: 'Exact' } });
    assert.deepEqual(judge(deployment(6), facts(known([exact], [binding('b', 'limit')]))), []);
  });

  test('namespaceSelector: the labels of the namespace; unread labels are unknown', () => {
    const prodOnly = known(
      [policy('limit', {})],
      [binding('b', 'limit', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } })],
    );
    assert.equal(judge(deployment(6), facts(prodOnly, namespace({ env: 'prod' })))[0]?.code, 'admission-policy-denies');
    assert.deepEqual(judge(deployment(6), facts(prodOnly, namespace({ env: 'dev' }))), []);
    const [u] = judge(deployment(6), facts(prodOnly, { state: 'unknown', name: 'team-a' }));
    assert.equal(u?.code, 'admission-policy-unknown');
    assert.equal(u?.severity, 'information');
  });

  test('objectSelector: the object labels', () => {
    const p = policy('limit', {});
    (p.spec as JsonObject).matchConstraints = {
      ...((p.spec as JsonObject).matchConstraints as JsonObject),
      objectSelector: { matchLabels: { tier: 'web' } },
    };
    const f = facts(known([p], [binding('b', 'limit')]));
    assert.deepEqual(judge(deployment(6), f), []);
    assert.equal(judge(deployment(6, '\n  labels: {tier: web}'), f).length, 1);
  });

  test('matchConditions: a false one skips the policy', () => {
    const p = policy('limit', {
      matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 100' }],
    });
    assert.deepEqual(judge(deployment(6), facts(known([p], [binding('b', 'limit')]))), []);
  });

  test('variables feed validations', () => {
    const p = policy('limit', {
      variables: [{ name: 'max', expression: '5' }],
      validations: [
        {
          expression: 'object.spec.replicas <= variables.max',
          messageExpression: "'at most ' + string(variables.max)",
        },
      ],
    });
    const [f] = judge(deployment(6), facts(known([p], [binding('b', 'limit')])));
    assert.match(f!.serverMessage!, /denied request: at most 5$/);
  });

  test('params by name and by selector; missing params by parameterNotFoundAction', () => {
    const withParams = policy('limit', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        {
          expression: 'object.spec.replicas <= int(params.data.max)',
          messageExpression: "'at most ' + params.data.max + ' (' + params.metadata.name + ')'",
        },
      ],
    });
    const cm = (name: string, max: string): JsonObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { limits: 'replicas' } },
      data: { max },
    });
    const byName = known(
      [withParams],
      [binding('b', 'limit', { paramRef: { name: 'small', parameterNotFoundAction: 'Deny' } })],
      [cm('small', '4'), cm('large', '8')],
    );
    assert.match(judge(deployment(6), facts(byName))[0]!.serverMessage!, /at most 4 \(small\)$/);
    const bySelector = known(
      [withParams],
      [binding('b', 'limit', { paramRef: { selector: { matchLabels: { limits: 'replicas' } } } })],
      [cm('large', '8'), cm('small', '4')],
    );
    assert.match(judge(deployment(6), facts(bySelector))[0]!.serverMessage!, /at most 4 \(small\)$/);
    assert.deepEqual(judge(deployment(3), facts(bySelector)), []);
    const missing = (action: string) =>
      known(
        [withParams],
        [binding('b', 'limit', { paramRef: { name: 'gone', parameterNotFoundAction: action } })],
        [cm('small', '4')],
      );
    assert.match(
      judge(deployment(1), facts(missing('Deny')))[0]!.serverMessage!,
      /denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/,
    );
    assert.deepEqual(judge(deployment(1), facts(missing('Allow'))), []);
  });

  test('oldObject is the live object, null for a new one', () => {
    const p = policy('no-scale-down', {
      validations: [{ expression: 'oldObject == null || object.spec.replicas >= oldObject.spec.replicas' }],
    });
    const f = known([p], [binding('b', 'no-scale-down')]);
    const live = parseManifestText(deployment(3)).resources[0]!.object;
    assert.deepEqual(judge(deployment(2), facts(f)), []);
    assert.equal(judge(deployment(2), facts(f, undefined, live)).length, 1);
  });

  test('a failure after a validation the product cannot tell: refused, without words the server may not use', () => {
    const p = policy('limit', {
      validations: [
        { expression: 'sets.contains([1], [1])', message: 'sets' },
        { expression: 'object.spec.replicas <= 5', message: 'replicas must be no greater than 5' },
      ],
    });
    const [f, ...rest] = judge(deployment(6), facts(known([p], [binding('b', 'limit')])));
    assert.equal(f?.code, 'admission-policy-denies');
    assert.equal(f?.serverMessage, undefined);
    assert.match(f!.message, /may name an earlier validation/);
    assert.deepEqual(rest, []);
  });

  test('the authorizer, a library the product lacks, a policy list refused: unknown, quietly', () => {
    const asks = policy('limit', {
      validations: [{ expression: "authorizer.group('apps').resource('deployments').check('delete').allowed()" }],
    });
    const [a] = judge(deployment(1), facts(known([asks], [binding('b', 'limit')])));
    assert.equal(a?.code, 'admission-policy-unknown');
    const url = policy('limit', { validations: [{ expression: 'sets.contains([1], [1])' }] });
    assert.equal(
      judge(deployment(1), facts(known([url], [binding('b', 'limit')])))[0]?.code,
      'admission-policy-unknown',
    );
    const [r] = judge(deployment(1), facts({ state: 'unknown', why: 'forbidden' }));
    assert.equal(r?.code, 'admission-policy-unknown');
  });

  test("a dry run's refusal by a policy (a 403 too) is an answer the finding foresees, not a missing permission", () => {
    const p = policy('limit', {
      validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Forbidden' }],
    });
    const resource = parseManifestText(deployment(6)).resources[0]!;
    const found = analyzeResource(resource, facts(known([p], [binding('b', 'limit')])), {
      fieldManager: 'kubectl',
      applyMode: 'serverSide',
    });
    const message = found.find((f) => f.code === 'admission-policy-denies')!.serverMessage!;
    const verdict = compareWithServer(
      resource,
      found,
      { outcome: 'rejected', problem: { kind: 'forbidden', reason: 'Forbidden', message }, causes: [] },
      undefined,
    );
    assert.ok(verdict.ok && verdict.verification.agrees, JSON.stringify(verdict));
    const accepted = compareWithServer(resource, found, { outcome: 'accepted' }, undefined);
    assert.ok(accepted.ok && !accepted.verification.agrees);
  });

  // The server's words below are those the local kube-apiserver answered to the same policies
  // (test/differential/admission-policies/libraries-and-errors.yaml, where they are proven).
  test('a run-time error with failurePolicy Fail refuses (422) in the words of the error; Ignore admits', () => {
    const spec = (failurePolicy: string): JsonObject => ({
      failurePolicy,
      validations: [{ expression: '100 / object.spec.replicas >= 10', message: 'at most 10 replicas' }],
    });
    const [f, ...rest] = judge(deployment(0), facts(known([policy('ratio', spec('Fail'))], [binding('b', 'ratio')])));
    assert.equal(f?.code, 'admission-policy-denies');
    assert.equal(
      f?.serverMessage,
      "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'ratio' with binding 'b' denied request: expression '100 / object.spec.replicas >= 10' resulted in error: division by zero",
    );
    assert.match(f!.message, /\(422\)/);
    assert.deepEqual(rest, []);
    assert.deepEqual(
      judge(deployment(0), facts(known([policy('ratio', spec('Ignore'))], [binding('b', 'ratio')]))),
      [],
    );
    // Without a failurePolicy the server's default is Fail.
    const dflt = policy('ratio', { validations: spec('Fail').validations as JsonObject[] });
    assert.equal(
      judge(deployment(0), facts(known([dflt], [binding('b', 'ratio')])))[0]?.code,
      'admission-policy-denies',
    );
  });

  test('a run-time error under a Warn binding is a warning in the same words', () => {
    const p = policy('key', { validations: [{ expression: "object.metadata.labels.tier == 'web'" }] });
    const [w] = judge(deployment(1), facts(known([p], [binding('b', 'key', { validationActions: ['Warn'] })])));
    assert.equal(w?.code, 'admission-policy-warns');
    assert.equal(
      w?.serverMessage,
      "Validation failed for ValidatingAdmissionPolicy 'key' with binding 'b': expression 'object.metadata.labels.tier == 'web'' resulted in error: no such key: labels",
    );
  });

  test('match conditions: one that errs refuses under Fail (several in brackets), unless another is false', () => {
    const p = (conditions: JsonObject[], failurePolicy = 'Fail') =>
      policy('cond', {
        failurePolicy,
        matchConditions: conditions,
        validations: [{ expression: 'false', message: 'no' }],
      });
    const errs = { name: 'tier', expression: "object.metadata.labels.tier == 'web'" };
    const errs2 = { name: 'zone', expression: "object.metadata.annotations.zone == 'a'" };
    const no = { name: 'never', expression: "object.metadata.name == 'other'" };
    const one = judge(deployment(1), facts(known([p([errs])], [binding('b', 'cond')])))[0];
    assert.equal(
      one?.serverMessage,
      "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'cond' with binding 'b' denied request: expression 'object.metadata.labels.tier == 'web'' resulted in error: no such key: labels",
    );
    const two = judge(deployment(1), facts(known([p([errs, errs2])], [binding('b', 'cond')])))[0];
    assert.match(
      two!.serverMessage!,
      /denied request: \[expression .* no such key: labels, expression .* no such key: annotations\]$/,
    );
    assert.deepEqual(judge(deployment(1), facts(known([p([errs, no])], [binding('b', 'cond')]))), []);
    assert.deepEqual(judge(deployment(1), facts(known([p([errs], 'Ignore')], [binding('b', 'cond')]))), []);
  });

  test("an index out of bounds refuses in cel-go's words", () => {
    const p = policy('sum', { validations: [{ expression: '[1, 2][object.spec.replicas] == 1' }] });
    const [f] = judge(deployment(5), facts(known([p], [binding('b', 'sum')])));
    assert.equal(f?.code, 'admission-policy-denies');
    assert.equal(
      f?.serverMessage,
      "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'sum' with binding 'b' denied request: expression '[1, 2][object.spec.replicas] == 1' resulted in error: index out of bounds: 5",
    );
  });
});

// The CEL of admission policies (core/cel/admission.ts): the Kubernetes libraries added to the
// product's CEL library, and what is left unknown. Each answer is the one Kubernetes' CEL gives
// (k8s.io/apiserver pkg/cel/library: lists.go, regex.go, quantity.go, semverlib.go).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluatePolicyExpression, parseQuantity, type PolicyInput } from '../../../../server/src/core/cel/admission';
import type { JsonObject } from '../../../../server/src/core/json';

const input = (object: PolicyInput['object'], kind = 'ConfigMap', group = ''): PolicyInput => ({
  object,
  oldObject: null,
  params: null,
  namespaceObject: null,
  request: { operation: 'CREATE', name: 'web', namespace: 'team-a', kind: { group, version: 'v1', kind } },
  variables: new Map(),
});
const value = (expression: string, object: PolicyInput['object'] = {}) => {
  const a = evaluatePolicyExpression(expression, input(object));
  assert.equal(a.kind, 'value', a.kind === 'value' ? '' : a.why);
  return a.kind === 'value' ? a.value : undefined;
};

test('quantity: parsed exactly, compared, added', () => {
  assert.equal(parseQuantity('1Gi')?.compare(parseQuantity('1024Mi')!), 0);
  assert.equal(parseQuantity('1500Mi')?.compare(parseQuantity('1Gi')!), 1);
  assert.equal(parseQuantity('500m')?.compare(parseQuantity('0.5')!), 0);
  assert.equal(parseQuantity('1e3')?.compare(parseQuantity('1k')!), 0);
  assert.equal(parseQuantity('1.5.5'), undefined);
  assert.equal(value("quantity('1500Mi').isGreaterThan(quantity('1Gi'))"), true);
  assert.equal(value("quantity('1Gi').compareTo(quantity('1024Mi'))"), 0n);
  assert.equal(value("quantity('500m').isInteger()"), false);
  assert.equal(value("quantity('2k').asInteger()"), 2000n);
  assert.equal(value("quantity('1').add(quantity('500m')).isLessThan(quantity('2'))"), true);
  assert.equal(value("isQuantity('1Gi') && !isQuantity('one')"), true);
});

test('lists: isSorted, sum, min, max, indexOf', () => {
  assert.equal(value('[1, 2, 2, 3].isSorted()'), true);
  assert.equal(value("['b', 'a'].isSorted()"), false);
  assert.equal(value('[1, 2, 3].sum()'), 6n);
  assert.equal(value('[3, 1, 2].min()'), 1n);
  assert.equal(value('[3, 1, 2].max()'), 3n);
  assert.equal(value('[1, 2, 1].indexOf(1)'), 0n);
  assert.equal(value('[1, 2, 1].lastIndexOf(1)'), 2n);
  assert.equal(value('[1, 2].lastIndexOf(5)'), -1n);
});

test('regex: find, findAll, matches', () => {
  assert.equal(value("'abc 123'.find('[0-9]+')"), '123');
  assert.equal(value("'abc'.find('[0-9]+')"), '');
  assert.deepEqual(value("'a1 b22 c333'.findAll('[0-9]+')"), ['1', '22', '333']);
  assert.deepEqual(value("'a1 b22 c333'.findAll('[0-9]+', 2)"), ['1', '22']);
  assert.equal(value("matches('v1.4.0', 'v1.[0-5].\\\\d+')"), true);
});

test('objects: JSON integers are ints, a missing key is an error the server gives too where nothing fills it', () => {
  assert.equal(value('object.spec.replicas <= 5', { spec: { replicas: 6 } }), false);
  // A ConfigMap's data, any object's labels, the live object: nothing fills a missing key there.
  assert.equal(evaluatePolicyExpression("object.data.missing == '1'", input({ data: {} })).kind, 'error');
  const deployment = (o: JsonObject) => input(o, 'Deployment', 'apps');
  assert.equal(
    evaluatePolicyExpression("object.metadata.labels.tier == 'web'", deployment({ metadata: {} })).kind,
    'error',
  );
  const live = { ...deployment({ spec: {} }), oldObject: { spec: {} } };
  assert.equal(evaluatePolicyExpression('oldObject.spec.revisionHistoryLimit > 1', live).kind, 'error');
  // A built-in kind's field the server defaults before the policy runs (imagePullPolicy,
  // revisionHistoryLimit), a Namespace's name label: unknown, for the dry run.
  const a = evaluatePolicyExpression(
    "object.spec.template.spec.containers.all(c, c.imagePullPolicy != 'Never')",
    deployment({ spec: { template: { spec: { containers: [{ name: 'web' }] } } } }),
  );
  assert.equal(a.kind, 'unknown');
  assert.match(a.kind === 'unknown' ? a.why : '', /object\.spec\.template\.spec\.containers\[\]\.imagePullPolicy/);
  const ns = input({ metadata: { name: 'x' } }, 'Namespace');
  assert.equal(
    evaluatePolicyExpression("object.metadata.labels['kubernetes.io/metadata.name'] == 'x'", ns).kind,
    'unknown',
  );
});

test('unknown: the authorizer, the user, a library the product lacks', () => {
  for (const e of [
    "authorizer.group('').resource('pods').check('get').allowed()",
    "request.userInfo.username == 'admin'",
    'sets.contains([1, 2], [1])',
    "'abc'.reverse() == 'cba'",
    "'abc'.format([])",
  ])
    assert.equal(evaluatePolicyExpression(e, input({})).kind, 'unknown', e);
});

test('semver: strict, or normalized; ordered as SemVer 2.0.0 orders', () => {
  assert.equal(value("semver('1.2.3').isLessThan(semver('1.10.0'))"), true);
  assert.equal(value("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))"), true);
  assert.equal(value("semver('1.0.0-alpha').compareTo(semver('1.0.0-alpha.1'))"), -1n);
  assert.equal(value("semver('v1.5', true).minor()"), 5n);
  assert.equal(value("isSemver('v1.2.3')"), false);
  assert.equal(value("isSemver('v1.2.3', true)"), true);
  assert.equal(evaluatePolicyExpression("semver('x').major() == 1", input({})).kind, 'error');
});

test("run-time errors carry cel-go's words (common/types/err.go, interpreter/attributes.go), which the server quotes", () => {
  const words = (e: string, spec: JsonObject) => {
    const a = evaluatePolicyExpression(e, { ...input({ spec }), oldObject: { spec: {} } });
    return a.kind === 'error' ? a.words : `not an error: ${a.kind}`;
  };
  assert.equal(words('oldObject.spec.missing == 1', {}), 'no such key: missing');
  assert.equal(words('object.spec.list[3] == 1', { list: [1] }), 'index out of bounds: 3');
  assert.equal(words('1 / object.spec.zero == 1', { zero: 0 }), 'division by zero');
  assert.equal(words('1 % object.spec.zero == 1', { zero: 0 }), 'modulus by zero');
  assert.equal(words('object.spec.big * object.spec.big > 0', { big: 2 ** 40 }), 'integer overflow');
  assert.equal(
    words("url(object.spec.u).getHost() == ''", { u: 'relative' }),
    'URL parse error during conversion from string: parse "relative": invalid URI for request',
  );
});

test('a variable that fails at run time fails only the expressions that read it, in composited words', () => {
  // The server's words, from test/differential/admission-policies/libraries-and-errors.yaml.
  const judge = (data: Record<string, string>) => {
    const i = { ...input({ data }), variables: new Map() } as PolicyInput;
    const vars = i.variables as Map<string, ReturnType<typeof evaluatePolicyExpression>>;
    vars.set('mode', evaluatePolicyExpression('object.data.mode', i));
    vars.set('marked', evaluatePolicyExpression("variables.mode + '!'", i));
    return evaluatePolicyExpression("'skip' in object.data || variables.marked == 'strict!'", i);
  };
  const failed = judge({ other: '1' });
  assert.equal(
    failed.kind === 'error' ? failed.words : failed.kind,
    'composited variable "marked" fails to evaluate: composited variable "mode" fails to evaluate: no such key: mode',
  );
  assert.deepEqual(judge({ skip: '1' }), { kind: 'value', value: true });
  assert.deepEqual(judge({ mode: 'strict' }), { kind: 'value', value: true });
});

test("a macro's variable named like a library (ip, format) is a value, not the library", () => {
  assert.equal(value("['10.0.0.1'].all(ip, ip.startsWith('10.') && isIP(ip))"), true);
  assert.equal(value("['abc'].exists(format, format.size() == 3)"), true);
  assert.equal(evaluatePolicyExpression("['x'].all(x, ip.startsWith(x))", input({})).kind, 'unknown');
});

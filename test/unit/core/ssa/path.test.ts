// Field paths in the API server's notation: printing, reading back, and identity.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { jsonEqual, type JsonValue } from '../../../../server/src/core/json';
import { fieldSetFromPaths, hasPath } from '../../../../server/src/core/ssa/field-set';
import {
  field,
  formatPath,
  index,
  key,
  parsePath,
  setValue,
  valueAtFieldPath,
  type FieldPath,
} from '../../../../server/src/core/ssa/path';

// Strings as the server prints them in conflict causes (reference/ssa-semantics.md §3), with the
// path they stand for.
const serverPaths: [string, FieldPath][] = [
  ['.spec.replicas', [field('spec'), field('replicas')]],
  ['.spec.selector', [field('spec'), field('selector')]],
  [
    '.spec.template.spec.containers[name="app"].image',
    [field('spec'), field('template'), field('spec'), field('containers'), key({ name: 'app' }), field('image')],
  ],
  [
    '.spec.template.spec.containers[name="app"].ports[containerPort=8080,protocol="TCP"]',
    [
      field('spec'),
      field('template'),
      field('spec'),
      field('containers'),
      key({ name: 'app' }),
      field('ports'),
      key({ containerPort: 8080, protocol: 'TCP' }),
    ],
  ],
  [
    '.metadata.finalizers[="example.com/protect"]',
    [field('metadata'), field('finalizers'), setValue('example.com/protect')],
  ],
  [
    '.spec.template.spec.containers[name="app"].args[3]',
    [
      field('spec'),
      field('template'),
      field('spec'),
      field('containers'),
      key({ name: 'app' }),
      field('args'),
      index(3),
    ],
  ],
  [
    '.metadata.annotations.kubectl.kubernetes.io/last-applied-configuration',
    [
      field('metadata'),
      field('annotations'),
      field('kubectl'),
      field('kubernetes'),
      field('io/last-applied-configuration'),
    ],
  ],
  [
    '.spec.ports[port=80,protocol="UDP"].targetPort',
    [field('spec'), field('ports'), key({ port: 80, protocol: 'UDP' }), field('targetPort')],
  ],
  ['.spec.items[="a\\"b\\\\c"]', [field('spec'), field('items'), setValue('a"b\\c')]],
  ['.spec.flags[=true]', [field('spec'), field('flags'), setValue(true)]],
  ['.spec.ids[=-7]', [field('spec'), field('ids'), setValue(-7)]],
  ['.spec.v[=null]', [field('spec'), field('v'), setValue(null)]],
  ['.spec.weights[=0.25]', [field('spec'), field('weights'), setValue(0.25)]],
  ['', []],
];

for (const [text, expected] of serverPaths) {
  test(`reads and prints ${JSON.stringify(text)}`, () => {
    assert.deepEqual(parsePath(text), expected);
    assert.equal(formatPath(expected), text);
  });
}

// Printing details decided by Go (fmt %q = strconv.Quote, %v of float64); the expected strings
// were printed by Go 1.26 for the same values.
const printed: [string, FieldPath, string][] = [
  [
    'key fields are sorted by name',
    [key({ protocol: 'TCP', containerPort: 8080 })],
    '[containerPort=8080,protocol="TCP"]',
  ],
  [
    'non-printable runes are escaped, printable ones kept',
    [setValue('a\u00a0\x01é😀\u200b')],
    '[="a\\u00a0\\x01é😀\\u200b"]',
  ],
  [
    'tabs, quotes, backslashes, DEL, line separators',
    [setValue('tab\there "q" \\ \x7f \u2028 😀')],
    '[="tab\\there \\"q\\" \\\\ \\x7f \\u2028 😀"]',
  ],
  ['a float from 6 integer digits on in exponent form', [setValue(1234567.5)], '[=1.2345675e+06]'],
  ['a float below 1e-4 in exponent form', [setValue(0.00001234)], '[=1.234e-05]'],
  ['a float with 6 integer digits in plain form', [setValue(123456.5)], '[=123456.5]'],
  ['an integral number as an int', [setValue(3.0)], '[=3]'],
];

for (const [why, path, text] of printed) {
  test(`prints ${why}: ${text}`, () => {
    assert.equal(formatPath(path), text);
    assert.deepEqual(parsePath(text), path, 'and reads it back');
  });
}

test('a field name with dots is read against the names that exist there', () => {
  const labels = ['app.kubernetes.io/name', 'app'];
  const text = '.metadata.labels.app.kubernetes.io/name';
  const namesAt = (parent: FieldPath) => (formatPath(parent) === '.metadata.labels' ? labels : undefined);
  assert.deepEqual(parsePath(text, namesAt), [field('metadata'), field('labels'), field('app.kubernetes.io/name')]);
  assert.deepEqual(parsePath('.metadata.labels.app', namesAt), [field('metadata'), field('labels'), field('app')]);
});

for (const bad of ['spec', '.spec[', '.spec[name=app]', '.spec[name="app"', '.spec[="x"', ".a[='x']", '.a[=1]x']) {
  test(`${JSON.stringify(bad)} is not a path`, () => {
    assert.equal(parsePath(bad), undefined);
  });
}

// Two paths are the same field exactly when the server would compare their elements equal
// (value/equals.go: numbers numerically, 1 and "1" different, key order irrelevant): a set that
// holds one holds the other.
const sameness: [string, FieldPath, FieldPath, boolean][] = [
  ['key field order does not matter', [key({ a: 1, b: 'x' })], [key({ b: 'x', a: 1 })], true],
  ['3 and 3.0 are one number', [setValue(3)], [setValue(3.0)], true],
  ['1 and "1" differ', [setValue(1)], [setValue('1')], false],
  ['a field and a set value differ', [field('a')], [setValue('a')], false],
  ['index and key differ', [index(0)], [key({ index: 0 })], false],
  ['separator characters inside names cannot collide', [field('a'), field('b')], [field('a","f:b')], false],
];

for (const [why, a, b, same] of sameness) {
  test(`the same field: ${why}`, () => {
    assert.equal(hasPath(fieldSetFromPaths([a]), b), same);
    assert.equal(hasPath(fieldSetFromPaths([b]), a), same);
  });
}

const equality: [JsonValue, JsonValue, boolean][] = [
  [3, 3.0, true],
  [1, '1', false],
  [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, true],
  [[1, 2], [2, 1], false],
  [null, null, true],
  [null, {}, false],
  [{ a: null }, {}, false],
  [true, 'true', false],
];

for (const [a, b, equal] of equality) {
  test(`jsonEqual(${JSON.stringify(a)}, ${JSON.stringify(b)}) is ${equal}`, () => {
    assert.equal(jsonEqual(a, b), equal);
    assert.equal(jsonEqual(b, a), equal);
  });
}

test('the value at a path without a schema: fields, indexes, set values, list keys; an unset key field matches only when asked', () => {
  const object: JsonValue = {
    spec: {
      finalizers: ['a', 'b'],
      ports: [
        { port: 80, name: 'http' },
        { port: 443, protocol: 'TCP', name: 'https' },
      ],
    },
  };
  const ports = [field('spec'), field('ports')];
  assert.equal(valueAtFieldPath(object, [...ports, index(1), field('name')]), 'https');
  assert.equal(valueAtFieldPath(object, [field('spec'), field('finalizers'), setValue('b')]), 'b');
  assert.equal(valueAtFieldPath(object, [...ports, key({ port: 443, protocol: 'TCP' }), field('name')]), 'https');
  assert.equal(valueAtFieldPath(object, [...ports, key({ port: 80, protocol: 'TCP' }), field('name')]), undefined);
  assert.equal(
    valueAtFieldPath(object, [...ports, key({ port: 80, protocol: 'TCP' }), field('name')], { unsetKeysMatch: true }),
    'http',
  );
  assert.equal(valueAtFieldPath(object, [field('spec'), field('missing'), field('x')]), undefined);
  assert.equal(valueAtFieldPath(object, [field('spec'), index(0)]), undefined);
});

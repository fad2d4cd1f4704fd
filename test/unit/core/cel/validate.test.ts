// CRD validation rules as core/cel evaluates them. What the server answers is proven by the
// differential suite (test/differential/scenarios/cel.yaml, on the real kube-apiserver); these cases
// hold what the product decides on its own: which rules it cannot evaluate as Kubernetes does (and
// so calls unknown instead of guessing), and the walk's bookkeeping (correlation, ratcheting,
// defaults, escaped names, field paths), each on a schema written like a CRD's.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { celSchemaFor, type CelNode } from '../../../../server/src/core/cel/schema';
import { validateCelRules, type RuleVerdict } from '../../../../server/src/core/cel/validate';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';

/** A published OpenAPI v3 document of one kind whose spec has the given schema. */
function schemaOf(spec: JsonObject): CelNode {
  const doc = {
    components: {
      schemas: {
        'com.example.v1.Thing': {
          type: 'object',
          'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { $ref: '#/components/schemas/ObjectMeta' },
            spec,
          },
        },
        ObjectMeta: {
          type: 'object',
          properties: { name: { type: 'string' }, creationTimestamp: { type: 'string', format: 'date-time' } },
        },
      },
    },
  };
  const node = celSchemaFor(doc, 'example.com/v1', 'Thing');
  assert.ok(node, 'the schema has rules');
  return node;
}

const thing = (spec: JsonValue): JsonObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 't' },
  spec,
});

/** Each verdict as `kind field: detail-or-why`. */
function judge(spec: JsonObject, object: JsonValue, old?: JsonValue): string[] {
  const verdicts = validateCelRules({
    schema: schemaOf(spec),
    object: thing(object),
    ...(old !== undefined ? { old: thing(old) } : {}),
  });
  return verdicts.map((v: RuleVerdict) =>
    v.kind === 'broken' ? `broken ${v.field}: ${v.detail ?? '(message unknown)'}` : `unknown ${v.field}: ${v.why}`,
  );
}

const rule = (r: string, extra: JsonObject = {}) => ({ 'x-kubernetes-validations': [{ rule: r, ...extra }] });

const cases: { name: string; spec: JsonObject; object: JsonValue; old?: JsonValue; expect: (string | RegExp)[] }[] = [
  {
    // Captured from the local kube-apiserver (a dry-run create of such an object, kubectl create
    // --dry-run=server): the server refuses a rule that fails at run time at its node, in the error's
    // words and the rule's message (else the rule), and ratcheting does not forgive it.
    name: 'a rule that fails at run time is refused in the words of its error',
    spec: {
      type: 'object',
      properties: {
        d: { type: 'integer', ...rule('10 / self > 1') },
        m: { type: 'object', additionalProperties: { type: 'integer' }, ...rule('self.x == 1') },
        i: { type: 'string', ...rule('ip(self).family() == 4', { message: 'must be v4' }) },
        c: { type: 'string', ...rule('cidr(self).prefixLength() >= 8') },
      },
    },
    object: { d: 0, m: { y: 1 }, i: '1.2.3', c: '10.0.0.0/33' },
    expect: [
      'broken spec.d: Invalid value: "integer": division by zero evaluating rule: 10 / self > 1',
      'broken spec.m: Invalid value: "object": no such key: x evaluating rule: self.x == 1',
      'broken spec.i: Invalid value: "string": IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short evaluating rule: must be v4',
      'broken spec.c: Invalid value: "string": network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0/33"): prefix length out of range evaluating rule: cidr(self).prefixLength() >= 8',
    ],
  },
  {
    // The server's words from test/differential/scenarios/cel-libraries.yaml (beacon gateway …).
    name: "a run-time no such overload (containsIP() of a text that is no address) in validation.go's words",
    spec: {
      type: 'object',
      properties: {
        gateway: {
          type: 'string',
          ...rule("cidr('10.0.0.0/8').containsIP(self)", { message: 'gateway must be in 10.0.0.0/8' }),
        },
      },
    },
    object: { gateway: 'router' },
    expect: [
      'broken spec.gateway: Invalid value: "string": \'no such overload\': call arguments did not match a supported operator, function or macro signature for rule: gateway must be in 10.0.0.0/8',
    ],
  },
  {
    // The server's words from test/differential/scenarios/cel-libraries.yaml (beacon target, portName).
    name: 'a number in an int-or-string field given to a function that takes a string: no such overload',
    spec: {
      type: 'object',
      properties: {
        target: {
          'x-kubernetes-int-or-string': true,
          ...rule('isIP(self)', { message: 'target must be an IP address' }),
        },
        portName: { 'x-kubernetes-int-or-string': true, ...rule("self.startsWith('port-')") },
      },
    },
    object: { target: 42, portName: 8080 },
    expect: [
      'broken spec.target: Invalid value: "": \'no such overload: isIP(int)\': call arguments did not match a supported operator, function or macro signature for rule: target must be an IP address',
      "broken spec.portName: Invalid value: \"\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.startsWith('port-')",
    ],
  },
  {
    name: 'a run-time error on an unchanged value is refused all the same (not ratcheted)',
    spec: { type: 'object', properties: { d: { type: 'integer', ...rule('10 / self > 1') } } },
    object: { d: 0 },
    old: { d: 0 },
    expect: ['broken spec.d: Invalid value: "integer": division by zero evaluating rule: 10 / self > 1'],
  },
  {
    name: "Kubernetes' quantity library is evaluated as the server does",
    spec: {
      type: 'object',
      properties: { size: { type: 'string', ...rule("quantity(self).isLessThan(quantity('1Gi'))") } },
    },
    object: { size: '2Gi' },
    expect: [/^broken spec\.size: /],
  },
  {
    name: "Kubernetes' list library is evaluated: isSorted() and indexOf()",
    spec: {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'string' }, ...rule('self.isSorted()') },
        other: { type: 'array', items: { type: 'string' }, ...rule("self.indexOf('a') == 0") },
      },
    },
    object: { list: ['b', 'a'], other: ['b', 'a'] },
    expect: [/^broken spec\.list: /, /^broken spec\.other: /],
  },
  ...[
    'sets.contains(self, ["a"])',
    'strings.quote(self[0]) == "a"',
    "self[0].charAt(0) == 'a'",
    "self[0].replace('a', 'b') == 'b'",
  ].map((r) => ({
    name: `${r} is unknown`,
    spec: { type: 'object', properties: { list: { type: 'array', items: { type: 'string' }, ...rule(r) } } },
    object: { list: ['b', 'a'] },
    expect: [/^unknown spec\.list: it uses /],
  })),
  {
    name: 'a list function on a list it does not take (sum() of strings) fails at run time: unknown',
    spec: {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'string' }, ...rule('self.sum() > 0') } },
    },
    object: { list: ['b', 'a'] },
    expect: [/^unknown spec\.list: the product's CEL library cannot evaluate it here/],
  },
  {
    name: 'a date-time string is a timestamp for Kubernetes: unknown',
    spec: { type: 'object', properties: { at: { type: 'string', format: 'date-time', ...rule('self == oldSelf') } } },
    object: { at: '2024-01-02T00:00:00Z' },
    old: { at: '2024-01-01T00:00:00Z' },
    expect: [/^unknown spec\.at: it reads a string of format date-time, which Kubernetes' CEL types as a timestamp$/],
  },
  {
    name: 'macros, optionals and string functions the library shares are evaluated',
    spec: {
      type: 'object',
      ...rule(
        "self.items.all(i, i.startsWith('a')) && self.items.exists(i, i.size() > 2) && self.items.filter(i, i.contains('x')).size() == 1 && self.?missing.orValue('d') == 'd'",
        { message: 'macros' },
      ),
      properties: { items: { type: 'array', items: { type: 'string' } }, missing: { type: 'string' } },
    },
    object: { items: ['ax', 'abc'] },
    expect: [],
  },
  {
    name: 'a transition rule does not run without an old value',
    spec: {
      type: 'object',
      properties: { region: { type: 'string', ...rule('self == oldSelf', { message: 'immutable' }) } },
    },
    object: { region: 'us' },
    expect: [],
  },
  {
    name: 'a transition rule compares with the old value, and is never forgiven',
    spec: {
      type: 'object',
      properties: {
        size: {
          type: 'integer',
          ...rule('self >= oldSelf', { message: 'may only grow', reason: 'FieldValueForbidden' }),
        },
      },
    },
    object: { size: 3 },
    old: { size: 5 },
    expect: ['broken spec.size: Forbidden: may only grow'],
  },
  {
    name: 'integers and numbers are CEL int and double',
    spec: {
      type: 'object',
      ...rule('self.count + 1 == 3 && self.ratio == 0.5 && type(self.count) == int && type(self.ratio) == double'),
      properties: { count: { type: 'integer' }, ratio: { type: 'number' } },
    },
    object: { count: 2, ratio: 0.5 },
    expect: [],
  },
  {
    name: 'optionalOldSelf runs without an old value, oldSelf an empty optional; fieldPath moves the field',
    spec: {
      type: 'object',
      ...rule('!self.locked || oldSelf.hasValue()', {
        optionalOldSelf: true,
        message: 'cannot start locked',
        fieldPath: '.locked',
      }),
      properties: { locked: { type: 'boolean' } },
    },
    object: { locked: true },
    expect: ['broken spec.locked: Invalid value: "object": cannot start locked'],
  },
  {
    name: 'a failed plain rule on an unchanged value is forgiven (ratcheting)',
    spec: {
      type: 'object',
      properties: { name: { type: 'string', ...rule("self.startsWith('v-')") }, size: { type: 'integer' } },
    },
    object: { name: 'x', size: 2 },
    old: { name: 'x', size: 1 },
    expect: [],
  },
  {
    name: 'a failed plain rule on a changed value is not',
    spec: { type: 'object', properties: { name: { type: 'string', ...rule("self.startsWith('v-')") } } },
    object: { name: 'y' },
    old: { name: 'x' },
    expect: ['broken spec.name: Invalid value: "string": failed rule: self.startsWith(\'v-\')'],
  },
  {
    name: 'map-list items are correlated by their keys, and named by index as the server names them',
    spec: {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              port: { type: 'integer', ...rule('self == oldSelf', { message: 'immutable' }) },
            },
          },
        },
      },
    },
    object: {
      ports: [
        { name: 'b', port: 2 },
        { name: 'a', port: 9 },
      ],
    },
    old: {
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2 },
      ],
    },
    expect: ['broken spec.ports[1].port: Invalid value: "integer": immutable'],
  },
  {
    name: 'items of an atomic list have no old value: their transition rules do not run',
    spec: {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'integer', ...rule('self == oldSelf') } } },
    },
    object: { list: [2] },
    old: { list: [1] },
    expect: [],
  },
  {
    name: 'equality of set lists does not depend on order for the server: where order decides, unknown',
    spec: {
      type: 'object',
      properties: {
        tags: {
          type: 'array',
          'x-kubernetes-list-type': 'set',
          items: { type: 'string' },
          ...rule('self == oldSelf', { message: 'immutable' }),
        },
      },
    },
    object: { tags: ['b', 'a'] },
    old: { tags: ['a', 'b'] },
    expect: [/^unknown spec\.tags: it compares lists whose order the API server ignores/],
  },
  {
    name: 'defaults are filled in before the rules run',
    spec: {
      type: 'object',
      ...rule('self.min <= self.max', { message: 'min above max' }),
      properties: { min: { type: 'integer', default: 1 }, max: { type: 'integer', default: 10 } },
    },
    object: { min: 20 },
    expect: ['broken spec: Invalid value: "object": min above max'],
  },
  {
    name: 'a property name CEL cannot spell is escaped',
    spec: {
      type: 'object',
      ...rule("self.x__dash__y == 'a' && self.__namespace__ == 'n'"),
      properties: { 'x-y': { type: 'string' }, namespace: { type: 'string' } },
    },
    object: { 'x-y': 'a', namespace: 'n' },
    expect: [],
  },
  {
    name: 'a messageExpression gives the words; one the library cannot evaluate leaves them unknown',
    spec: {
      type: 'object',
      properties: {
        a: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: "self == 'ok'", messageExpression: "'a is ' + self" }],
        },
        b: {
          type: 'string',
          'x-kubernetes-validations': [
            { rule: "self == 'ok'", messageExpression: "'b is ' + self.reverse()", message: 'b is wrong' },
          ],
        },
        c: {
          type: 'string',
          'x-kubernetes-validations': [
            { rule: "self == 'ok'", messageExpression: "'c is ' + string(self.size() / 0)", message: 'c is wrong' },
          ],
        },
      },
    },
    object: { a: 'no', b: 'no', c: 'no' },
    expect: [
      'broken spec.a: Invalid value: "string": a is no',
      'broken spec.b: (message unknown)',
      'broken spec.c: Invalid value: "string": c is wrong',
    ],
  },
  {
    name: 'an expression the library cannot compile is unknown',
    spec: { type: 'object', properties: { a: { type: 'string', ...rule("self == 'a' &&") } } },
    object: { a: 'a' },
    expect: [/^unknown spec\.a: the product's CEL library cannot compile it/],
  },
];

for (const c of cases) {
  test(`CRD validation rules: ${c.name}`, () => {
    const got = judge(c.spec, c.object, c.old);
    assert.equal(got.length, c.expect.length, JSON.stringify(got));
    c.expect.forEach((e, i) => (typeof e === 'string' ? assert.equal(got[i], e) : assert.match(got[i]!, e)));
  });
}

test('CRD validation rules: a root rule reads metadata.name and is reported at <nil>, as the server names the root', () => {
  const doc = {
    components: {
      schemas: {
        T: {
          type: 'object',
          'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
          'x-kubernetes-validations': [
            { rule: 'self.metadata.name.size() <= 3 && !has(self.metadata.labels)', message: 'short names only' },
          ],
          properties: { metadata: { type: 'object' } },
        },
      },
    },
  };
  const schema = celSchemaFor(doc, 'example.com/v1', 'Thing')!;
  const verdicts = validateCelRules({
    schema,
    object: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'long-name', labels: { a: 'b' } } },
  });
  assert.deepEqual(
    verdicts.map((v) => [v.kind, v.field, v.kind === 'broken' ? v.detail : '']),
    [['broken', '<nil>', 'Invalid value: "object": short names only']],
  );
});

test("CRD validation rules: the live object's metadata (a creationTimestamp, a timestamp for CEL) does not make a root rule unknown", () => {
  const schema = schemaOf({ type: 'object', properties: { a: { type: 'string', ...rule("self != ''") } } });
  const withRoot: CelNode = {
    ...schema,
    rules: [{ rule: 'self.metadata.name.size() <= 3', message: 'short names only' }],
    hasRules: true,
  };
  const meta = { name: 'long-name', creationTimestamp: '2024-01-01T00:00:00Z', uid: 'u' };
  const verdicts = validateCelRules({
    schema: withRoot,
    object: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: meta, spec: { a: 'y' } },
    old: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: meta, spec: { a: 'x' } },
  });
  assert.deepEqual(
    verdicts.map((v) => [v.kind, v.field, v.kind === 'broken' ? v.detail : v.why]),
    [['broken', '<nil>', 'Invalid value: "object": short names only']],
  );
});

test('CRD validation rules: a kind without rules has no rule schema, and built-in documents have none', () => {
  assert.equal(
    celSchemaFor(
      {
        components: {
          schemas: {
            T: {
              type: 'object',
              'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
              properties: { metadata: {} },
            },
          },
        },
      },
      'example.com/v1',
      'Thing',
    ),
    undefined,
  );
});

test("the served schemas of built-in kinds, whose types refer to each other (a CRD's JSONSchemaProps to itself from a dozen fields), are read through: no rules, nothing to evaluate", () => {
  // Captured from the local kube-apiserver (test/fixtures/openapi/README.md). Walked as a tree, a
  // CustomResourceDefinition's schema never ends: `check` on a folder holding a CRD hung.
  const dir = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'openapi');
  const kinds: [string, string, string][] = [
    ['apis__apiextensions.k8s.io__v1.json', 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
    ['apis__apps__v1.json', 'apps/v1', 'Deployment'],
    ['api__v1.json', 'v1', 'Pod'],
  ];
  for (const [file, apiVersion, kind] of kinds) {
    const doc = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as JsonValue;
    assert.equal(
      celSchemaFor(doc, apiVersion, kind),
      undefined,
      `${kind}: built-in kinds carry no CEL rules in their schema`,
    );
  }
});

test('a named schema used in many places is one node; a rule inside it is found through every path', () => {
  const doc = {
    components: {
      schemas: {
        'com.example.v1.Thing': {
          type: 'object',
          'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
          properties: {
            metadata: { type: 'object' },
            spec: {
              type: 'object',
              properties: {
                a: { $ref: '#/components/schemas/Part' },
                b: { allOf: [{ $ref: '#/components/schemas/Part' }] },
              },
            },
          },
        },
        Part: {
          type: 'object',
          properties: { n: { type: 'integer', ...rule('self >= 0') }, next: { $ref: '#/components/schemas/Part' } },
        },
      },
    },
  };
  const node = celSchemaFor(doc, 'example.com/v1', 'Thing');
  assert.ok(node?.hasRules);
  const a = node.properties?.spec?.properties?.a;
  assert.equal(a, node.properties?.spec?.properties?.b, 'one node for one named schema');
  assert.equal(a?.properties?.next, a, 'a reference to itself is the same node');
  assert.deepEqual(
    a?.properties?.n?.rules.map((r) => r.rule),
    ['self >= 0'],
  );
});

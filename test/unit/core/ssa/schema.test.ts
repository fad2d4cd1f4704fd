// The schema model built from the OpenAPI v3 documents kube-apiserver v1.34.4 serves
// (test/fixtures/openapi): the list types, keys, map types and defaults the merge depends on.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import type { JsonValue } from '../../../../server/src/core/json';
import {
  deduceAtom,
  fieldType,
  resolveType,
  rootTypeFor,
  schemaFromOpenApi,
  schemaOfDocuments,
  type Atom,
  type SchemaModel,
  type TypeRef,
} from '../../../../server/src/core/ssa/schema';

const dir = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'openapi');
const docs = ['api__v1.json', 'apis__apps__v1.json', 'apis__batch__v1.json'].map(
  (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as JsonValue,
);
const { schema, problems } = schemaFromOpenApi(docs);

/** The atom at a path of field names; `[]` steps into list items. */
function atomAt(s: SchemaModel, root: TypeRef, steps: string[]): Atom {
  let ref: TypeRef = root;
  for (const step of steps) {
    const atom = resolveType(s, ref);
    assert.ok(atom, `type of ${steps.join('.')}`);
    if (step === '[]') {
      assert.ok(atom.list, `${step} is a list`);
      ref = atom.list.elementType;
    } else {
      assert.ok(atom.map, `${step}: parent is an object`);
      const next = fieldType(atom.map, step);
      assert.ok(next, `field ${step}`);
      ref = next;
    }
  }
  const atom = resolveType(s, ref);
  assert.ok(atom);
  return atom;
}

const deployment = (): TypeRef => {
  const root = rootTypeFor(schema, 'apps/v1', 'Deployment');
  assert.ok(root);
  return root;
};
const podSpec = ['spec', 'template', 'spec'];

const cases: { name: string; root: () => TypeRef; steps: string[]; check: (a: Atom) => void }[] = [
  {
    name: 'a Deployment selector is an atomic struct',
    root: deployment,
    steps: ['spec', 'selector'],
    check: (a) => assert.equal(a.map?.elementRelationship, 'atomic'),
  },
  {
    name: 'replicas is a number',
    root: deployment,
    steps: ['spec', 'replicas'],
    check: (a) => assert.equal(a.scalar, 'numeric'),
  },
  {
    name: 'containers are a map-list keyed by name',
    root: deployment,
    steps: [...podSpec, 'containers'],
    check: (a) => assert.deepEqual([a.list?.elementRelationship, a.list?.keys], ['associative', ['name']]),
  },
  {
    name: 'container ports are keyed by containerPort and protocol',
    root: deployment,
    steps: [...podSpec, 'containers', '[]', 'ports'],
    check: (a) => assert.deepEqual(a.list?.keys, ['containerPort', 'protocol']),
  },
  {
    name: "a container port's protocol defaults to TCP",
    root: deployment,
    steps: [...podSpec, 'containers', '[]', 'ports', '[]'],
    check: (a) => assert.equal(a.map?.fields.protocol?.default, 'TCP'),
  },
  {
    name: 'args are atomic',
    root: deployment,
    steps: [...podSpec, 'containers', '[]', 'args'],
    check: (a) => assert.equal(a.list?.elementRelationship, 'atomic'),
  },
  {
    name: 'finalizers are a set',
    root: deployment,
    steps: ['metadata', 'finalizers'],
    check: (a) => assert.deepEqual([a.list?.elementRelationship, a.list?.keys], ['associative', []]),
  },
  {
    name: 'labels are a granular map',
    root: deployment,
    steps: ['metadata', 'labels'],
    check: (a) => assert.equal(a.map?.elementRelationship, 'separable'),
  },
  {
    name: 'maxSurge is an int-or-string: an untyped scalar',
    root: deployment,
    steps: ['spec', 'strategy', 'rollingUpdate', 'maxSurge'],
    check: (a) => assert.deepEqual(deduceAtom(a, 1), { scalar: 'untyped' }),
  },
  {
    name: 'a resource quantity is an untyped scalar, so 0.5 and "500m" are different values',
    root: deployment,
    steps: [...podSpec, 'containers', '[]', 'resources', 'limits', 'cpu'],
    check: (a) => assert.deepEqual(a, { scalar: 'untyped' }),
  },
  {
    name: 'a CronJob reaches the pod template through jobTemplate',
    root: () => rootTypeFor(schema, 'batch/v1', 'CronJob') as TypeRef,
    steps: ['spec', 'jobTemplate', 'spec', 'template', 'spec', 'containers'],
    check: (a) => assert.deepEqual(a.list?.keys, ['name']),
  },
  {
    name: 'service ports are keyed by port and protocol',
    root: () => rootTypeFor(schema, 'v1', 'Service') as TypeRef,
    steps: ['spec', 'ports'],
    check: (a) => assert.deepEqual(a.list?.keys, ['port', 'protocol']),
  },
];

describe('schema from OpenAPI v3', () => {
  test('the served documents convert without problems', () => assert.deepEqual(problems, []));
  test('converted when first looked up, each type is what converting them all gives', () => {
    const lazy = schemaOfDocuments(docs);
    // A kind's root first, as a judgement looks: the rest converts when compared below.
    assert.deepEqual(
      lazy.types[rootTypeFor(lazy, 'v1', 'ConfigMap')!.named!],
      schema.types['io.k8s.api.core.v1.ConfigMap'],
    );
    assert.deepEqual(lazy, schema);
    // The last document to name a type gives it, as before.
    const later = { components: { schemas: { 'io.k8s.api.core.v1.ConfigMap': { type: 'string' } } } };
    assert.deepEqual(schemaOfDocuments([...docs, later]).types['io.k8s.api.core.v1.ConfigMap'], { scalar: 'string' });
  });
  for (const c of cases) test(c.name, () => c.check(atomAt(schema, c.root(), c.steps)));

  test('a CRD schema with preserve-unknown-fields and int-or-string', () => {
    const crd = {
      components: {
        schemas: {
          'com.example.v1.Widget': {
            type: 'object',
            'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Widget' }],
            properties: {
              spec: {
                type: 'object',
                properties: {
                  port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  items: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['id'],
                    items: { type: 'object', properties: { id: { type: 'string' } } },
                  },
                },
              },
            },
          },
        },
      },
    };
    const { schema: s } = schemaFromOpenApi([crd]);
    const root = rootTypeFor(s, 'example.com/v1', 'Widget');
    assert.ok(root);
    assert.equal(deduceAtom(atomAt(s, root, ['spec', 'port']), 'http').scalar, 'untyped');
    assert.equal(atomAt(s, root, ['spec', 'extra', 'anything']).map?.elementRelationship, 'separable');
    assert.deepEqual(atomAt(s, root, ['spec', 'items']).list?.keys, ['id']);
  });
});

test('a property named __proto__ is a field like any other, in both conversions', () => {
  // JSON.parse makes `__proto__` an own key, as a CRD's schema served by the API server may hold it.
  const document = JSON.parse(`{
    "components": { "schemas": { "com.example.v1.Widget": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{ "group": "example.com", "version": "v1", "kind": "Widget" }],
      "properties": {
        "apiVersion": { "type": "string" }, "kind": { "type": "string" },
        "spec": { "type": "object", "properties": {
          "__proto__": { "type": "array", "items": { "type": "string" }, "x-kubernetes-list-type": "set" },
          "size": { "type": "integer" }
        } }
      }
    } } }
  }`) as JsonValue;
  for (const [name, model] of [
    ['whole', schemaFromOpenApi([document]).schema],
    ['on demand', schemaOfDocuments([document])],
  ] as const) {
    const root = rootTypeFor(model, 'example.com/v1', 'Widget');
    assert.ok(root, name);
    assert.ok(atomAt(model, root, ['spec', '__proto__']).list, `${name}: spec.__proto__ is a list`);
    assert.ok(atomAt(model, root, ['spec', 'size']).scalar, `${name}: spec.size is a scalar`);
  }
});

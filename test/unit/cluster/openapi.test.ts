// The compact form of an OpenAPI v3 document (server/src/cluster/openapi.ts compactOpenApiDocument),
// which is what every process judges with and what the disk cache keeps: the prediction's schema and
// the validation rules read from it are exactly those read from the whole document.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { compactOpenApiDocument } from '../../../server/src/cluster/openapi';
import { celSchemaFor } from '../../../server/src/core/cel/schema';
import type { JsonObject } from '../../../server/src/core/json';
import { schemaFromOpenApi } from '../../../server/src/core/ssa/schema';

const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'openapi');
const served = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as JsonObject] as const);

/** A custom kind with rules, defaults and fields named as the words a schema leaves out. */
const custom: JsonObject = {
  openapi: '3.0.0',
  paths: { '/apis/example.com/v1/gadgets': { get: { description: 'list' } } },
  components: {
    schemas: {
      'com.example.v1.Gadget': {
        type: 'object',
        description: 'A gadget.',
        'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Gadget' }],
        properties: {
          metadata: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] },
          spec: {
            type: 'object',
            required: ['size'],
            'x-kubernetes-validations': [{ rule: 'self.size <= 10', message: 'too big’', fieldPath: '.size' }],
            properties: {
              description: { type: 'string', enum: ['a', 'b'], description: 'a field named description' },
              size: { type: 'integer', default: 1, minimum: 0 },
              port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              items: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
                items: { type: 'object', properties: { name: { type: 'string', default: 'x' } } },
              },
              labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
              free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, nullable: true },
              inner: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: {} },
            },
          },
        },
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
        type: 'object',
        properties: {
          name: { type: 'string' },
          finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
        },
      },
    },
  },
};

test('the compact form judges as the whole document: the same schema, the same validation rules', () => {
  // Names JSON.parse keeps as own keys, as the compact form must.
  const odd = JSON.parse(
    '{"components":{"schemas":{"__proto__":{"type":"object","properties":{"a":{"type":"string"}}}}}}',
  ) as JsonObject;
  for (const [name, whole] of [...served, ['custom', custom] as const, ['odd names', odd] as const]) {
    const compact = compactOpenApiDocument(whole);
    assert.deepEqual(schemaFromOpenApi([compact]), schemaFromOpenApi([whole]), name);
    const { kinds } = schemaFromOpenApi([whole]).schema;
    for (const key of Object.keys(kinds)) {
      const [apiVersion, kind] = key.split(' ') as [string, string];
      assert.deepEqual(
        celSchemaFor(compact, apiVersion, kind),
        celSchemaFor(whole, apiVersion, kind),
        `${name} ${key}`,
      );
    }
  }
  assert.ok(celSchemaFor(compactOpenApiDocument(custom), 'example.com/v1', 'Gadget')?.hasRules);
});

test('the compact form leaves out descriptions and paths, and keeps a field named like them', () => {
  const compact = compactOpenApiDocument(custom);
  assert.deepEqual(Object.keys(compact), ['components']);
  const text = JSON.stringify(compact);
  assert.ok(!text.includes('A gadget.') && !text.includes('"enum"') && !text.includes('"required"'), text);
  const spec = (compact.components as any).schemas['com.example.v1.Gadget'].properties.spec;
  assert.deepEqual(Object.keys(spec.properties), ['description', 'size', 'port', 'items', 'labels', 'free', 'inner']);
  assert.deepEqual(spec.properties.description, { type: 'string' });
  const odd = compactOpenApiDocument(
    JSON.parse('{"components":{"schemas":{"a":{"properties":{"__proto__":{"type":"string"}}}}}}') as JsonObject,
  );
  assert.ok(Object.hasOwn((odd.components as any).schemas.a.properties, '__proto__'));
});

// The applied configuration is typed once per manifest object and schema (server/src/core/ssa/predict.ts
// typedConfig): several contexts judge the same object under the same schema, each against its own
// live object. What is kept must never pass for another schema's typing, nor carry one live object's
// answer to another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../../../server/src/core/json';
import { predictApply } from '../../../../server/src/core/ssa/predict';
import { schemaOfDocuments } from '../../../../server/src/core/ssa/schema';

/** A custom kind whose spec.size is of `type`. */
const schemaWith = (type: 'integer' | 'string') =>
  schemaOfDocuments([
    {
      components: {
        schemas: {
          'com.example.v1.Gadget': {
            type: 'object',
            'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Gadget' }],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object', properties: { name: { type: 'string' } } },
              spec: { type: 'object', properties: { size: { type } } },
            },
          },
        },
      },
    },
  ]);

const config: JsonObject = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 3 } };

/** The object as it lives, its spec.size set to `size` by `manager`. */
const live = (manager: string, size: number): JsonObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Gadget',
  metadata: {
    name: 'g',
    managedFields: [
      {
        manager,
        operation: manager === 'kubectl' ? 'Apply' : 'Update',
        apiVersion: 'example.com/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:size': {} } },
      },
    ],
  },
  spec: { size },
});

const predict = (schema: ReturnType<typeof schemaWith>, on: JsonObject) =>
  predictApply({
    manifestObject: config,
    live: on,
    schema,
    fieldManager: 'kubectl',
    mode: 'serverSide',
    resource: { group: 'example.com', resource: 'gadgets' },
  });

test('one object under two schemas: each typing is its own, whichever came first', () => {
  const integer = schemaWith('integer');
  const text = schemaWith('string');
  for (let round = 0; round < 2; round++) {
    assert.equal(predict(integer, live('kubectl', 3)).status, undefined, `round ${round}: an integer is an integer`);
    assert.equal(predict(text, live('kubectl', 3)).status?.kind, 'refused', `round ${round}: 3 is no string`);
  }
});

test('one object under one schema against two clusters: each live object gives its own answer', () => {
  const schema = schemaWith('integer');
  const edited = predict(schema, live('kubectl-edit', 5));
  const own = predict(schema, live('kubectl', 3));
  const editedAgain = predict(schema, live('kubectl-edit', 5));
  assert.deepEqual(
    edited.conflicts.map((c) => c.manager.manager),
    ['kubectl-edit'],
  );
  assert.deepEqual(own.conflicts, []);
  assert.deepEqual(editedAgain.conflicts, edited.conflicts);
});

// managedFields decoded as the server decodes them, and each FieldsV1 text decoded once: entries of
// the same text (the objects a manager manages alike) share one set, equal to a fresh decoding.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import { decodeFieldsV1, setPaths, type FieldSet } from '../../../../server/src/core/ssa/field-set';
import { decodeManagedFields } from '../../../../server/src/core/ssa/managed-fields';
import { formatServerPath } from '../../../../server/src/core/ssa/messages';

const members = (s: FieldSet) => setPaths(s).map(formatServerPath);
// The shape kube-apiserver writes for `kubectl apply --server-side` of a Deployment (field names only).
const applied = (): JsonObject => ({
  'f:metadata': { 'f:labels': { 'f:app': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } },
  },
});
const entry = (manager: string, fieldsV1: JsonValue): JsonObject => ({
  manager,
  operation: 'Apply',
  apiVersion: 'apps/v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});

describe('decodeManagedFields', () => {
  test('entries of the same FieldsV1 text share one set, equal to a fresh decoding', () => {
    const a = decodeManagedFields([entry('kubectl', applied())]).entries[0]!.fields;
    const b = decodeManagedFields([entry('kubectl', applied())]).entries[0]!.fields;
    assert.equal(a, b);
    assert.deepEqual(members(a), members(decodeFieldsV1(applied())));
    assert.ok(members(a).includes('.spec.template.spec.containers[name="app"].image'));
  });

  test('another text is its own set', () => {
    const other = applied();
    delete (other['f:spec'] as JsonObject)['f:replicas'];
    const a = decodeManagedFields([entry('kubectl', applied())]).entries[0]!.fields;
    const b = decodeManagedFields([entry('kubectl', other)]).entries[0]!.fields;
    assert.notEqual(a, b);
    assert.deepEqual(members(b), members(decodeFieldsV1(other)));
    assert.ok(!members(b).includes('.spec.replicas'));
  });

  test('the same entry read again is the same set', () => {
    const managedFields = [entry('kubectl', applied()), entry('kube-controller-manager', { 'f:status': {} })];
    const first = decodeManagedFields(managedFields).entries.map((e) => e.fields);
    const again = decodeManagedFields(managedFields).entries.map((e) => e.fields);
    assert.deepEqual(
      first.map((s, i) => s === again[i]),
      [true, true],
    );
    assert.deepEqual(members(first[1]!), ['.status']);
  });
});

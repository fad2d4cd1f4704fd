// A Secret's values never reach the cache: not in data/stringData, not in kubectl's
// last-applied copy; which manager owns which key stays visible.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSecret } from '../../server/src/cluster/redact';

const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, data: { password: 'aHVudGVyMg==' }, stringData: { user: 'root' } });
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'Opaque',
  metadata: {
    name: 'db',
    namespace: 'default',
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied, team: 'payments' },
    managedFields: [{ manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:password': {} } } }],
  },
  data: { password: 'aHVudGVyMg==' },
  stringData: { user: 'root' },
};

test('values are removed everywhere, names and ownership stay', () => {
  const redacted = redactSecret(secret);
  const text = JSON.stringify(redacted);
  assert.ok(!text.includes('aHVudGVyMg=='), 'the base64 value is gone');
  assert.ok(!text.includes('root'), 'the stringData value is gone');
  assert.equal(redacted.type, 'Opaque');
  assert.deepEqual((redacted.metadata as { managedFields: unknown }).managedFields, secret.metadata.managedFields);
  const annotations = (redacted.metadata as { annotations: Record<string, string> }).annotations;
  assert.equal(annotations.team, 'payments');
  assert.deepEqual(JSON.parse(annotations['kubectl.kubernetes.io/last-applied-configuration']!), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' } });
  assert.ok('data' in secret, 'the input is not modified');
});

test('an unreadable last-applied annotation is replaced, not kept', () => {
  const broken = { ...secret, metadata: { ...secret.metadata, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'password: hunter2' } } };
  const annotations = (redactSecret(broken).metadata as { annotations: Record<string, string> }).annotations;
  assert.equal(annotations['kubectl.kubernetes.io/last-applied-configuration'], '{}');
});

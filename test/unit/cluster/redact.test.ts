// A Secret's values never reach the cache: not in data/stringData, not in kubectl's
// last-applied copy; which manager owns which key stays visible.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  redactSecret,
  redactText,
  rememberSecrets,
  withoutLastAppliedValues,
  withoutUserinfo,
} from '../../../server/src/cluster/redact';

const lastApplied = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db' },
  data: { password: 'aHVudGVyMg==' },
  stringData: { user: 'root' },
});
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'Opaque',
  metadata: {
    name: 'db',
    namespace: 'default',
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied, team: 'payments' },
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:password': {} } },
      },
    ],
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
  assert.deepEqual(JSON.parse(annotations['kubectl.kubernetes.io/last-applied-configuration']!), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db' },
  });
  assert.ok('data' in secret, 'the input is not modified');
});

test('an unreadable last-applied annotation is replaced, not kept', () => {
  const broken = {
    ...secret,
    metadata: {
      ...secret.metadata,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'password: hunter2' },
    },
  };
  const annotations = (redactSecret(broken).metadata as { annotations: Record<string, string> }).annotations;
  assert.equal(annotations['kubectl.kubernetes.io/last-applied-configuration'], '{}');
});

// What a cluster, a proxy or a credential plugin may say, and what of it can be shown.
const messages: { name: string; text: string; shown: string }[] = [
  {
    name: 'a bearer header',
    text: 'request failed: Authorization: Bearer abc.def-ghi',
    shown: 'request failed: Authorization: [redacted]',
  },
  { name: 'a bearer token alone', text: 'sent Bearer s3cr3t-t0ken', shown: 'sent Bearer [redacted]' },
  {
    name: "token=… in a plugin's stderr",
    text: 'refresh failed for token=ya29.a0AfH6SMB; retry later',
    shown: 'refresh failed for token=[redacted]; retry later',
  },
  {
    name: 'a YAML line of a kubeconfig',
    text: '  9 |     token: hunter2hunter2\n 10 |     client-key-data: LS0tLS1CRUdJTg==',
    shown: '  9 |     token: [redacted]\n 10 |     client-key-data: [redacted]',
  },
  {
    name: 'JSON fields',
    text: '{"access_token":"x1y2z3","expires_in":3600}',
    shown: '{"access_token":"[redacted]","expires_in":3600}',
  },
  {
    name: 'a JSON web token',
    text: 'bad token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl here',
    shown: 'bad token [redacted] here',
  },
  {
    name: 'a private key',
    text: 'key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----',
    shown: 'key: [redacted]',
  },
  {
    name: 'a long hexadecimal token',
    text: 'unknown token 4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
    shown: 'unknown token [redacted]',
  },
  {
    name: 'a long mixed-case opaque token',
    text: 'denied: kchQ2x9LmN7pR4tV8wY1zA3cE6gJ0hK5sD',
    shown: 'denied: [redacted]',
  },
  // What must stay readable.
  {
    name: 'a forbidden message',
    text: 'deployments.apps "web" is forbidden: User "stranger" cannot list resource "deployments" in API group "apps" in the namespace "default"',
    shown:
      'deployments.apps "web" is forbidden: User "stranger" cannot list resource "deployments" in API group "apps" in the namespace "default"',
  },
  {
    name: 'a uid conflict',
    text: 'Precondition failed: UID in precondition: 0b7c2d1e-1111-4000-8000-000000000000, UID in object meta: 5d1e2f3a-2222-4000-8000-000000000000',
    shown:
      'Precondition failed: UID in precondition: 0b7c2d1e-1111-4000-8000-000000000000, UID in object meta: 5d1e2f3a-2222-4000-8000-000000000000',
  },
  {
    name: 'a long path and a long object name',
    text: 'Cannot read kubeconfig /home/dev/.kube/Config-Production-Cluster-2024-East1: ENOENT; secrets "payments-database-credentials-2024-east-1" not found',
    shown:
      'Cannot read kubeconfig /home/dev/.kube/Config-Production-Cluster-2024-East1: ENOENT; secrets "payments-database-credentials-2024-east-1" not found',
  },
  {
    name: 'a file whose name holds a credential word, before a colon',
    text: 'Cannot read kubeconfig /home/dev/.kube/token-config: its token-file /run/my-token-pipe: it is a named pipe (FIFO), not a regular file',
    shown:
      'Cannot read kubeconfig /home/dev/.kube/token-config: its token-file /run/my-token-pipe: it is a named pipe (FIFO), not a regular file',
  },
  {
    name: 'a header after other text on its line',
    text: 'request failed; X-Auth-Token: abc123def',
    shown: 'request failed; X-Auth-Token: [redacted]',
  },
  {
    name: 'a timeout',
    text: 'no answer from https://10.0.0.1:6443 within 15 s',
    shown: 'no answer from https://10.0.0.1:6443 within 15 s',
  },
  {
    name: 'a password in a URL',
    text: 'cannot reach https://alice:hunter2@10.0.0.1:6443/api: refused',
    shown: 'cannot reach https://10.0.0.1:6443/api: refused',
  },
  {
    name: "a token as a URL's user name, and a proxy's",
    text: 'via http://u:p@proxy:3128 to https://abc.def@k8s.example.com',
    shown: 'via http://proxy:3128 to https://k8s.example.com',
  },
  {
    name: 'an address after a URL',
    text: 'see https://k8s.example.com/docs or write to ops@example.com',
    shown: 'see https://k8s.example.com/docs or write to ops@example.com',
  },
];

test('an answer about Secrets loses the values in each last-applied annotation before it is parsed', () => {
  const { data: _data, stringData: _stringData, ...metadataOnly } = secret;
  const list = JSON.stringify(
    {
      kind: 'PartialObjectMetadataList',
      items: [
        metadataOnly,
        { ...metadataOnly, metadata: { ...secret.metadata, name: 'other', annotations: { team: 'x' } } },
      ],
    },
    null,
    1,
  );
  const answer = withoutLastAppliedValues(list);
  assert.ok(!answer.includes('aHVudGVyMg==') && !answer.includes('root') && answer.length < list.length, answer);
  const items = (JSON.parse(answer) as { items: (typeof metadataOnly)[] }).items;
  assert.deepEqual(JSON.parse(items[0]!.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db' },
  });
  assert.deepEqual(items[1]!.metadata.annotations, { team: 'x' });
  // A value that only looks like the annotation, inside another string, is no member: left alone.
  const quoted = JSON.stringify({
    metadata: { annotations: { note: '{"kubectl.kubernetes.io/last-applied-configuration":"x"}' } },
  });
  assert.equal(withoutLastAppliedValues(quoted), quoted);
});

test('a URL without its userinfo', () => {
  assert.equal(withoutUserinfo('https://alice:s3cr3t@10.0.0.1:6443'), 'https://10.0.0.1:6443');
  assert.equal(
    withoutUserinfo('https://a@b:c@host/x?y@z'),
    'https://host/x?y@z',
    "up to the authority's last @, never into the path or query",
  );
  assert.equal(withoutUserinfo('https://10.0.0.1:6443'), 'https://10.0.0.1:6443');
});

describe('redactText', () => {
  for (const m of messages) test(m.name, () => assert.equal(redactText(m.text), m.shown));

  test('a credential this process used is removed wherever it appears, even without a telling name', () => {
    const token = 'plain-words-but-a-token';
    rememberSecrets(`Bearer ${token}`);
    assert.equal(redactText(`the server said: unknown user (${token})`), 'the server said: unknown user ([redacted])');
  });
});

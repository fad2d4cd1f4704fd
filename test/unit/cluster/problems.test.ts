// How failed requests become problems a user can act on, and how a 409 is told apart.
// The Status bodies are the shapes kube-apiserver v1.34 answers (connection.test.ts and
// verifier.test.ts beside this file get the same answers from the live server).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyFailure, uniqueCauses, type HttpOutcome } from '../../../server/src/cluster/problems';
import { conflictKind } from '../../../server/src/cluster/verifier';
import type { ClusterProblem } from '../../../server/src/cluster/types';

function status(code: number, reason: string, message: string, details: object = {}): HttpOutcome {
  return {
    kind: 'response',
    status: code,
    body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details }),
  };
}

const purpose = {
  method: 'GET',
  path: '/apis/apps/v1/namespaces/default/deployments',
  verb: 'list',
  resource: 'deployments.apps',
  namespace: 'default',
};

const cases: { name: string; outcome: HttpOutcome; expected: Partial<ClusterProblem> }[] = [
  {
    name: 'connection refused',
    outcome: { kind: 'network', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' },
    expected: { kind: 'unreachable', code: 'ECONNREFUSED' },
  },
  {
    name: 'unknown host',
    outcome: { kind: 'network', code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND nowhere.invalid' },
    expected: { kind: 'unreachable' },
  },
  {
    name: 'timeout',
    outcome: { kind: 'network', code: 'ETIMEDOUT', message: 'no answer' },
    expected: { kind: 'unreachable' },
  },
  {
    name: 'untrusted certificate',
    outcome: {
      kind: 'network',
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
      message: 'self-signed certificate in certificate chain',
    },
    expected: { kind: 'unreachable' },
  },
  {
    name: 'exec plugin failed',
    outcome: {
      kind: 'network',
      code: 'EXEC_CREDENTIAL',
      message: 'Cannot get credentials: spawn gke-gcloud-auth-plugin ENOENT',
    },
    expected: { kind: 'unauthenticated' },
  },
  {
    name: 'a client key that cannot be used',
    outcome: {
      kind: 'network',
      code: 'CLIENT_CREDENTIAL',
      message: 'The client certificate and key cannot be used: x509 certificate routines::key values mismatch.',
    },
    expected: { kind: 'unauthenticated' },
  },
  {
    name: 'a request that cannot be made',
    outcome: {
      kind: 'network',
      code: 'CLIENT_SETUP',
      message: 'The certificate authority cannot be used: asn1 encoding routines::too long.',
    },
    expected: { kind: 'unreachable' },
  },
  {
    name: '401 says the credentials were refused',
    outcome: status(401, 'Unauthorized', 'Unauthorized'),
    expected: {
      kind: 'unauthenticated',
      httpStatus: 401,
      message: 'The cluster refused the credentials (401 Unauthorized).',
    },
  },
  {
    name: '429 says the cluster throttles, and for how long',
    outcome: {
      kind: 'response',
      status: 429,
      retryAfterMs: 3_000,
      body: JSON.stringify({
        kind: 'Status',
        code: 429,
        reason: 'TooManyRequests',
        message: 'Too many requests, please try again later.',
      }),
    },
    expected: {
      kind: 'other',
      httpStatus: 429,
      message:
        'The cluster is throttling requests (429 Too Many Requests; it asks to wait 3 s before trying again): Too many requests, please try again later.',
    },
  },
  {
    name: '503 says the cluster is failing',
    outcome: status(503, 'ServiceUnavailable', 'etcd leader changed'),
    expected: { kind: 'other', httpStatus: 503, message: 'The cluster is failing (HTTP 503): etcd leader changed' },
  },
  {
    name: 'a body echoing a credential is not repeated',
    outcome: {
      kind: 'response',
      status: 502,
      body: 'bad gateway: Authorization: Bearer sk9XbQ2LmN7pR4tV8wY1zA3cE6gJ0hK5',
    },
    expected: {
      kind: 'other',
      message: 'The cluster is failing (HTTP 502): 502 bad gateway: Authorization: [redacted]',
    },
  },
  {
    name: '403 names verb, resource and namespace from the message',
    outcome: status(
      403,
      'Forbidden',
      'deployments.apps is forbidden: User "stranger" cannot list resource "deployments" in API group "apps" in the namespace "default"',
      { group: 'apps', kind: 'deployments' },
    ),
    expected: {
      kind: 'forbidden',
      verb: 'list',
      resource: 'deployments.apps',
      namespace: 'default',
      reason: 'Forbidden',
    },
  },
  {
    name: '403 for a cluster-scoped core resource',
    outcome: status(
      403,
      'Forbidden',
      'namespaces is forbidden: User "stranger" cannot list resource "namespaces" in API group "" at the cluster scope',
      { kind: 'namespaces' },
    ),
    expected: { kind: 'forbidden', verb: 'list', resource: 'namespaces' },
  },
  {
    name: '403 without a Status body falls back to the request',
    outcome: { kind: 'response', status: 403, body: 'forbidden' },
    expected: { kind: 'forbidden', verb: 'list', resource: 'deployments.apps', namespace: 'default' },
  },
  {
    name: '404',
    outcome: status(404, 'NotFound', 'the server could not find the requested resource'),
    expected: { kind: 'notFound' },
  },
  {
    name: '422 keeps the server message',
    outcome: status(422, 'Invalid', 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1'),
    expected: { kind: 'other', reason: 'Invalid', httpStatus: 422 },
  },
  {
    name: '500 without JSON',
    outcome: { kind: 'response', status: 500, body: 'upstream connect error\nmore' },
    expected: { kind: 'other', message: 'The cluster is failing (HTTP 500): 500 upstream connect error' },
  },
];

describe('classifyFailure', () => {
  for (const c of cases) {
    test(c.name, () => {
      const problem = classifyFailure(c.outcome, purpose);
      for (const [key, value] of Object.entries(c.expected))
        assert.deepEqual(problem[key as keyof ClusterProblem], value, key);
      assert.equal(problem.request, `GET ${purpose.path}`);
      assert.ok(problem.message.length > 0);
    });
  }
});

describe('uniqueCauses', () => {
  test('a cause repeated by the server is reported once (kubernetes/kubernetes#119141)', () => {
    const cause = {
      reason: 'FieldManagerConflict',
      message: 'conflict with "kubectl-edit" using apps/v1',
      field: '.spec.replicas',
    };
    const other = { ...cause, field: '.spec.template.spec.containers[name="app"].image' };
    assert.deepEqual(uniqueCauses([cause, other, { ...cause }]), [cause, other]);
  });
  test('malformed causes are skipped, missing fields become empty', () => {
    assert.deepEqual(uniqueCauses([1, null, { reason: 'FieldValueInvalid' }] as never), [
      { reason: 'FieldValueInvalid', message: '', field: '' },
    ]);
    assert.deepEqual(uniqueCauses(undefined), []);
  });
});

describe('conflictKind tells the three 409s apart', () => {
  const rows: [reason: string, message: string, causes: number, expected: ReturnType<typeof conflictKind>][] = [
    ['AlreadyExists', 'deployments.apps "web" already exists', 0, 'alreadyExists'],
    [
      'Conflict',
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas',
      1,
      'fieldManager',
    ],
    [
      'Conflict',
      'Apply failed with 2 conflicts: conflicts with "helm" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name="app"].image',
      2,
      'fieldManager',
    ],
    [
      'Conflict',
      'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
      0,
      'resourceVersion',
    ],
    [
      'Conflict',
      'Operation cannot be fulfilled on deployments.apps "web": Precondition failed: UID in precondition: 123, UID in object meta: 456',
      0,
      'uid',
    ],
    [
      'Conflict',
      'uid mismatch: the provided object specified uid 0b7c2d1e-0000-4000-8000-000000000000, and no existing object was found',
      0,
      'uid',
    ],
    ['Conflict', 'something new', 0, 'other'],
  ];
  for (const [reason, message, causes, expected] of rows) {
    test(`${expected}: ${message.slice(0, 50)}`, () => assert.equal(conflictKind(reason, message, causes), expected));
  }
});

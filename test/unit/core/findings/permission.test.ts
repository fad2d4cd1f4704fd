// Which requests each apply mode sends (what is asked of the cluster's authorization), the judgement
// of the answers, and the server's 403 words. The words were read from the real API server's answers
// to refused requests (test/differential/permission.test.ts compares them on every scenario); the
// forms no scenario reaches (a subresource) follow apiserver's responsewriters.forbiddenMessage.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PermissionFacts } from '../../../../server/src/core/findings';
import {
  judgePermission,
  permissionQuestions,
  permissionRequests,
} from '../../../../server/src/core/findings/permission';
import { forbiddenMessage } from '../../../../server/src/core/ssa/messages';

describe('the requests an apply sends', () => {
  test('server-side apply: a PATCH, and for a missing object the create the patch makes, by name', () => {
    assert.deepEqual(permissionRequests('serverSide', true), [{ verb: 'patch', named: true }]);
    assert.deepEqual(permissionRequests('serverSide', false), [
      { verb: 'patch', named: true },
      { verb: 'create', named: true },
    ]);
  });

  test('client-side apply: a GET first, then a PATCH of an existing object or a POST of a missing one, never an update', () => {
    assert.deepEqual(permissionRequests('clientSide', true), [
      { verb: 'get', named: true },
      { verb: 'patch', named: true },
    ]);
    assert.deepEqual(permissionRequests('clientSide', false), [
      { verb: 'get', named: true },
      { verb: 'create', named: false },
    ]);
  });

  test('create: a POST to the collection, which names no object', () => {
    assert.deepEqual(permissionRequests('create', true), [{ verb: 'create', named: false }]);
    assert.deepEqual(permissionRequests('create', false), [{ verb: 'create', named: false }]);
  });

  test('the cluster asks every request any mode sends, once each', () => {
    assert.deepEqual(permissionQuestions(true), [
      { verb: 'patch', named: true },
      { verb: 'get', named: true },
      { verb: 'create', named: false },
    ]);
    assert.deepEqual(permissionQuestions(false), [
      { verb: 'patch', named: true },
      { verb: 'create', named: true },
      { verb: 'get', named: true },
      { verb: 'create', named: false },
    ]);
  });
});

describe('the judgement of the answers', () => {
  const facts = (...answers: PermissionFacts['answers']): PermissionFacts => ({ user: 'u', namespace: 'ns', answers });

  test('the first request refused is the answer, in the order the apply sends them', () => {
    const judged = judgePermission(
      facts(
        { verb: 'get', named: true, state: 'denied', reason: 'first' },
        { verb: 'patch', named: true, state: 'denied' },
      ),
      'clientSide',
      true,
    );
    assert.deepEqual(judged, { state: 'denied', request: { verb: 'get', named: true }, reason: 'first' });
  });

  test('a refusal of a request the mode does not send says nothing', () => {
    const judged = judgePermission(
      facts({ verb: 'patch', named: true, state: 'allowed' }, { verb: 'create', named: false, state: 'denied' }),
      'serverSide',
      true,
    );
    assert.deepEqual(judged, { state: 'silent' });
  });

  test('a pending answer says nothing yet; no facts (a snapshot) say nothing', () => {
    assert.deepEqual(judgePermission(facts({ verb: 'patch', named: true, state: 'pending' }), 'serverSide', true), {
      state: 'silent',
    });
    assert.deepEqual(judgePermission(undefined, 'create', false), { state: 'silent' });
  });

  test('an answer that could not be had, or was never asked, is unknown with its reason', () => {
    assert.deepEqual(
      judgePermission(facts({ verb: 'patch', named: true, state: 'unknown', reason: 'timeout' }), 'serverSide', true),
      { state: 'unknown', requests: [{ verb: 'patch', named: true }], reason: 'timeout' },
    );
    assert.deepEqual(judgePermission(facts(), 'create', false), {
      state: 'unknown',
      requests: [{ verb: 'create', named: false }],
      reason: 'the cluster was not asked',
    });
  });
});

describe("the server's 403 words", () => {
  test('a named, namespaced object of a group', () => {
    assert.equal(
      forbiddenMessage({
        verb: 'patch',
        group: 'apps',
        resource: 'deployments',
        namespace: 'prod',
        name: 'web',
        user: 'dev',
      }),
      'deployments.apps "web" is forbidden: User "dev" cannot patch resource "deployments" in API group "apps" in the namespace "prod"',
    );
  });

  test('the core group, and a create that names no object', () => {
    assert.equal(
      forbiddenMessage({ verb: 'create', group: '', resource: 'configmaps', namespace: 'prod', user: 'dev' }),
      'configmaps is forbidden: User "dev" cannot create resource "configmaps" in API group "" in the namespace "prod"',
    );
  });

  test('a cluster-scoped kind: at the cluster scope', () => {
    assert.equal(
      forbiddenMessage({
        verb: 'patch',
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterroles',
        name: 'r',
        user: 'dev',
      }),
      'clusterroles.rbac.authorization.k8s.io "r" is forbidden: User "dev" cannot patch resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
    );
  });

  test('a subresource joins the resource the user is refused, not the qualified resource', () => {
    assert.equal(
      forbiddenMessage({
        verb: 'patch',
        group: 'apps',
        resource: 'deployments',
        subresource: 'scale',
        namespace: 'prod',
        name: 'web',
        user: 'system:serviceaccount:prod:ci',
      }),
      'deployments.apps "web" is forbidden: User "system:serviceaccount:prod:ci" cannot patch resource "deployments/scale" in API group "apps" in the namespace "prod"',
    );
  });

  test("the authorizer's reason follows", () => {
    assert.equal(
      forbiddenMessage({
        verb: 'get',
        group: '',
        resource: 'secrets',
        namespace: 'a',
        name: 's',
        user: 'u',
        reason: 'RBAC: x',
      }),
      'secrets "s" is forbidden: User "u" cannot get resource "secrets" in API group "" in the namespace "a": RBAC: x',
    );
  });
});

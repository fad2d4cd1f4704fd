// Discovery answers in both formats give the same resource records; a kind that is not served says
// which versions are. Bodies are trimmed copies of kube-apiserver v1.34 answers
// (GET /apis with the apidiscovery.k8s.io/v2 Accept header, and GET /apis/apps/v1).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findResource, parseAggregatedDiscovery, parseResourceList } from '../../../server/src/cluster/discovery';
import { parseOpenApiIndex, openApiPathKey } from '../../../server/src/cluster/openapi';
import type { DiscoveryIndex } from '../../../server/src/cluster/types';
import type { JsonObject } from '../../../server/src/core/json';

const aggregated: JsonObject = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  metadata: {},
  items: [
    {
      metadata: { name: 'apps', creationTimestamp: null },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'deployments',
              responseKind: { group: '', version: '', kind: 'Deployment' },
              scope: 'Namespaced',
              singularResource: 'deployment',
              verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
              shortNames: ['deploy'],
              categories: ['all'],
              subresources: [
                {
                  subresource: 'scale',
                  responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
                  verbs: ['get', 'patch', 'update'],
                },
                {
                  subresource: 'status',
                  responseKind: { group: '', version: '', kind: 'Deployment' },
                  verbs: ['get', 'patch', 'update'],
                },
              ],
            },
          ],
          freshness: 'Current',
        },
      ],
    },
    {
      metadata: { name: 'rbac.authorization.k8s.io', creationTimestamp: null },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'clusterroles',
              responseKind: { group: '', version: '', kind: 'ClusterRole' },
              scope: 'Cluster',
              singularResource: 'clusterrole',
              verbs: ['get', 'list'],
            },
          ],
        },
      ],
    },
  ],
};

const classicAppsV1: JsonObject = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'apps/v1',
  resources: [
    {
      name: 'deployments',
      singularName: 'deployment',
      namespaced: true,
      kind: 'Deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
    },
    {
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    },
    {
      name: 'deployments/status',
      singularName: '',
      namespaced: true,
      kind: 'Deployment',
      verbs: ['get', 'patch', 'update'],
    },
  ],
};

const deployment = {
  group: 'apps',
  version: 'v1',
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  resource: 'deployments',
  singular: 'deployment',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: ['scale', 'status'],
  shortNames: ['deploy'],
};

describe('discovery formats', () => {
  test('aggregated discovery: resource, scope, subresources, group versions', () => {
    const parsed = parseAggregatedDiscovery(aggregated);
    assert.ok(parsed);
    assert.deepEqual(parsed.resources[0], deployment);
    assert.equal(parsed.resources[1]?.namespaced, false);
    assert.deepEqual(parsed.groups, [
      { name: 'apps', versions: ['v1'] },
      { name: 'rbac.authorization.k8s.io', versions: ['v1'] },
    ]);
  });

  test('the classic list gives the same record', () => {
    assert.deepEqual(parseResourceList(classicAppsV1, 'apps/v1'), [deployment]);
  });

  test('a classic body is not mistaken for aggregated discovery', () => {
    assert.equal(parseAggregatedDiscovery({ kind: 'APIGroupList', groups: [] }), undefined);
  });
});

describe('findResource', () => {
  const index: DiscoveryIndex = { ...parseAggregatedDiscovery(aggregated)!, source: 'aggregated', fetchedAt: 0 };
  test('a served kind', () => {
    const found = findResource(index, 'apps/v1', 'Deployment');
    assert.ok(found.ok);
    assert.equal(found.value.resource, 'deployments');
  });
  test('an old apiVersion is not served, and the message names the served one', () => {
    const found = findResource(index, 'apps/v1beta1', 'Deployment');
    assert.ok(!found.ok);
    assert.equal(found.problem.kind, 'kindNotServed');
    assert.match(found.problem.message, /Deployment in apps\/v1beta1 \(served: apps\/v1\)/);
  });
});

describe('OpenAPI v3 index', () => {
  test('group-version keys map to hashed URLs', () => {
    const index = parseOpenApiIndex({
      paths: {
        'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=ABC' },
        'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=DEF' },
      },
    });
    assert.equal(index?.paths[openApiPathKey('v1')], '/openapi/v3/api/v1?hash=ABC');
    assert.equal(index?.paths[openApiPathKey('apps/v1')], '/openapi/v3/apis/apps/v1?hash=DEF');
  });
});

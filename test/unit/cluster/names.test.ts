// Names reach a URL only through cluster/names.ts, and only names the API server itself accepts.
// The rules are apimachinery's (IsValidPathSegmentName, IsDNS1123Label, IsDNS1123Subdomain); the
// protocol test in test/security/hostile-repo/names.test.ts shows the same against a real server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkServerRelativePath,
  collectionPath,
  nameProblems,
  nameSelector,
  objectPath,
  type NameRule,
} from '../../../server/src/cluster/names';
import type { ApiResourceInfo } from '../../../server/src/cluster';

const resource = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
): ApiResourceInfo => ({
  group,
  version,
  apiVersion: group ? `${group}/${version}` : version,
  kind,
  resource: plural,
  namespaced,
  verbs: ['get', 'list', 'watch'],
  subresources: [],
  shortNames: [],
});
const secrets = resource('', 'v1', 'Secret', 'secrets', true);
const clusterRoles = resource('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false);
const namespaces = resource('', 'v1', 'Namespace', 'namespaces', false);
const services = resource('', 'v1', 'Service', 'services', true);
const widgets = resource('example.com', 'v1', 'Widget', 'widgets', true);

describe('names the API server refuses never become a path', () => {
  const refusedNamespaces = ['..', '.', 'a/b', '%2e%2e', '', 'Default', 'a'.repeat(64), '-a', 'a.b', 'a\nb', 'é'];
  for (const namespace of refusedNamespaces) {
    test(`namespace ${JSON.stringify(namespace.length > 20 ? `${namespace.slice(0, 20)}…` : namespace)}`, () => {
      const path = objectPath(secrets, namespace, 'db');
      assert.ok(!path.ok, `a path was built: ${path.ok ? path.value : ''}`);
      assert.equal(path.problem.kind, 'invalidName');
      assert.equal(path.problem.field, 'metadata.namespace');
      assert.ok(!collectionPath(secrets, namespace).ok);
    });
  }

  const refusedNames: { name: string; of: ApiResourceInfo }[] = [
    { name: '../x', of: secrets },
    { name: '..', of: secrets },
    { name: '.', of: clusterRoles },
    { name: 'a/b', of: clusterRoles },
    { name: '100%', of: clusterRoles },
    { name: '', of: secrets },
    { name: 'UPPER', of: secrets },
    { name: 'x'.repeat(254), of: secrets },
    { name: 'x'.repeat(1025), of: clusterRoles },
    { name: 'a.b', of: namespaces },
    { name: '1abc', of: services },
    { name: 'under_score', of: widgets },
  ];
  for (const { name, of } of refusedNames) {
    test(`${of.kind} named ${JSON.stringify(name.length > 20 ? `${name.slice(0, 20)}…` : name)}`, () => {
      const path = objectPath(of, 'default', name);
      assert.ok(!path.ok, `a path was built: ${path.ok ? path.value : ''}`);
      assert.equal(path.problem.field, 'metadata.name');
      assert.match(
        path.problem.message,
        /is not a name the API server accepts: .+\. The cluster is not asked about this object\.$/,
      );
    });
  }
});

describe('names the API server accepts give the path kubectl uses', () => {
  const rows: { of: ApiResourceInfo; namespace: string; name: string; path: string }[] = [
    { of: secrets, namespace: 'default', name: 'db', path: '/api/v1/namespaces/default/secrets/db' },
    {
      of: secrets,
      namespace: 'team-a',
      name: 'tls.example.com',
      path: '/api/v1/namespaces/team-a/secrets/tls.example.com',
    },
    {
      of: clusterRoles,
      namespace: '',
      name: 'system:controller:x',
      path: '/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Acontroller%3Ax',
    },
    { of: namespaces, namespace: 'ignored', name: 'team-a', path: '/api/v1/namespaces/team-a' },
    { of: widgets, namespace: 'w', name: 'a.b-c', path: '/apis/example.com/v1/namespaces/w/widgets/a.b-c' },
    {
      of: secrets,
      namespace: 'default',
      name: 'x'.repeat(253),
      path: `/api/v1/namespaces/default/secrets/${'x'.repeat(253)}`,
    },
  ];
  for (const row of rows) {
    test(`${row.of.kind} ${row.name.slice(0, 30)}`, () => {
      assert.deepEqual(objectPath(row.of, row.namespace, row.name), { ok: true, value: row.path });
    });
  }
});

test('the rules, word for word where the API server words them', () => {
  const rows: { value: string; rule: NameRule; problems: RegExp[] }[] = [
    { value: '..', rule: 'pathSegment', problems: [/^may not be '\.\.'$/] },
    { value: 'a/b%', rule: 'pathSegment', problems: [/^may not contain '\/'$/, /^may not contain '%'$/] },
    { value: 'A', rule: 'dns1123Label', problems: [/^a lowercase RFC 1123 label must consist of/] },
    { value: 'a'.repeat(64), rule: 'dns1123Label', problems: [/^must be no more than 63 characters$/] },
    { value: 'a_b', rule: 'dns1123Subdomain', problems: [/^a lowercase RFC 1123 subdomain must consist of/] },
    { value: '9a', rule: 'dns1035Label', problems: [/^a DNS-1035 label must consist of/] },
    { value: 'system:node:x', rule: 'pathSegment', problems: [] },
  ];
  for (const row of rows) {
    const problems = nameProblems(row.value, row.rule);
    assert.equal(problems.length, row.problems.length, `${row.value}: ${problems.join(' | ')}`);
    row.problems.forEach((re, i) => assert.match(problems[i]!, re));
  }
});

test('a discovery document cannot steer a path either', () => {
  const odd = { ...secrets, resource: '../secrets' };
  assert.ok(!collectionPath(odd, 'default').ok);
  assert.ok(!collectionPath({ ...secrets, version: 'v1/../..' }, 'default').ok);
  assert.ok(!collectionPath({ ...widgets, group: 'example.com/..' }, 'default').ok);
});

test('server-relative URLs from the OpenAPI index stay under /openapi/v3/', () => {
  const rows: [string, boolean][] = [
    ['/openapi/v3/apis/apps/v1', true],
    ['/openapi/v3/api/v1', true],
    ['/openapi/v3/../../api/v1/secrets', false],
    ['/openapi/v3/%2e%2e/api', false],
    ['//evil.example/openapi/v3/x', false],
    ['https://evil.example/openapi/v3/x', false],
    ['/api/v1/secrets', false],
    ['/openapi/v3/a\\..\\b', false],
  ];
  for (const [url, ok] of rows) assert.equal(checkServerRelativePath(url, '/openapi/v3/'), ok, url);
});

test('a name selects its object alone: a refused name selects nothing, a path-segment name cannot add a selector', () => {
  const configMaps = resource('', 'v1', 'ConfigMap', 'configmaps', true);
  assert.deepEqual(nameSelector(configMaps, 'web.settings'), { ok: true, value: 'metadata.name=web.settings' });
  for (const refused of ['..', 'a/b', 'Web', 'a,metadata.namespace=kube-system'])
    assert.equal(nameSelector(configMaps, refused).ok, false, refused);
  // RBAC names are path segments: `,`, `=` and `\` are escaped as fields.EscapeValue escapes them.
  assert.deepEqual(nameSelector(clusterRoles, 'system:a,metadata.name=b\\'), {
    ok: true,
    value: 'metadata.name=system:a\\,metadata.name\\=b\\\\',
  });
});

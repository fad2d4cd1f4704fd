// A new object bound for a namespace that does not exist (core/findings/namespaces.ts through the
// analysis): the API server refuses it with 404 `namespaces "x" not found`, so that is an error on
// the `namespace:` line (on the name when the namespace is the default one); a Namespace among the
// files applied together makes it information on the order of the apply; an object that exists, a
// cluster-scoped kind, a namespace that exists or that may not be read (unknown) say nothing. The
// server's own 404 is proven by test/cli/namespace-not-found.test.ts and the protocol test of the
// same name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  analyzeResource,
  type AnalysisSettings,
  type NamespaceFacts,
  type ResourceFacts,
} from '../../../../server/src/core/findings';
import { defaultSeverity, docsLinks, type FindingCode } from '../../../../server/src/core/findings/catalogue';
import { definedKinds } from '../../../../server/src/core/findings/kind-served';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import type { ApplyMode } from '../../../../server/src/core/ssa/predict';

const configMap = (namespaceLine: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n${namespaceLine}data:\n  mode: fast\n`;
const inTeamA = configMap('  namespace: team-a\n');
const noNamespace = configMap('');
const namespaceObject = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;

interface Case {
  name: string;
  text: string;
  /** What the cluster layer says of the namespace (undefined: it was not asked). */
  namespace?: NamespaceFacts;
  namespaced?: boolean;
  live?: JsonObject;
  /** Documents applied together with the object (a folder, a stream, the open documents). */
  together?: string;
  mode?: ApplyMode;
  /** The finding, or none. */
  expect?: {
    code: FindingCode;
    line: number;
    character: number;
    path?: string;
    message: RegExp;
    serverMessage?: string;
  };
}

const missing = (name: string): NamespaceFacts => ({ state: 'missing', name });
const notFound = (name: string) => `namespaces "${name}" not found`;

const cases: Case[] = [
  {
    name: "a namespace written in the manifest that does not exist: the server's 404, on the namespace",
    text: inTeamA,
    namespace: missing('team-a'),
    expect: {
      code: 'namespace-not-found',
      line: 4,
      character: 13,
      path: '.metadata.namespace',
      message:
        /^namespaces "team-a" not found: the namespace "team-a" does not exist in the cluster, so the API server refuses this object \(404 NotFound\)/,
      serverMessage: notFound('team-a'),
    },
  },
  {
    name: 'kubectl create gets the same 404',
    text: inTeamA,
    namespace: missing('team-a'),
    mode: 'create',
    expect: {
      code: 'namespace-not-found',
      line: 4,
      character: 13,
      path: '.metadata.namespace',
      message: /^namespaces "team-a" not found:/,
      serverMessage: notFound('team-a'),
    },
  },
  {
    name: 'so does a client-side apply (its create)',
    text: inTeamA,
    namespace: missing('team-a'),
    mode: 'clientSide',
    expect: {
      code: 'namespace-not-found',
      line: 4,
      character: 13,
      path: '.metadata.namespace',
      message: /^namespaces "team-a" not found:/,
      serverMessage: notFound('team-a'),
    },
  },
  {
    name: 'the default namespace (settings, context) does not exist: said on the name, which carries it',
    text: noNamespace,
    namespace: missing('staging'),
    expect: {
      code: 'namespace-not-found',
      line: 3,
      character: 8,
      message:
        /^namespaces "staging" not found: the default namespace "staging" \(from the namespace setting or the kubeconfig context\) does not exist/,
      serverMessage: notFound('staging'),
    },
  },
  {
    name: 'the Namespace is among the files applied together: information on the order, no error',
    text: inTeamA,
    namespace: missing('team-a'),
    together: namespaceObject('team-a'),
    expect: {
      code: 'namespace-from-files',
      line: 4,
      character: 13,
      path: '.metadata.namespace',
      message:
        /^The namespace "team-a" does not exist in the cluster yet; the Namespace in k8s\/namespace\.yaml creates it\. Apply it before this object: .*\(namespaces "team-a" not found\)\.$/,
    },
  },
  {
    name: 'a Namespace of another name among the files changes nothing',
    text: inTeamA,
    namespace: missing('team-a'),
    together: namespaceObject('team-b'),
    expect: {
      code: 'namespace-not-found',
      line: 4,
      character: 13,
      path: '.metadata.namespace',
      message: /^namespaces "team-a" not found:/,
      serverMessage: notFound('team-a'),
    },
  },
  { name: 'the namespace exists: nothing', text: inTeamA, namespace: { state: 'exists', name: 'team-a' } },
  {
    name: 'the namespace may not be read (403) or is not answered yet: unknown, nothing said',
    text: inTeamA,
    namespace: { state: 'unknown', name: 'team-a' },
  },
  { name: 'not asked (a snapshot): nothing', text: inTeamA },
  {
    name: 'a cluster-scoped kind has no namespace to miss',
    text: 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: team-a\n',
    namespaced: false,
    namespace: missing('team-a'),
  },
  {
    name: 'an object that exists proves its namespace',
    text: inTeamA,
    namespace: missing('team-a'),
    live: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: 'team-a', resourceVersion: '7', managedFields: [] },
      data: { mode: 'fast' },
    },
  },
];

function analyse(c: Case, settings: Partial<AnalysisSettings> = {}) {
  const parsed = parseManifestText(c.text);
  assert.equal(parsed.resources.length, 1);
  const resource = parsed.resources[0]!;
  const facts: ResourceFacts = {
    kind: {
      state: 'served',
      group: resource.apiVersion.includes('/') ? resource.apiVersion.split('/')[0]! : '',
      resource: `${resource.kind.toLowerCase()}s`,
      namespaced: c.namespaced ?? true,
    },
    live: c.live ? { state: 'exists', object: c.live } : { state: 'absent' },
    ...(c.namespace ? { namespace: c.namespace } : {}),
    schema: undefined,
  };
  const defined = c.together ? definedKinds(parseManifestText(c.together).resources, 'k8s/namespace.yaml') : [];
  return analyzeResource(resource, facts, {
    fieldManager: 'kubectl',
    applyMode: c.mode ?? 'serverSide',
    definedKinds: defined,
    ...settings,
  });
}

const namespaceCodes: readonly string[] = ['namespace-not-found', 'namespace-from-files'];

describe('a new object in a namespace that does not exist', () => {
  for (const c of cases) {
    test(c.name, () => {
      const findings = analyse(c).filter((f) => namespaceCodes.includes(f.code));
      if (!c.expect) {
        assert.deepEqual(findings, []);
        return;
      }
      assert.equal(findings.length, 1, JSON.stringify(findings));
      const [f] = findings;
      assert.equal(f!.code, c.expect.code);
      assert.equal(f!.severity, defaultSeverity(c.expect.code));
      assert.match(f!.message, c.expect.message);
      assert.deepEqual(f!.range.start, { line: c.expect.line, character: c.expect.character });
      assert.equal(f!.path, c.expect.path);
      assert.equal(f!.serverMessage, c.expect.serverMessage);
      assert.equal(f!.docs, docsLinks.namespaces);
    });
  }

  test('refused by the server is an error; created by the files applied with it only informs', () => {
    assert.equal(defaultSeverity('namespace-not-found'), 'error');
    assert.equal(defaultSeverity('namespace-from-files'), 'information');
  });

  test("the user's severity applies to the new codes", () => {
    assert.deepEqual(
      analyse(cases[0]!, { severity: { 'namespace-not-found': 'off' } }).filter((f) => namespaceCodes.includes(f.code)),
      [],
    );
    assert.deepEqual(
      analyse(cases[0]!, { severity: { 'namespace-not-found': 'warning' } })
        .filter((f) => namespaceCodes.includes(f.code))
        .map((f) => f.severity),
      ['warning'],
    );
  });

  test("Namespace objects among the files are gathered with the CRDs' kinds; other namespaced objects are not", () => {
    const text = [
      namespaceObject('team-a'),
      inTeamA,
      'apiVersion: example.com/v1\nkind: Namespace\nmetadata:\n  name: not-a-namespace\n',
    ].join('---\n');
    assert.deepEqual(definedKinds(parseManifestText(text).resources, 'all.yaml'), [
      { namespace: 'team-a', file: 'all.yaml' },
    ]);
  });
});

// Why a kind is not served, and what the user reads (core/findings/kind-served.ts): a built-in
// kind at a removed version gets the deprecation guide and what is served instead; a custom
// resource whose CRD is not installed gets that said and the CRD documentation; a kind that a CRD
// among the files defines is no error at all, only the order of the apply. The facts come the way
// the cluster layer builds them: discovery's answer (trimmed from kube-apiserver v1.34, with one
// CRD group installed) through findResource and notServedKindFacts. The API server's own 404 for
// these kinds is proven by test/cli/kind-not-served.test.ts and the protocol test of the same name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findResource, notServedKindFacts, parseAggregatedDiscovery } from '../../../../server/src/cluster/discovery';
import type { DiscoveryIndex } from '../../../../server/src/cluster/types';
import { analyzeResource, type ResourceFacts } from '../../../../server/src/core/findings';
import { defaultSeverity, docsLinks } from '../../../../server/src/core/findings/catalogue';
import { definedKinds, judgeNotServed, type DefinedKind } from '../../../../server/src/core/findings/kind-served';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';

function group(name: string, versions: Record<string, string[]>): JsonObject {
  return {
    metadata: { name },
    versions: Object.entries(versions).map(([version, kinds]) => ({
      version,
      resources: kinds.map((kind) => ({
        resource: `${kind.toLowerCase()}s`,
        responseKind: { group: '', version: '', kind },
        scope: 'Namespaced',
        verbs: ['get'],
      })),
    })),
  };
}

// What a v1.34 server answers (trimmed), with the Prometheus operator's Prometheus CRD installed
// (its ServiceMonitor CRD is not) and a CRD serving only v1 of example.com's Widget.
const index: DiscoveryIndex = {
  ...parseAggregatedDiscovery({
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [
      group('', { v1: ['ConfigMap', 'Pod'] }),
      group('apps', { v1: ['Deployment', 'DaemonSet'] }),
      group('policy', { v1: ['PodDisruptionBudget'] }),
      group('networking.k8s.io', { v1: ['Ingress', 'NetworkPolicy'] }),
      group('monitoring.coreos.com', { v1: ['Prometheus'] }),
      group('example.com', { v1: ['Widget'] }),
    ],
  })!,
  source: 'aggregated',
  fetchedAt: 0,
};

const certificateCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: { kind: Certificate, plural: certificates }
  scope: Namespaced
  versions:
    - { name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }
    - { name: v1alpha2, served: false, storage: false, schema: { openAPIV3Schema: { type: object } } }
`;

interface Case {
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** CRDs among the files checked together. */
  readonly crds?: string;
  readonly code: 'kind-not-served' | 'kind-from-new-crd';
  readonly message: string | RegExp;
  readonly docs: string;
}

const cases: Case[] = [
  {
    name: 'a built-in kind at a removed version of a served group names the version served',
    apiVersion: 'policy/v1beta1',
    kind: 'PodDisruptionBudget',
    code: 'kind-not-served',
    message: 'The cluster does not serve PodDisruptionBudget in policy/v1beta1 (served: policy/v1).',
    docs: docsLinks.apiVersions,
  },
  {
    name: 'a built-in kind in a built-in group no longer served names where it moved',
    apiVersion: 'extensions/v1beta1',
    kind: 'Deployment',
    code: 'kind-not-served',
    message: 'The cluster does not serve Deployment in extensions/v1beta1 (served: apps/v1).',
    docs: docsLinks.apiVersions,
  },
  {
    name: 'a kind removed for good is still a matter of the deprecation guide',
    apiVersion: 'policy/v1beta1',
    kind: 'PodSecurityPolicy',
    code: 'kind-not-served',
    message: 'The cluster does not serve PodSecurityPolicy in policy/v1beta1.',
    docs: docsLinks.apiVersions,
  },
  {
    name: 'a custom resource of a group the cluster does not serve at all: its CRD is not installed',
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    code: 'kind-not-served',
    message:
      'The cluster serves no API group cert-manager.io: Certificate is a custom resource whose CustomResourceDefinition is not installed. Install the CRD before this object; kubectl apply fails on it (no matches for kind "Certificate" in version "cert-manager.io/v1").',
    docs: docsLinks.customResources,
  },
  {
    name: 'a custom resource of a served group without that kind: its own CRD is not installed',
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    code: 'kind-not-served',
    message:
      /^The cluster serves the API group monitoring\.coreos\.com \(v1\) but no kind ServiceMonitor in it: ServiceMonitor is a custom resource whose CustomResourceDefinition is not installed\./,
    docs: docsLinks.customResources,
  },
  {
    name: 'an installed CRD that does not serve the version names the versions it serves',
    apiVersion: 'example.com/v1beta1',
    kind: 'Widget',
    code: 'kind-not-served',
    message:
      'The cluster does not serve Widget in example.com/v1beta1 (served: example.com/v1): its CustomResourceDefinition does not serve v1beta1.',
    docs: docsLinks.crdVersions,
  },
  {
    name: 'the CRD among the files: no error, the order of the apply as information',
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    crds: certificateCrd,
    code: 'kind-from-new-crd',
    message:
      /^Certificate \(cert-manager\.io\/v1\) is defined by the CustomResourceDefinition certificates\.cert-manager\.io in crds\/cert-manager\.yaml, which the cluster does not serve yet: .*Apply the CRD first .*in one pass creates the CRD and fails on this object/,
    docs: docsLinks.customResources,
  },
  {
    name: 'the CRD among the files does not serve that version either: still not served, and said',
    apiVersion: 'cert-manager.io/v1alpha2',
    kind: 'Certificate',
    crds: certificateCrd,
    code: 'kind-not-served',
    message:
      /is not installed\..* The CustomResourceDefinition certificates\.cert-manager\.io in crds\/cert-manager\.yaml does not serve v1alpha2 either \(it serves v1\)\.$/,
    docs: docsLinks.customResources,
  },
  {
    name: 'a CRD of another kind in the same group covers nothing',
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    crds: certificateCrd,
    code: 'kind-not-served',
    message: /^The cluster serves no API group cert-manager\.io: Issuer is a custom resource/,
    docs: docsLinks.customResources,
  },
];

function manifest(apiVersion: string, kind: string) {
  const parsed = parseManifestText(
    `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: one\n  namespace: default\n`,
  );
  assert.equal(parsed.resources.length, 1);
  return parsed.resources[0]!;
}

function factsFor(apiVersion: string, kind: string): ResourceFacts {
  const found = findResource(index, apiVersion, kind);
  assert.ok(!found.ok, `${kind} in ${apiVersion} is not served`);
  return { kind: notServedKindFacts(found.problem), live: { state: 'absent' }, schema: undefined };
}

describe('a kind the cluster does not serve', () => {
  for (const c of cases) {
    test(c.name, () => {
      const defined: DefinedKind[] = c.crds
        ? definedKinds(parseManifestText(c.crds).resources, 'crds/cert-manager.yaml')
        : [];
      const findings = analyzeResource(manifest(c.apiVersion, c.kind), factsFor(c.apiVersion, c.kind), {
        fieldManager: 'kubectl',
        applyMode: 'serverSide',
        definedKinds: defined,
      });
      assert.equal(findings.length, 1, JSON.stringify(findings));
      const [f] = findings;
      assert.equal(f!.code, c.code);
      assert.equal(f!.severity, defaultSeverity(c.code));
      if (typeof c.message === 'string') assert.equal(f!.message, c.message);
      else assert.match(f!.message, c.message);
      assert.equal(f!.docs, c.docs);
      assert.deepEqual(f!.range.start, { line: 1, character: 6 }, 'on the kind');
    });
  }

  test('failing the apply is an error; a CRD applied with the object only informs', () => {
    assert.equal(defaultSeverity('kind-not-served'), 'error');
    assert.equal(defaultSeverity('kind-from-new-crd'), 'information');
  });

  test("without discovery (an older snapshot) the cluster layer's sentence is said as it is", () => {
    const judged = judgeNotServed(
      'cert-manager.io/v1',
      'Certificate',
      undefined,
      [],
      'The cluster does not serve Certificate in cert-manager.io/v1.',
    );
    assert.deepEqual(judged, {
      code: 'kind-not-served',
      message: 'The cluster does not serve Certificate in cert-manager.io/v1.',
      docs: docsLinks.apiVersions,
    });
  });

  test("the user's severity for the new code applies to it", () => {
    const defined = definedKinds(parseManifestText(certificateCrd).resources, 'crds.yaml');
    const settings = {
      fieldManager: 'kubectl',
      applyMode: 'serverSide' as const,
      definedKinds: defined,
      severity: { 'kind-from-new-crd': 'off' as const },
    };
    assert.deepEqual(
      analyzeResource(
        manifest('cert-manager.io/v1', 'Certificate'),
        factsFor('cert-manager.io/v1', 'Certificate'),
        settings,
      ),
      [],
    );
  });
});

describe('the kinds a CustomResourceDefinition defines', () => {
  test('v1: the served versions; v1beta1: its single version; anything else: nothing', () => {
    const text = [
      certificateCrd,
      'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.old.example.com\nspec:\n  group: old.example.com\n  version: v1alpha1\n  names: { kind: Widget, plural: widgets }\n',
      // Not a CRD of apiextensions, or a CRD without names: nothing.
      'apiVersion: example.com/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: fake\nspec:\n  group: x.example.com\n  names: { kind: X }\n  versions: [{ name: v1, served: true }]\n',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: broken\nspec:\n  group: y.example.com\n  versions: [{ name: v1, served: true }]\n',
    ].join('---\n');
    assert.deepEqual(definedKinds(parseManifestText(text).resources, 'all.yaml'), [
      {
        group: 'cert-manager.io',
        kind: 'Certificate',
        versions: ['v1'],
        crd: 'certificates.cert-manager.io',
        file: 'all.yaml',
      },
      {
        group: 'old.example.com',
        kind: 'Widget',
        versions: ['v1alpha1'],
        crd: 'widgets.old.example.com',
        file: 'all.yaml',
      },
    ]);
  });
});

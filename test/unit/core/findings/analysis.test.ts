// The analysis (core/findings/analysis.ts): what the user reads for a manifest and what the cluster
// says of it. First on histories captured from the real kube-apiserver (test/fixtures/findings/,
// cases in analysis.cases.yaml); then where the prediction alone could be wrong or noisy: Secrets
// (read as metadata only), generateName with kubectl apply, one would-delete per removed subtree,
// and which of several refusals the server answers first. The rules themselves are proven against
// the real kube-apiserver by the differential suite (scenarios/secret.yaml, scenarios/order.yaml);
// these cases pin what the user reads, on live objects shaped as the cluster layer hands them
// over; and the user's own severity per code, whose defaults come from the rule catalogue.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  analyzeResource,
  problemFindings,
  showValue,
  unjudgedOn,
  type AnalysisSettings,
  type Finding,
  type NamespaceFacts,
  type PermissionFacts,
  type ResourceFacts,
} from '../../../../server/src/core/findings';
import { kubectlMetadataRefusal } from '../../../../server/src/core/findings/kubectl-refusals';
import { showValues } from '../../../../server/src/core/findings/show-value';
import { defaultSeverity, meansNotJudged, ruleFor } from '../../../../server/src/core/findings/catalogue';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';
import { sanitizeSettings } from '../../../../server/src/protocol';
import {
  capturedHistory,
  cases,
  factsOf,
  historyNames,
  manifestResource,
  positionOf,
  type Place,
} from '../../../support/findings-fixtures';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
);

function analyze(
  text: string,
  live: JsonObject | undefined,
  group: string,
  resource: string,
  options: { fieldManager?: string; applyMode?: 'serverSide' | 'clientSide' | 'create' } = {},
): Finding[] {
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, JSON.stringify(parsed.problems));
  const facts: ResourceFacts = {
    kind: { state: 'served', group, resource, namespaced: true },
    live: live ? { state: 'exists', object: live } : { state: 'absent' },
    schema,
  };
  return analyzeResource(parsed.resources[0]!, facts, {
    fieldManager: options.fieldManager ?? 'kubectl',
    applyMode: options.applyMode ?? 'serverSide',
  });
}

const byCode = (fs: Finding[], code: string) => fs.filter((f) => f.code === code);

/** A Secret as the cluster layer hands it over: metadata only, no data, stringData or type. */
function secretMetadataOnly(managedFields: JsonObject[]): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'ns', uid: 'u1', resourceVersion: '10', managedFields },
  };
}

const applied = (manager: string, fieldsV1: JsonObject): JsonObject => ({
  manager,
  operation: 'Apply',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const updated = (manager: string, fieldsV1: JsonObject): JsonObject => ({
  manager,
  operation: 'Update',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});

describe('Secrets: stringData from managedFields alone, data left to the dry run', () => {
  test('a stringData key another manager applied conflicts, whatever its value', () => {
    const live = secretMetadataOnly([applied('kubectl', { 'f:stringData': { 'f:password': {} }, 'f:type': {} })]);
    const findings = analyze(
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ntype: Opaque\nstringData:\n  password: hunter2\n',
      live,
      '',
      'secrets',
      { fieldManager: 'argocd-controller' },
    );
    assert.deepEqual(
      byCode(findings, 'field-conflict').map((f) => [f.path, f.manager?.manager]),
      [['.stringData.password', 'kubectl']],
    );
    assert.match(
      byCode(findings, 'field-conflict')[0]!.serverMessage ?? '',
      /^Apply failed with 1 conflict: conflict with "kubectl": \.stringData\.password$/,
    );
    // `type` is unread too, but not worth a word: it almost never differs and cannot change.
    assert.deepEqual(byCode(findings, 'secret-data-unverified'), []);
  });

  test('data keys another manager owns are named once on the Secret, pointing to the dry run', () => {
    const live = secretMetadataOnly([
      updated('kubectl-create', { 'f:data': { '.': {}, 'f:password': {}, 'f:user': {} }, 'f:type': {} }),
    ]);
    const text =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ntype: Opaque\ndata:\n  password: b3RoZXI=\n  user: YWRtaW4=\n  extra: eA==\n';
    const findings = analyze(text, live, '', 'secrets');
    assert.deepEqual(byCode(findings, 'field-conflict'), [], 'no conflict is claimed on values never read');
    const [unverified, ...more] = byCode(findings, 'secret-data-unverified');
    assert.deepEqual(more, []);
    assert.equal(unverified!.severity, 'warning');
    assert.match(
      unverified!.message,
      /^\.data\.password, \.data\.user are managed by "kubectl-create" using v1: Secret values are never read/,
    );
    assert.match(unverified!.message, /dry-run/);
    assert.doesNotMatch(unverified!.message, /b3RoZXI=|YWRtaW4=/, 'no value is shown');
    assert.deepEqual(unverified!.range.start, { line: 3, character: 8 }, 'on the name');
  });

  test('data keys owned only by the applier itself, or by nobody, say nothing', () => {
    const live = secretMetadataOnly([applied('kubectl', { 'f:data': { 'f:password': {} } })]);
    const text = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ndata:\n  password: b3RoZXI=\n';
    assert.deepEqual(byCode(analyze(text, live, '', 'secrets'), 'secret-data-unverified'), []);
    assert.deepEqual(
      byCode(
        analyze(
          text,
          secretMetadataOnly([applied('other', { 'f:metadata': { 'f:labels': { 'f:a': {} } } })]),
          '',
          'secrets',
        ),
        'secret-data-unverified',
      ),
      [],
    );
  });
});

describe('generateName with kubectl apply', () => {
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: job-\n  namespace: ns\ndata:\n  a: "1"\n';
  const pending: ResourceFacts = { kind: { state: 'pending' }, live: { state: 'pending' }, schema: undefined };
  for (const applyMode of ['serverSide', 'clientSide'] as const) {
    test(`${applyMode}: kubectl refuses before sending, whatever the cluster says`, () => {
      const resource = parseManifestText(text).resources[0]!;
      const findings = analyzeResource(resource, pending, { fieldManager: 'kubectl', applyMode });
      assert.deepEqual(
        findings.map((f) => [f.code, f.severity]),
        [['generate-name-apply', 'error']],
      );
      assert.match(findings[0]!.message, /\(from job-: cannot use generate name with apply\)/, "kubectl's own words");
      assert.deepEqual(findings[0]!.range.start, { line: 3, character: 2 }, 'on the generateName key');
      assert.match(findings[0]!.message, /kubectl create/);
    });
  }
  test('create: generateName is what kubectl create is for', () => {
    assert.deepEqual(analyze(text, undefined, '', 'configmaps', { applyMode: 'create' }), []);
  });
  test('a name beside generateName: kubectl apply uses the name', () => {
    const named = text.replace('  generateName: job-\n', '  generateName: job-\n  name: job-1\n');
    assert.deepEqual(byCode(analyze(named, undefined, '', 'configmaps'), 'generate-name-apply'), []);
  });
});

describe('what the analysis cannot judge (unjudgedOn): the command line lists it rather than count it clean', () => {
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ns\ndata:\n  a: "1"\n';
  const live: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'settings',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '5',
      managedFields: [applied('other', { 'f:data': { 'f:a': {} } })],
    },
    data: { a: '2' },
  };
  const served = { state: 'served', group: '', resource: 'configmaps', namespaced: true } as const;
  const cases: {
    name: string;
    facts: ResourceFacts;
    applyMode?: 'serverSide' | 'create';
    reason?: RegExp;
    codes: string[];
  }[] = [
    {
      name: 'a kind the cluster did not say it serves',
      facts: {
        kind: { state: 'unavailable', message: 'forbidden' },
        live: { state: 'unavailable', message: 'forbidden' },
        schema: undefined,
      },
      reason: /did not say whether it serves v1 ConfigMap: forbidden/,
      codes: [],
    },
    {
      name: 'an object a snapshot does not hold',
      facts: { kind: served, live: { state: 'unavailable', message: 'not in the snapshot' }, schema },
      reason: /the live object is not known: not in the snapshot/,
      codes: [],
    },
    {
      name: 'an existing object without a schema, applied server-side',
      facts: { kind: served, live: { state: 'exists', object: live }, schema: undefined },
      reason: /no schema of v1: the fields are not compared/,
      codes: ['exists'],
    },
    {
      name: 'the same object with its schema',
      facts: { kind: served, live: { state: 'exists', object: live }, schema },
      codes: ['field-conflict'],
    },
    {
      name: 'a new object without a schema',
      facts: { kind: served, live: { state: 'absent' }, schema: undefined },
      codes: [],
    },
    {
      name: 'an existing object without a schema, created',
      facts: { kind: served, live: { state: 'exists', object: live }, schema: undefined },
      applyMode: 'create',
      codes: ['already-exists'],
    },
    // Judged, and its finding says it is not judged further (the catalogue's mark): listed through the finding.
    {
      name: 'a kind not served',
      facts: {
        kind: { state: 'notServed', message: 'no matches for kind' },
        live: { state: 'absent' },
        schema: undefined,
      },
      codes: ['kind-not-served'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const resource = parseManifestText(text).resources[0]!;
      const settings = { fieldManager: 'kubectl', applyMode: c.applyMode ?? 'serverSide' } as const;
      const reason = unjudgedOn(resource, c.facts, settings);
      if (c.reason) assert.match(reason ?? '', c.reason);
      else assert.equal(reason, undefined);
      // The stops it names are the analysis's own: nothing, or only that the object exists.
      const found = analyzeResource(resource, c.facts, settings).map((f) => f.code);
      if (reason !== undefined)
        assert.ok(
          found.every((code) => code === 'exists'),
          found.join(', '),
        );
      for (const code of c.codes)
        assert.ok(found.includes(code as Finding['code']), `${code} among ${found.join(', ')}`);
      if (c.codes.includes('kind-not-served')) assert.ok(meansNotJudged('kind-not-served'));
    });
  }
});

describe('would-delete: one finding per removed item or field subtree', () => {
  const deployment = (containers: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ns\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n${containers}`;
  const app = '      - name: app\n        image: nginx:1.25\n';
  const sidecar =
    '      - name: sidecar\n        image: busybox\n        args: [sleep, "1000"]\n        env:\n        - {name: A, value: "1"}\n';
  const containerFields = { '.': {}, 'f:name': {}, 'f:image': {} };
  const live: JsonObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'ns',
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': {
              'f:selector': {},
              'f:template': {
                'f:metadata': { 'f:labels': { 'f:app': {} } },
                'f:spec': {
                  'f:containers': {
                    'k:{"name":"app"}': containerFields,
                    'k:{"name":"sidecar"}': {
                      ...containerFields,
                      'f:args': {},
                      'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx:1.25' },
            { name: 'sidecar', image: 'busybox', args: ['sleep', '1000'], env: [{ name: 'A', value: '1' }] },
          ],
        },
      },
    },
  };

  test('a removed list item is one finding, not one per field inside it', () => {
    const findings = byCode(analyze(deployment(app), live, 'apps', 'deployments'), 'would-delete');
    assert.deepEqual(
      findings.map((f) => f.path),
      ['.spec.template.spec.containers[name="sidecar"]'],
    );
    assert.equal(findings[0]!.severity, 'warning', 'nothing fails, but a field disappears: a warning');
  });

  test('a removed list inside a kept item is one finding', () => {
    const withoutEnv = sidecar.replace('        env:\n        - {name: A, value: "1"}\n', '');
    const findings = byCode(analyze(deployment(app + withoutEnv), live, 'apps', 'deployments'), 'would-delete');
    assert.deepEqual(
      findings.map((f) => f.path),
      ['.spec.template.spec.containers[name="sidecar"].env'],
    );
  });

  test('a removed map subtree is one finding', () => {
    const withLimits = (resources: string) =>
      app.replace('        image: nginx:1.25\n', `        image: nginx:1.25\n${resources}`);
    const owned = structuredClone(live);
    const entry = ((owned.metadata as JsonObject).managedFields as JsonObject[])[0]!;
    const containers = (((entry.fieldsV1 as JsonObject)['f:spec'] as JsonObject)['f:template'] as JsonObject)[
      'f:spec'
    ] as JsonObject;
    (containers['f:containers'] as JsonObject)['k:{"name":"app"}'] = {
      ...containerFields,
      'f:resources': { 'f:limits': { 'f:cpu': {}, 'f:memory': {} } },
    };
    const spec = ((owned.spec as JsonObject).template as JsonObject).spec as JsonObject;
    (spec.containers as JsonObject[])[0] = {
      name: 'app',
      image: 'nginx:1.25',
      resources: { limits: { cpu: '1', memory: '1Gi' } },
    };
    const findings = byCode(
      analyze(deployment(withLimits('') + sidecar), owned, 'apps', 'deployments'),
      'would-delete',
    );
    assert.deepEqual(
      findings.map((f) => f.path),
      ['.spec.template.spec.containers[name="app"].resources'],
    );
  });
});

describe('several refusals: which one the server answers first', () => {
  const live: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'order',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '20',
      managedFields: [
        applied('kubectl', { 'f:data': { 'f:a': {} } }),
        updated('kubectl-edit', { 'f:data': { 'f:a': {} } }),
      ],
    },
    data: { a: '2' },
  };
  const text = (meta: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: order\n  namespace: ns\n${meta}data:\n  a: "1"\n`;

  test('a field conflict comes before the stale resourceVersion and the uid', () => {
    const findings = analyze(text('  resourceVersion: "1"\n  uid: other\n'), live, '', 'configmaps');
    assert.match(byCode(findings, 'field-conflict')[0]!.message, /would fail\. The server answers this first\.$/);
    assert.match(
      byCode(findings, 'stale-resource-version')[0]!.message,
      /The server answers the field conflict \(409\) first; this one comes only after that is fixed\.$/,
    );
    assert.match(byCode(findings, 'uid-mismatch')[0]!.message, /The server answers the field conflict \(409\) first/);
  });

  test('without a field conflict the stale resourceVersion comes before the uid (422)', () => {
    const alone = structuredClone(live);
    (alone.metadata as JsonObject).managedFields = [applied('kubectl', { 'f:data': { 'f:a': {} } })];
    const findings = analyze(text('  resourceVersion: "1"\n  uid: other\n'), alone, '', 'configmaps');
    assert.deepEqual(byCode(findings, 'field-conflict'), []);
    assert.match(byCode(findings, 'stale-resource-version')[0]!.message, /The server answers this first\.$/);
    assert.match(
      byCode(findings, 'uid-mismatch')[0]!.message,
      /The server answers the stale resourceVersion \(409\) first/,
    );
  });

  test('a single refusal needs no word on the order', () => {
    const findings = analyze(text('  resourceVersion: "20"\n  uid: u1\n'), live, '', 'configmaps', {
      fieldManager: 'kubectl-edit',
    });
    // Two managers own .data.a: two findings of one refusal.
    assert.deepEqual(
      findings.filter((f) => f.severity !== 'information').map((f) => f.code),
      ['field-conflict', 'field-conflict'],
    );
    for (const f of findings) assert.doesNotMatch(f.message, /first/);
  });
});

describe('severity overrides (kubeConflictHints.severity)', () => {
  const live: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'ns', managedFields: [applied('helm', { 'f:data': { 'f:a': {} } })] },
    data: { a: '2' },
  };
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns\ndata:\n  a: "1"\n';
  const levels = (fs: Finding[]) => fs.map((f) => `${f.code}:${f.severity}`);

  test('a code gets the level the user chose, or disappears with off; the others keep theirs', () => {
    const parsed = parseManifestText(text).resources[0]!;
    const facts: ResourceFacts = {
      kind: { state: 'served', group: '', resource: 'configmaps', namespaced: true },
      live: { state: 'exists', object: live },
      schema,
    };
    const plain = analyzeResource(parsed, facts, { fieldManager: 'kubectl', applyMode: 'serverSide' });
    // By consequence: the apply fails (error); the object exists (information).
    assert.deepEqual(levels(plain), ['field-conflict:error', 'exists:information']);
    const chosen = analyzeResource(parsed, facts, {
      fieldManager: 'kubectl',
      applyMode: 'serverSide',
      severity: { 'field-conflict': 'warning', exists: 'off' },
    });
    assert.deepEqual(levels(chosen), ['field-conflict:warning']);
  });

  test('problems of the text follow the overrides too', () => {
    const problems = parseManifestText('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n').problems;
    assert.ok(problems.length > 0);
    assert.deepEqual(
      levels(problemFindings(problems, { 'duplicate-key': 'error' })).filter((l) => l.startsWith('duplicate-key')),
      ['duplicate-key:error'],
    );
    assert.deepEqual(
      problemFindings(problems, { 'duplicate-key': 'off' }).filter((f) => f.code === 'duplicate-key'),
      [],
    );
  });

  test('a code that says the text was not judged can be lowered, never hidden: silence over it would read as all clear', () => {
    const problems = parseManifestText('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a\n').problems;
    const syntax = problemFindings(problems, { 'yaml-syntax': 'off' }).filter((f) => f.code === 'yaml-syntax');
    assert.ok(meansNotJudged('yaml-syntax') && syntax.length > 0, 'still there with off');
    assert.deepEqual(
      levels(problemFindings(problems, { 'yaml-syntax': 'information' })).filter((l) => l.startsWith('yaml-syntax')),
      syntax.map(() => 'yaml-syntax:information'),
    );
  });

  test('the setting keeps only code: level pairs it understands', () => {
    const s = sanitizeSettings({
      severity: {
        'would-delete': 'warning',
        exists: 'off',
        'field-conflict': 'fatal',
        'Bad Code': 'error',
        __proto__: { x: 'error' },
      },
    });
    assert.deepEqual(s.severity, { 'would-delete': 'warning', exists: 'off' });
    assert.deepEqual(sanitizeSettings({ severity: ['error'] }).severity, {});
    assert.deepEqual(sanitizeSettings({}).severity, {});
  });
});

// Histories written through the real API the way real tools write them, captured with the manifest
// the user holds (test/fixtures/findings/*.yaml); the cases (analysis.cases.yaml) say, by hand,
// what the user reads for each: code, severity, the place in the text, path, manager and message.
interface AnalysisCase {
  name: string;
  history: string;
  settings?: Partial<AnalysisSettings>;
  /** `absent`: the same manifest against a cluster without the object. */
  live?: 'absent';
  /** What the cluster's SelfSubjectAccessReviews answered (test/differential/permission.test.ts holds them to the server's 403). */
  permission?: PermissionFacts;
  /** What the cluster said of the namespace of an object that does not exist. */
  namespace?: NamespaceFacts;
  expect: {
    code: string;
    severity: string;
    at: Place;
    path?: string;
    manager?: { manager: string; operation: string; subresource?: string };
    message?: string;
    messageMatches?: string;
  }[];
}

describe('captured histories: what the user reads', () => {
  for (const kase of cases<AnalysisCase>('analysis.cases.yaml')) {
    test(kase.name, () => {
      const h = capturedHistory(kase.history);
      const settings: AnalysisSettings = { fieldManager: 'kubectl', applyMode: 'serverSide', ...kase.settings };
      const facts = factsOf(h, kase.live ?? 'exists');
      const findings = analyzeResource(
        manifestResource(h),
        {
          ...facts,
          ...(kase.permission ? { permission: kase.permission } : {}),
          ...(kase.namespace ? { namespace: kase.namespace } : {}),
        },
        settings,
      );
      const shown = (f: Finding) => ({
        code: f.code,
        severity: f.severity,
        at: f.range.start,
        ...(f.path !== undefined ? { path: f.path } : {}),
        ...(f.manager
          ? {
              manager: {
                manager: f.manager.manager,
                operation: f.manager.operation,
                ...(f.manager.subresource ? { subresource: f.manager.subresource } : {}),
              },
            }
          : {}),
      });
      assert.deepEqual(
        findings.map(shown),
        kase.expect.map((e) => ({
          code: e.code,
          severity: e.severity,
          at: positionOf(h.manifest, e.at),
          ...(e.path !== undefined ? { path: e.path } : {}),
          ...(e.manager ? { manager: e.manager } : {}),
        })),
      );
      kase.expect.forEach((e, i) => {
        if (e.message !== undefined) assert.equal(findings[i]!.message, e.message);
        if (e.messageMatches !== undefined) assert.match(findings[i]!.message, new RegExp(e.messageMatches));
      });
    });
  }

  test('every finding carries the documentation link of its code, and the object it is about', () => {
    for (const name of historyNames()) {
      const h = capturedHistory(name);
      for (const applyMode of ['serverSide', 'clientSide', 'create'] as const) {
        for (const f of analyzeResource(manifestResource(h), factsOf(h), { fieldManager: 'kubectl', applyMode })) {
          assert.equal(f.docs ?? ruleFor(f.code).docs, ruleFor(f.code).docs, `${name} ${f.code}`);
          assert.deepEqual(f.object?.name, manifestResource(h).name, `${name} ${f.code}`);
        }
      }
    }
  });
});

describe('the rule catalogue gives the severities', () => {
  test('problems of the text get the catalogue severity their code has', () => {
    const texts = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n', // duplicate-key
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n', // yaml-syntax
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: .inf\n', // yaml-decode
    ];
    const seen = new Set<string>();
    for (const text of texts) {
      const { problems } = parseManifestText(text);
      for (const [p, f] of problems.map((p, i) => [p, problemFindings(problems)[i]!] as const)) {
        seen.add(p.code);
        assert.equal(f.severity, defaultSeverity(p.code), p.code);
      }
    }
    assert.deepEqual([...seen].sort(), ['duplicate-key', 'yaml-decode', 'yaml-syntax']);
  });
});

describe('managers recorded at another apiVersion of a custom resource', () => {
  // A custom resource's OpenAPI as the server publishes it (one document per version), reduced to
  // what the engine reads; the rule itself is proven against the real server by
  // test/differential/scenarios/versions.yaml.
  const probeDoc = (version: string): JsonValue => ({
    components: {
      schemas: {
        [`com.example.kchv.${version}.Probe`]: {
          type: 'object',
          'x-kubernetes-group-version-kind': [{ group: 'kchv.example.com', version, kind: 'Probe' }],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { type: 'object', additionalProperties: true },
            spec: { type: 'object', properties: { size: { type: 'integer' }, mode: { type: 'string' } } },
          },
        },
      },
    },
  });
  const probeSchema = schemaFromOpenApi([probeDoc('v1'), probeDoc('v1beta1')]).schema;
  const live: JsonObject = {
    apiVersion: 'kchv.example.com/v1',
    kind: 'Probe',
    metadata: {
      name: 'p',
      namespace: 'ns',
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'kchv.example.com/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:size': {} } },
        },
        {
          manager: 'probe-operator',
          operation: 'Update',
          apiVersion: 'kchv.example.com/v1beta1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:mode': {} } },
        },
      ],
    },
    spec: { size: 1, mode: 'b' },
  };
  const crd = (conversion: 'None' | 'Webhook', versions: string[]) => ({
    crd: { conversion, versions: versions.map((name) => ({ name, served: true, schema: '{}' })) },
  });
  const analyzeProbe = (mode: string, versions: ResourceFacts['versions']) => {
    const parsed = parseManifestText(
      `apiVersion: kchv.example.com/v1\nkind: Probe\nmetadata:\n  name: p\n  namespace: ns\nspec:\n  size: 1\n  mode: ${mode}\n`,
    );
    const facts: ResourceFacts = {
      kind: { state: 'served', group: 'kchv.example.com', resource: 'probes', namespaced: true },
      live: { state: 'exists', object: live },
      schema: probeSchema,
      ...(versions ? { versions } : {}),
    };
    return analyzeResource(parsed.resources[0]!, facts, { fieldManager: 'kubectl', applyMode: 'serverSide' });
  };

  test('conversion None: the conflict names the manager at its own version', () => {
    const [conflict, ...more] = byCode(analyzeProbe('c', crd('None', ['v1', 'v1beta1'])), 'field-conflict');
    assert.deepEqual(more, []);
    assert.match(conflict!.message, /^\.spec\.mode is managed by "probe-operator" using kchv\.example\.com\/v1beta1/);
  });

  test('a conversion webhook: no conflict is claimed, the manager is named and the dry run suggested', () => {
    const findings = analyzeProbe('c', crd('Webhook', ['v1', 'v1beta1']));
    assert.deepEqual(byCode(findings, 'field-conflict'), []);
    const [unverified, ...more] = byCode(findings, 'conversion-unverified');
    assert.deepEqual(more, []);
    assert.equal(unverified!.severity, 'warning');
    assert.match(
      unverified!.message,
      /"probe-operator" using kchv\.example\.com\/v1beta1 recorded its fields at kchv\.example\.com\/v1beta1.*conversion webhook.*It owns \.spec\.mode.*dry-run/,
    );
  });

  test("a version the CRD no longer lists: every apply fails, in the server's words", () => {
    const findings = analyzeProbe('b', crd('None', ['v1']));
    assert.deepEqual(byCode(findings, 'field-conflict'), []);
    const [refused] = byCode(findings, 'invalid-manifest');
    assert.match(refused!.message, /request to convert CR to an invalid group\/version: kchv\.example\.com\/v1beta1/);
    assert.equal(refused!.severity, 'error');
  });
});

describe("kubectl's refusal of wrongly typed metadata", () => {
  const cases: { name: string; metadata: JsonObject; refusal: string | undefined }[] = [
    {
      name: 'a label value that is a bool',
      metadata: { name: 'a', labels: { on: true } },
      refusal: 'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string',
    },
    {
      name: 'labels as a list',
      metadata: { name: 'a', labels: ['x'] },
      refusal: 'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    // Keys that name methods of every JavaScript object (the fuzz campaign found `constructor`) are
    // just unknown metadata fields to kubectl: nothing to refuse.
    {
      name: 'keys named like Object methods',
      metadata: { name: 'a', constructor: 1, toString: 'x', hasOwnProperty: [] },
      refusal: undefined,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(kubectlMetadataRefusal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: c.metadata }), c.refusal);
    });
  }
});

describe('two values side by side are shown where they differ', () => {
  const hosts = (last: string) => [
    '10.0.0.1',
    '10.0.0.2',
    '10.0.0.3',
    '10.0.0.4',
    '10.0.0.5',
    '10.0.0.6',
    last,
    '10.0.0.8',
  ];

  test('short values are shown whole; values that part early are cut as one value is', () => {
    assert.deepEqual(showValues([1, 2], [1, 3]), ['[1,2]', '[1,3]']);
    const long = hosts('10.0.0.7');
    const other = ['10.0.0.9', ...long.slice(1)];
    assert.deepEqual(showValues(long, other), [showValue(long), showValue(other)]);
  });

  test('long lists that share their first items: each from the item where they part', () => {
    const [live, manifest] = showValues(hosts('10.0.0.7'), hosts('10.0.0.77'));
    assert.equal(
      showValue(hosts('10.0.0.7')),
      showValue(hosts('10.0.0.77')),
      'cut as one value, the two read the same',
    );
    assert.equal(live, '..."10.0.0.7","10.0.0.8"]');
    assert.equal(manifest, '..."10.0.0.77","10.0.0.8"]');
  });

  test('a list one item longer; a map entry; a long string: the place they part is in both', () => {
    const [a, b] = showValues(hosts('10.0.0.7'), [...hosts('10.0.0.7'), '10.0.0.9']);
    assert.equal(a, '..."10.0.0.8"]');
    assert.equal(b, '..."10.0.0.8","10.0.0.9"]');
    const map = (v: string) => ({
      'app.kubernetes.io/name': 'shop',
      'app.kubernetes.io/instance': 'web',
      'app.kubernetes.io/version': v,
    });
    assert.deepEqual(showValues(map('1.16.0'), map('2.0.0')), [
      '..."app.kubernetes.io/version":"1.16.0"}',
      '..."app.kubernetes.io/version":"2.0.0"}',
    ]);
    const text = (end: string) => `${'x'.repeat(80)}${end}${'y'.repeat(80)}`;
    const [s, t] = showValues(text('A'), text('B'));
    assert.ok(s.includes('xA') && t.includes('xB'), `${s} / ${t}`);
    for (const shown of [s, t]) assert.ok(shown.length <= 60, shown);
  });
});

// Fields the server will not let an update change (core/findings/immutable.ts), as the user reads
// them: on the key that changes the field, in the server's words, with the field the server's 422
// names, after the answers the server gives first, and only for an object that exists. Which
// changes the server refuses is proven against the real kube-apiserver by the differential suite
// (scenarios/immutable.yaml); these cases pin what the analysis makes of them, on live objects
// shaped as the cluster layer hands them over.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { analyzeResource, type Finding, type ResourceFacts } from '../../../../server/src/core/findings';
import { immutableChanges, immutableRules } from '../../../../server/src/core/findings/immutable';
import { compareWithServer } from '../../../../server/src/core/findings/verification';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
);

const applied = (manager: string, fieldsV1: JsonObject): JsonObject => ({
  manager,
  operation: 'Apply',
  apiVersion: 'apps/v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const updated = (manager: string, fieldsV1: JsonObject): JsonObject => ({
  manager,
  operation: 'Update',
  apiVersion: 'apps/v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});

const deploymentFields = {
  'f:spec': {
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    },
  },
};

function liveDeployment(extraManagers: JsonObject[] = []): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '7',
      managedFields: [applied('kubectl', deploymentFields), ...extraManagers],
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: 'Always' }] },
      },
    },
  };
}

const deployment = (selector: string, image = 'nginx') =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ns\nspec:\n  selector:\n    matchLabels: ${selector}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: ${image}\n`;

function analyze(
  text: string,
  live: JsonObject | undefined,
  group: string,
  resource: string,
  applyMode: 'serverSide' | 'clientSide' | 'create' = 'serverSide',
): Finding[] {
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, JSON.stringify(parsed.problems));
  const facts: ResourceFacts = {
    kind: { state: 'served', group, resource, namespaced: true },
    live: live ? { state: 'exists', object: live } : { state: 'absent' },
    schema,
  };
  return analyzeResource(parsed.resources[0]!, facts, { fieldManager: 'kubectl', applyMode });
}

const immutable = (findings: Finding[]) => findings.filter((f) => f.code === 'field-immutable');
const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle));

describe('what the user reads', () => {
  test("a changed selector: on its key, in the server's words, with the values", () => {
    const text = deployment('{app: web, tier: fe}');
    const [f, ...rest] = immutable(analyze(text, liveDeployment(), 'apps', 'deployments'));
    assert.deepEqual(rest, []);
    assert.ok(f);
    assert.equal(f.severity, 'error');
    assert.equal(f.path, '.spec.selector');
    assert.equal(f.serverField, undefined, 'the server names the field the finding names');
    assert.equal(f.range.start.line, lineOf(text, 'selector:'));
    const server =
      'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"fe"}}: field is immutable';
    assert.equal(f.serverMessage, server);
    assert.ok(f.message.includes(server), f.message);
    assert.match(
      f.message,
      /live \{"matchLabels":\{"app":"web"\}\}, manifest \{"matchLabels":\{"app":"web","tier":"fe"\}\}/,
    );
    assert.match(f.docs ?? '', /^https:\/\/kubernetes\.io\//);
  });

  test("the selector's keys in Go's order: bytes of UTF-8 (code points), not UTF-16 units", () => {
    // U+FF21 comes before U+1F600 in code points; in UTF-16 the emoji's surrogate (U+D83D) comes first.
    const [f] = immutable(
      analyze(deployment('{app: web, "\u{1F600}": a, "\uFF21": b}'), liveDeployment(), 'apps', 'deployments'),
    );
    assert.ok(f);
    assert.equal(
      f.serverMessage,
      'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","\uFF21":"b","\u{1F600}":"a"}}: field is immutable',
    );
  });

  test('the same selector written in another order, an image change, a create, a new object: nothing', () => {
    assert.deepEqual(
      immutable(analyze(deployment('{app: web}', 'nginx:2'), liveDeployment(), 'apps', 'deployments')),
      [],
    );
    assert.deepEqual(immutable(analyze(deployment('{app: web, tier: fe}'), undefined, 'apps', 'deployments')), []);
    assert.deepEqual(
      immutable(analyze(deployment('{app: web, tier: fe}'), liveDeployment(), 'apps', 'deployments', 'create')),
      [],
    );
  });

  test('a client-side apply is judged on what the manifest writes', () => {
    const f = immutable(analyze(deployment('{app: web2}'), liveDeployment(), 'apps', 'deployments', 'clientSide'));
    assert.deepEqual(
      f.map((x) => x.path),
      ['.spec.selector'],
    );
  });

  test('a field conflict is answered first, and the finding says so', () => {
    const edited = liveDeployment([
      updated('kubectl-edit', {
        'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } } },
      }),
    ]);
    const spec = edited.spec as { template: { spec: { containers: { image: string }[] } } };
    spec.template.spec.containers[0]!.image = 'nginx:edited';
    const findings = analyze(deployment('{app: web, tier: fe}'), edited, 'apps', 'deployments');
    assert.equal(findings.filter((f) => f.code === 'field-conflict').length, 1);
    const [f] = immutable(findings);
    assert.ok(f);
    assert.match(
      f.message,
      /The server answers the field conflict \(409\) first; this one comes only after that is fixed\.$/,
    );
  });

  test('a StatefulSet: the finding sits on serviceName, the server names spec', () => {
    const live: JsonObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {
        name: 'db',
        namespace: 'ns',
        uid: 'u2',
        resourceVersion: '9',
        managedFields: [applied('kubectl', { 'f:spec': { 'f:serviceName': {}, 'f:selector': {} } })],
      },
      spec: { serviceName: 'db', podManagementPolicy: 'OrderedReady', selector: { matchLabels: { app: 'db' } } },
    };
    const text =
      'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: ns\nspec:\n  serviceName: db-headless\n  selector:\n    matchLabels: {app: db}\n';
    const [f, ...rest] = immutable(analyze(text, live, 'apps', 'statefulsets'));
    assert.deepEqual(rest, []);
    assert.ok(f);
    assert.equal(f.path, '.spec.serviceName');
    assert.equal(f.serverField, 'spec');
    assert.equal(f.range.start.line, lineOf(text, 'serviceName:'));
    assert.match(
      f.serverMessage ?? '',
      /^StatefulSet\.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', /,
    );
  });

  test('a Secret read as metadata only, before its type and immutable are learned: nothing is judged', () => {
    assert.ok(immutableRules.some((r) => r.kinds.includes('Secret')));
    const live: JsonObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'ns', uid: 'u3', resourceVersion: '4', managedFields: [] },
    };
    const text =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ntype: example.com/token\nimmutable: false\ndata:\n  a: Yg==\n';
    assert.deepEqual(
      analyze(text, live, '', 'secrets').filter(
        (f) => f.code === 'field-immutable' || f.code === 'secret-immutable-data-unverified',
      ),
      [],
    );
  });
});

describe('the rules where the server lets the field change', () => {
  const service = (spec: JsonObject): JsonObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec,
  });
  const allocated = { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'] };
  const cases: {
    name: string;
    group: string;
    kind: string;
    live: JsonObject;
    after: JsonObject;
    whole?: boolean;
    fields: string[];
  }[] = [
    {
      name: 'a Service made headless',
      group: '',
      kind: 'Service',
      live: service(allocated),
      after: service({ ...allocated, clusterIP: 'None' }),
      fields: ['spec.clusterIPs[0]'],
    },
    {
      name: 'a Service that becomes an ExternalName',
      group: '',
      kind: 'Service',
      live: service(allocated),
      after: service({ ...allocated, type: 'ExternalName', clusterIP: '' }),
      fields: [],
    },
    {
      name: 'a headless Service stays headless',
      group: '',
      kind: 'Service',
      live: service({ clusterIP: 'None', clusterIPs: ['None'] }),
      after: service({ clusterIP: 'None', clusterIPs: ['None'] }),
      fields: [],
    },
    {
      name: 'a bound claim may ask for more storage',
      group: '',
      kind: 'PersistentVolumeClaim',
      live: {
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } },
        status: { phase: 'Bound' },
      },
      after: {
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '2Gi' } } },
      },
      fields: [],
    },
    {
      name: 'a pending claim may not',
      group: '',
      kind: 'PersistentVolumeClaim',
      live: {
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        status: { phase: 'Pending' },
      },
      after: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } },
      fields: ['spec'],
    },
    {
      name: '1024Mi is the 1Gi the server keeps',
      group: '',
      kind: 'PersistentVolumeClaim',
      live: { spec: { resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Pending' } },
      after: { spec: { resources: { requests: { storage: '1024Mi' } } } },
      fields: [],
    },
    {
      name: 'an Indexed Job may change completions with parallelism',
      group: 'batch',
      kind: 'Job',
      live: { spec: { completionMode: 'Indexed', completions: 2, parallelism: 2 } },
      after: { spec: { completionMode: 'Indexed', completions: 4, parallelism: 4 } },
      fields: [],
    },
    {
      name: 'a client-side apply that leaves immutable out of an immutable ConfigMap changes nothing',
      group: '',
      kind: 'ConfigMap',
      live: { immutable: true, data: { a: '1' } },
      after: { data: { a: '1' } },
      whole: false,
      fields: [],
    },
    {
      name: 'a server-side apply that prunes immutable unsets it',
      group: '',
      kind: 'ConfigMap',
      live: { immutable: true, data: { a: '1' } },
      after: { data: { a: '1' } },
      fields: ['immutable'],
    },
    {
      name: 'a Secret of another type',
      group: '',
      kind: 'Secret',
      live: { type: 'Opaque' },
      after: { type: 'example.com/token' },
      fields: ['type'],
    },
    {
      name: 'a Secret whose type the apply prunes is Opaque again',
      group: '',
      kind: 'Secret',
      live: { type: 'example.com/token' },
      after: {},
      fields: ['type'],
    },
    {
      name: 'an empty type is the Opaque the server defaults',
      group: '',
      kind: 'Secret',
      live: { type: 'Opaque' },
      after: { type: '' },
      fields: [],
    },
    {
      name: 'a client-side apply that leaves the type out changes nothing',
      group: '',
      kind: 'Secret',
      live: { type: 'example.com/token' },
      after: {},
      whole: false,
      fields: [],
    },
    {
      name: 'a Secret whose type was never learned is not judged',
      group: '',
      kind: 'Secret',
      live: {},
      after: { type: 'example.com/token' },
      fields: [],
    },
    {
      name: 'an immutable Secret made mutable',
      group: '',
      kind: 'Secret',
      live: { type: 'Opaque', immutable: true },
      after: { type: 'Opaque', immutable: false },
      fields: ['immutable'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const changes = immutableChanges({
        group: c.group,
        kind: c.kind,
        live: c.live,
        after: c.after,
        afterIsWhole: c.whole ?? true,
      });
      assert.deepEqual(
        changes.map((x) => x.cause.field),
        c.fields,
      );
    });
  }
});

describe('an immutable Secret, whose values are never read', () => {
  // As the cluster layer hands it over: metadata only, with the type and immutable it learned.
  const liveSecret = (fields: JsonObject = {}): JsonObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'db',
      namespace: 'ns',
      uid: 'u3',
      resourceVersion: '4',
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { 'f:password': {}, 'f:user': {} }, 'f:immutable': {}, 'f:type': {} },
        },
      ],
    },
    type: 'Opaque',
    immutable: true,
    ...fields,
  });
  const secret = (body: string) =>
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ntype: Opaque\n${body}`;

  test('keys the manifest sets: unknown, said on data, with what to do', () => {
    const text = secret('immutable: true\ndata:\n  password: c2VjcmV0\n  user: YWRtaW4=\n');
    const findings = analyze(text, liveSecret(), '', 'secrets');
    assert.deepEqual(immutable(findings), []);
    const [f, ...rest] = findings.filter((x) => x.code === 'secret-immutable-data-unverified');
    assert.deepEqual(rest, []);
    assert.ok(f);
    assert.equal(f.severity, 'warning');
    assert.equal(f.path, '.data');
    assert.equal(f.range.start.line, text.split('\n').indexOf('data:'));
    assert.match(f.message, /immutable.*data\.password, data\.user hold the live values is unknown.*dry-run apply/);
  });

  test('a key its manager set and the manifest no longer does: the apply removes it, which the server refuses', () => {
    const text = secret('immutable: true\ndata:\n  password: c2VjcmV0\n');
    const findings = analyze(text, liveSecret(), '', 'secrets');
    const [f, ...rest] = immutable(findings);
    assert.deepEqual(rest, []);
    assert.equal(f?.path, '.data');
    assert.equal(
      f?.serverMessage,
      'Secret "db" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    assert.match(f?.message ?? '', /the apply removes data\.user, which its manager set before/);
    assert.deepEqual(
      findings.filter((x) => x.code === 'secret-immutable-data-unverified'),
      [],
      'a sure refusal needs no unknown beside it',
    );
  });

  test('made mutable and a new type: both causes, in the order the server lists them', () => {
    const text =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ns\ntype: example.com/token\nimmutable: false\ndata:\n  password: c2VjcmV0\n  user: YWRtaW4=\n';
    const findings = immutable(analyze(text, liveSecret(), '', 'secrets'));
    assert.deepEqual(
      findings.map((f) => f.path),
      ['.type', '.immutable'],
    );
    assert.match(findings[0]!.message, /type: Invalid value: "example\.com\/token": field is immutable/);
    assert.equal(findings[0]!.serverMessage, undefined, 'two causes: the whole message is not known');
  });

  test('a mutable Secret, or one whose immutable was not learned: nothing about its data', () => {
    const text = secret('data:\n  password: c2VjcmV0\n');
    for (const live of [
      liveSecret({ immutable: false }),
      liveSecret({ immutable: undefined as unknown as JsonValue }),
    ]) {
      delete live.immutable;
      const findings = analyze(text, live, '', 'secrets');
      assert.deepEqual(
        findings.filter((x) => x.code === 'field-immutable' || x.code === 'secret-immutable-data-unverified'),
        [],
      );
    }
  });
});

describe('the dry run of a change the server refuses agrees with the prediction', () => {
  test('a 422 Invalid was foreseen by field-immutable; an accepted dry run was not', () => {
    const text = deployment('{app: web, tier: fe}');
    const resource = parseManifestText(text).resources[0]!;
    const findings = analyze(text, liveDeployment(), 'apps', 'deployments');
    const problem = {
      kind: 'invalid',
      message: 'Deployment.apps "web" is invalid: spec.selector: ...',
      reason: 'Invalid',
    };
    const refused = compareWithServer(resource, findings, { outcome: 'rejected', problem, causes: [] }, schema);
    assert.ok(refused.ok && refused.verification.agrees, JSON.stringify(refused));
    const accepted = compareWithServer(resource, findings, { outcome: 'accepted' }, schema);
    assert.ok(accepted.ok && !accepted.verification.agrees);
    // The template's labels no longer match the new selector either: the server's 422 names both
    // (invalid-merged-object, stored-object.ts), so an acceptance parts from both.
    assert.deepEqual(accepted.ok && accepted.verification.differences.map((d) => d.path), [
      '.spec.selector',
      '.spec.template.metadata.labels',
    ]);
  });
});

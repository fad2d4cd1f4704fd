// The findings on the object a request would store, through the analysis (analyzeResource): where
// each lands, its severity and words, and when nothing is said (a namespace not read, a client-side
// apply of an existing object, an existing Pod). The server's words of every case are proven by
// test/differential/refusals.test.ts against the local kube-apiserver; the merges of existing
// objects are judged there too (they need the cluster's schema).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  analyzeResource,
  type AnalysisSettings,
  type NamespaceFacts,
  type ResourceFacts,
} from '../../../../server/src/core/findings';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { compareWithServer } from '../../../../server/src/core/findings/verification';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JsonValue } from '../../../../server/src/core/json';

const settings = (applyMode: AnalysisSettings['applyMode'] = 'serverSide'): AnalysisSettings => ({
  fieldManager: 'kubectl',
  applyMode,
});
const facts = (
  kind: { group: string; resource: string },
  namespace?: NamespaceFacts,
  live?: JsonObject,
): ResourceFacts => ({
  kind: { state: 'served', ...kind, namespaced: true },
  live: live ? { state: 'exists', object: live } : { state: 'absent' },
  schema: undefined,
  ...(namespace ? { namespace } : {}),
});
const labelled = (labels: Record<string, string>): NamespaceFacts => ({ state: 'exists', name: 'team-a', labels });
const enforce = (level: string) => labelled({ 'pod-security.kubernetes.io/enforce': level });
const judge = (text: string, f: ResourceFacts, mode?: AnalysisSettings['applyMode']) =>
  analyzeResource(parseManifestText(text).resources[0]!, f, settings(mode));
const deployments = { group: 'apps', resource: 'deployments' };
const pods = { group: '', resource: 'pods' };

const podText = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: team-a
spec:
  containers:
  - name: web
    image: nginx
    securityContext:
      allowPrivilegeEscalation: true
`;

const deploymentText = (containers: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: team-a
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
${containers}`;

describe('the stored object (invalid-merged-object)', () => {
  test("an env var with value and valueFrom: an error on the manifest's valueFrom, in the server's words", () => {
    const [f, ...rest] = judge(
      deploymentText(`      - name: web
        image: nginx
        env:
        - name: A
          value: x
          valueFrom:
            fieldRef: {fieldPath: metadata.name}
`),
      facts(deployments),
    );
    assert.deepEqual(rest, []);
    assert.equal(f!.code, 'invalid-merged-object');
    assert.equal(f!.severity, 'error');
    assert.equal(f!.range.start.line, 18, 'on valueFrom');
    assert.equal(f!.serverField, 'spec.template.spec.containers[0].env[0].valueFrom');
    assert.equal(
      f!.serverMessage,
      'spec.template.spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
    );
    assert.match(
      f!.message,
      /^In the manifest, env var "A" of container "web" would hold both value and valueFrom: the server refuses the create \(422 Invalid, validateEnvVarValueFrom\)/,
    );
  });
  test('a request above its limit lands on the request', () => {
    const [f] = judge(
      deploymentText(`      - name: web
        image: nginx
        resources:
          limits: {cpu: 500m}
          requests: {cpu: "1"}
`),
      facts(deployments),
    );
    assert.equal(f!.range.start.line, 17);
    assert.equal(f!.path, '.spec.template.spec.containers[name="web"].resources.requests');
  });
  test('a client-side apply of an existing object, and a create of one, say nothing of it', () => {
    const text = deploymentText(`      - name: web
        image: nginx
        env:
        - {name: A, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
`);
    const live = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'team-a' } };
    for (const mode of ['clientSide', 'create'] as const)
      assert.deepEqual(
        judge(text, facts(deployments, undefined, live), mode).filter((f) => f.code === 'invalid-merged-object'),
        [],
        mode,
      );
  });
});

describe('Pod Security admission', () => {
  test('a Pod under enforce: one error per check, on the field that breaks it, with the 403', () => {
    const found = judge(podText, facts(pods, enforce('restricted')));
    assert.deepEqual(
      found.map((f) => [f.code, f.severity, f.range.start.line, f.path]),
      [
        [
          'pod-security-forbidden',
          'error',
          10,
          '.spec.containers[name="web"].securityContext.allowPrivilegeEscalation',
        ],
        ['pod-security-forbidden', 'error', 9, '.spec.containers[name="web"].securityContext.capabilities.drop'],
        ['pod-security-forbidden', 'error', 9, '.spec.containers[name="web"].securityContext.runAsNonRoot'],
        ['pod-security-forbidden', 'error', 9, '.spec.containers[name="web"].securityContext.seccompProfile'],
      ],
    );
    assert.ok(
      found.every((f) =>
        f.serverMessage?.startsWith(
          'pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false',
        ),
      ),
    );
  });
  test('a workload under enforce: a warning with the server warning, its Pods refused', () => {
    const found = judge(
      deploymentText(`      - name: web\n        image: nginx\n`),
      facts(deployments, enforce('baseline')),
    );
    assert.deepEqual(found, []);
    const host = judge(
      deploymentText(`      - name: web
        image: nginx
        ports:
        - {containerPort: 80, hostPort: 80}
`),
      facts(deployments, enforce('baseline')),
    );
    assert.equal(host.length, 1);
    assert.equal(host[0]!.code, 'pod-security-warning');
    assert.equal(host[0]!.severity, 'warning');
    // Without the schema, which says a port's protocol defaults to TCP, the item is not found by its
    // keys: the nearest written parent, `ports:`.
    assert.equal(host[0]!.range.start.line, 15);
    assert.equal(
      host[0]!.serverMessage,
      'would violate PodSecurity "baseline:latest": hostPort (container "web" uses hostPort 80)',
    );
    assert.match(
      host[0]!.message,
      /every Pod it creates is refused \(403 Forbidden, violates PodSecurity "baseline:latest"\)/,
    );
  });
  test('enforce with an explicit privileged warn: no server warning to quote, the Pods still refused', () => {
    const [f] = judge(
      deploymentText(
        `      - name: web\n        image: nginx\n        ports:\n        - {containerPort: 80, hostPort: 80}\n`,
      ),
      facts(
        deployments,
        labelled({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'privileged' }),
      ),
    );
    assert.equal(f!.serverMessage, undefined);
    assert.match(f!.message, /accepted, but every Pod it creates is refused/);
  });
  test('a warn label: the Pod is accepted with the warning', () => {
    const found = judge(podText, facts(pods, labelled({ 'pod-security.kubernetes.io/warn': 'restricted' })));
    assert.deepEqual([...new Set(found.map((f) => f.code))], ['pod-security-warning']);
    assert.ok(found.every((f) => f.serverMessage?.startsWith('would violate PodSecurity "restricted:latest": ')));
  });
  test('nothing is said without the labels: a namespace not read, not labelled, or missing', () => {
    assert.deepEqual(judge(podText, facts(pods, { state: 'unknown', name: 'team-a' })), []);
    assert.deepEqual(judge(podText, facts(pods, { state: 'exists', name: 'team-a' })), []);
    assert.deepEqual(judge(podText, facts(pods, labelled({}))), []);
    assert.deepEqual(
      judge(podText, facts(pods, { state: 'missing', name: 'team-a' })).map((f) => f.code),
      ['namespace-not-found'],
    );
  });
  test('an existing Pod is not judged (the server judges only some updates)', () => {
    const live = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a' } };
    assert.deepEqual(
      judge(podText, facts(pods, enforce('restricted'), live), 'clientSide').filter((f) =>
        f.code.startsWith('pod-security'),
      ),
      [],
    );
  });
  test('an invalid object is refused (422) before admission: the finding says so', () => {
    const found = judge(
      podText.replace(
        '    image: nginx\n',
        '    image: nginx\n    env:\n    - {name: A, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n',
      ),
      facts(pods, enforce('restricted')),
    );
    assert.equal(found[0]!.code, 'invalid-merged-object');
    assert.ok(
      found.slice(1).every((f) => f.code === 'pod-security-forbidden' && /invalid \(422\) first/.test(f.message)),
    );
  });
});

// The live Deployment after `kubectl apply --server-side` of env A, B and C (C from a ConfigMap) and
// `kubectl set env` of C (a strategic merge patch that sets value and removes valueFrom, as
// kubectl-set): read back from the local kube-apiserver v1.34.4 (managedFields' times left out).
// kubectl no longer owns C's valueFrom, so the manifest sets it again without a conflict.
const setEnvLive = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'team-a',
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
                  'k:{"name":"web"}': {
                    '.': {},
                    'f:env': {
                      'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                      'k:{"name":"B"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                      'k:{"name":"C"}': { '.': {}, 'f:name': {} },
                    },
                    'f:image': {},
                    'f:name': {},
                  },
                },
              },
            },
          },
        },
      },
      {
        manager: 'kubectl-set',
        operation: 'Update',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:template': {
              'f:spec': {
                'f:containers': { 'k:{"name":"web"}': { 'f:env': { 'k:{"name":"C"}': { 'f:value': {} } } } },
              },
            },
          },
        },
      },
    ],
  },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
              { name: 'C', value: 'override' },
            ],
            resources: {},
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'Always',
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        securityContext: {},
        schedulerName: 'default-scheduler',
      },
    },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  },
} as JsonObject;

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'openapi');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8')) as JsonValue,
  ),
);

describe('the merge of the live object and the manifest', () => {
  const manifest = deploymentText(`      - name: web
        image: nginx
        env:
        - name: A
          value: "1"
        - name: B
          value: "2"
        - name: C
          valueFrom:
            configMapKeyRef: {name: settings, key: c}
`);
  const resource = parseManifestText(manifest).resources[0]!;
  const known: ResourceFacts = { ...facts(deployments, undefined, setEnvLive), schema };
  const found = analyzeResource(resource, known, settings());
  const invalid = found.filter((f) => f.code === 'invalid-merged-object');

  test('kubectl set env left a value: the apply stores both, env[2] is refused, on the valueFrom the manifest writes', () => {
    assert.equal(invalid.length, 1, JSON.stringify(found));
    assert.equal(
      invalid[0]!.serverMessage,
      'spec.template.spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
    );
    assert.equal(invalid[0]!.range.start.line, 21);
    assert.match(
      invalid[0]!.message,
      /^The apply would store the live object with this manifest merged in, and there env var "C"/,
    );
    assert.match(invalid[0]!.message, /the server refuses the apply \(422 Invalid, validateEnvVarValueFrom\)/);
  });

  test("the dry run's 422 is the one foreseen; an acceptance is not", () => {
    const problem = {
      kind: 'other',
      reason: 'Invalid',
      message:
        'Deployment.apps "web" is invalid: spec.template.spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
    };
    const refused = compareWithServer(resource, found, { outcome: 'rejected', problem, causes: [] }, schema);
    assert.ok(refused.ok && refused.verification.agrees, JSON.stringify(refused));
    const accepted = compareWithServer(resource, found, { outcome: 'accepted' }, schema);
    assert.ok(accepted.ok && !accepted.verification.agrees);
  });
});

test("Pod Security's 403 is an answer about the Pod, foreseen by its finding; a 403 of RBAC is no answer", () => {
  const resource = parseManifestText(podText).resources[0]!;
  const found = judge(podText, facts(pods, enforce('restricted')));
  const message = found[0]!.serverMessage!;
  const verdict = compareWithServer(
    resource,
    found,
    { outcome: 'rejected', problem: { kind: 'forbidden', reason: 'Forbidden', message }, causes: [] },
    undefined,
  );
  assert.ok(verdict.ok && verdict.verification.agrees, JSON.stringify(verdict));
  const rbac = compareWithServer(
    resource,
    found,
    {
      outcome: 'rejected',
      problem: {
        kind: 'forbidden',
        reason: 'Forbidden',
        message:
          'pods "web" is forbidden: User "viewer" cannot patch resource "pods" in API group "" in the namespace "team-a"',
      },
      causes: [],
    },
    undefined,
  );
  assert.equal(rbac.ok, false);
});

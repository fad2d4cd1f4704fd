// The server's built-in validation of the object a request would store (core/findings/
// stored-object.ts), on objects as the apply would store them. Every expected cause (field and
// words) was captured from the local kube-apiserver v1.34.4 by test/differential/refusals.test.ts
// (KCH_DIFF_VERBOSE=1 prints the server's 422 beside the product's finding), which proves each
// scenario against the server on every run; the merged objects here are what those histories leave.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonObject } from '../../../../server/src/core/json';
import { storedObjectViolations, writesPath } from '../../../../server/src/core/findings/stored-object';
import { formatServerPath } from '../../../../server/src/core/ssa/messages';

const deployment = (template: JsonObject, selector: JsonObject = { matchLabels: { app: 'web' } }): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { selector, template },
});
const web = (extra: JsonObject = {}): JsonObject => ({ name: 'web', image: 'nginx', ...extra });
const template = (spec: JsonObject, labels: JsonObject = { app: 'web' }): JsonObject => ({
  metadata: { labels },
  spec,
});
const causes = (apiVersion: string, kind: string, o: JsonObject) =>
  storedObjectViolations(apiVersion, kind, o).map((v) => `${v.serverField}: ${v.body}`);

describe('env var with value and valueFrom (validateEnvVarValueFrom)', () => {
  test('kubectl set env left a value beside the valueFrom the manifest sets again: the third env var', () => {
    const env: JsonObject[] = [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
      { name: 'C', value: 'override', valueFrom: { configMapKeyRef: { name: 'settings', key: 'c' } } },
    ];
    const v = storedObjectViolations('apps/v1', 'Deployment', deployment(template({ containers: [web({ env })] })));
    assert.deepEqual(
      v.map((x) => `${x.serverField}: ${x.body}`),
      [
        'spec.template.spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
      ],
    );
    assert.equal(formatServerPath(v[0]!.path), '.spec.template.spec.containers[name="web"].env[name="C"].valueFrom');
    assert.equal(v[0]!.follows, 'validateEnvVarValueFrom');
  });
  test('an empty value, or a valueFrom alone, is accepted', () => {
    const accepted: JsonObject[] = [
      { name: 'A', value: '', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ];
    for (const e of accepted)
      assert.deepEqual(causes('apps/v1', 'Deployment', deployment(template({ containers: [web({ env: [e] })] }))), []);
  });
  test('a Pod and an init container name their own paths', () => {
    const bad = { name: 'X', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'a' } } };
    assert.deepEqual(
      causes('v1', 'Pod', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: { containers: [web({ env: [bad] })] },
      }),
      ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'],
    );
    assert.deepEqual(
      causes(
        'apps/v1',
        'Deployment',
        deployment(
          template({ initContainers: [{ name: 'setup', image: 'busybox', env: [bad] }], containers: [web()] }),
        ),
      ),
      [
        'spec.template.spec.initContainers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
      ],
    );
  });
});

describe('selector and template labels', () => {
  test('a Deployment, a ReplicaSet with expressions, a ReplicationController', () => {
    assert.deepEqual(causes('apps/v1', 'Deployment', deployment(template({ containers: [web()] }, { app: 'api' }))), [
      'spec.template.metadata.labels: Invalid value: {"app":"api"}: `selector` does not match template `labels`',
    ]);
    const rs = deployment(template({ containers: [web()] }, { app: 'web', canary: 'true' }), {
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }],
    });
    assert.deepEqual(causes('apps/v1', 'ReplicaSet', rs), [
      'spec.template.metadata.labels: Invalid value: {"app":"web","canary":"true"}: `selector` does not match template `labels`',
    ]);
    const inSet = deployment(template({ containers: [web()] }, { app: 'api' }), {
      matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }],
    });
    assert.deepEqual(causes('apps/v1', 'ReplicaSet', inSet), []);
    const rc = (selector: JsonObject | undefined): JsonObject => ({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'web' },
      spec: { ...(selector ? { selector } : {}), template: template({ containers: [web()] }) },
    });
    assert.deepEqual(causes('v1', 'ReplicationController', rc({ app: 'api' })), [
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    ]);
    // Without a selector the server takes the template's labels.
    assert.deepEqual(causes('v1', 'ReplicationController', rc(undefined)), []);
  });
  test('a Job is left alone: the server writes its selector', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: template({ containers: [web()] }) },
    };
    assert.deepEqual(causes('batch/v1', 'Job', job), []);
  });
});

describe('names used twice', () => {
  test('two containers, and an init container named as a container', () => {
    assert.deepEqual(
      causes('apps/v1', 'Deployment', deployment(template({ containers: [web(), web({ image: 'busybox' })] }))),
      ['spec.template.spec.containers[1].name: Duplicate value: "web"'],
    );
    assert.deepEqual(
      causes(
        'apps/v1',
        'Deployment',
        deployment(
          template({
            initContainers: [{ name: 'proxy', image: 'busybox' }],
            containers: [web(), { name: 'proxy', image: 'envoy' }],
          }),
        ),
      ),
      ['spec.template.spec.initContainers[0].name: Duplicate value: "proxy"'],
    );
  });
  test('the second port of a name is the duplicate, by its index in the stored list', () => {
    const ports: JsonObject[] = [
      { containerPort: 80, name: 'http', protocol: 'TCP' },
      { containerPort: 9090, name: 'metrics', protocol: 'TCP' },
      { containerPort: 8080, name: 'metrics' },
    ];
    const v = storedObjectViolations('apps/v1', 'Deployment', deployment(template({ containers: [web({ ports })] })));
    assert.deepEqual(
      v.map((x) => `${x.serverField}: ${x.body}`),
      ['spec.template.spec.containers[0].ports[2].name: Duplicate value: "metrics"'],
    );
    assert.equal(
      formatServerPath(v[0]!.path),
      '.spec.template.spec.containers[name="web"].ports[containerPort=8080,protocol="TCP"].name',
    );
  });
});

describe('requests above limits (validateResourceRequirements)', () => {
  test('canonical quantities, as the server prints them', () => {
    const res = (requests: JsonObject, limits: JsonObject) =>
      causes('apps/v1', 'Deployment', deployment(template({ containers: [web({ resources: { requests, limits } })] })));
    assert.deepEqual(res({ cpu: '1' }, { cpu: '500m' }), [
      'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
    ]);
    assert.deepEqual(res({ memory: '1.5Gi' }, { memory: '1Gi' }), [
      'spec.template.spec.containers[0].resources.requests: Invalid value: "1536Mi": must be less than or equal to memory limit of 1Gi',
    ]);
    assert.deepEqual(res({ memory: '1024Mi' }, { memory: '1Gi' }), []);
    assert.deepEqual(res({ cpu: '250m' }, {}), []);
  });
  test('a CronJob names its job template', () => {
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: {
        schedule: '0 3 * * *',
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: 'Never',
                containers: [
                  { name: 'job', image: 'busybox', resources: { requests: { cpu: 2 }, limits: { cpu: '1500m' } } },
                ],
              },
            },
          },
        },
      },
    };
    assert.deepEqual(causes('batch/v1', 'CronJob', cron), [
      'spec.jobTemplate.spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1500m',
    ]);
  });
});

test('a kind without a pod spec, or of another group, is not judged', () => {
  assert.deepEqual(causes('v1', 'ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), []);
  assert.deepEqual(causes('example.com/v1', 'Deployment', deployment(template({ containers: [web(), web()] }))), []);
});

test('writesPath finds list items by their keys, a port without protocol as TCP', () => {
  const manifest = { spec: { containers: [{ name: 'web', ports: [{ containerPort: 80 }] }] } };
  assert.ok(
    writesPath(manifest, [
      { kind: 'field', name: 'spec' },
      { kind: 'field', name: 'containers' },
      { kind: 'key', fields: { name: 'web' } },
      { kind: 'field', name: 'ports' },
      { kind: 'key', fields: { containerPort: 80, protocol: 'TCP' } },
    ]),
  );
  assert.ok(
    !writesPath(manifest, [
      { kind: 'field', name: 'spec' },
      { kind: 'field', name: 'volumes' },
    ]),
  );
});

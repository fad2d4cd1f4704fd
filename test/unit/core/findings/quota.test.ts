// LimitRange and ResourceQuota admission of a pod (quota.ts). The expected words are the real
// kube-apiserver's, as test/differential/admission.test.ts recorded them from dry-run creates of the
// same Pods in namespaces with the same LimitRanges and quotas (status written through /status).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonObject } from '../../../../server/src/core/json';
import { containersWithDefaults, limitRangeErrors, quotaRefusal } from '../../../../server/src/core/findings/quota';

const lr = (...limits: JsonObject[]): JsonObject => ({ spec: { limits } });
const quota = (name: string, hard: JsonObject, used: JsonObject): JsonObject => ({
  metadata: { name },
  spec: { hard },
  status: { hard, used },
});
const container = (name: string, requests?: JsonObject, limits?: JsonObject, extra: JsonObject = {}): JsonObject => ({
  name,
  image: 'nginx',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
  ...extra,
});
const spec = (containers: JsonObject[], initContainers?: JsonObject[]): JsonObject => ({
  containers,
  ...(initContainers ? { initContainers } : {}),
});

function limitErrors(s: JsonObject, ranges: JsonObject[]): string[] {
  return limitRangeErrors(containersWithDefaults(s, ranges)!, ranges);
}
function refusal(s: JsonObject, quotas: JsonObject[], count = 1, ranges: JsonObject[] = []) {
  const r = quotaRefusal(containersWithDefaults(s, ranges)!, quotas, count);
  return r && { pod: r.pod, message: r.refusal.message };
}

describe('LimitRange', () => {
  test('max, min and ratio in the server words', () => {
    const max = lr({
      type: 'Container',
      max: { cpu: '500m' },
      default: { cpu: '500m' },
      defaultRequest: { cpu: '500m' },
    });
    assert.deepEqual(limitErrors(spec([container('web', undefined, { cpu: '1' })]), [max]), [
      'maximum cpu usage per Container is 500m, but limit is 1',
    ]);
    assert.deepEqual(limitErrors(spec([container('web')]), [max]), []);
    const min = lr({ type: 'Container', min: { memory: '64Mi' }, defaultRequest: { memory: '64Mi' } });
    assert.deepEqual(limitErrors(spec([container('web', { memory: '32Mi' })]), [min]), [
      'minimum memory usage per Container is 64Mi, but request is 32Mi',
    ]);
    const ratio = lr({ type: 'Container', maxLimitRequestRatio: { cpu: '2' } });
    assert.deepEqual(limitErrors(spec([container('web', { cpu: '100m' }, { cpu: '500m' })]), [ratio]), [
      'cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000',
    ]);
  });
  test('the Pod: the sum of its containers, or no limit', () => {
    const pod = lr({ type: 'Pod', max: { cpu: '1' } });
    assert.deepEqual(
      limitErrors(spec([container('web', undefined, { cpu: '600m' }), container('side', undefined, { cpu: '600m' })]), [
        pod,
      ]),
      ['maximum cpu usage per Pod is 1, but limit is 1200m'],
    );
    assert.deepEqual(limitErrors(spec([container('web')]), [pod]), [
      'maximum cpu usage per Pod is 1.  No limit is specified',
    ]);
  });
  test("a limit without its request is the request too (the API's defaulting), before the LimitRange's", () => {
    const d = lr({
      type: 'Container',
      max: { cpu: '500m' },
      default: { cpu: '500m' },
      defaultRequest: { cpu: '500m' },
    });
    const [c] = containersWithDefaults(spec([container('web', undefined, { cpu: '200m' })]), [d])!;
    assert.equal(c!.requests.get('cpu')?.digits, 2n);
  });
  test('defaults fill what a container does not say', () => {
    const d = lr({ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '500m' } });
    const [c] = containersWithDefaults(spec([container('web')]), [d])!;
    assert.equal(c!.requests.has('cpu'), true);
    assert.equal(c!.limits.has('cpu'), true);
  });
});

describe('ResourceQuota', () => {
  const cpu = (used: string) => quota('compute', { 'requests.cpu': '1' }, { 'requests.cpu': used });
  test('exceeded, in the server words', () => {
    assert.deepEqual(refusal(spec([container('web', { cpu: '300m' })]), [cpu('800m')]), {
      pod: 1,
      message:
        'exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1',
    });
    assert.equal(refusal(spec([container('web', { cpu: '200m' })]), [cpu('800m')]), undefined);
    const mem = quota('mem', { 'requests.memory': '1Gi' }, { 'requests.memory': '768Mi' });
    assert.equal(
      refusal(spec([container('web', { memory: '512Mi' })]), [mem])?.message,
      'exceeded quota: mem, requested: requests.memory=512Mi, used: requests.memory=768Mi, limited: requests.memory=1Gi',
    );
  });
  test('a workload: the Pod that goes over, with the usage of the ones before it', () => {
    assert.deepEqual(refusal(spec([container('web', { cpu: '300m' })]), [cpu('0')], 4), {
      pod: 4,
      message:
        'exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1',
    });
    assert.equal(refusal(spec([container('web', { cpu: '300m' })]), [cpu('0')], 3), undefined);
  });
  test('a quota on cpu or memory needs every container to say it', () => {
    const q = quota('compute', { cpu: '2', 'requests.memory': '1Gi' }, { cpu: '0', 'requests.memory': '0' });
    assert.equal(
      refusal(spec([container('web', { cpu: '100m' }), container('side', { memory: '10Mi' })]), [q])?.message,
      'failed quota: compute: must specify cpu for: side; requests.memory for: web',
    );
  });
  test('init containers count as the largest of them; a sidecar adds', () => {
    assert.equal(
      refusal(spec([container('web', { cpu: '300m' })], [container('setup', { cpu: '1200m' })]), [cpu('0')])?.message,
      'exceeded quota: compute, requested: requests.cpu=1200m, used: requests.cpu=0, limited: requests.cpu=1',
    );
    assert.equal(
      refusal(spec([container('web', { cpu: '300m' })], [container('setup', { cpu: '800m' })]), [cpu('0')]),
      undefined,
    );
    assert.equal(
      refusal(
        spec(
          [container('web', { cpu: '700m' })],
          [container('proxy', { cpu: '400m' }, undefined, { restartPolicy: 'Always' })],
        ),
        [cpu('0')],
      )?.message,
      'exceeded quota: compute, requested: requests.cpu=1100m, used: requests.cpu=0, limited: requests.cpu=1',
    );
  });
  test('the defaults of a LimitRange count', () => {
    const d = lr({ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '500m' } });
    assert.equal(
      refusal(spec([container('web')]), [cpu('600m')], 1, [d])?.message,
      'exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
  });
  test('a quota with scopes is not judged', () => {
    const scoped = { ...cpu('1'), spec: { hard: { 'requests.cpu': '1' }, scopes: ['BestEffort'] } };
    assert.equal(refusal(spec([container('web', { cpu: '300m' })]), [scoped]), undefined);
  });
});

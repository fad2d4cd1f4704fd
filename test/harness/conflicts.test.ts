// Issue 3 acceptance: the real API server's 409 for a Deployment that a hand edit and an autoscaler
// changed after `kubectl apply --server-side`. This is the answer the product must predict.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, connect, freshNamespace, get, objectOf, type KubeObject, type StatusCause } from '../support/seed';
import { editedAndAutoscaled } from '../support/seed-scenarios';

const replicasCause: StatusCause = {
  reason: 'FieldManagerConflict',
  message: 'conflict with "kube-controller-manager" with subresource "scale" using apps/v1',
  field: '.spec.replicas',
};
const imageCause: StatusCause = {
  reason: 'FieldManagerConflict',
  message: 'conflict with "kubectl-edit" using apps/v1',
  field: '.spec.template.spec.containers[name="app"].image',
};

/** Causes as a sorted, de-duplicated list (their order is random; kubernetes/kubernetes#119141 duplicates). */
function causeSet(causes: StatusCause[] | undefined): string[] {
  return [
    ...new Set((causes ?? []).map((c) => JSON.stringify({ reason: c.reason, message: c.message, field: c.field }))),
  ].sort();
}

function edit(
  manifest: KubeObject,
  change: (spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } }) => void,
): KubeObject {
  const copy = structuredClone(manifest);
  change(copy.spec as never);
  return copy;
}

const cases: {
  name: string;
  manifest: (original: KubeObject) => KubeObject;
  status: number;
  causes: StatusCause[];
  message?: RegExp;
}[] = [
  {
    name: 'the original manifest conflicts on .spec.replicas and on the image',
    manifest: (m) => m,
    status: 409,
    causes: [replicasCause, imageCause],
    message: /^Apply failed with 2 conflicts: /,
  },
  {
    name: 'without replicas only the image conflicts',
    manifest: (m) => edit(m, (spec) => delete spec.replicas),
    status: 409,
    causes: [imageCause],
    message:
      /^Apply failed with 1 conflict: conflict with "kubectl-edit" using apps\/v1: \.spec\.template\.spec\.containers\[name="app"\]\.image$/,
  },
  {
    name: 'without replicas and with the live image nothing conflicts (ownership is shared)',
    manifest: (m) =>
      edit(m, (spec) => {
        delete spec.replicas;
        spec.template.spec.containers[0]!.image = 'nginx:1.26';
      }),
    status: 200,
    causes: [],
  },
];

for (const c of cases) {
  test(`dry-run apply after kubectl edit and autoscaling: ${c.name}`, async (t) => {
    if (!requireCluster(t)) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'conflicts');
    const scenario = await editedAndAutoscaled(admin, namespace);

    const result = await apply(admin, 'kubectl', c.manifest(scenario.manifest), { dryRun: true });

    assert.equal(result.status, c.status, result.ok ? '' : result.failure.message);
    if (!result.ok) {
      assert.equal(result.failure.reason, 'Conflict');
      assert.deepEqual(causeSet(result.failure.details?.causes), causeSet(c.causes));
      if (c.message) assert.match(result.failure.message ?? '', c.message);
    }
    // A dry run stores nothing.
    const after = objectOf(await get(admin, scenario.manifest));
    assert.equal(after.metadata.resourceVersion, scenario.live.metadata.resourceVersion);
  });
}

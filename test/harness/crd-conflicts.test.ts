// Conflicts on a custom resource, whose merge rules come from the CRD's x-kubernetes-* markers: what
// the server answers when another tool applies over a Widget that kubectl applied, an operator
// updated and an autoscaler scaled (seed-scenarios.ts widgetWithHistory).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, connect, freshNamespace, type StatusCause } from '../support/seed';
import { widget } from '../support/seed-crd';
import { widgetWithHistory } from '../support/seed-scenarios';

const kubectl = 'conflict with "kubectl"';
const operator = 'conflict with "widget-operator" using kch.example.com/v1';
const autoscaler = 'conflict with "kube-controller-manager" with subresource "scale" using kch.example.com/v1';

const cases: {
  name: string;
  manager: string;
  spec: Record<string, unknown> | 'original';
  conflicts: [message: string, field: string][];
}[] = [
  {
    name: 'kubectl re-applies its manifest: the operator and the autoscaler own changed fields',
    manager: 'kubectl',
    spec: 'original',
    conflicts: [
      [autoscaler, '.spec.replicas'],
      [operator, '.spec.size'],
      [operator, '.spec.config.mode'],
    ],
  },
  { name: 'another tool adds a set item: nobody owns it', manager: 'helm', spec: { tags: ['green'] }, conflicts: [] },
  {
    name: 'another tool sets an owned set item to itself: shared',
    manager: 'helm',
    spec: { tags: ['blue'] },
    conflicts: [],
  },
  {
    name: 'atomic list: one conflict for the whole list',
    manager: 'helm',
    spec: { command: ['serve'] },
    conflicts: [[kubectl, '.spec.command']],
  },
  {
    name: 'atomic map: one conflict for the whole map',
    manager: 'helm',
    spec: { selector: { app: 'gadget' } },
    conflicts: [[kubectl, '.spec.selector']],
  },
  {
    name: 'atomic struct: one conflict for the whole struct',
    manager: 'helm',
    spec: { endpoint: { host: 'gadget.local', port: 8443 } },
    conflicts: [[kubectl, '.spec.endpoint']],
  },
  {
    name: 'map-list item: the path carries both keys, the defaulted one included',
    manager: 'helm',
    spec: { ports: [{ name: 'http', port: 81 }] },
    conflicts: [[kubectl, '.spec.ports[name="http",protocol="TCP"].port']],
  },
  {
    name: 'granular map key another manager owns',
    manager: 'helm',
    spec: { config: { color: 'red' } },
    conflicts: [[kubectl, '.spec.config.color']],
  },
  { name: 'granular map key nobody owns', manager: 'helm', spec: { config: { shape: 'round' } }, conflicts: [] },
];

for (const c of cases) {
  test(`Widget dry-run apply: ${c.name}`, async (t) => {
    if (!requireCluster(t)) return;
    const admin = connect('admin');
    const namespace = await freshNamespace(admin, 'crd');
    const scenario = await widgetWithHistory(admin, namespace);
    const manifest =
      c.spec === 'original' ? scenario.manifest : widget(namespace, scenario.manifest.metadata.name, c.spec);

    const result = await apply(admin, c.manager, manifest, { dryRun: true });

    const causes = (cs: StatusCause[] | undefined) =>
      [...new Set((cs ?? []).map((x) => `${x.message} ${x.field}`))].sort();
    if (c.conflicts.length === 0) {
      assert.equal(result.status, 200, result.ok ? '' : result.failure.message);
    } else {
      assert.equal(result.status, 409);
      assert.deepEqual(
        result.ok ? [] : causes(result.failure.details?.causes),
        c.conflicts.map(([m, f]) => `${m} ${f}`).sort(),
      );
    }
  });
}

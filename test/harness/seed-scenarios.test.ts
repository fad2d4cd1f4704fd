// Each seeding builder must leave the managedFields it promises: tests of the product and captured
// fixtures rely on these histories being what their names say.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import {
  apply,
  connect,
  freshNamespace,
  lastAppliedAnnotation,
  managedBy,
  managers,
  objectOf,
  type Connection,
  type FieldsV1,
  type KubeObject,
} from '../support/seed';
import {
  ancientChanges,
  argoSynced,
  clientSideApplied,
  editedAndAutoscaled,
  helmInstalled,
  managedFieldsReset,
  widgetWithHistory,
} from '../support/seed-scenarios';

/** The FieldsV1 node at a path of keys, e.g. ['f:spec', 'f:replicas']; undefined when not owned. */
function owned(fields: FieldsV1 | undefined, ...keys: string[]): FieldsV1 | undefined {
  let node = fields;
  for (const k of keys) node = node?.[k];
  return node;
}

function managerSummary(obj: KubeObject): string[] {
  return managers(obj)
    .map((m) => `${m.manager} ${m.operation} ${m.apiVersion}${m.subresource ? ` /${m.subresource}` : ''}`)
    .sort();
}

const container = ['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"app"}'];

const builders: { name: string; check: (conn: Connection, namespace: string) => Promise<void> }[] = [
  {
    name: 'editedAndAutoscaled: kubectl applies, kubectl-edit owns the image, the autoscaler owns replicas via scale',
    check: async (conn, ns) => {
      const { live } = await editedAndAutoscaled(conn, ns);
      assert.deepEqual(managerSummary(live), [
        'kube-controller-manager Update apps/v1 /scale',
        'kubectl Apply apps/v1',
        'kubectl-edit Update apps/v1',
      ]);
      assert.deepEqual(
        owned(managedBy(live, 'kube-controller-manager', 'Update', 'scale')?.fieldsV1, 'f:spec', 'f:replicas'),
        {},
      );
      assert.deepEqual(owned(managedBy(live, 'kubectl-edit', 'Update')?.fieldsV1, ...container, 'f:image'), {});
      const kubectl = managedBy(live, 'kubectl', 'Apply')?.fieldsV1;
      assert.equal(owned(kubectl, 'f:spec', 'f:replicas'), undefined, 'the scale write took replicas from kubectl');
      assert.equal(owned(kubectl, ...container, 'f:image'), undefined, 'the edit took the image from kubectl');
      assert.equal((live.spec as { replicas: number }).replicas, 5);
    },
  },
  {
    name: 'clientSideApplied: kubectl-client-side-apply (Update) owns everything and the annotation holds the last manifest',
    check: async (conn, ns) => {
      const { live, manifest } = await clientSideApplied(conn, ns);
      assert.deepEqual(managerSummary(live), ['kubectl-client-side-apply Update apps/v1']);
      const lastApplied = JSON.parse(live.metadata.annotations?.[lastAppliedAnnotation] ?? '{}') as KubeObject;
      assert.deepEqual(lastApplied, manifest);
      assert.deepEqual(live.metadata.labels, { app: 'api' }, 'the second apply deleted the tier label');
      const fields = managedBy(live, 'kubectl-client-side-apply', 'Update')?.fieldsV1;
      assert.deepEqual(owned(fields, 'f:metadata', 'f:annotations', `f:${lastAppliedAnnotation}`), {});
      assert.deepEqual(owned(fields, ...container, 'f:imagePullPolicy'), {}, 'a create owns the defaults too');
    },
  },
  {
    name: 'helmInstalled: helm applies the Deployment and the ConfigMap',
    check: async (conn, ns) => {
      const { deployment, config } = await helmInstalled(conn, ns);
      assert.deepEqual(managerSummary(deployment.live), ['helm Apply apps/v1']);
      assert.deepEqual(managerSummary(config.live), ['helm Apply v1']);
      assert.deepEqual(owned(managedBy(config.live, 'helm', 'Apply')?.fieldsV1, 'f:data', 'f:log.level'), {});
    },
  },
  {
    name: 'argoSynced: argocd-controller applies, with its tracking annotation',
    check: async (conn, ns) => {
      const { live } = await argoSynced(conn, ns);
      assert.deepEqual(managerSummary(live), ['argocd-controller Apply apps/v1']);
      assert.deepEqual(
        owned(
          managedBy(live, 'argocd-controller', 'Apply')?.fieldsV1,
          'f:metadata',
          'f:annotations',
          'f:argocd.argoproj.io/tracking-id',
        ),
        {},
      );
    },
  },
  {
    name: 'managedFieldsReset: no managedFields; the next apply records before-first-apply and conflicts with it',
    check: async (conn, ns) => {
      const { live, manifest } = await managedFieldsReset(conn, ns);
      assert.deepEqual(managers(live), []);

      const changed = structuredClone(manifest);
      (changed.data as Record<string, string>).mode = 'modern';
      const conflict = await apply(conn, 'kubectl', changed, { dryRun: true });
      assert.equal(conflict.status, 409);
      assert.deepEqual(conflict.ok ? [] : conflict.failure.details?.causes?.map((c) => [c.message, c.field]), [
        ['conflict with "before-first-apply" using v1', '.data.mode'],
      ]);

      const applied = objectOf(await apply(conn, 'kubectl', manifest), 'apply unchanged manifest');
      assert.deepEqual(managerSummary(applied), ['before-first-apply Update v1', 'kubectl Apply v1']);
      assert.deepEqual(owned(managedBy(applied, 'before-first-apply', 'Update')?.fieldsV1, 'f:data', 'f:mode'), {});
    },
  },
  {
    name: 'ancientChanges: more than ten Update managers are merged into ancient-changes',
    check: async (conn, ns) => {
      const { live, writerNames } = await ancientChanges(conn, ns, 12);
      const updates = managers(live).filter((m) => m.operation === 'Update');
      assert.equal(updates.length, 10);
      const ancient = managedBy(live, 'ancient-changes', 'Update');
      assert.ok(ancient, `no ancient-changes entry in ${managerSummary(live).join(', ')}`);
      assert.deepEqual(
        owned(ancient.fieldsV1, 'f:metadata', 'f:labels', `f:${writerNames[0]}`),
        {},
        'the oldest writer was merged',
      );
      assert.ok(managedBy(live, writerNames.at(-1)!, 'Update'), 'the newest writer keeps its own entry');
      assert.ok(managedBy(live, 'kubectl', 'Apply'), 'Apply entries are never merged');
    },
  },
  {
    name: 'widgetWithHistory: CRD map-list keys (with default), set items and atomic fields as the server records them',
    check: async (conn, ns) => {
      const { live } = await widgetWithHistory(conn, ns);
      assert.deepEqual(managerSummary(live), [
        'kube-controller-manager Update kch.example.com/v1 /scale',
        'kubectl Apply kch.example.com/v1',
        'widget-operator Update kch.example.com/v1',
      ]);
      const spec = owned(managedBy(live, 'kubectl', 'Apply')?.fieldsV1, 'f:spec');
      assert.deepEqual(owned(spec, 'f:ports', 'k:{"name":"http","protocol":"TCP"}'), {
        '.': {},
        'f:name': {},
        'f:port': {},
      });
      assert.deepEqual(owned(spec, 'f:ports', 'k:{"name":"dns","protocol":"UDP"}'), {
        '.': {},
        'f:name': {},
        'f:port': {},
        'f:protocol': {},
      });
      assert.deepEqual(owned(spec, 'f:tags'), { 'v:"blue"': {}, 'v:"fast"': {} });
      assert.deepEqual(owned(spec, 'f:command'), {}, 'atomic list: one leaf');
      assert.deepEqual(owned(spec, 'f:selector'), {}, 'atomic map: one leaf');
      assert.deepEqual(owned(spec, 'f:endpoint'), {}, 'atomic struct: one leaf');
      assert.deepEqual(owned(spec, 'f:config'), { 'f:color': {} }, 'granular map: the operator took mode');
      assert.deepEqual(owned(managedBy(live, 'widget-operator', 'Update')?.fieldsV1, 'f:spec'), {
        'f:config': { 'f:mode': {} },
        'f:size': {},
      });
      assert.deepEqual(owned(managedBy(live, 'kube-controller-manager', 'Update', 'scale')?.fieldsV1, 'f:spec'), {
        'f:replicas': {},
      });
    },
  },
];

for (const b of builders) {
  test(b.name, async (t) => {
    if (!requireCluster(t)) return;
    const admin = connect('admin');
    await b.check(admin, await freshNamespace(admin, 'seed'));
  });
}

// `check` pays for the objects it checks, not for the namespace around them (real kube-apiserver,
// every request seen through a recording proxy): one ConfigMap with a conflict among three hundred
// others is read by name and judged as before, and two hundred objects of one collection are still
// read with one LIST.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { requireCluster } from '../support/env';
import { collectionReads, recordCluster } from '../support/recording-proxy';
import {
  apply,
  configMap,
  connect,
  createMany,
  freshNamespaceFor,
  kubectlEdit,
  numberedConfigMaps,
  objectOf,
} from '../support/seed';
import { runCli } from './cli-process';

function scratch(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-one-in-many-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('one ConfigMap among three hundred: its conflict is found, and the namespace is not listed', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespaceFor(t, admin, 'cli-one-in-many');
  await createMany(admin, numberedConfigMaps(namespace, 300));
  const settings = configMap(namespace, 'settings', { mode: 'prod' });
  objectOf(await apply(admin, 'kubectl', settings), 'seed');
  objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');
  const dir = scratch(t);
  fs.writeFileSync(
    path.join(dir, 'settings.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: prod\n`,
  );
  const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(dir, 'kubeconfig'));
  t.after(() => proxy.stop());
  const run = await runCli(['check', '--kubeconfig', kubeconfig, '--context', 'recorded', 'settings.yaml'], {
    cwd: dir,
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(
    run.stdout,
    /settings\.yaml:7:9 error field-conflict \.data\.mode is managed by "kubectl-edit" .*live "debug", manifest "prod"/,
  );
  assert.deepEqual(collectionReads(proxy, `/api/v1/namespaces/${namespace}/configmaps`), ['GET settings']);
});

test('two hundred ConfigMaps of one namespace: one LIST, no read by name', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespaceFor(t, admin, 'cli-two-hundred');
  const objects = numberedConfigMaps(namespace, 200, 'web');
  await createMany(admin, objects);
  const dir = scratch(t);
  fs.writeFileSync(
    path.join(dir, 'all.yaml'),
    objects
      .map(
        (o) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${o.metadata.name}\n  namespace: ${namespace}\ndata:\n  index: "${(o.data as { index: string }).index}"\n`,
      )
      .join('---\n'),
  );
  const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(dir, 'kubeconfig'));
  t.after(() => proxy.stop());
  const run = await runCli(
    ['check', '--kubeconfig', kubeconfig, '--context', 'recorded', '--format', 'json', 'all.yaml'],
    {
      cwd: dir,
    },
  );
  assert.notEqual(run.status, 2, run.stderr);
  const report = JSON.parse(run.stdout) as { objects: { title: string }[] };
  assert.equal(report.objects.length, 200);
  assert.deepEqual(collectionReads(proxy, `/api/v1/namespaces/${namespace}/configmaps`), ['LIST']);
});

// `check` pays for the objects it checks, not for the namespace around them (real kube-apiserver,
// every request seen through a recording proxy): one ConfigMap with a conflict among three hundred
// others is read by name and judged as before, and two hundred objects of one collection are still
// read with one LIST.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { requireCluster, type TestClusterInfo } from '../support/env';
import {
  clusterCredentials,
  kubeconfigThroughRecorder,
  startRecordingProxy,
  type RecordingProxy,
} from '../support/recording-proxy';
import {
  apply,
  configMap,
  connect,
  create,
  deleteObject,
  freshNamespace,
  kubectlEdit,
  objectOf,
  type KubeObject,
} from '../support/seed';
import { runCli } from './cli-process';

async function recorder(
  t: TestContext,
  cluster: TestClusterInfo,
  dir: string,
): Promise<{ proxy: RecordingProxy; kubeconfig: string }> {
  const { ca, token } = clusterCredentials(cluster.kubeconfig, 'admin');
  const proxy = await startRecordingProxy(cluster.server, ca);
  t.after(() => proxy.stop());
  return { proxy, kubeconfig: kubeconfigThroughRecorder(proxy, token, path.join(dir, 'kubeconfig')) };
}

async function createMany(objects: KubeObject[]): Promise<void> {
  const admin = connect('admin');
  for (let i = 0; i < objects.length; i += 25)
    await Promise.all(objects.slice(i, i + 25).map(async (o) => objectOf(await create(admin, 'seed', o), 'seed')));
}

/** The reads of a collection, as `LIST`, `LIST <fieldSelector>` or `GET <name>`. */
function reads(proxy: RecordingProxy, collection: string): string[] {
  return proxy
    .exchanges()
    .map((e) => new URL(e.url, 'http://recorded'))
    .filter((u) => u.pathname === collection || u.pathname.startsWith(`${collection}/`))
    .map((u) =>
      u.pathname === collection
        ? `LIST${u.searchParams.get('fieldSelector') ? ` ${u.searchParams.get('fieldSelector')}` : ''}`
        : `GET ${u.pathname.slice(collection.length + 1)}`,
    );
}

function scratch(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-one-in-many-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('one ConfigMap among three hundred: its conflict is found, and the namespace is not listed', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespace(admin, 'cli-one-in-many');
  t.after(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }));
  await createMany(Array.from({ length: 300 }, (_, i) => configMap(namespace, `other-${i}`, { index: String(i) })));
  const settings = configMap(namespace, 'settings', { mode: 'prod' });
  objectOf(await apply(admin, 'kubectl', settings), 'seed');
  objectOf(await kubectlEdit(admin, settings, { data: { mode: 'debug' } }), 'edit');
  const dir = scratch(t);
  fs.writeFileSync(
    path.join(dir, 'settings.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: prod\n`,
  );
  const { proxy, kubeconfig } = await recorder(t, cluster, dir);
  const run = await runCli(['check', '--kubeconfig', kubeconfig, '--context', 'recorded', 'settings.yaml'], {
    cwd: dir,
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(
    run.stdout,
    /settings\.yaml:7:9 error field-conflict \.data\.mode is managed by "kubectl-edit" .*live "debug", manifest "prod"/,
  );
  assert.deepEqual(reads(proxy, `/api/v1/namespaces/${namespace}/configmaps`), ['GET settings']);
});

test('two hundred ConfigMaps of one namespace: one LIST, no read by name', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin');
  const namespace = await freshNamespace(admin, 'cli-two-hundred');
  t.after(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }));
  const objects = Array.from({ length: 200 }, (_, i) => configMap(namespace, `web-${i}`, { index: String(i) }));
  await createMany(objects);
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
  const { proxy, kubeconfig } = await recorder(t, cluster, dir);
  const run = await runCli(
    ['check', '--kubeconfig', kubeconfig, '--context', 'recorded', '--format', 'json', 'all.yaml'],
    {
      cwd: dir,
    },
  );
  assert.notEqual(run.status, 2, run.stderr);
  const report = JSON.parse(run.stdout) as { objects: { title: string }[] };
  assert.equal(report.objects.length, 200);
  assert.deepEqual(reads(proxy, `/api/v1/namespaces/${namespace}/configmaps`), ['LIST']);
});

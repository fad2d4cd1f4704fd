// The cluster layer against the real kube-apiserver: kubeconfig and auth, discovery, OpenAPI v3,
// and how failures come back as data (unreachable, unauthenticated, forbidden, not served).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import {
  createClusterConnection,
  createClusterShare,
  KubeconfigOnce,
  type ClusterConnection,
  type ClusterShare,
} from '../../../server/src/cluster';
import { isJsonObject, type JsonObject } from '../../../server/src/core/json';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { installWidgetCrd, waitForOpenApi, widgetApiVersion } from '../../support/seed-crd';
import { connect, deleteObject, objectOf, request, type KubeObject } from '../../support/seed';
import { applyCrd } from '../../differential/replay';
import { clusterCredentials, kubeconfigThroughRecorder, startRecordingProxy } from '../../support/recording-proxy';

const open: ClusterConnection[] = [];
after(() => open.forEach((c) => c.dispose()));

async function connection(
  cluster: TestClusterInfo,
  context: string,
  extra: { kubeconfig?: string } = {},
): Promise<ClusterConnection> {
  const c = await createClusterConnection(
    { kubeconfig: extra.kubeconfig ?? cluster.kubeconfig, context },
    { userAgent: 'kch-cluster-layer-test' },
  );
  open.push(c);
  return c;
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-cluster-layer-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('connection', () => {
  test('contexts, server URL and the context namespace come from the kubeconfig', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    assert.deepEqual(c.kubeconfig?.contexts.map((x) => x.name).sort(), ['admin', 'stranger', 'viewer']);
    assert.equal(c.kubeconfig?.currentContext, 'admin');
    assert.equal(c.context?.name, 'viewer');
    assert.equal(c.context?.server, cluster.server);
    assert.equal(c.defaultNamespace, 'default');
  });

  test('an exec credential plugin authenticates through the library', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    // A kubeconfig whose user runs a program that prints an ExecCredential, as cloud plugins do.
    const token = connect('admin').token;
    const plugin = path.join(scratch, 'credential-plugin.mjs');
    fs.writeFileSync(
      plugin,
      `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } }));\n`,
    );
    const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
      users: { name: string; user: object }[];
    };
    config.users.push({
      name: 'exec-user',
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [plugin],
          interactiveMode: 'Never',
        },
      },
    });
    (config as unknown as { contexts: object[] }).contexts.push({
      name: 'exec',
      context: { cluster: 'kch-test', user: 'exec-user' },
    });
    const file = path.join(scratch, 'exec-kubeconfig.yaml');
    fs.writeFileSync(file, toYaml(config));
    const c = await connection(cluster, 'exec', { kubeconfig: file });
    const found = await c.resolveKind('apps/v1', 'Deployment');
    assert.ok(found.ok, JSON.stringify(found));
    assert.equal(c.health().state, 'connected');
  });

  test('a failing exec plugin is unauthenticated, with its reason', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as { users: object[]; contexts: object[] };
    config.users.push({
      name: 'broken',
      user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: path.join(scratch, 'no-such-plugin') } },
    });
    config.contexts.push({ name: 'broken', context: { cluster: 'kch-test', user: 'broken' } });
    const file = path.join(scratch, 'broken-kubeconfig.yaml');
    fs.writeFileSync(file, toYaml(config));
    const c = await connection(cluster, 'broken', { kubeconfig: file });
    const found = await c.discovery();
    assert.ok(!found.ok);
    assert.equal(found.problem.kind, 'unauthenticated');
    assert.equal(c.health().state, 'unauthenticated');
  });

  test('a wrong token is unauthenticated (401)', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
      users: { name: string; user: { token: string } }[];
    };
    for (const u of config.users) u.user.token = 'not-a-valid-token';
    const file = path.join(scratch, 'bad-token-kubeconfig.yaml');
    fs.writeFileSync(file, toYaml(config));
    const c = await connection(cluster, 'admin', { kubeconfig: file });
    const health = await c.checkHealth();
    assert.equal(health.state, 'unauthenticated');
    assert.equal(health.problem?.httpStatus, 401);
  });

  test('busy while answers are on their way, quiet once the last one is taken in: a watch left open does not count', async (t) => {
    // The editor asks the editor's client to pull diagnostics again when the cluster is quiet: the
    // first quiet after looking an object up must come with the object known, not between the
    // discovery it needs and the list that answers it.
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'admin');
    assert.equal(c.busy(), false);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: `quiet-${process.pid}` };
    const seen: string[] = [];
    const quiet = new Promise<void>((resolve) =>
      c.onQuiet(() => {
        seen.push(c.peekObject(ref).state);
        resolve();
      }),
    );
    assert.equal(c.peekObject(ref).state, 'pending');
    assert.equal(c.busy(), true);
    await quiet;
    assert.deepEqual(seen, ['absent']);
    // The list's watch stays open: nothing is waiting for an answer.
    assert.equal(c.busy(), false);
  });

  test('a closed loopback port is unreachable, and every answer says so without throwing', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const port = await closedPort();
    const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
      clusters: { cluster: { server: string } }[];
    };
    config.clusters[0]!.cluster.server = `https://127.0.0.1:${port}`;
    const file = path.join(scratch, 'closed-port-kubeconfig.yaml');
    fs.writeFileSync(file, toYaml(config));
    const c = await connection(cluster, 'admin', { kubeconfig: file });
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
    assert.equal(c.peekObject(ref).state, 'pending');
    const state = await c.getObject(ref);
    assert.equal(state.state, 'failed');
    assert.equal(state.state === 'failed' && state.problem.kind, 'unreachable');
    assert.equal(state.state === 'failed' && state.problem.code, 'ECONNREFUSED');
    assert.equal(c.health().state, 'unreachable');
    const verdict = await c.dryRunApply(
      { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } },
      { fieldManager: 'kubectl' },
    );
    assert.equal(verdict.outcome, 'rejected');
    assert.equal(verdict.outcome === 'rejected' && verdict.problem.kind, 'unreachable');
  });
});

describe('discovery', () => {
  test('kind and apiVersion to resource, scope, verbs and subresources', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    const rows: [string, string, string, boolean, string[]][] = [
      ['apps/v1', 'Deployment', 'deployments', true, ['scale', 'status']],
      ['v1', 'Service', 'services', true, ['proxy', 'status']],
      ['v1', 'Namespace', 'namespaces', false, ['finalize', 'status']],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false, []],
    ];
    for (const [apiVersion, kind, resource, namespaced, subresources] of rows) {
      const found = await c.resolveKind(apiVersion, kind);
      assert.ok(found.ok, `${apiVersion} ${kind}: ${JSON.stringify(found)}`);
      assert.equal(found.value.resource, resource);
      assert.equal(found.value.namespaced, namespaced);
      assert.deepEqual(found.value.subresources.filter((s) => subresources.includes(s)).sort(), subresources);
      assert.ok(found.value.verbs.includes('patch'));
    }
    const index = await c.discovery();
    assert.ok(index.ok);
    assert.equal(index.value.source, 'aggregated', 'v1.34 serves aggregated discovery');
    assert.deepEqual(index.value.groups.find((g) => g.name === 'autoscaling')?.versions, ['v2', 'v1']);
  });

  test('cached per context: a second lookup sends nothing', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    await c.resolveKind('apps/v1', 'Deployment');
    const sent = c.requestsSent();
    assert.ok(c.cachedResource('v1', 'ConfigMap'), 'synchronous lookup after the first discovery');
    await c.resolveKind('v1', 'ConfigMap');
    assert.equal(c.requestsSent(), sent);
  });

  test('an apiVersion the cluster does not serve is data, naming what is served', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    const found = await c.resolveKind('extensions/v1beta1', 'Deployment');
    assert.ok(!found.ok);
    assert.equal(found.problem.kind, 'kindNotServed');
    const state = await c.getObject({ apiVersion: 'apps/v1beta2', kind: 'Deployment', name: 'web' });
    assert.equal(state.state === 'failed' && state.problem.kind, 'kindNotServed');
    assert.match(state.state === 'failed' ? state.problem.message : '', /served: apps\/v1/);
  });

  test('kept on disk (diskCache): a refresh asks with the ETags it holds, a new connection reads no document', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const { ca, token } = clusterCredentials(cluster.kubeconfig, 'admin');
    const proxy = await startRecordingProxy(cluster.server, ca);
    t.after(() => proxy.stop());
    const kubeconfig = kubeconfigThroughRecorder(proxy, token, path.join(scratch, 'disk-cache.json'));
    const env = { XDG_CACHE_HOME: path.join(scratch, 'disk-cache') };
    const open = async () => {
      const c = await createClusterConnection({ kubeconfig }, { env, diskCache: true });
      t.after(() => c.dispose());
      return c;
    };
    const first = await open();
    assert.ok((await first.discovery()).ok);
    const fetched = await first.openApiDocument('v1');
    assert.ok(fetched.ok);
    const discovery = (from: number) =>
      proxy
        .exchanges()
        .slice(from)
        .filter((e) => e.url === '/apis');
    const firstApis = discovery(0)[0]!;
    assert.equal(firstApis.ifNoneMatch, '');
    const before = proxy.exchanges().length;
    first.refresh();
    assert.ok((await first.discovery()).ok);
    const again = discovery(before)[0]!;
    assert.equal(again.ifNoneMatch, firstApis.etag);
    // 304, unless another test installed a CRD in between: then the server's ETag is another.
    assert.ok(again.status === 304 || again.etag !== firstApis.etag, `${again.status}`);

    const fresh = proxy.exchanges().length;
    const second = await open();
    const schema = await second.openApiDocument('v1');
    assert.ok(schema.ok);
    assert.deepEqual(schema.value, fetched.value);
    assert.deepEqual(
      proxy
        .exchanges()
        .slice(fresh)
        .map((e) => e.url),
      ['/openapi/v3'],
      'the document is read from disk',
    );
  });

  test('a CRD installed after the first discovery is found', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' });
    open.push(c);
    await c.discovery();
    await installWidgetCrd(connect('admin'));
    // The discovery cache is young; the refresh command is what a user runs after installing a CRD.
    c.refresh();
    let found = await c.resolveKind(widgetApiVersion, 'Widget');
    for (let i = 0; i < 50 && !found.ok; i++) {
      await new Promise((r) => setTimeout(r, 200));
      c.refresh();
      found = await c.resolveKind(widgetApiVersion, 'Widget');
    }
    assert.ok(found.ok, JSON.stringify(found));
    assert.equal(found.value.resource, 'widgets');
    // The server publishes a new CRD's OpenAPI a moment after serving it.
    let schema = await c.openApiDocument(widgetApiVersion);
    for (let i = 0; i < 50 && !schema.ok; i++) {
      await new Promise((r) => setTimeout(r, 200));
      c.refresh();
      schema = await c.openApiDocument(widgetApiVersion);
    }
    assert.ok(schema.ok, JSON.stringify(schema));
  });
});

describe('OpenAPI v3', () => {
  test('a CRD upgraded after the index was read: the old hash is redirected (301), and the current document is read', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin');
    const group = `upgrade-${Math.random().toString(36).slice(2, 8)}.kch.example.com`;
    const crd = (fields: Record<string, unknown>): KubeObject => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `gizmos.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: fields } } },
            },
          },
        ],
      },
    });
    objectOf(await applyCrd(admin, crd({ size: { type: 'integer' } })), 'install the CRD');
    await waitForOpenApi(admin, [`apis/${group}/v1`]);
    const c = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' });
    open.push(c);
    // The index is read (with another group's document); the CRD's is not asked for yet.
    assert.ok((await c.openApiDocument('v1')).ok);
    const hashNow = async () => {
      const index = await request(admin, 'GET', '/openapi/v3');
      const paths = (index.body as { paths: Record<string, { serverRelativeURL: string }> }).paths;
      return paths[`apis/${group}/v1`]?.serverRelativeURL;
    };
    const before = await hashNow();
    objectOf(await applyCrd(admin, crd({ size: { type: 'integer' }, color: { type: 'string' } })), 'upgrade the CRD');
    // The server publishes the new document a moment later, under a new hash: wait for it, so the
    // product's index (read before) names the old one.
    for (let i = 0; i < 100 && (await hashNow()) === before; i++) await new Promise((r) => setTimeout(r, 200));
    assert.notEqual(await hashNow(), before, 'the server published the upgraded document');
    const doc = await c.openApiDocument(`${group}/v1`);
    assert.ok(doc.ok, JSON.stringify(doc));
    assert.ok(JSON.stringify(doc.value).includes('"color"'), 'the document after the upgrade');
    await deleteObject(admin, crd({}));
  });

  test('the group-version document carries the merge markers the predictor needs', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    const apps = await c.openApiDocument('apps/v1');
    assert.ok(apps.ok, JSON.stringify(apps));
    const schemas = (apps.value.components as JsonObject).schemas as JsonObject;
    const podSpec = schemas['io.k8s.api.core.v1.PodSpec'] as JsonObject;
    const containers = (podSpec.properties as JsonObject).containers as JsonObject;
    assert.equal(containers['x-kubernetes-list-type'], 'map');
    assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
    const core = await c.openApiDocument('v1');
    assert.ok(core.ok);
    assert.ok(
      isJsonObject(((core.value.components as JsonObject).schemas as JsonObject)['io.k8s.api.core.v1.ServicePort']),
    );
  });

  test('cached under the hashed URL: asking again sends nothing', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    const first = await c.openApiDocument('apps/v1');
    const sent = c.requestsSent();
    const again = await c.openApiDocument('apps/v1');
    assert.equal(c.requestsSent(), sent);
    assert.ok(first.ok && again.ok && first.value === again.value);
    assert.equal(c.cachedOpenApiDocument('apps/v1'), again.ok ? again.value : undefined);
  });
});

describe('shared between connections (cluster/share.ts)', () => {
  test('connections given one share make one TLS context of the same certificates; each without it makes its own', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    // The module object itself, as the transport reaches it: its function is counted, not replaced.
    const tlsModule = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
    const made = tlsModule.createSecureContext;
    let count = 0;
    tlsModule.createSecureContext = (...args: Parameters<typeof made>) => (count++, made(...args));
    t.after(() => (tlsModule.createSecureContext = made));
    const twoConnections = async (share?: ClusterShare) => {
      count = 0;
      for (const context of ['admin', 'viewer']) {
        const c = await createClusterConnection(
          { kubeconfig: cluster.kubeconfig, context },
          { userAgent: 'kch-cluster-layer-test', ...(share ? { share } : {}) },
        );
        open.push(c);
        assert.ok((await c.discovery()).ok);
      }
      return count;
    };
    assert.equal(
      await twoConnections(createClusterShare()),
      1,
      'one context for both (one certificate authority, tokens)',
    );
    assert.equal(await twoConnections(), 2);
  });
});

describe('a kubeconfig read once for several contexts', () => {
  test('each connection is its own context and user, from one read of the file', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const file = path.join(scratch, 'read-once-kubeconfig');
    fs.copyFileSync(cluster.kubeconfig, file);
    const once = new KubeconfigOnce(file);
    const summary = await once.summary();
    assert.ok(summary.ok);
    assert.deepEqual(summary.value.contexts.map((c) => c.name).sort(), ['admin', 'stranger', 'viewer']);
    // Read once: the file can go, and the contexts are still there to connect to.
    fs.rmSync(file);
    const options = { userAgent: 'kch-cluster-layer-test', kubeconfig: once };
    const [admin, stranger] = await Promise.all([
      createClusterConnection({ kubeconfig: file, context: 'admin' }, options),
      createClusterConnection({ kubeconfig: file, context: 'stranger' }, options),
    ]);
    open.push(admin, stranger);
    assert.equal(admin.context?.name, 'admin');
    assert.equal(stranger.context?.name, 'stranger');
    // Each asks as its own user: selecting one context does not change the other's.
    const asAdmin = await admin.getObject({ apiVersion: 'v1', kind: 'Namespace', name: 'default' });
    assert.equal(asAdmin.state, 'exists', JSON.stringify(asAdmin));
    const asStranger = await stranger.getObject({ apiVersion: 'v1', kind: 'Namespace', name: 'default' });
    assert.equal(asStranger.state, 'failed', JSON.stringify(asStranger));
    assert.match(asStranger.state === 'failed' ? asStranger.problem.message : '', /User "stranger" cannot get/);
  });
});

describe('forbidden', () => {
  test('a user without any role: reads are forbidden, with verb and resource, and the status bar says so', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'stranger');
    const state = await c.getObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    assert.equal(state.state, 'failed', JSON.stringify(state));
    if (state.state !== 'failed') return;
    assert.equal(state.problem.kind, 'forbidden');
    assert.equal(state.problem.verb, 'get');
    assert.equal(state.problem.resource, 'deployments.apps');
    assert.equal(state.problem.namespace, 'default');
    assert.match(state.problem.message, /User "stranger" cannot get resource "deployments"/);
    assert.equal(c.health().state, 'forbidden');
  });

  test('the viewer may read but a dry-run apply is forbidden, and that does not turn the status bar red', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const c = await connection(cluster, 'viewer');
    const verdict = await c.dryRunApply(
      { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'viewer-probe' }, data: { a: 'b' } } },
      { fieldManager: 'kubectl' },
    );
    assert.equal(verdict.outcome, 'rejected');
    if (verdict.outcome !== 'rejected') return;
    assert.equal(verdict.problem.kind, 'forbidden');
    assert.equal(verdict.problem.verb, 'patch');
    assert.equal(verdict.problem.resource, 'configmaps');
    assert.equal(c.health().state, 'connected');
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

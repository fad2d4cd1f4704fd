// A cluster that misbehaves, through a fault proxy in front of the real API server: what the user
// sees (the status bar's state and words, diagnostics) while it does, and that everything recovers
// once it heals, without the user doing anything and without waiting out fixed delays.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import {
  createClusterConnection,
  type ClusterConnection,
  type ClusterConnectionOptions,
  type ClusterHealthReport,
  type LiveObjectChange,
} from '../../server/src/cluster';
import { testCluster, type TestClusterInfo } from '../support/env';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { startTestServer } from '../support/lsp-client';
import { apply, autoscale, connect, type Connection, freshNamespace, objectOf } from '../support/seed';

const skip = !testCluster() && process.env.CI !== 'true' ? 'no local kube-apiserver' : false;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-faults-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Resolves with the health once `done` holds (now or on a later change). */
function healthUntil(
  c: ClusterConnection,
  done: (h: ClusterHealthReport) => boolean,
  timeoutMs = 60_000,
): Promise<ClusterHealthReport> {
  return new Promise((resolve, reject) => {
    if (done(c.health())) return resolve(c.health());
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`health stayed ${JSON.stringify(c.health())}`));
    }, timeoutMs);
    const sub = c.onHealthChange((h) => {
      if (!done(h)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(h);
    });
  });
}

describe('a cluster that misbehaves', { skip }, () => {
  let cluster: TestClusterInfo;
  let proxy: FaultProxy;
  let kubeconfig: string;
  const open: ClusterConnection[] = [];

  before(async () => {
    cluster = testCluster()!;
    if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
    proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    kubeconfig = proxy.kubeconfig(cluster.kubeconfig, path.join(scratch, 'through-proxy.yaml'));
  });
  after(async () => {
    open.forEach((c) => c.dispose());
    await proxy?.close();
  });

  async function connection(options: ClusterConnectionOptions = {}): Promise<ClusterConnection> {
    const c = await createClusterConnection(
      { kubeconfig, context: 'admin' },
      { userAgent: 'kch-faults-test', ...options },
    );
    open.push(c);
    return c;
  }

  test('429 with Retry-After: "throttled", nothing is sent before the server allows it, then connected again', async () => {
    proxy.heal();
    const c = await connection({ probe: { initialBackoffMs: 100 } });
    assert.equal((await c.checkHealth()).state, 'connected');
    proxy.set({ kind: 'status', status: 429, retryAfterSeconds: 2 });
    const from = proxy.requests.length;
    const throttled = await c.checkHealth();
    assert.equal(throttled.state, 'throttled');
    assert.match(throttled.problem?.message ?? '', /throttling requests \(429 Too Many Requests; it asks to wait 2 s/);
    const refused = proxy.requests.slice(from).find((r) => r.status === 429)!;
    // Another context of the same cluster leaves it alone too.
    const other = await connection();
    const otherHealth = other.checkHealth();
    proxy.heal();
    // Nobody asks: the connection's own probe finds the cluster back, after the server's delay.
    await healthUntil(c, (h) => h.state === 'connected');
    assert.equal((await otherHealth).state, 'connected');
    const after429 = proxy.requests.slice(proxy.requests.indexOf(refused) + 1);
    assert.ok(after429.length >= 2, 'both connections asked again');
    for (const r of after429)
      assert.ok(
        r.at >= refused.answeredAt! + 2_000,
        `a request came ${r.at - refused.answeredAt!} ms after the 429 that asked for 2 s`,
      );
  });

  test('5xx on reads: "failing" with the server\'s words, and connected again after healing without anyone asking', async () => {
    proxy.heal();
    const c = await connection({ probe: { initialBackoffMs: 100 } });
    assert.equal((await c.checkHealth()).state, 'connected');
    proxy.set({ kind: 'status', status: 503 });
    const failing = await c.checkHealth();
    assert.equal(failing.state, 'failing');
    assert.match(failing.problem?.message ?? '', /failing \(HTTP 503\): injected 503/);
    proxy.heal();
    await healthUntil(c, (h) => h.state === 'connected');
  });

  test('a black hole: "unreachable" when the first request times out, and back when it heals', async () => {
    proxy.set({ kind: 'blackhole' });
    const timeoutMs = 3_000;
    const c = await connection({ requestTimeoutMs: timeoutMs, probe: { initialBackoffMs: 100 } });
    const from = proxy.requests.length;
    const started = Date.now();
    const health = await c.checkHealth();
    const took = Date.now() - started;
    assert.equal(health.state, 'unreachable');
    assert.match(health.problem?.message ?? '', /no answer from https:\/\/127\.0\.0\.1:\d+ within/);
    // One request timeout, not two: the TLS handshake never completes, so a socket idle timer
    // armed on connect would not tell the two apart; the budget is the connection's own setting.
    assert.ok(took < 2 * timeoutMs, `unreachable after ${took} ms with a ${timeoutMs} ms timeout`);
    assert.equal(proxy.requests.length, from, 'nothing got through the black hole');
    proxy.heal();
    await healthUntil(c, (h) => h.state === 'connected');
  });

  test('slow answers: slower than the timeout is "not answering"; slow but in time is connected', async () => {
    proxy.set({ kind: 'slow', delayMs: 3_000 });
    const c = await connection({ requestTimeoutMs: 1_000, probe: { initialBackoffMs: 100 } });
    const slow = await c.checkHealth();
    assert.equal(slow.state, 'unreachable');
    assert.match(slow.problem?.message ?? '', /no answer .* within/);
    proxy.set({ kind: 'slow', delayMs: 200 });
    await healthUntil(c, (h) => h.state === 'connected');
    assert.equal((await c.checkHealth()).state, 'connected');
    proxy.heal();
  });

  test('watches cut mid-stream: a change made elsewhere still arrives, and the status stays connected', async () => {
    proxy.heal();
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'faults');
    const cm = (value: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cut', namespace },
      data: { value },
    });
    objectOf(await apply(admin, 'kubectl', cm('one')), 'apply');
    const c = await connection();
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cut', namespace };
    assert.equal((await c.getObject(ref)).state, 'exists');
    const watch = await proxy.waitForRequest(
      (r) => r.watch && r.path.endsWith(`/namespaces/${namespace}/configmaps`) && r.status === 200,
    );
    proxy.set({ kind: 'cutWatches' });
    const from = proxy.requests.indexOf(watch) + 1;
    assert.equal(proxy.cutWatches(), 1);
    // The reconnect is cut too; then the proxy heals and the next reconnect stays.
    await proxy.waitForRequest((r) => r.watch && r.fault === 'cutWatches', { from });
    proxy.heal();
    const arrived = new Promise<LiveObjectChange>((resolve) => {
      const sub = c.onObjectChange((change) => {
        if (
          change.name === 'cut' &&
          change.state.state === 'exists' &&
          (change.state.object.data as { value?: string }).value === 'two'
        ) {
          sub.dispose();
          resolve(change);
        }
      });
    });
    objectOf(await apply(admin, 'kubectl', cm('two')), 'apply');
    await arrived;
    assert.equal(c.health().state, 'connected');
  });

  test('OpenAPI fails: retried with backoff, and Refresh forgets the failure at once', async () => {
    proxy.set({ kind: 'status', status: 500, match: (r) => r.path === '/openapi/v3/apis/apps/v1' });
    const c = await connection({ openApiRetry: { initialBackoffMs: 10 * 60_000, maxBackoffMs: 10 * 60_000 } });
    const failed = await c.openApiDocument('apps/v1');
    assert.ok(!failed.ok);
    assert.match(failed.problem.message, /failing \(HTTP 500\)/);
    // Remembered: asking again (as every keystroke does) sends nothing until the retry is due.
    const sent = c.requestsSent();
    assert.ok(!(await c.openApiDocument('apps/v1')).ok);
    assert.equal(c.requestsSent(), sent);
    proxy.heal();
    c.refresh();
    const again = await c.openApiDocument('apps/v1');
    assert.ok(again.ok, JSON.stringify(again));
  });

  test('OpenAPI fails once: a retry gets it and announces it', async () => {
    proxy.set({ kind: 'status', status: 500, match: (r) => r.path === '/openapi/v3/apis/apps/v1' });
    const c = await connection({ openApiRetry: { initialBackoffMs: 100, maxBackoffMs: 1_000 } });
    assert.ok(!(await c.openApiDocument('apps/v1')).ok);
    const arrived = new Promise<void>((resolve) => c.onSchemaChange(resolve));
    proxy.heal();
    await arrived;
    assert.ok(c.cachedOpenApiDocument('apps/v1'));
  });
});

describe('the editor while OpenAPI fails', { skip }, () => {
  let cluster: TestClusterInfo;
  let proxy: FaultProxy;
  let admin: Connection;

  before(async () => {
    cluster = testCluster()!;
    if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
    proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    admin = connect('admin', cluster.kubeconfig);
  });
  after(async () => proxy?.close());

  const byCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

  test('field conflicts come back after the server heals, without an edit', async () => {
    const namespace = await freshNamespace(admin, 'openapi-fault');
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
        },
      },
    };
    objectOf(await apply(admin, 'kubectl', deployment), 'apply');
    await autoscale(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }, 5);
    proxy.set({ kind: 'status', status: 500, match: (r) => r.path === '/openapi/v3/apis/apps/v1' });
    const kubeconfig = proxy.kubeconfig(cluster.kubeconfig, path.join(scratch, 'openapi-fault.yaml'));
    // The document's fetch is what fails here: not one kept on disk by an earlier server.
    const server = await startTestServer({
      settings: { kubeconfig, context: 'admin' },
      env: { ...process.env, KCH_API_CACHE: 'off' },
    });
    try {
      const uri = 'file:///w/web.yaml';
      const manifest = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ${namespace}\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n        - name: app\n          image: nginx:1.25\n`;
      await server.open(uri, manifest);
      const from = proxy.requests.length;
      // The object is known, the schema is not: the server's 500 has been seen.
      await server.diagnosticsUntil(
        uri,
        (d) => byCode(d, 'exists').length === 1 && proxy.requests.slice(from).some((r) => r.fault === 'status'),
      );
      assert.equal(byCode(await server.diagnostics(uri), 'field-conflict').length, 0);
      proxy.heal();
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1);
      assert.match(
        byCode(ds, 'field-conflict')[0]!.message,
        /\.spec\.replicas is managed by "kube-controller-manager"/,
      );
    } finally {
      await server.shutdown();
    }
  });
});

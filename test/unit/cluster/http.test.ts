// The product never changes a cluster: every write the transport sends carries dryRun=All, even
// when a caller's query tries to say otherwise, and reads carry the credentials from the kubeconfig.
// A server that offers HTTP/2 (kube-apiserver does, by ALPN) gets one connection for everything;
// one that speaks only HTTP/1.1 keeps the connection that asked.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClusterTransport } from '../../../server/src/cluster/http';
import { loadKubeconfig, selectLoadedContext } from '../../../server/src/cluster/kubeconfig';
import { requireCluster, type TestClusterInfo } from '../../support/env';

const seen: { method: string; url: URL; authorization?: string; contentType?: string; body: string }[] = [];
let server: http.Server;
let transport: ClusterTransport;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-transport-'));
  const file = path.join(dir, 'config');
  fs.writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: the-token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
  );
  const loaded = await loadKubeconfig(file);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.ok(loaded.ok);
  const selected = await selectLoadedContext(loaded.value, undefined);
  assert.ok(selected.ok);
  const config = selected.value.config;
  transport = new ClusterTransport(config, `http://127.0.0.1:${port}`, {
    requestTimeoutMs: 2_000,
    userAgent: 'kch-unit',
  });
});
after(() => {
  transport.dispose();
  server.close();
});

test('a write always goes out with dryRun=All, whatever the query says', async () => {
  for (const method of ['PATCH', 'POST'] as const) {
    const outcome = await transport.send({
      method,
      dryRun: 'All',
      path: '/api/v1/namespaces/default/configmaps/x',
      query: { dryRun: '', fieldManager: 'kubectl' },
      contentType: 'application/apply-patch+yaml',
      body: 'apiVersion: v1\nkind: ConfigMap\n',
    });
    assert.equal(outcome.kind, 'response');
    const request = seen.at(-1)!;
    assert.equal(request.method, method);
    assert.equal(request.url.searchParams.get('dryRun'), 'All');
    assert.deepEqual(request.url.searchParams.getAll('dryRun'), ['All']);
    assert.equal(request.url.searchParams.get('fieldManager'), 'kubectl');
    assert.equal(request.contentType, 'application/apply-patch+yaml');
    assert.equal(request.body, 'apiVersion: v1\nkind: ConfigMap\n');
  }
});

test('the kubeconfig credentials go with every request; the request count includes them all', async () => {
  const before = transport.requestsSent;
  await transport.send({ method: 'GET', path: '/api' });
  await transport.send({ method: 'GET', path: '/apis' });
  assert.equal(transport.requestsSent - before, 2);
  assert.ok(seen.slice(-2).every((r) => r.authorization === 'Bearer the-token' && r.method === 'GET'));
});

/** A TCP relay in front of `target` that counts the connections made through it (TLS passes untouched). */
async function countingRelay(
  target: string,
): Promise<{ url: string; connections: () => number; cut(): Promise<void>; close(): void }> {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    connections: () => connections,
    /** Drops every connection, as a server that restarts does; resolves once they are closed. */
    cut: async () => {
      const closing = [...sockets].map((s) => new Promise((resolve) => s.once('close', resolve)));
      for (const s of sockets) s.destroy();
      await Promise.all(closing);
    },
    close: () => {
      for (const s of sockets) s.destroy();
      relay.close();
    },
  };
}

/** A transport as the admin user of the test cluster's kubeconfig, to `server` instead of the cluster's URL. */
async function adminTransport(cluster: TestClusterInfo, server: string, dir: string): Promise<ClusterTransport> {
  const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = server;
  const file = path.join(dir, 'config');
  fs.writeFileSync(file, toYaml(config), { mode: 0o600 });
  const loaded = await loadKubeconfig(file);
  assert.ok(loaded.ok);
  const selected = await selectLoadedContext(loaded.value, 'admin');
  assert.ok(selected.ok);
  return new ClusterTransport(selected.value.config, server, { requestTimeoutMs: 5_000, userAgent: 'kch-unit' });
}

describe('one connection per server', () => {
  test('the API server is asked over HTTP/2: every request of a transport, reads at once and a dry-run write, on one connection', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-h2-'));
    const relay = await countingRelay(cluster.server);
    const transport = await adminTransport(cluster, relay.url, dir);
    try {
      // As a check starts: discovery, documents and reads all in flight together.
      const paths = ['/api', '/apis', '/version', '/openapi/v3', '/api/v1/namespaces/default', '/apis/apps/v1'];
      const reads = await Promise.all(
        [...paths, ...paths].map((p) => transport.send({ method: 'GET', path: p, accept: 'application/json' })),
      );
      for (const [i, outcome] of reads.entries()) {
        assert.equal(outcome.kind, 'response', JSON.stringify(outcome));
        assert.equal(outcome.kind === 'response' && outcome.status, 200, `${paths[i % paths.length]}`);
      }
      const version = reads[2]!;
      assert.ok(version.kind === 'response' && /"gitVersion"/.test(version.body));
      const write = await transport.send({
        method: 'POST',
        dryRun: 'All',
        path: '/api/v1/namespaces/default/configmaps',
        contentType: 'application/json',
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kch-h2-dry-run' } }),
      });
      assert.equal(write.kind === 'response' && write.status, 201, JSON.stringify(write));
      const missing = await transport.send({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps/kch-h2-dry-run',
      });
      assert.equal(missing.kind === 'response' && missing.status, 404, 'the dry-run write stored nothing');
      assert.equal(transport.requestsSent, 14);
      assert.equal(relay.connections(), 1, 'one TLS connection carried all 14 requests');
      // The server drops the connection (a restart): the next request opens another, and gets its answer.
      await relay.cut();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await transport.send({ method: 'GET', path: '/version' });
      assert.equal(again.kind === 'response' && again.status, 200, JSON.stringify(again));
      assert.equal(relay.connections(), 2);
    } finally {
      transport.dispose();
      relay.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a server that speaks only HTTP/1.1 keeps the keep-alive agent, which takes over the connection that asked', async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    // The cluster's own serving certificate names 127.0.0.1, and its CA is the kubeconfig's.
    const pki = path.join(path.dirname(cluster.kubeconfig), 'pki');
    const versions: string[] = [];
    let connections = 0;
    const h1 = https.createServer(
      { cert: fs.readFileSync(path.join(pki, 'server.crt')), key: fs.readFileSync(path.join(pki, 'server.key')) },
      (req, res) => {
        versions.push(req.httpVersion);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"kind":"APIVersions"}');
      },
    );
    h1.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => h1.listen(0, '127.0.0.1', resolve));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-h1-'));
    const transport = await adminTransport(cluster, `https://127.0.0.1:${(h1.address() as AddressInfo).port}`, dir);
    try {
      for (let i = 0; i < 3; i++) {
        const outcome = await transport.send({ method: 'GET', path: '/api' });
        assert.equal(outcome.kind === 'response' && outcome.status, 200, JSON.stringify(outcome));
      }
      assert.deepEqual(versions, ['1.1', '1.1', '1.1']);
      assert.equal(connections, 1, 'the connection that offered HTTP/2 carried the requests, kept alive');
    } finally {
      transport.dispose();
      h1.closeAllConnections();
      h1.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

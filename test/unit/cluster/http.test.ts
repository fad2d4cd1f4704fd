// The product never changes a cluster: every write the transport sends carries dryRun=All, even
// when a caller's query tries to say otherwise, and reads carry the credentials from the kubeconfig.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClusterTransport } from '../../../server/src/cluster/http';
import { loadKubeconfig, selectLoadedContext } from '../../../server/src/cluster/kubeconfig';

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

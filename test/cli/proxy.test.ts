// A cluster reached through a SOCKS5 proxy (the kubeconfig's `proxy-url`, as kubectl reads it): the
// check's requests go through the proxy and its findings are the same as without it. The bundle
// loads the proxy client only when a kubeconfig names one (scripts/bundle.mjs, lazy-when-rare),
// so this runs the bundled command line. The proxy here is a minimal SOCKS5 server (RFC 1928: no
// authentication, CONNECT) that records where it was asked to connect.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { requireCluster } from '../support/env';
import { configMap, connect, create, freshNamespace, objectOf } from '../support/seed';
import { runCli, scratchDir, writeFiles } from './cli-process';

interface Socks {
  port: number;
  /** host:port of every CONNECT asked for. */
  targets: string[];
  close(): Promise<void>;
}

function socksProxy(): Promise<Socks> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let stage: 'greeting' | 'request' = 'greeting';
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === 'greeting') {
        if (buffered.length < 2 || buffered.length < 2 + buffered[1]!) return;
        buffered = buffered.subarray(2 + buffered[1]!);
        client.write(Buffer.from([5, 0]));
        stage = 'request';
      }
      if (buffered.length < 5) return;
      const type = buffered[3];
      const addressLength = type === 1 ? 4 : type === 4 ? 16 : 1 + buffered[4]!;
      if (buffered.length < 4 + addressLength + 2) return;
      const address = buffered.subarray(4, 4 + addressLength);
      const host = type === 1 ? [...address].join('.') : type === 3 ? address.subarray(1).toString() : 'ipv6';
      const port = buffered.readUInt16BE(4 + addressLength);
      const rest = buffered.subarray(4 + addressLength + 2);
      client.off('data', onData);
      targets.push(`${host}:${port}`);
      const upstream = net.connect(port, host, () => {
        client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
    };
    client.on('data', onData);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        targets,
        close: () => {
          for (const s of sockets) s.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

const proxies: Socks[] = [];
after(() => Promise.all(proxies.map((p) => p.close())));

test('proxy-url socks5: the check goes through the proxy and finds what it finds without one', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'cli-proxy');
  objectOf(await create(admin, 'kubectl-create', configMap(namespace, 'through', { mode: 'fast' })), 'create through');
  const proxy = await socksProxy();
  proxies.push(proxy);

  const dir = scratchDir('proxy');
  const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  for (const entry of config.clusters) entry.cluster['proxy-url'] = `socks5://127.0.0.1:${proxy.port}`;
  const proxied = path.join(dir, 'kubeconfig');
  fs.writeFileSync(proxied, toYaml(config), { mode: 0o600 });
  writeFiles(dir, {
    'through.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: through\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
  });

  const args = (kubeconfig: string) => [
    'check',
    '--kubeconfig',
    kubeconfig,
    '--context',
    'admin',
    '--format',
    'json',
    path.join(dir, 'through.yaml'),
  ];
  const [direct, through] = [await runCli(args(cluster.kubeconfig)), await runCli(args(proxied))];
  assert.equal(through.status, 1, through.stderr);
  const findings = (stdout: string) =>
    (JSON.parse(stdout) as { findings: { code: string; message: string }[] }).findings.map(
      (f) => `${f.code}: ${f.message}`,
    );
  assert.deepEqual(findings(through.stdout), findings(direct.stdout));
  assert.ok(
    findings(through.stdout).some((f) => f.startsWith('field-conflict: .data.mode is managed by "kubectl-create"')),
    through.stdout,
  );
  const server = new URL(
    (config as unknown as { clusters: { cluster: { server: string } }[] }).clusters[0]!.cluster.server,
  );
  assert.ok(proxy.targets.length > 0, 'the proxy was asked for a connection');
  assert.deepEqual([...new Set(proxy.targets)], [`${server.hostname}:${server.port}`]);
});

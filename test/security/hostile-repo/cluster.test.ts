// A pull request is hostile input (issue 25), as the cluster layer meets it: a repository's
// kubeconfig, its editor configuration and the Secrets its manifests name. Each test is one item
// of the issue:
// - item 2: a server URL's userinfo (a password, a token as the user name) is never printed or
//   saved: not in the command line's five formats or its stderr, a snapshot, the editor's status,
//   its logs, or an error that names the server;
// - item 3: a client certificate or key that Node cannot load is a problem of the connection
//   (the status names it, the command line says it in one line), never an exception: not from
//   inside a request, nor from a proxy agent's event handler;
// - item 8: trust is a boolean or nothing: the standalone server given `clusterAccess: "false"`
//   (or null, or 0) contacts no cluster and runs no exec plugin;
// - item 10: no answer the product asks for about Secrets carries a value or the copy a
//   client-side `kubectl apply` keeps in the last-applied annotation, except the metadata-only
//   reads no request can do without, whose copy the transport drops before anything parses it.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { createClusterConnection } from '../../../server/src/cluster';
import { ClusterTransport } from '../../../server/src/cluster/http';
import { loadKubeconfig, selectLoadedContext } from '../../../server/src/cluster/kubeconfig';
import { metadataOnly } from '../../../server/src/cluster/live-objects';
import { runCli, scratchDir } from '../../cli/cli-process';
import { startStdioClient } from '../../editors/stdio-client';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { execKubeconfig } from '../../support/exec-kubeconfig';
import { startFaultProxy } from '../../support/fault-proxy';
import { holdingTheLoop, startTestServer } from '../../support/lsp-client';
import { recordCluster, type Exchange } from '../../support/recording-proxy';
import { clientSideApply, connect, freshNamespace, objectOf } from '../../support/seed';

const scratch = scratchDir('hostile-cluster');

/** A value nobody else could produce: its appearance anywhere is a leak. */
const planted = (label: string) => `${label}${crypto.randomBytes(12).toString('hex')}`;

interface KubeconfigFile {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: Record<string, unknown> }[];
  'current-context'?: string;
}

/** The test cluster's kubeconfig, changed by `edit`, written to `name` in the scratch folder. */
function kubeconfigLike(cluster: TestClusterInfo, name: string, edit: (config: KubeconfigFile) => void): string {
  const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as KubeconfigFile;
  edit(config);
  const file = path.join(scratch, name);
  fs.writeFileSync(file, toYaml(config), { mode: 0o600 });
  return file;
}

/** One more cluster entry like the test cluster's (its CA), at `server`, and a context using it as `user`. */
function addContext(
  config: KubeconfigFile,
  name: string,
  server: string,
  user = 'admin',
  extra: Record<string, unknown> = {},
): void {
  config.clusters.push({ name, cluster: { ...config.clusters[0]!.cluster, server, ...extra } });
  config.contexts.push({ name, context: { cluster: name, user, namespace: 'default' } });
}

const configMapYaml = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  key: value\n`;

function manifestFile(name: string, text: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, text);
  return file;
}

test('item 2: a password or token in the server URL is never printed or stored', { timeout: 300_000 }, async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const password = planted('pw');
  const token = planted('tok');
  const address = new URL(cluster.server).host;
  const shown = `https://${address}`;
  const kubeconfig = kubeconfigLike(cluster, 'userinfo.yaml', (config) => {
    // The admin user's own token authenticates; the userinfo is what a repository's kubeconfig adds.
    addContext(config, 'password', `https://alice:${password}@${address}`);
    addContext(config, 'token', `https://${token}@${address}`);
    addContext(config, 'down', `https://alice:${password}@127.0.0.1:1`);
  });
  const leaks = (text: string) => [password, token].filter((secret) => text.includes(secret));
  const manifest = manifestFile('userinfo-probe.yaml', configMapYaml('userinfo-probe'));

  await t.test('the command line: text, JSON, SARIF, GitHub and GitLab, and its one-line errors', async () => {
    const formats = ['text', 'json', 'sarif', 'github', 'gitlab'];
    const runs = await Promise.all(
      formats.flatMap((format) =>
        ['password', 'token', 'down'].map(async (context) => ({
          format,
          context,
          run: await runCli(['check', manifest, '--kubeconfig', kubeconfig, '--context', context, '--format', format]),
        })),
      ),
    );
    for (const { format, context, run } of runs) {
      const what = `${format}, context ${context}`;
      assert.deepEqual(leaks(run.stdout + run.stderr), [], `${what}: ${run.stdout}${run.stderr}`);
      if (context === 'down') {
        assert.equal(run.status, 2, `${what}: ${run.stderr}`);
        assert.equal(
          run.stderr,
          `kube-conflict-hints: cannot reach the cluster at https://127.0.0.1:1 (context down): connect ECONNREFUSED 127.0.0.1:1\n`,
        );
      } else {
        assert.ok(run.status === 0 || run.status === 1, `${what}: ${run.stderr}`);
        if (format === 'json')
          assert.deepEqual((JSON.parse(run.stdout) as { source: unknown }).source, {
            kind: 'cluster',
            context,
            server: shown,
          });
      }
    }
  });

  await t.test('a snapshot: saved without it, and an older one that holds it is not repeated', async () => {
    const out = path.join(scratch, 'userinfo-snapshot');
    const taken = await runCli([
      'snapshot',
      '--out',
      out,
      '--kubeconfig',
      kubeconfig,
      '--context',
      'password',
      manifest,
    ]);
    assert.equal(taken.status, 0, taken.stderr);
    assert.deepEqual(leaks(taken.stdout + taken.stderr), []);
    const index = path.join(out, 'snapshot.json');
    assert.equal((JSON.parse(fs.readFileSync(index, 'utf8')) as { server: string }).server, shown);
    for (const file of fs.readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile())) {
      assert.deepEqual(leaks(fs.readFileSync(path.join(file.parentPath, file.name), 'utf8')), [], file.name);
    }
    // As a snapshot saved by an earlier version (or planted in a repository) would have it.
    const saved = JSON.parse(fs.readFileSync(index, 'utf8')) as { server: string };
    fs.writeFileSync(index, JSON.stringify({ ...saved, server: `https://alice:${password}@${address}` }));
    const checked = await runCli(['check', manifest, '--snapshot', out, '--format', 'json']);
    assert.ok(checked.status === 0 || checked.status === 1, checked.stderr);
    assert.equal((JSON.parse(checked.stdout) as { source: { server: string } }).source.server, shown);
    assert.deepEqual(leaks(checked.stdout + checked.stderr), []);
  });

  await t.test('the editor: its status, the context picker, its logs', async () => {
    await holdingTheLoop(async () => {
      const server = await startTestServer({ settings: { kubeconfig, context: 'password' } });
      try {
        const uri = 'file:///w/userinfo-probe.yaml';
        await server.open(uri, configMapYaml('userinfo-probe'));
        await server.diagnostics(uri);
        const connected = (await server.waitForNotification(
          'kubeConflictHints/status',
          (p) => (p as { health: string }).health === 'connected',
        )) as { server?: string };
        assert.equal(connected.server, shown);
        const verified = await server.request('kubeConflictHints/verify', { uri });
        const contexts = (await server.request('kubeConflictHints/contexts', { uri })) as {
          contexts: { name: string; server?: string }[];
        };
        assert.deepEqual(
          contexts.contexts.filter((c) => ['password', 'token', 'down'].includes(c.name)).map((c) => c.server),
          [shown, shown, 'https://127.0.0.1:1'],
        );
        // The cluster that is down: the status says so, and names it as the picker does.
        server.setSettings({ kubeconfig, context: 'down' });
        await server.request('kubeConflictHints/refresh', { uri, connect: true });
        const down = (await server.waitForNotification(
          'kubeConflictHints/status',
          (p) => (p as { health: string }).health === 'unreachable',
        )) as { server?: string };
        assert.equal(down.server, 'https://127.0.0.1:1');
        assert.deepEqual(leaks(JSON.stringify([server.notifications, verified, contexts])), []);
      } finally {
        await server.shutdown();
      }
    });
  });

  await t.test('an error that names the server', async () => {
    const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    try {
      proxy.set({ kind: 'blackhole' });
      const proxied = new URL(proxy.server).host;
      const through = kubeconfigLike(cluster, 'userinfo-blackhole.yaml', (config) =>
        addContext(config, 'silent', `https://${token}@${proxied}`),
      );
      const connection = await createClusterConnection(
        { kubeconfig: through, context: 'silent' },
        { requestTimeoutMs: 300, probe: { initialBackoffMs: 60_000 } },
      );
      try {
        const health = await connection.checkHealth();
        assert.equal(health.state, 'unreachable');
        assert.match(
          health.problem?.message ?? '',
          new RegExp(`^no answer from https://${proxied.replace(/\./g, '\\.')} within`),
        );
        assert.deepEqual(leaks(JSON.stringify(health)), []);
      } finally {
        connection.dispose();
      }
    } finally {
      await proxy.close();
    }
  });
});

/** A minimal HTTP proxy that answers CONNECT (as `proxy-url: http://...` is used for an https server). */
async function connectProxy(): Promise<{ url: string; tunnels: () => number; close(): Promise<void> }> {
  let tunnels = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels++;
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    tunnels: () => tunnels,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test(
  'item 3: a malformed client certificate or key is a cluster problem, not a crash',
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const pki = path.join(path.dirname(cluster.kubeconfig), 'pki');
    const certificate = fs.readFileSync(path.join(pki, 'server.crt'), 'utf8');
    const otherKey = crypto
      .generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const proxy = await connectProxy();
    const cases = [
      {
        context: 'mismatch',
        cert: certificate,
        key: otherKey,
        says: /^The client certificate and key cannot be used: .*key values mismatch\.$/,
      },
      {
        context: 'garbled-key',
        cert: certificate,
        key: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n',
        says: /^The client key cannot be used: /,
      },
      // Whole lines of its base64, so that what is left decodes, and says it is longer.
      {
        context: 'truncated-certificate',
        cert: `${certificate.split('\n').slice(0, 6).join('\n')}\n-----END CERTIFICATE-----\n`,
        key: otherKey,
        says: /^The client certificate cannot be used: .*too long\.$/,
      },
      // Behind an HTTPS proxy the TLS connection is made in the proxy agent's event handler.
      {
        context: 'mismatch-via-proxy',
        cert: certificate,
        key: otherKey,
        says: /^The client certificate and key cannot be used: .*key values mismatch\.$/,
        proxy: proxy.url,
      },
    ];
    const kubeconfig = kubeconfigLike(cluster, 'client-material.yaml', (config) => {
      for (const c of cases) {
        config.users.push({
          name: c.context,
          user: { 'client-certificate-data': b64(c.cert), 'client-key-data': b64(c.key) },
        });
        addContext(config, c.context, cluster.server, c.context, c.proxy ? { 'proxy-url': c.proxy } : {});
      }
    });
    const manifest = manifestFile('client-material-probe.yaml', configMapYaml('client-material-probe'));
    try {
      await t.test('the command line: one line, exit 2, no stack trace', async () => {
        const runs = await Promise.all(
          cases.map(async (c) => ({
            c,
            run: await runCli(['check', manifest, '--kubeconfig', kubeconfig, '--context', c.context]),
          })),
        );
        for (const { c, run } of runs) {
          assert.equal(run.status, 2, `${c.context}: ${run.stderr}`);
          assert.equal(run.stderr.split('\n').length, 2, `${c.context}: one line: ${run.stderr}`);
          const prefix = `kube-conflict-hints: cannot authenticate to the cluster at ${cluster.server} (context ${c.context}): `;
          assert.ok(run.stderr.startsWith(prefix), `${c.context}: ${run.stderr}`);
          assert.match(run.stderr.slice(prefix.length).trim(), c.says);
        }
      });

      await t.test('the language server stays up, and its status names the problem', async () => {
        for (const c of cases) {
          const server = await startTestServer({ process: true, settings: { kubeconfig, context: c.context } });
          // A server that dies is told at once, not by a wait that runs out.
          const exited = new Promise<never>((_resolve, reject) =>
            server.child!.once('exit', (code, signal) =>
              reject(new Error(`${c.context}: the language server exited (${code ?? signal})`)),
            ),
          );
          exited.catch(() => {});
          try {
            const uri = `file:///w/${c.context}.yaml`;
            await server.open(uri, configMapYaml('client-material-probe'));
            await Promise.race([server.diagnostics(uri), exited]);
            const status = (await Promise.race([
              server.waitForNotification(
                'kubeConflictHints/status',
                (p) => (p as { health: string }).health === 'unauthenticated',
                30_000,
              ),
              exited,
            ])) as { detail: string };
            assert.match(status.detail, c.says);
            // Still answering, after every request the document started has failed.
            assert.ok(await server.hover(uri, { line: 3, character: 8 }));
            await server.request('kubeConflictHints/refresh', { uri, connect: true });
            await server.diagnostics(uri);
            assert.equal(server.child?.exitCode, null, `${c.context}: the server exited`);
          } finally {
            if (server.child?.exitCode === null && server.child.signalCode === null) await server.shutdown();
          }
        }
      });
      assert.equal(proxy.tunnels(), 0, 'nothing is sent through the proxy with material that cannot be used');
    } finally {
      await proxy.close();
    }
  },
);

test(
  'item 8: trust is a boolean or nothing: the standalone server given clusterAccess "false" contacts no cluster',
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const uri = pathToFileURL(path.join(scratch, 'trust-probe.yaml')).href;
    const pushOnly = { textDocument: { publishDiagnostics: { versionSupport: true } } };
    for (const clusterAccess of ['false', null, 0, 'true']) {
      // The kubeconfig from initializationOptions (a client that states no trust takes it only from there).
      const plugin = execKubeconfig(
        cluster.kubeconfig,
        scratch,
        `trust-${JSON.stringify(clusterAccess).replace(/\W/g, '')}`,
      );
      const client = await startStdioClient({
        capabilities: pushOnly,
        initializationOptions: { clusterAccess, kubeConflictHints: { kubeconfig: plugin.file } },
        env: { HOME: scratch },
      });
      try {
        const status = await client.waitFor((m) => m.method === 'kubeConflictHints/status');
        assert.deepEqual(
          status.params,
          {
            health: 'disabled',
            context: '',
            detail: "The editor's clusterAccess is neither true nor false: no cluster is contacted.",
          },
          JSON.stringify(clusterAccess),
        );
        await client.open(uri, configMapYaml('trust-probe'));
        assert.deepEqual(await client.publishedUntil(uri, () => true), []);
        await client.request('workspace/executeCommand', { command: 'kube-conflict-hints.refresh', arguments: [uri] });
      } finally {
        await client.close();
      }
      assert.deepEqual(plugin.runs(), [], `clusterAccess ${JSON.stringify(clusterAccess)}: the exec plugin ran`);
    }
    // The same client saying nothing of trust: the standalone server's user chose to run it.
    const plugin = execKubeconfig(cluster.kubeconfig, scratch, 'trust-unstated');
    const client = await startStdioClient({
      capabilities: pushOnly,
      initializationOptions: { kubeConflictHints: { kubeconfig: plugin.file } },
      env: { HOME: scratch },
    });
    try {
      await client.open(uri, configMapYaml('trust-probe'));
      await client.waitFor(
        (m) => m.method === 'kubeConflictHints/status' && (m.params as { health: string }).health === 'connected',
      );
    } finally {
      await client.close();
    }
    assert.ok(
      plugin.runs().length > 0,
      'the exec plugin did not run without clusterAccess: the cases above prove nothing',
    );
  },
);

test(
  'item 10: no answer about Secrets carries the last-applied copy of a value, but the metadata reads no request can avoid',
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'kch-hostile-secrets');
    const values = { data: planted('data'), stringData: planted('string'), frozen: planted('frozen') };
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const forbidden = Object.values(values).flatMap((v) => [v, b64(v)]);
    const leaks = (text: string) => forbidden.filter((v) => text.includes(v));
    // `kubectl apply` (client side): each value is in `data` and again in the last-applied annotation.
    objectOf(
      await clientSideApply(admin, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'applied', namespace },
        type: 'Opaque',
        data: { password: b64(values.data) },
        stringData: { 'api-key': values.stringData },
      }),
      'apply applied',
    );
    objectOf(
      await clientSideApply(admin, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'frozen', namespace },
        type: 'example.com/token',
        immutable: true,
        data: { token: b64(values.frozen) },
      }),
      'apply frozen',
    );

    // applied: a label added by a server-side apply, which the dry run accepts (its answer is the
    // would-be object); frozen: another type, which the server refuses.
    const manifestText =
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: applied\n  namespace: ${namespace}\n  labels:\n    team: payments\ntype: Opaque\n` +
      `---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: frozen\n  namespace: ${namespace}\ntype: Opaque\nimmutable: true\n`;
    const manifest = manifestFile('secrets.yaml', manifestText);

    const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(scratch, 'recorded.kubeconfig'));
    const secretExchanges = () => proxy.exchanges().filter((e) => /\/secrets([/?]|$)/.test(e.url));
    const answered = (e: Exchange) => e.status !== undefined;
    try {
      await t.test('the editor: judging, hovering and a dry run of each Secret', async () => {
        await holdingTheLoop(async () => {
          const server = await startTestServer({ settings: { kubeconfig } });
          try {
            const uri = 'file:///w/secrets.yaml';
            await server.open(uri, manifestText);
            // frozen's type is the live one: its Table was read (and its immutable probed).
            const judged = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'field-immutable'));
            assert.match(
              judged.find((d) => d.code === 'field-immutable')!.message,
              /type: Invalid value: "Opaque": field is immutable/,
            );
            const hover = await server.hover(uri, { line: 6, character: 4 });
            const verified = (await server.request('kubeConflictHints/verify', { uri })) as {
              agreed: number;
              differences: string[];
              failed: string[];
            };
            assert.deepEqual(verified.failed, []);
            assert.deepEqual(
              [verified.agreed, verified.differences],
              [2, []],
              'applied accepted, frozen refused, as predicted',
            );
            assert.deepEqual(leaks(JSON.stringify([judged, hover, verified, server.notifications])), []);
          } finally {
            await server.shutdown();
          }
        });
      });

      await t.test('the command line: a check with --verify, and a snapshot', async () => {
        const checked = await runCli(['check', manifest, '--kubeconfig', kubeconfig, '--verify', '--format', 'json']);
        assert.ok(checked.status === 0 || checked.status === 1, checked.stderr);
        assert.deepEqual(leaks(checked.stdout + checked.stderr), []);
        const out = path.join(scratch, 'secrets-snapshot');
        const taken = await runCli(['snapshot', '--out', out, '--kubeconfig', kubeconfig, manifest]);
        assert.equal(taken.status, 0, taken.stderr);
        const files = fs.readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
        assert.ok(
          files.some((f) => f.name.includes('frozen')),
          `the Secrets are saved: ${files.map((f) => f.name).join(', ')}`,
        );
        for (const file of files)
          assert.deepEqual(leaks(fs.readFileSync(path.join(file.parentPath, file.name), 'utf8')), [], file.name);
      });

      await t.test(
        'the transport: the copy a metadata read must carry is dropped before anything parses it',
        async () => {
          const loaded = await loadKubeconfig(kubeconfig);
          assert.ok(loaded.ok);
          const selected = await selectLoadedContext(loaded.value, undefined);
          assert.ok(selected.ok);
          const transport = new ClusterTransport(selected.value.config, selected.value.server, {
            requestTimeoutMs: 15_000,
            userAgent: 'kch-hostile-secrets',
          });
          try {
            const answer = await transport.send({
              method: 'GET',
              path: `/api/v1/namespaces/${namespace}/secrets`,
              accept: metadataOnly.list,
            });
            assert.ok(answer.kind === 'response' && answer.status === 200, JSON.stringify(answer));
            const onTheWire = proxy.exchanges().find((e) => e.userAgent === 'kch-hostile-secrets')!;
            assert.notDeepEqual(
              leaks(onTheWire.body),
              [],
              'the API server sends the annotation with the metadata: no read leaves it out',
            );
            assert.deepEqual(leaks(answer.body), []);
            // What the annotation says of the fields stays: kubectl's forgiveness rule reads it.
            const items = (
              JSON.parse(answer.body) as {
                items: { metadata: { name: string; annotations: Record<string, string> } }[];
              }
            ).items;
            const lastApplied = JSON.parse(
              items.find((i) => i.metadata.name === 'applied')!.metadata.annotations[
                'kubectl.kubernetes.io/last-applied-configuration'
              ]!,
            ) as Record<string, unknown>;
            assert.deepEqual(lastApplied, {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'applied', namespace },
              type: 'Opaque',
            });
          } finally {
            transport.dispose();
          }
        },
      );
    } finally {
      await proxy.stop();
    }

    const exchanges = secretExchanges().filter(answered);
    const tables = exchanges.filter((e) => e.accept === 'application/json;as=Table;g=meta.k8s.io;v=v1');
    assert.ok(
      tables.some((e) => e.method === 'GET'),
      "a Secret's type is read from a Table",
    );
    assert.ok(
      tables.some((e) => e.method === 'PATCH' && e.url.includes('/secrets/frozen?')),
      "frozen's immutable is probed",
    );
    assert.ok(
      tables.some((e) => e.method === 'PATCH' && e.url.includes('/secrets/applied?') && e.status === 200),
      "applied's dry run is answered",
    );
    // Every Table is one without the object; every other answer is metadata only.
    assert.deepEqual(
      tables.filter((e) => !/[?&]includeObject=None(&|$)/.test(e.url)).map((e) => `${e.method} ${e.url}`),
      [],
    );
    const metadataReads = exchanges.filter(
      (e) => e.method === 'GET' && (e.accept === metadataOnly.object || e.accept === metadataOnly.list),
    );
    assert.deepEqual(
      exchanges
        .filter((e) => !tables.includes(e) && !metadataReads.includes(e))
        .map((e) => `${e.method} ${e.url} Accept: ${e.accept}`),
      [],
    );
    // No answer but those metadata reads holds a byte of a value.
    assert.deepEqual(
      exchanges
        .filter((e) => !metadataReads.includes(e) && leaks(e.body).length > 0)
        .map((e) => `${e.method} ${e.url}`),
      [],
    );
  },
);

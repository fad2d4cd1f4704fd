// Credentials stay where they belong. A token planted in a kubeconfig, in an exec plugin's output or
// echoed back by a broken server never reaches what a user (or a CI log) sees: the status bar's
// words, hovers, the language server's log, the command line's stderr. And an exec plugin runs once
// per kubeconfig user, not once per request. Hovers say why the cluster would not answer.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { createClusterConnection, readKubeconfig, type ClusterConnection } from '../../server/src/cluster';
import { runCli } from '../cli/cli-process';
import { testCluster, type TestClusterInfo } from '../support/env';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { holdingTheLoop, startTestServer, type TestServer } from '../support/lsp-client';
import { connect } from '../support/seed';

const skip = !testCluster() && process.env.CI !== 'true' ? 'no local kube-apiserver' : false;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-credentials-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A credential-looking value nobody else could produce: its appearance anywhere is a leak. */
const planted = () => `kch${crypto.randomBytes(24).toString('base64url')}`;

/** A kubeconfig beside the test cluster's, with one more user (an exec plugin) and a context `plugin`. */
function withExecUser(cluster: TestClusterInfo, name: string, script: string, args: string[] = []): string {
  const file = path.join(scratch, `${name}.mjs`);
  fs.writeFileSync(file, script);
  const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as { users: object[]; contexts: object[] };
  config.users.push({
    name: `${name}-user`,
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [file, ...args],
        interactiveMode: 'Never',
      },
    },
  });
  config.contexts.push({
    name: 'plugin',
    context: { cluster: 'kch-test', user: `${name}-user`, namespace: 'default' },
  });
  const out = path.join(scratch, `${name}-kubeconfig.yaml`);
  fs.writeFileSync(out, toYaml(config), { mode: 0o600 });
  return out;
}

const credential = (token: string, expirationTimestamp?: string) =>
  JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token, ...(expirationTimestamp ? { expirationTimestamp } : {}) },
  });

/** Plugin script: counts its runs in argv[2], prints the credential that argv[3 + run] names (the last one repeats). */
const countingPlugin = `import * as fs from 'node:fs';
const [counter, ...outputs] = process.argv.slice(2);
fs.appendFileSync(counter, '.');
const run = fs.readFileSync(counter, 'utf8').length;
process.stdout.write(outputs[Math.min(run, outputs.length) - 1]);
`;

const runs = (counter: string) => (fs.existsSync(counter) ? fs.readFileSync(counter, 'utf8').length : 0);

const configMapYaml =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak-probe\n  namespace: default\ndata:\n  key: value\n';

/** Everything the user could see from the language server: every notification (status, logs) and a hover. */
function editorSurfaces(
  kubeconfig: string,
  context: string,
  until: (health: string) => boolean,
): Promise<{ text: string; server: TestServer }> {
  return holdingTheLoop(() => editorSurfacesNow(kubeconfig, context, until));
}

async function editorSurfacesNow(
  kubeconfig: string,
  context: string,
  until: (health: string) => boolean,
): Promise<{ text: string; server: TestServer }> {
  const server = await startTestServer({ settings: { kubeconfig, context } });
  const uri = 'file:///w/leak-probe.yaml';
  await server.open(uri, configMapYaml);
  await server.diagnostics(uri);
  await server.waitForNotification('kubeConflictHints/status', (p) => until((p as { health: string }).health));
  // A hover on a field and on the name, once the answer is in.
  const field = await server.hover(uri, { line: 6, character: 3 });
  const object = await server.hover(uri, { line: 3, character: 4 });
  return { text: JSON.stringify([server.notifications, field, object]), server };
}

describe('credentials never reach the user', { skip }, () => {
  let cluster: TestClusterInfo;
  const open: ClusterConnection[] = [];
  before(() => {
    cluster = testCluster()!;
    if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
  });
  after(() => open.forEach((c) => c.dispose()));

  const cases = [
    {
      name: 'an exec plugin that prints its token where JSON was expected',
      script: (secret: string) => `process.stdout.write(${JSON.stringify(secret)} + ' is the token');\n`,
      says: /did not print an ExecCredential/,
    },
    {
      name: 'an exec plugin that fails and repeats the token on stderr',
      script: (secret: string) =>
        `process.stderr.write('refresh failed for token=' + ${JSON.stringify(secret)} + '\\nAuthorization: Bearer ' + ${JSON.stringify(secret)} + '\\n');\nprocess.exit(1);\n`,
      says: /failed: refresh failed for token=\[redacted\]/,
    },
  ];

  for (const row of cases) {
    test(`${row.name}: not in the status, hovers, logs or the command line's stderr`, async () => {
      const secret = planted();
      const kubeconfig = withExecUser(cluster, `leak-${cases.indexOf(row)}`, row.script(secret));
      const c = await createClusterConnection({ kubeconfig, context: 'plugin' });
      open.push(c);
      const health = await c.checkHealth();
      assert.equal(health.state, 'unauthenticated');
      assert.match(health.problem?.message ?? '', row.says);
      assert.ok(!JSON.stringify(health).includes(secret), JSON.stringify(health));

      const { text, server } = await editorSurfaces(kubeconfig, 'plugin', (h) => h === 'unauthenticated');
      await server.shutdown();
      assert.match(text, row.says, 'the status says what went wrong');
      assert.ok(!text.includes(secret), text);

      const manifest = path.join(scratch, 'leak-probe.yaml');
      fs.writeFileSync(manifest, configMapYaml);
      const cli = await runCli(['check', manifest, '--kubeconfig', kubeconfig, '--context', 'plugin']);
      assert.equal(cli.status, 2, cli.stderr);
      assert.match(cli.stderr, row.says);
      assert.ok(!cli.stderr.includes(secret) && !cli.stdout.includes(secret), cli.stderr);
    });
  }

  test('a server error page that echoes the Authorization header: the token is not repeated', async () => {
    const proxy: FaultProxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
    try {
      proxy.set({
        kind: 'status',
        status: 502,
        body: (req) => `bad gateway; request headers: authorization: ${req.headers.authorization}\n`,
      });
      const kubeconfig = proxy.kubeconfig(cluster.kubeconfig, path.join(scratch, 'echo.yaml'));
      const token = connect('admin', cluster.kubeconfig).token;
      const c = await createClusterConnection({ kubeconfig, context: 'admin' });
      open.push(c);
      const health = await c.checkHealth();
      assert.equal(health.state, 'failing');
      assert.match(health.problem?.message ?? '', /HTTP 502/);
      assert.ok(!JSON.stringify(health).includes(token), JSON.stringify(health));

      const { text, server } = await editorSurfaces(kubeconfig, 'admin', (h) => h === 'failing');
      await server.shutdown();
      assert.ok(!text.includes(token), text);

      const manifest = path.join(scratch, 'echo-probe.yaml');
      fs.writeFileSync(manifest, configMapYaml);
      const cli = await runCli(['check', manifest, '--kubeconfig', kubeconfig, '--context', 'admin']);
      assert.equal(cli.status, 2, cli.stderr);
      assert.ok(!cli.stderr.includes(token), cli.stderr);
    } finally {
      await proxy.close();
    }
  });

  test('a kubeconfig that does not parse: its error quotes the lines around, not the token on them', async () => {
    const secret = planted();
    const file = path.join(scratch, 'broken.yaml');
    fs.writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${cluster.server}"}\nusers:\n- name: u\n  user:\n    token: ${secret}\n     client-key-data: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
    );
    const read = await readKubeconfig({ kubeconfig: file });
    assert.ok(!read.ok);
    assert.match(read.problem.message, /bad indentation/);
    assert.ok(!read.problem.message.includes(secret), read.problem.message);
    const c = await createClusterConnection({ kubeconfig: file });
    open.push(c);
    assert.ok(!JSON.stringify(c.health()).includes(secret));
    const { text, server } = await editorSurfaces(file, '', (h) => h === 'unreachable');
    await server.shutdown();
    assert.ok(!text.includes(secret), text);
    const manifest = path.join(scratch, 'broken-probe.yaml');
    fs.writeFileSync(manifest, configMapYaml);
    const cli = await runCli(['check', manifest, '--kubeconfig', file]);
    assert.equal(cli.status, 2);
    assert.match(cli.stderr, /bad indentation/);
    assert.ok(!cli.stderr.includes(secret), cli.stderr);
  });
});

describe('exec credential plugins', { skip }, () => {
  let cluster: TestClusterInfo;
  const open: ClusterConnection[] = [];
  before(() => {
    cluster = testCluster()!;
    if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
  });
  after(() => open.forEach((c) => c.dispose()));

  test('a credential without expiry is kept: many requests, one run of the plugin', async () => {
    const counter = path.join(scratch, 'kept.count');
    const token = connect('admin', cluster.kubeconfig).token;
    const kubeconfig = withExecUser(cluster, 'kept', countingPlugin, [counter, credential(token)]);
    const c = await createClusterConnection({ kubeconfig, context: 'plugin' });
    open.push(c);
    // Requests at once (discovery and the OpenAPI index race) and one after another.
    const [discovery, schema] = await Promise.all([c.discovery(), c.openApiDocument('apps/v1'), c.checkHealth()]);
    assert.ok(discovery.ok && schema.ok);
    assert.equal((await c.getObject({ apiVersion: 'v1', kind: 'ConfigMap', name: 'anything' })).state, 'absent');
    assert.equal((await c.checkHealth()).state, 'connected');
    assert.ok(c.requestsSent() >= 7, `${c.requestsSent()} requests`);
    assert.equal(runs(counter), 1);
  });

  test('a kept credential the server refuses (401) is renewed by running the plugin again', async () => {
    const counter = path.join(scratch, 'renewed.count');
    const token = connect('admin', cluster.kubeconfig).token;
    const kubeconfig = withExecUser(cluster, 'renewed', countingPlugin, [
      counter,
      credential('revoked-token-of-yesterday'),
      credential(token),
    ]);
    const c = await createClusterConnection({ kubeconfig, context: 'plugin' });
    open.push(c);
    const health = await c.checkHealth();
    assert.equal(health.state, 'connected', JSON.stringify(health));
    assert.equal(runs(counter), 2);
    await c.checkHealth();
    assert.equal(runs(counter), 2);
  });

  test('a credential with an expiry is run again once it expired', async () => {
    const counter = path.join(scratch, 'expiring.count');
    const token = connect('admin', cluster.kubeconfig).token;
    const expired = new Date(Date.now() - 60_000).toISOString();
    const kubeconfig = withExecUser(cluster, 'expiring', countingPlugin, [counter, credential(token, expired)]);
    const c = await createClusterConnection({ kubeconfig, context: 'plugin' });
    open.push(c);
    await c.checkHealth();
    await c.checkHealth();
    assert.equal(runs(counter), 2, 'an expired credential is not kept');
  });
});

describe('hovers say why the cluster does not answer', { skip }, () => {
  let cluster: TestClusterInfo;
  before(() => {
    cluster = testCluster()!;
    if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
  });

  const rows = [
    {
      name: '403: the user may not read',
      context: 'stranger',
      health: 'forbidden',
      hover: /forbidden: User "stranger" cannot (get|list) resource "configmaps"/,
    },
    {
      name: '401: the credentials are refused',
      context: 'bad-token',
      health: 'unauthenticated',
      hover: /the cluster refused the credentials/i,
    },
  ];
  for (const row of rows) {
    test(row.name, () =>
      holdingTheLoop(async () => {
        let kubeconfig = cluster.kubeconfig;
        if (row.context === 'bad-token') {
          const config = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as {
            users: { name: string; user: object }[];
            contexts: object[];
          };
          config.users.push({ name: 'bad-token', user: { token: 'not-a-valid-token' } });
          config.contexts.push({
            name: 'bad-token',
            context: { cluster: 'kch-test', user: 'bad-token', namespace: 'default' },
          });
          kubeconfig = path.join(scratch, 'bad-token.yaml');
          fs.writeFileSync(kubeconfig, toYaml(config));
        }
        const server = await startTestServer({ settings: { kubeconfig, context: row.context } });
        try {
          const uri = 'file:///w/denied.yaml';
          await server.open(uri, configMapYaml);
          await server.diagnostics(uri);
          await server.waitForNotification(
            'kubeConflictHints/status',
            (p) => (p as { health: string }).health === row.health,
          );
          let hover = '';
          // The hover follows the facts; the status can be a moment ahead of them: ask again after
          // each time the server says its answers changed.
          const deadline = Date.now() + 30_000;
          for (;;) {
            const refreshed = server.waitForRefresh(5_000).catch(() => undefined);
            hover =
              ((await server.hover(uri, { line: 6, character: 3 }))?.contents as { value?: string } | undefined)
                ?.value ?? '';
            if (row.hover.test(hover) || Date.now() > deadline) break;
            await refreshed;
          }
          assert.match(hover, row.hover);
          assert.doesNotMatch(hover, /no answer from the cluster yet/);
        } finally {
          await server.shutdown();
        }
      }),
    );
  }
});

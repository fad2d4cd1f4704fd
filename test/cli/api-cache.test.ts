// Nothing learned twice: `check` keeps discovery and the OpenAPI documents it read on disk
// (server/src/cluster/api-cache.ts), and the next process asks the real API server only whether
// discovery is still so (If-None-Match, answered 304) and reads the documents it holds without a
// request. Every request is seen through the recording proxy; the findings must not change, a CRD
// installed in between must still be seen, and a cache that is odd in any way is not believed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { requireCluster, testCluster, type TestClusterInfo } from '../support/env';
import { recordCluster, type Exchange, type RecordingProxy } from '../support/recording-proxy';
import { apply, configMap, connect, deleteObject, freshNamespace, objectOf, type KubeObject } from '../support/seed';
import { waitForOpenApi } from '../support/seed-crd';
import { runCli, scratchDir, writeFiles, type CliRun } from './cli-process';

const skip = !testCluster() && process.env.CI !== 'true' && 'no local kube-apiserver: run through npm test';

describe('the disk cache of discovery and OpenAPI between check processes', { skip }, () => {
  let cluster: TestClusterInfo;
  let proxy: RecordingProxy;
  let kubeconfig: string;
  let token: string;
  let namespace: string;
  const dir = scratchDir('api-cache');
  const crds: KubeObject[] = [];

  before(async () => {
    cluster = testCluster()!;
    const admin = connect('admin', cluster.kubeconfig);
    namespace = await freshNamespace(admin, 'api-cache');
    // Someone else owns the key the manifest changes: a conflict to find on every run.
    objectOf(await apply(admin, 'someone-else', configMap(namespace, 'settings', { color: 'red' })), 'seed');
    ({ proxy, kubeconfig, token } = await recordCluster(cluster, 'admin', path.join(dir, 'kubeconfig.json')));
    writeFiles(dir, {
      'settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  color: blue\n`,
    });
  });
  after(async () => {
    const admin = connect('admin', cluster.kubeconfig);
    for (const crd of crds) await deleteObject(admin, crd);
    await deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await proxy?.stop();
  });

  /** One `check` process with its own cache home; what it printed and the requests it made. */
  async function check(cacheHome: string, file = 'settings.yaml'): Promise<{ run: CliRun; sent: Exchange[] }> {
    const from = proxy.exchanges().length;
    const run = await runCli(['check', '--kubeconfig', kubeconfig, '--format', 'json', file], {
      cwd: dir,
      env: { XDG_CACHE_HOME: cacheHome },
    });
    assert.equal(run.status, 1, run.stderr); // the conflict
    return { run, sent: proxy.exchanges().slice(from) };
  }
  const documentsFetched = (sent: Exchange[]) => sent.filter((e) => /^\/openapi\/v3\/.+\?hash=/.test(e.url));
  const discoveryOf = (sent: Exchange[]) => sent.filter((e) => e.url === '/api' || e.url === '/apis');
  const codes = (run: CliRun) =>
    (JSON.parse(run.stdout) as { findings: { code: string; path?: string }[] }).findings.map(
      (f) => `${f.code} ${f.path ?? ''}`,
    );
  const cacheFiles = (cacheHome: string): string[] => {
    const root = path.join(cacheHome, 'kube-conflict-hints', 'api-cache');
    return fs.existsSync(root)
      ? fs.readdirSync(root).flatMap((d) => fs.readdirSync(path.join(root, d)).map((f) => path.join(root, d, f)))
      : [];
  };

  test('a second check asks only whether discovery changed, reads no document, and finds the same', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'second');
    const first = await check(home);
    assert.ok(documentsFetched(first.sent).length > 0, 'the first check reads the documents');
    assert.ok(
      discoveryOf(first.sent).every((e) => e.ifNoneMatch === '' && e.status === 200 && e.etag !== ''),
      JSON.stringify(discoveryOf(first.sent)),
    );
    assert.ok(cacheFiles(home).length >= 2, 'the first check fills the cache');

    const second = await check(home);
    assert.deepEqual(codes(second.run), codes(first.run));
    assert.ok(codes(first.run).includes('field-conflict .data.color'));
    assert.equal(second.run.stdout, first.run.stdout);
    assert.deepEqual(documentsFetched(second.sent), [], 'no OpenAPI document is fetched again');
    // Discovery is asked with the ETags the first answers carried, and answered 304 unless it
    // changed in between (another test may install a CRD): then the server's ETag is another one.
    const asked = discoveryOf(second.sent);
    assert.equal(asked.length, 2);
    for (const e of asked) {
      const before = discoveryOf(first.sent).find((f) => f.url === e.url)!;
      assert.equal(e.ifNoneMatch, before.etag, e.url);
      if (e.url === '/api') assert.equal(e.status, 304);
      else assert.ok(e.status === 304 || (e.status === 200 && e.etag !== before.etag), `${e.url}: ${e.status}`);
    }
    // The index has no validator: it is read in every process, and that is all of OpenAPI's share.
    assert.deepEqual(
      second.sent.filter((e) => e.url.startsWith('/openapi/')).map((e) => e.url),
      ['/openapi/v3'],
    );
  });

  test('nothing kept holds the kubeconfig token, the server URL or an object', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'secrets');
    await check(home);
    const files = cacheFiles(home);
    assert.ok(files.length >= 2);
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(!text.includes(token), `${file} holds the token`);
      assert.ok(!text.includes(proxy.server.replace('http://', '')), `${file} holds the server's address`);
      assert.ok(!text.includes(namespace), `${file} holds a name from the cluster's objects`);
      if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600, file);
    }
  });

  test('a CRD installed between two checks is seen: discovery answers anew and its document is read', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'crd');
    await check(home);
    const admin = connect('admin', cluster.kubeconfig);
    // A group of this run's own, named apart from the namespace (the cache must hold no object's name).
    const group = `g${Math.random().toString(36).slice(2, 8)}.cache.kch.example.com`;
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `gadgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { color: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    };
    crds.push(crd);
    objectOf(await apply(admin, 'kch-test-setup', crd, { force: true }), 'install the CRD');
    await waitForOpenApi(admin, [`apis/${group}/v1`]);
    const gadget: KubeObject = {
      apiVersion: `${group}/v1`,
      kind: 'Gadget',
      metadata: { name: 'g', namespace },
      spec: { color: 'red' },
    };
    // Served a moment after it is published; a connection of its own learns of the new kind.
    for (let tries = 0; ; tries++) {
      const written = await apply(connect('admin', cluster.kubeconfig), 'someone-else', gadget).catch(() => undefined);
      if (written?.ok) break;
      if (tries > 100) throw new Error(`the Gadget cannot be applied: ${JSON.stringify(written)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    writeFiles(dir, {
      'gadget.yaml': `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: ${namespace}\nspec:\n  color: blue\n`,
    });

    const after = await check(home, 'gadget.yaml');
    assert.deepEqual(
      codes(after.run).filter((c) => c.startsWith('field-conflict')),
      ['field-conflict .spec.color'],
    );
    const apis = discoveryOf(after.sent).find((e) => e.url === '/apis')!;
    assert.notEqual(apis.ifNoneMatch, '');
    assert.equal(apis.status, 200, 'the ETag the first check kept is no longer the server’s');
    assert.deepEqual(
      documentsFetched(after.sent).map((e) => e.url.split('?')[0]),
      [`/openapi/v3/apis/${group}/v1`],
    );
  });

  test('a corrupted file, a file of another server under this one’s name, a group-writable directory: each ignored', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'odd');
    const good = await check(home);
    const files = cacheFiles(home);
    const serverDir = path.dirname(files[0]!);
    const saved = new Map(files.map((f) => [f, fs.readFileSync(f)]));
    const restore = () => {
      fs.chmodSync(serverDir, 0o700);
      for (const [f, data] of saved) fs.writeFileSync(f, data, { mode: 0o600 });
    };
    const cases: [string, () => void][] = [
      ['corrupted', () => files.forEach((f) => fs.writeFileSync(f, '{"format":1,"server":', { mode: 0o600 }))],
      [
        'another server’s',
        () =>
          files.forEach((f) =>
            fs.writeFileSync(
              f,
              fs.readFileSync(f, 'utf8').replace(/"server":"[0-9a-f]+"/, `"server":"${'0'.repeat(64)}"`),
              {
                mode: 0o600,
              },
            ),
          ),
      ],
      ['group-writable directory', () => fs.chmodSync(serverDir, 0o770)],
    ];
    for (const [name, spoil] of cases) {
      restore();
      spoil();
      const run = await check(home);
      assert.equal(run.run.stdout, good.run.stdout, name);
      // Not believed: discovery asked without a validator, every document fetched again.
      assert.ok(
        discoveryOf(run.sent).every((e) => e.ifNoneMatch === '' && e.status === 200),
        `${name}: ${JSON.stringify(discoveryOf(run.sent))}`,
      );
      assert.deepEqual(
        documentsFetched(run.sent).map((e) => e.url),
        documentsFetched(good.sent).map((e) => e.url),
        name,
      );
    }
    restore();
  });

  test('a kept document is its compact form, and one changed on disk is fetched again with the same findings', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'changed');
    const good = await check(home);
    const documents = cacheFiles(home).filter((f) => path.basename(f).startsWith('openapi-'));
    assert.ok(documents.length > 0);
    // What the judgements read, no more: api/v1 is 1.45 MB as served, its words and paths left out.
    for (const f of documents) {
      const text = fs.readFileSync(f, 'utf8');
      assert.ok(!text.includes('"description"') && !text.includes('"paths"'), f);
      assert.ok(fs.statSync(f).size < 400_000, `${f}: ${fs.statSync(f).size} bytes`);
    }
    // Still JSON, and the kind's own type is another: not what was written, so not believed.
    for (const f of documents)
      fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/"type":"string"/, '"type":"integer"'));
    const run = await check(home);
    assert.equal(run.run.stdout, good.run.stdout);
    assert.deepEqual(
      documentsFetched(run.sent).map((e) => e.url),
      documentsFetched(good.sent).map((e) => e.url),
    );
    // Written again, believed again.
    const third = await check(home);
    assert.equal(third.run.stdout, good.run.stdout);
    assert.deepEqual(documentsFetched(third.sent), []);
  });

  test('KCH_API_CACHE=off keeps nothing', async (t) => {
    if (!requireCluster(t)) return;
    const home = path.join(dir, 'off');
    const from = proxy.exchanges().length;
    const run = await runCli(['check', '--kubeconfig', kubeconfig, 'settings.yaml'], {
      cwd: dir,
      env: { XDG_CACHE_HOME: home, KCH_API_CACHE: 'off' },
    });
    assert.equal(run.status, 1, run.stderr);
    assert.deepEqual(cacheFiles(home), []);
    assert.ok(
      proxy
        .exchanges()
        .slice(from)
        .every((e) => e.ifNoneMatch === ''),
    );
  });
});

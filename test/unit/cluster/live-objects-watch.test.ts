// The cache's resilience, which a healthy real server rarely shows: a watch connection that drops,
// a resourceVersion that expired (410), a server that goes away and comes back, a user who may get
// but not list. A small HTTP server plays only the list/watch protocol (no Server-Side Apply).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClusterConnection, type ClusterConnection, type LiveObjectChange } from '../../../server/src/cluster';
import { nextChange } from '../../support/live-objects';

interface FakeApi {
  port: number;
  objects: Map<string, { name: string; rv: number; value: string }>;
  rv: number;
  requests: string[];
  watchers: Set<http.ServerResponse>;
  /** The name each watch selects (fieldSelector=metadata.name=NAME), as the real server keeps them apart. */
  watchedNames: WeakMap<http.ServerResponse, string>;
  listForbidden: boolean;
  /** The next watch that would tell about `app` answers an ERROR 410 event (expired resourceVersion). */
  expireNextWatch: boolean;
  /** The next watch that would tell about `app` is refused with 504 "Too large resource version" (a restored etcd). */
  refuseNextWatch: boolean;
  server: http.Server;
}

function configMap(o: { name: string; rv: number; value: string }): object {
  return { metadata: { name: o.name, namespace: 'default', resourceVersion: String(o.rv) }, data: { value: o.value } };
}

const discovery = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  items: [
    {
      metadata: { name: '' },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'configmaps',
              responseKind: { kind: 'ConfigMap' },
              scope: 'Namespaced',
              verbs: ['get', 'list', 'watch'],
            },
          ],
        },
      ],
    },
  ],
};

function startFake(port = 0): Promise<FakeApi> {
  const api: FakeApi = {
    port: 0,
    objects: new Map(),
    rv: 10,
    requests: [],
    watchers: new Set(),
    watchedNames: new WeakMap(),
    listForbidden: false,
    expireNextWatch: false,
    refuseNextWatch: false,
    server: undefined as never,
  };
  api.server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    api.requests.push(`${req.method} ${url.pathname}${url.searchParams.get('watch') ? '?watch' : ''}`);
    const json = (status: number, body: object): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/api' || url.pathname === '/apis')
      return json(200, url.pathname === '/api' ? discovery : { ...discovery, items: [] });
    const collection = '/api/v1/namespaces/default/configmaps';
    const selected = /^metadata\.name=(.*)$/.exec(url.searchParams.get('fieldSelector') ?? '')?.[1];
    if (url.pathname === collection && url.searchParams.get('watch')) {
      if (api.listForbidden)
        return json(403, {
          kind: 'Status',
          code: 403,
          reason: 'Forbidden',
          message:
            'configmaps is forbidden: User "u" cannot watch resource "configmaps" in API group "" in the namespace "default"',
        });
      const aboutApp = selected === undefined || selected === 'app';
      if (api.refuseNextWatch && aboutApp) {
        api.refuseNextWatch = false;
        return json(504, {
          kind: 'Status',
          code: 504,
          reason: 'Timeout',
          message: 'Timeout: Too large resource version: 99, current: 12',
          details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
        });
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (api.expireNextWatch && aboutApp) {
        api.expireNextWatch = false;
        res.end(
          JSON.stringify({
            type: 'ERROR',
            object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
          }) + '\n',
        );
        return;
      }
      api.watchers.add(res);
      if (selected !== undefined) api.watchedNames.set(res, selected);
      res.on('close', () => api.watchers.delete(res));
      return;
    }
    if (url.pathname === collection) {
      if (api.listForbidden)
        return json(403, {
          kind: 'Status',
          code: 403,
          reason: 'Forbidden',
          message:
            'configmaps is forbidden: User "u" cannot list resource "configmaps" in API group "" in the namespace "default"',
        });
      return json(200, {
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(api.rv) },
        items: [...api.objects.values()].filter((o) => selected === undefined || o.name === selected).map(configMap),
      });
    }
    if (url.pathname.startsWith(collection + '/')) {
      const found = api.objects.get(url.pathname.slice(collection.length + 1));
      return found
        ? json(200, { apiVersion: 'v1', kind: 'ConfigMap', ...configMap(found) })
        : json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' });
    }
    json(404, { kind: 'Status', code: 404, message: 'no such path' });
  });
  return new Promise((resolve) =>
    api.server.listen(port, '127.0.0.1', () => {
      api.port = (api.server.address() as AddressInfo).port;
      resolve(api);
    }),
  );
}

/** Drop every open watch connection and wait until the cache has opened a new one. */
async function dropWatches(api: FakeApi): Promise<void> {
  const old = new Set(api.watchers);
  for (const watcher of old) {
    watcher.destroy();
    api.watchers.delete(watcher);
  }
}

/** How many open watches would tell about `name`: its own, and any of the whole collection. */
function watching(api: FakeApi, name: string): number {
  return [...api.watchers].filter((w) => (api.watchedNames.get(w) ?? name) === name).length;
}

async function newWatch(api: FakeApi, since: number): Promise<void> {
  await waitUntil(() => watching(api, 'app') === 1 && api.requests.slice(since).some((r) => r.endsWith('?watch')));
}

/** Change an object and tell every open watch. */
function modify(api: FakeApi, name: string, value: string): void {
  api.rv++;
  const object = { name, rv: api.rv, value };
  const type = api.objects.has(name) ? 'MODIFIED' : 'ADDED';
  api.objects.set(name, object);
  for (const watcher of api.watchers)
    if (!watcher.destroyed && (api.watchedNames.get(watcher) ?? name) === name)
      watcher.write(JSON.stringify({ type, object: configMap(object) }) + '\n');
}

/** The fake server's events come at once: five seconds is long. */
const waitForChange = (connection: ClusterConnection, predicate: (c: LiveObjectChange) => boolean) =>
  nextChange(connection, predicate, 5_000);

function valueOf(change: LiveObjectChange): string | undefined {
  return change.state.state === 'exists' ? (change.state.object.data as { value: string }).value : undefined;
}

describe('live object cache against a flaky server', () => {
  let api: FakeApi;
  let connection: ClusterConnection;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-watch-'));
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'app' };

  before(async () => {
    api = await startFake();
    api.objects.set('app', { name: 'app', rv: 5, value: 'one' });
    const kubeconfig = path.join(dir, 'config');
    fs.writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:${api.port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: fake\n  context: {cluster: fake, user: u}\ncurrent-context: fake\n`,
    );
    connection = await createClusterConnection(
      { kubeconfig },
      { liveObjects: { initialBackoffMs: 50, maxBackoffMs: 200, pollIntervalMs: 200 } },
    );
  });
  after(() => {
    connection.dispose();
    for (const watcher of api.watchers) watcher.destroy();
    api.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('peek answers at once, then the fill and every change arrive as events', async () => {
    assert.deepEqual(connection.peekObject(ref), { state: 'pending' });
    const filled = await connection.getObject(ref);
    assert.equal(filled.state, 'exists');
    assert.equal(connection.peekObject(ref).state, 'exists', 'synchronous once filled');
    assert.equal((await connection.getObject({ ...ref, name: 'new-one' })).state, 'absent');
    const sent = connection.requestsSent();
    assert.equal(connection.peekObject({ ...ref, name: 'new-one' }).state, 'absent', 'synchronous once answered');
    assert.equal(connection.requestsSent(), sent, 'a name answered is not asked again');
    await waitUntil(() => watching(api, 'app') === 1);
    const changed = waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'two');
    modify(api, 'app', 'two');
    assert.equal((await changed).namespace, 'default');
    assert.equal(connection.health().state, 'connected');
  });

  test('a dropped watch resumes from the last resourceVersion, without a relist', async () => {
    const before = api.requests.length;
    const states: string[] = [];
    const sub = connection.onHealthChange((h) => states.push(h.state));
    await dropWatches(api);
    await newWatch(api, before);
    sub.dispose();
    assert.deepEqual(states, [], 'a dropped watch is not an unreachable server');
    const since = api.requests.slice(before);
    assert.ok(
      since.every((r) => r.endsWith('?watch')),
      `only a new watch: ${since.join(', ')}`,
    );
    const changed = waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'three');
    modify(api, 'app', 'three');
    await changed;
  });

  test('an expired resourceVersion (410) makes it relist and catch up', async () => {
    api.expireNextWatch = true;
    await dropWatches(api);
    // Changed while nobody watched: only a relist can learn it.
    api.rv++;
    api.objects.set('app', { name: 'app', rv: api.rv, value: 'four' });
    const changed = await waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'four');
    assert.equal(changed.state.state, 'exists');
  });

  test('a watch refused for a too-large resourceVersion relists instead of retrying it forever', async () => {
    await waitUntil(() => watching(api, 'app') === 1);
    api.refuseNextWatch = true;
    await dropWatches(api);
    api.rv++;
    api.objects.set('app', { name: 'app', rv: api.rv, value: 'four-and-a-half' });
    await waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'four-and-a-half');
  });

  test('a server that goes away keeps the known object, reports unreachable, and recovers', async () => {
    await waitUntil(() => watching(api, 'app') === 1);
    const port = api.port;
    api.server.close();
    await dropWatches(api);
    await waitUntil(() => connection.health().state === 'unreachable');
    assert.equal(connection.peekObject(ref).state, 'exists', 'degrade, do not forget');
    await new Promise<void>((resolve) => api.server.listen(port, '127.0.0.1', resolve));
    const changed = waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'five');
    const before = api.requests.length;
    await newWatch(api, before);
    modify(api, 'app', 'five');
    await changed;
    assert.equal(connection.health().state, 'connected');
  });

  test('dispose closes the watch and stops every retry', async () => {
    const options = { liveObjects: { initialBackoffMs: 50, maxBackoffMs: 200, pollIntervalMs: 200 } };
    const other = await createClusterConnection({ kubeconfig: path.join(dir, 'config') }, options);
    // The same connection left running: what it sends is the proof that retries had their chance.
    const control = await createClusterConnection({ kubeconfig: path.join(dir, 'config') }, options);
    try {
      const openBefore = api.watchers.size;
      await other.getObject(ref);
      await control.getObject(ref);
      await waitUntil(() => api.watchers.size === openBefore + 2);
      other.dispose();
      await waitUntil(() => api.watchers.size === openBefore + 1);
      const sent = other.requestsSent();
      // Twice every watch is dropped: a live connection watches again each time (its retry), a
      // disposed one must not. Only after the control has retried twice is the silence evidence.
      for (let round = 1; round <= 2; round++) {
        const controlSent = control.requestsSent();
        await dropWatches(api);
        await waitUntil(() => control.requestsSent() > controlSent && api.watchers.size === openBefore + 1, 10_000);
      }
      assert.equal(other.requestsSent(), sent, 'nothing is sent after dispose');
    } finally {
      control.dispose();
    }
  });

  test('when list and watch are forbidden, a GET per object still answers', async () => {
    api.listForbidden = true;
    connection.refresh();
    api.objects.set('app', { name: 'app', rv: ++api.rv, value: 'six' });
    await waitForChange(connection, (c) => c.name === 'app' && valueOf(c) === 'six');
    assert.ok(api.requests.some((r) => r === 'GET /api/v1/namespaces/default/configmaps/app'));
    const absent = await connection.getObject({ ...ref, name: 'ghost' });
    assert.equal(absent.state, 'absent');
  });
});

describe('a cluster that is down when the editor first asks', () => {
  test('the answer arrives by itself once it is back: failed, then exists', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-down-'));
    const kubeconfig = path.join(dir, 'config');
    fs.writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    const connection = await createClusterConnection(
      { kubeconfig },
      { liveObjects: { initialBackoffMs: 50, maxBackoffMs: 200, pollIntervalMs: 200 } },
    );
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'app' };
    let api: FakeApi | undefined;
    try {
      const failed = waitForChange(connection, (c) => c.state.state === 'failed');
      assert.equal(connection.peekObject(ref).state, 'pending');
      const change = await failed;
      assert.equal(change.state.state === 'failed' && change.state.problem.kind, 'unreachable');
      assert.equal(connection.peekObject(ref).state, 'failed');
      const exists = waitForChange(connection, (c) => c.name === 'app' && c.state.state === 'exists');
      api = await startFake(port);
      api.objects.set('app', { name: 'app', rv: 3, value: 'back' });
      assert.equal(valueOf(await exists), 'back');
      assert.equal(connection.peekObject(ref).state, 'exists');
    } finally {
      connection.dispose();
      for (const watcher of api?.watchers ?? []) watcher.destroy();
      api?.server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

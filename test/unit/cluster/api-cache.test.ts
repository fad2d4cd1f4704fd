// The disk cache of discovery and OpenAPI documents (server/src/cluster/api-cache.ts, on the safety
// rules of server/src/launch/user-cache.ts): what one process keeps the next reads back, one
// directory per server, and whatever is odd about a file or a directory is no cache at all.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import {
  MAX_SERVERS,
  openApiCache,
  serverKey,
  type KeptDiscovery,
  type ServerIdentity,
} from '../../../server/src/cluster/api-cache';

const roots: string[] = [];
after(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** An XDG_CACHE_HOME of its own, and the api-cache directory under it. */
function place(): { env: NodeJS.ProcessEnv; dir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-api-cache-'));
  roots.push(root);
  return {
    env: { HOME: root, XDG_CACHE_HOME: path.join(root, 'cache') },
    dir: path.join(root, 'cache', 'kube-conflict-hints', 'api-cache'),
  };
}

const server: ServerIdentity = { server: 'https://10.0.0.1:6443', caData: 'Q0EtT05F' };
const other: ServerIdentity = { server: 'https://10.0.0.2:6443', caData: 'Q0EtT05F' };

const discovery: KeptDiscovery = {
  core: {
    etag: '"CORE"',
    groups: [{ name: '', versions: ['v1'] }],
    resources: [
      {
        group: '',
        version: 'v1',
        apiVersion: 'v1',
        kind: 'ConfigMap',
        resource: 'configmaps',
        singular: 'configmap',
        namespaced: true,
        verbs: ['get', 'list', 'patch'],
        subresources: [],
        shortNames: ['cm'],
      },
    ],
  },
  named: { etag: '"NAMED"', groups: [{ name: 'apps', versions: ['v1'] }], resources: [] },
};
const document = { openapi: '3.0.0', components: { schemas: { a: { type: 'object' } } } };
const url = '/openapi/v3/api/v1?hash=ABC';

/** The one server directory of a place, and its files. */
function serverDir(dir: string): string {
  const entries = fs.readdirSync(dir);
  assert.equal(entries.length, 1, entries.join(', '));
  return path.join(dir, entries[0]!);
}

test('what one process keeps, the next reads back: discovery, and a document under the URL that names it', () => {
  const { env, dir } = place();
  const first = openApiCache(env, server)!;
  assert.equal(first.discovery(), undefined);
  first.saveDiscovery(discovery);
  first.saveDocument('api/v1', url, document);
  const next = openApiCache(env, server)!;
  assert.deepEqual(next.discovery(), discovery);
  assert.deepEqual(next.document('api/v1', url), { document, hashChecked: false });
  // Whether its text was found to hash to its URL is kept with it (cluster/share.ts shares only such a one).
  first.saveDocument('apis/apps/v1', '/openapi/v3/apis/apps/v1?hash=ABC', document, true);
  assert.deepEqual(next.document('apis/apps/v1', '/openapi/v3/apis/apps/v1?hash=ABC'), {
    document,
    hashChecked: true,
  });
  // Another hash is another document: not this one.
  assert.equal(next.document('api/v1', '/openapi/v3/api/v1?hash=DEF'), undefined);
  assert.equal(next.document('apis/apps/v1', url), undefined);
  assert.equal(next.document('apis/batch/v1', url), undefined);
  if (process.platform !== 'win32') {
    const own = serverDir(dir);
    for (const d of [path.dirname(dir), dir, own]) assert.equal(fs.statSync(d).mode & 0o777, 0o700, d);
    for (const f of fs.readdirSync(own)) assert.equal(fs.statSync(path.join(own, f)).mode & 0o777, 0o600, f);
  }
});

test('a server is its URL, its certificate authority, its TLS name and its proxy; not the user or the userinfo', () => {
  const key = serverKey(server);
  assert.equal(serverKey({ ...server, server: 'https://user:secret@10.0.0.1:6443/' }), key);
  assert.notEqual(serverKey(other), key);
  assert.notEqual(serverKey({ ...server, caData: 'Q0EtVFdP' }), key);
  assert.notEqual(serverKey({ ...server, tlsServerName: 'kube.example' }), key);
  assert.notEqual(serverKey({ ...server, proxyUrl: 'http://proxy:3128' }), key);
  assert.notEqual(serverKey({ ...server, skipTLSVerify: true }), key);
  // Two servers, two directories.
  const { env, dir } = place();
  openApiCache(env, server)!.saveDiscovery(discovery);
  openApiCache(env, other)!.saveDiscovery(discovery);
  assert.equal(fs.readdirSync(dir).length, 2);
});

test("a file of another server's, under this server's name, is ignored", () => {
  const { env, dir } = place();
  openApiCache(env, other)!.saveDiscovery(discovery);
  openApiCache(env, other)!.saveDocument('api/v1', url, document);
  const foreign = serverDir(dir);
  const mine = openApiCache(env, server)!;
  const own = fs.readdirSync(dir).find((d) => path.join(dir, d) !== foreign)!;
  for (const f of fs.readdirSync(foreign)) fs.copyFileSync(path.join(foreign, f), path.join(dir, own, f));
  assert.equal(mine.discovery(), undefined);
  assert.equal(mine.document('api/v1', url), undefined);
});

test('a malformed file is no cache: not JSON, cut short, another format, a discovery of the wrong shape, a document changed', () => {
  const { env, dir } = place();
  const cache = openApiCache(env, server)!;
  cache.saveDiscovery(discovery);
  cache.saveDocument('api/v1', url, document);
  const own = serverDir(dir);
  const files = fs.readdirSync(own);
  const discoveryFile = path.join(own, 'discovery.json');
  const documentFile = path.join(
    own,
    files.find((f) => f.startsWith('openapi-'))!,
  );
  const kept = fs.readFileSync(discoveryFile, 'utf8');
  const rewrite = (file: string, text: string) => fs.writeFileSync(file, text, { mode: 0o600 });

  rewrite(discoveryFile, kept.slice(0, kept.length / 2));
  assert.equal(cache.discovery(), undefined);
  rewrite(discoveryFile, kept.replace(/"format":\d+/, '"format":99'));
  assert.equal(cache.discovery(), undefined);
  rewrite(discoveryFile, kept.replace('"namespaced":true', '"namespaced":"yes"'));
  assert.equal(cache.discovery(), undefined);
  rewrite(discoveryFile, kept.replace('"etag":"\\"CORE\\""', '"etag":""'));
  assert.equal(cache.discovery(), undefined);
  // Changed after it was written, still JSON: its bytes are not the ones written.
  const keptDocument = fs.readFileSync(documentFile, 'utf8');
  rewrite(documentFile, keptDocument.replace('"object"', '"string"'));
  assert.equal(cache.document('api/v1', url), undefined);
  rewrite(documentFile, keptDocument);
  assert.deepEqual(cache.document('api/v1', url), { document, hashChecked: false });
  rewrite(documentFile, '\u0000\u0001 not json');
  assert.equal(cache.document('api/v1', url), undefined);
  rewrite(documentFile, JSON.stringify({ format: 1, url, document: [1, 2] }));
  assert.equal(cache.document('api/v1', url), undefined);
  // Written again by the next fetch, it is read again.
  cache.saveDiscovery(discovery);
  assert.deepEqual(cache.discovery(), discovery);
});

test(
  'a directory or file another user could write, or a link, is never read',
  { skip: process.platform === 'win32' && 'modes and links are POSIX' },
  () => {
    const { env, dir } = place();
    openApiCache(env, server)!.saveDiscovery(discovery);
    const own = serverDir(dir);
    const file = path.join(own, 'discovery.json');

    fs.chmodSync(file, 0o620);
    assert.equal(openApiCache(env, server)!.discovery(), undefined, 'a group-writable file');
    fs.chmodSync(file, 0o600);
    assert.ok(openApiCache(env, server)!.discovery());

    for (const d of [own, dir, path.dirname(dir)]) {
      fs.chmodSync(d, 0o770);
      assert.equal(openApiCache(env, server), undefined, `a group-writable ${d}`);
      fs.chmodSync(d, 0o700);
    }
    fs.chmodSync(own, 0o702);
    assert.equal(openApiCache(env, server), undefined, 'a world-writable directory');
    fs.chmodSync(own, 0o700);

    // A link in the file's place, to a file of the right content elsewhere.
    const elsewhere = path.join(path.dirname(path.dirname(dir)), 'elsewhere.json');
    fs.renameSync(file, elsewhere);
    fs.symlinkSync(elsewhere, file);
    assert.equal(openApiCache(env, server)!.discovery(), undefined, 'a file that is a link');
    fs.rmSync(file);
    fs.renameSync(elsewhere, file);

    // The server's directory as a link to a directory of the right content.
    const moved = `${own}.moved`;
    fs.renameSync(own, moved);
    fs.symlinkSync(moved, own);
    assert.equal(openApiCache(env, server), undefined, 'a directory that is a link');
  },
);

test('KCH_API_CACHE=off keeps nothing, and a place that cannot be had is no cache', () => {
  const { env, dir } = place();
  assert.equal(openApiCache({ ...env, KCH_API_CACHE: 'off' }, server), undefined);
  assert.ok(!fs.existsSync(dir));
  const root = path.dirname(path.dirname(path.dirname(dir)));
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, 'cache'), 'a file where the directory would be');
  assert.equal(openApiCache(env, server), undefined);
});

test('old servers are pruned: the ones used least recently beyond the bound', () => {
  const { env, dir } = place();
  const servers = Array.from({ length: MAX_SERVERS + 3 }, (_, i) => ({ server: `https://10.0.1.${i}:6443` }));
  servers.forEach((s, i) => {
    openApiCache(env, s)!.saveDiscovery(discovery);
    // Each used a second after the one before (the directory's time is its last use).
    const at = new Date(Date.now() - (servers.length - i) * 1000);
    fs.utimesSync(path.join(dir, serverKey(s).slice(0, 32)), at, at);
  });
  const kept = fs.readdirSync(dir).sort();
  assert.equal(kept.length, MAX_SERVERS);
  const newest = servers.slice(-MAX_SERVERS).map((s) => serverKey(s).slice(0, 32));
  assert.deepEqual(kept, newest.sort());
});

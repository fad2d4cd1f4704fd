// What the connections of one process share (server/src/cluster/share.ts): an OpenAPI document is
// served to another connection only under the URL whose hash names its text, as kube-apiserver
// computes it (SHA-512 of the document as served, upper-case hex); a different hash, a text that
// does not hash to its URL, or a URL without a hash is each connection's own. Schemas and rules are
// built once per shared document. The servers here are played by a transport of the test's own,
// so that each can say what it likes; test/cli/fleet.test.ts shows the same through real servers.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { ClusterTransport, ClusterRequest } from '../../../server/src/cluster/http';
import { openApiCache } from '../../../server/src/cluster/api-cache';
import { compactOpenApiDocument, OpenApi } from '../../../server/src/cluster/openapi';
import type { HttpOutcome } from '../../../server/src/cluster/problems';
import { contentHashOf, createClusterShare, namesContent } from '../../../server/src/cluster/share';
import type { JsonObject } from '../../../server/src/core/json';

// apps/v1 as the local kube-apiserver served it (test/fixtures/openapi/README.md says how it was captured).
const appsText = fs.readFileSync(
  path.join(import.meta.dirname, '..', '..', 'fixtures', 'openapi', 'apis__apps__v1.json'),
  'utf8',
);
const sha512 = (text: string) => createHash('sha512').update(text, 'utf8').digest('hex').toUpperCase();

/** A server that publishes one document (apps/v1) under `hash` and answers `text` for it; records what it is asked. */
function server(text: string, hash = sha512(text)) {
  const asked: string[] = [];
  const url = `/openapi/v3/apis/apps/v1?hash=${hash}`;
  const transport = {
    send(request: ClusterRequest): Promise<HttpOutcome> {
      const query = new URLSearchParams(request.query as Record<string, string> | undefined).toString();
      const asKey = query ? `${request.path}?${query}` : request.path;
      asked.push(asKey);
      if (request.path === '/openapi/v3')
        return Promise.resolve({
          kind: 'response',
          status: 200,
          body: JSON.stringify({ paths: { 'apis/apps/v1': { serverRelativeURL: url } } }),
        });
      if (asKey === url) return Promise.resolve({ kind: 'response', status: 200, body: text });
      return Promise.resolve({ kind: 'response', status: 404, body: '{}' });
    },
  } as unknown as ClusterTransport;
  return { transport, asked, documentsAsked: () => asked.filter((u) => u !== '/openapi/v3') };
}

/** The same document with one field more: another text, another hash. */
const otherText = (() => {
  const doc = JSON.parse(appsText) as { components: { schemas: Record<string, JsonObject> } };
  doc.components.schemas['com.example.Extra'] = { type: 'object' };
  return JSON.stringify(doc);
})();

test('the hash a URL carries is the SHA-512 of the text as served; nothing else names content', () => {
  const hash = sha512(appsText);
  assert.ok(namesContent(`/openapi/v3/apis/apps/v1?hash=${hash}`, appsText));
  assert.ok(namesContent(`/openapi/v3/apis/apps/v1?hash=${hash.toLowerCase()}`, appsText));
  assert.ok(!namesContent(`/openapi/v3/apis/apps/v1?hash=${hash}`, otherText));
  assert.ok(!namesContent(`/openapi/v3/apis/apps/v1?hash=${hash}`, `${appsText}\n`));
  assert.ok(!namesContent('/openapi/v3/apis/apps/v1', appsText));
  assert.equal(contentHashOf('/openapi/v3/apis/apps/v1?hash=ABC'), undefined);
  assert.equal(contentHashOf(`/openapi/v3/apis/apps/v1?hash=${hash}&x=1`), hash);
});

test('two servers that publish the same document under the same hash: it is read and its schema built once', async () => {
  const share = createClusterShare();
  const east = server(appsText);
  const west = server(appsText);
  const a = new OpenApi(east.transport, undefined, undefined, undefined, share);
  const b = new OpenApi(west.transport, undefined, undefined, undefined, share);
  const first = await a.document('apps/v1');
  const second = await b.document('apps/v1');
  assert.ok(first.ok && second.ok);
  assert.equal(second.value, first.value, 'the same document object');
  assert.equal(east.documentsAsked().length, 1);
  assert.deepEqual(west.asked, ['/openapi/v3'], 'the second server is asked its index only');
  assert.equal(share.counts.documentsShared, 1);
  const schema = share.schema(first.value);
  assert.equal(share.schema(second.value), schema);
  assert.equal(share.counts.schemasBuilt, 1);
  assert.equal(share.rules(first.value, 'apps/v1', 'Deployment'), share.rules(second.value, 'apps/v1', 'Deployment'));
});

test('servers asked at the same moment each answer, none waits on another; the document is parsed and built once', async () => {
  const share = createClusterShare();
  const east = server(appsText);
  const west = server(appsText);
  const [a, b] = await Promise.all(
    [east, west].map((s) => new OpenApi(s.transport, undefined, undefined, undefined, share).document('apps/v1')),
  );
  assert.ok(a?.ok && b?.ok);
  assert.equal(east.documentsAsked().length, 1);
  assert.equal(west.documentsAsked().length, 1);
  assert.equal(b.value, a.value, 'the text that arrived second is not parsed again');
  assert.equal(share.schema(b.value), share.schema(a.value));
  assert.equal(share.counts.schemasBuilt, 1);
});

test('a server with another hash reads its own document, and its schema is its own', async () => {
  const share = createClusterShare();
  const east = server(appsText);
  const west = server(otherText);
  const a = await new OpenApi(east.transport, undefined, undefined, undefined, share).document('apps/v1');
  const b = await new OpenApi(west.transport, undefined, undefined, undefined, share).document('apps/v1');
  assert.ok(a.ok && b.ok);
  assert.equal(west.documentsAsked().length, 1, 'its own document is read');
  assert.notEqual(b.value, a.value);
  assert.ok(((b.value.components as JsonObject).schemas as JsonObject)['com.example.Extra']);
  assert.ok(!((a.value.components as JsonObject).schemas as JsonObject)['com.example.Extra']);
  assert.notEqual(share.schema(b.value), share.schema(a.value));
  assert.equal(share.counts.schemasBuilt, 2);
  assert.equal(share.counts.documentsShared, 0);
});

test("a text that does not hash to its URL is that server's own: never served to another under that hash", async () => {
  const share = createClusterShare();
  // A server that claims apps/v1's hash for another text goes first…
  const liar = server(otherText, sha512(appsText));
  const honest = server(appsText);
  const lied = await new OpenApi(liar.transport, undefined, undefined, undefined, share).document('apps/v1');
  assert.ok(lied.ok && ((lied.value.components as JsonObject).schemas as JsonObject)['com.example.Extra']);
  // …and the next server that names that hash reads its own document, the true one.
  const got = await new OpenApi(honest.transport, undefined, undefined, undefined, share).document('apps/v1');
  assert.ok(got.ok);
  assert.equal(honest.documentsAsked().length, 1);
  assert.ok(!((got.value.components as JsonObject).schemas as JsonObject)['com.example.Extra']);
  // A URL without a hash names nothing: never kept.
  share.keep('/openapi/v3/apis/apps/v1', got.value);
  assert.equal(share.document('/openapi/v3/apis/apps/v1'), undefined);
});

test('connections without a share keep their own documents, as before', async () => {
  const east = server(appsText);
  const west = server(appsText);
  const a = await new OpenApi(east.transport).document('apps/v1');
  const b = await new OpenApi(west.transport).document('apps/v1');
  assert.ok(a.ok && b.ok);
  assert.equal(east.documentsAsked().length, 1);
  assert.equal(west.documentsAsked().length, 1);
});

test('a document kept on disk is shared only when its text was found to hash to its URL when it was fetched', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-share-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const env = { XDG_CACHE_HOME: home };
  const url = `/openapi/v3/apis/apps/v1?hash=${sha512(appsText)}`;
  const compact = compactOpenApiDocument(JSON.parse(appsText) as JsonObject);
  for (const hashChecked of [true, false]) {
    const disk = openApiCache(env, { server: `https://10.0.0.${hashChecked ? 1 : 2}:6443` })!;
    disk.saveDocument('apis/apps/v1', url, compact, hashChecked);
    const share = createClusterShare();
    const fromDisk = server(appsText);
    const kept = await new OpenApi(fromDisk.transport, undefined, undefined, disk, share).document('apps/v1');
    assert.ok(kept.ok);
    assert.deepEqual(fromDisk.documentsAsked(), [], 'read from disk');
    const other = server(appsText);
    await new OpenApi(other.transport, undefined, undefined, undefined, share).document('apps/v1');
    assert.equal(other.documentsAsked().length, hashChecked ? 0 : 1, `hashChecked ${hashChecked}`);
  }
});

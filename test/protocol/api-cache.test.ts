// The language server keeps discovery and OpenAPI documents on disk as the command line does
// (server/src/cluster/api-cache.ts): a server started in a new window, after another has judged
// the same cluster, asks only whether discovery changed and reads no document again, and shows the
// same diagnostics. Two real server processes (dist/server.js), every request seen by the
// recording proxy.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { testCluster, type TestClusterInfo } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { recordCluster, type Exchange, type RecordingProxy } from '../support/recording-proxy';
import { apply, configMap, connect, deleteObject, freshNamespace, objectOf } from '../support/seed';

const skip = !testCluster() && process.env.CI !== 'true' && 'no local kube-apiserver: run through npm test';

describe('a language server started after another reads what the first kept', { skip }, () => {
  let cluster: TestClusterInfo;
  let proxy: RecordingProxy;
  let kubeconfig: string;
  let namespace: string;
  let dir: string;

  before(async () => {
    cluster = testCluster()!;
    const admin = connect('admin', cluster.kubeconfig);
    namespace = await freshNamespace(admin, 'lsp-api-cache');
    objectOf(await apply(admin, 'someone-else', configMap(namespace, 'settings', { color: 'red' })), 'seed');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-lsp-api-cache-'));
    ({ proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(dir, 'kubeconfig.json')));
  });
  after(async () => {
    await deleteObject(connect('admin', cluster.kubeconfig), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    await proxy?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** One server process, from start to the conflict's diagnostic; the requests it made. */
  async function firstAnswer(): Promise<{ diagnostics: Diagnostic[]; sent: Exchange[] }> {
    const from = proxy.exchanges().length;
    const server = await startTestServer({
      process: true,
      settings: { kubeconfig },
      env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') },
    });
    try {
      const uri = 'file:///w/settings.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  color: blue\n`,
      );
      const diagnostics = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'field-conflict'));
      return { diagnostics, sent: proxy.exchanges().slice(from) };
    } finally {
      await server.shutdown();
    }
  }
  const documents = (sent: Exchange[]) => sent.filter((e) => /^\/openapi\/v3\/.+\?hash=/.test(e.url));
  const discovery = (sent: Exchange[]) => sent.filter((e) => e.url === '/api' || e.url === '/apis');
  const shown = (ds: Diagnostic[]) => ds.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.character}`);

  test('no document is fetched again, discovery is asked with its ETags, the diagnostics are the same', async () => {
    const first = await firstAnswer();
    assert.ok(documents(first.sent).length > 0);
    const second = await firstAnswer();
    assert.deepEqual(shown(second.diagnostics), shown(first.diagnostics));
    assert.deepEqual(documents(second.sent), []);
    const asked = discovery(second.sent).filter((e) => e.accept.includes('apidiscovery'));
    assert.deepEqual(asked.map((e) => e.url).sort(), ['/api', '/apis']);
    for (const e of asked) assert.notEqual(e.ifNoneMatch, '', e.url);
    assert.equal(asked.find((e) => e.url === '/api')!.status, 304);
  });
});

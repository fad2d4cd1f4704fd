// A kubeconfig path comes from a setting, so it may name anything. Reading it must never hold the
// language server up (a FIFO nobody writes to, read synchronously, hangs the process for good) nor
// read without end (/dev/zero, a file of a gigabyte): the file is checked to be a small regular file
// and read asynchronously, and the status says what is wrong with it. The same goes for the files a
// kubeconfig names itself (certificate authority, client certificate and key, token file), which
// the Kubernetes client would otherwise read synchronously on every request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { createClusterConnection, readKubeconfig } from '../../server/src/cluster';
import { startTestServer } from '../support/lsp-client';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-hostile-kubeconfig-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function fifo(name: string): string {
  const file = path.join(dir, name);
  const made = spawnSync('mkfifo', [file]);
  assert.equal(made.status, 0, `mkfifo: ${made.stderr?.toString()}`);
  return file;
}

/** A sparse file: a gigabyte on paper, nothing on disk. */
function huge(name: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, '');
  fs.truncateSync(file, 1024 ** 3);
  return file;
}

function linkTo(target: string, name: string): string {
  const file = path.join(dir, name);
  fs.symlinkSync(target, file);
  return file;
}

function kubeconfigNaming(
  name: string,
  user: Record<string, string>,
  cluster: Record<string, string | boolean> = {},
): string {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:9', ...cluster } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return file;
}

describe('a hostile kubeconfig setting gets a clear message, never a hang or an unbounded read', () => {
  const rows: { name: string; kubeconfig: () => string; message: RegExp }[] = [
    {
      name: '/dev/zero',
      kubeconfig: () => '/dev/zero',
      message: /^Cannot read kubeconfig \/dev\/zero: it is a character device, not a regular file$/,
    },
    {
      name: 'a FIFO nobody writes to',
      kubeconfig: () => fifo('fifo'),
      message: /: it is a named pipe \(FIFO\), not a regular file$/,
    },
    { name: 'a directory', kubeconfig: () => dir, message: /: it is a directory, not a regular file$/ },
    { name: 'a 1 GB file', kubeconfig: () => huge('huge'), message: /: it is 1024 MB, over the limit of 4 MB$/ },
    {
      name: 'a symbolic link to /dev/zero',
      kubeconfig: () => linkTo('/dev/zero', 'zero-link'),
      message: /: it is a character device, not a regular file$/,
    },
    {
      name: 'a file that does not exist',
      kubeconfig: () => path.join(dir, 'missing'),
      message: /^Cannot read kubeconfig .*missing: no such file$/,
    },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const kubeconfig = row.kubeconfig();
      const read = await readKubeconfig({ kubeconfig });
      assert.ok(!read.ok);
      assert.equal(read.problem.kind, 'configuration');
      assert.match(read.problem.message, row.message);
      const connection = await createClusterConnection({ kubeconfig });
      assert.match(connection.health().problem?.message ?? '', row.message);
      assert.equal(connection.requestsSent(), 0);
    });
  }
});

describe('files the kubeconfig names are read the same way', () => {
  const rows: { name: string; kubeconfig: () => string; message: RegExp }[] = [
    {
      name: 'a certificate authority at /dev/zero',
      kubeconfig: () => kubeconfigNaming('ca-zero', { token: 't' }, { 'certificate-authority': '/dev/zero' }),
      message:
        /^Cannot read the certificate authority \/dev\/zero named by context "x": it is a character device, not a regular file$/,
    },
    {
      name: 'a client key that is a FIFO',
      kubeconfig: () =>
        kubeconfigNaming('key-fifo', { 'client-certificate-data': 'eA==', 'client-key': fifo('key-fifo-pipe') }),
      message:
        /^Cannot read the client key .*key-fifo-pipe named by context "x": it is a named pipe \(FIFO\), not a regular file$/,
    },
    {
      name: 'a token file that is a FIFO',
      kubeconfig: () => kubeconfigNaming('token-fifo', { 'token-file': fifo('token-pipe') }),
      message: /its token-file .*token-pipe: it is a named pipe \(FIFO\), not a regular file$/,
    },
    {
      name: 'a 1 GB client certificate',
      kubeconfig: () =>
        kubeconfigNaming('cert-huge', { 'client-certificate': huge('cert-huge.pem'), 'client-key-data': 'eA==' }),
      message:
        /^Cannot read the client certificate .*cert-huge\.pem named by context "x": it is 1024 MB, over the limit of 1 MB$/,
    },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const connection = await createClusterConnection({ kubeconfig: row.kubeconfig() });
      assert.equal(connection.health().problem?.kind, 'configuration');
      assert.match(connection.health().problem?.message ?? '', row.message);
      assert.equal(connection.requestsSent(), 0);
    });
  }

  test('a token file is read at load and its token sent (relative to the kubeconfig, as kubectl does)', async () => {
    const seen: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind":"APIVersions","versions":["v1"]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      fs.writeFileSync(path.join(dir, 'token.txt'), 'the-token\n');
      const { port } = server.address() as AddressInfo;
      const kubeconfig = kubeconfigNaming(
        'token-ok',
        { 'token-file': 'token.txt' },
        { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true },
      );
      const connection = await createClusterConnection({ kubeconfig });
      assert.equal((await connection.checkHealth()).state, 'connected');
      connection.dispose();
      assert.deepEqual(seen, ['Bearer the-token']);
    } finally {
      server.close();
    }
  });
});

test('the language server keeps answering with a FIFO as kubeconfig, and the status says why it cannot connect', async () => {
  const kubeconfig = fifo('editor-fifo');
  const server = await startTestServer({ settings: { kubeconfig } });
  try {
    // The kubeconfig is read once a manifest is open.
    const uri = 'file:///w/fifo.yaml';
    await server.open(uri, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n');
    assert.deepEqual(await server.diagnostics(uri), []);
    const status = (await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health !== 'idle',
    )) as { health: string; detail: string };
    assert.equal(status.health, 'unreachable');
    assert.match(
      status.detail,
      /^Cannot read kubeconfig .*editor-fifo: it is a named pipe \(FIFO\), not a regular file$/,
    );
    assert.ok(await server.hover(uri, { line: 1, character: 2 }), 'hovers still answer');
    const contexts = (await server.request('kubeConflictHints/contexts', { uri })) as { problem?: string };
    assert.match(contexts.problem ?? '', /named pipe \(FIFO\)/);
  } finally {
    await server.shutdown();
  }
});

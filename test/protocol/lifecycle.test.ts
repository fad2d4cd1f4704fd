// The server over real JSON-RPC: initialize, open a document, pull diagnostics, shut down.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from '../support/lsp-client';

test('initialize advertises pull diagnostics and incremental sync', async () => {
  const server = await startTestServer();
  try {
    const caps = server.initializeResult.capabilities;
    assert.equal(caps.textDocumentSync, 2);
    assert.deepEqual(caps.diagnosticProvider, { interFileDependencies: false, workspaceDiagnostics: false });
    assert.equal(server.initializeResult.serverInfo?.name, 'kube-conflict-hints');
  } finally {
    await server.shutdown();
  }
});

test('a document that is not a Kubernetes manifest gets no diagnostics and does not break the server', async () => {
  const server = await startTestServer();
  try {
    await server.open('file:///w/notes.yaml', 'shopping:\n  - milk\n  - : : bad [\n');
    assert.deepEqual(await server.diagnostics('file:///w/notes.yaml'), []);
    await server.open('file:///w/package.json', '{"name": "x"}', 'json');
    assert.deepEqual(await server.diagnostics('file:///w/package.json'), []);
  } finally {
    await server.shutdown();
  }
});

test('diagnostics for a document that was never opened are empty, not an error', async () => {
  const server = await startTestServer();
  try {
    assert.deepEqual(await server.diagnostics('file:///w/never-opened.yaml'), []);
  } finally {
    await server.shutdown();
  }
});

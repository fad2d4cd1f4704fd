// The product's own messages (`kubeConflictHints/...` requests and notifications, and their
// `kube-conflict-hints.*` command forms) are declared once, in server/src/protocol.ts, with their
// params and results; the client and the server use them only through its typed helpers.
//
// How drift is caught:
// - at compile time (`npm test` type-checks this file with the rest): each `@ts-expect-error` below
//   is a mismatch that must not compile (wrong params, wrong result, a handler of another shape, a
//   bare method string). Should the helpers ever accept one, the directive becomes unused and the
//   type-check fails;
// - the names other editors' configurations use are pinned here: renaming one breaks them;
// - no source file but protocol.ts spells a method or a command id;
// - the real server answers every declared request, by its method and by its command.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  notifications,
  onNotification,
  onRequest,
  requests,
  sendNotification,
  sendRequest,
  type OwnershipResult,
  type VerifyResult,
} from '../../server/src/protocol';
import { startTestServer } from '../support/lsp-client';

/** A connection that records what the helpers hand it, for both directions. */
function recordingWire() {
  const calls: { call: string; args: unknown[] }[] = [];
  const handlers = new Map<string, (...params: unknown[]) => unknown>();
  return {
    calls,
    handlers,
    sendRequest: async (...args: unknown[]) => (calls.push({ call: 'sendRequest', args }), null),
    sendNotification: (...args: unknown[]) => void calls.push({ call: 'sendNotification', args }),
    onRequest: (method: string, handler: (...params: unknown[]) => unknown) => void handlers.set(method, handler),
    onNotification: (method: string, handler: (...params: unknown[]) => void) => void handlers.set(method, handler),
  };
}

describe('custom messages', () => {
  test('a params, result or handler shape that differs from the declaration does not compile', async () => {
    const wire = recordingWire();
    const uri = 'file:///w/app.yaml';
    const verified: VerifyResult = { agreed: 1, differences: [], failed: [] };

    // @ts-expect-error a document request sent without its document
    void sendRequest(wire, requests.verify, {});
    // @ts-expect-error the params of another request
    void sendRequest(wire, requests.ownership, { connect: true });
    // @ts-expect-error a method string instead of the declaration
    void sendRequest(wire, 'kubeConflictHints/verify', { uri });
    // @ts-expect-error the result read as another request's
    const misread: Promise<OwnershipResult> = sendRequest(wire, requests.verify, { uri });
    // @ts-expect-error a handler answering with another shape
    onRequest(wire, requests.managers, () => 'kubectl');
    // @ts-expect-error a handler expecting other params
    onRequest(wire, requests.verify, (params: { url: string }) => ({ ...verified, agreed: params.url.length }));
    // @ts-expect-error a status the client does not know
    void sendNotification(wire, notifications.status, { health: 'green', context: '', detail: '' });
    // @ts-expect-error a notification handler expecting the other notification's params
    onNotification(wire, notifications.syntaxServices, (params: { health: string }) => void params.health);
    await misread;

    // What does compile reaches the wire under the declared method; omitted params stay omitted
    // (JSON-RPC would otherwise send `[null]`).
    wire.calls.length = 0;
    void sendRequest(wire, requests.verify, { uri });
    void sendRequest(wire, requests.refresh, undefined);
    void sendNotification(wire, notifications.syntaxServices, { yaml: 'redhat.vscode-yaml' });
    assert.deepEqual(wire.calls, [
      { call: 'sendRequest', args: ['kubeConflictHints/verify', { uri }] },
      { call: 'sendRequest', args: ['kubeConflictHints/refresh'] },
      { call: 'sendNotification', args: ['kubeConflictHints/syntaxServices', { yaml: 'redhat.vscode-yaml' }] },
    ]);
    onRequest(wire, requests.verify, () => verified);
    assert.equal(await wire.handlers.get('kubeConflictHints/verify')?.({ uri }), verified);
  });

  test('the names other editors configure stay as documented', () => {
    // docs/editors.md and users' editor configurations name these; a rename breaks them.
    const names = Object.fromEntries(
      Object.entries(requests).map(([key, r]) => [key, [r.method, r.command, r.needsDocument]]),
    );
    assert.deepEqual(names, {
      refresh: ['kubeConflictHints/refresh', 'kube-conflict-hints.refresh', false],
      contexts: ['kubeConflictHints/contexts', 'kube-conflict-hints.contexts', false],
      managers: ['kubeConflictHints/managers', 'kube-conflict-hints.managers', true],
      ownership: ['kubeConflictHints/ownership', 'kube-conflict-hints.showOwnership', true],
      verify: ['kubeConflictHints/verify', 'kube-conflict-hints.verify', true],
      forcePreview: ['kubeConflictHints/forcePreview', 'kube-conflict-hints.forcePreview', true],
      overlays: ['kubeConflictHints/overlays', 'kube-conflict-hints.overlays', true],
      fleet: ['kubeConflictHints/fleet', 'kube-conflict-hints.fleet', false],
      releases: ['kubeConflictHints/releases', 'kube-conflict-hints.releases', true],
    });
    assert.deepEqual(Object.fromEntries(Object.entries(notifications).map(([key, n]) => [key, n.method])), {
      status: 'kubeConflictHints/status',
      documentState: 'kubeConflictHints/documentState',
      chooseRelease: 'kubeConflictHints/chooseRelease',
      syntaxServices: 'kubeConflictHints/syntaxServices',
    });
  });

  test('no source but protocol.ts spells a method name or a command id', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const protocol = path.join(root, 'server/src/protocol.ts');
    const files = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? files(p) : e.name.endsWith('.ts') ? [p] : [];
      });
    const sources = [...files(path.join(root, 'server/src')), ...files(path.join(root, 'client/src'))];
    assert.ok(sources.includes(protocol) && sources.length > 50, 'the scan sees the sources');
    const spelled = sources
      .filter((f) => f !== protocol)
      .flatMap((f) =>
        [
          ...fs.readFileSync(f, 'utf8').matchAll(/['"`](kubeConflictHints\/[A-Za-z]+|kube-conflict-hints\.[A-Za-z]+)/g),
        ].map((m) => `${path.relative(root, f)}: ${m[1]}`),
      );
    assert.deepEqual(spelled, []);
  });

  test('the server answers every declared request, by its method and as its command', async () => {
    // An untrusted workspace: every request answers without contacting a cluster.
    const server = await startTestServer({ initializationOptions: { clusterAccess: false } });
    try {
      const advertised = server.initializeResult.capabilities.executeCommandProvider?.commands ?? [];
      assert.deepEqual(
        [...advertised].sort(),
        Object.values(requests)
          .map((r) => r.command)
          .sort(),
      );
      const uri = 'file:///w/custom-messages.yaml';
      await server.open(uri, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n');
      // Requests sent through the typed helper, as the VS Code client sends them.
      const wire = { sendRequest: (method: string, ...params: unknown[]) => server.request(method, params[0]) };
      const noAccess: VerifyResult = { agreed: 0, differences: [], failed: ['No cluster access in this workspace.'] };
      assert.equal(await sendRequest(wire, requests.refresh, { uri, connect: true }), null);
      assert.ok(Array.isArray((await sendRequest(wire, requests.contexts, { uri })).contexts));
      assert.deepEqual(await sendRequest(wire, requests.managers, { uri }), ['kubectl']);
      assert.equal(await sendRequest(wire, requests.ownership, { uri, position: { line: 3, character: 2 } }), null);
      assert.deepEqual(await sendRequest(wire, requests.verify, { uri }), noAccess);
      assert.equal(await sendRequest(wire, requests.forcePreview, { uri, position: { line: 3, character: 2 } }), null);
      const notOverlay = {
        overlays: [],
        keep: [],
        everyOverlay: true,
        problem: 'The file is in no workspace folder: overlays are chosen per workspace folder.',
      };
      assert.deepEqual(await sendRequest(wire, requests.overlays, { uri }), notOverlay);
      const asCommand = (command: string) => server.request('workspace/executeCommand', { command, arguments: [uri] });
      assert.equal(await asCommand(requests.refresh.command), null);
      assert.ok(Array.isArray(((await asCommand(requests.contexts.command)) as { contexts: unknown }).contexts));
      assert.deepEqual(await asCommand(requests.managers.command), ['kubectl']);
      assert.equal(await asCommand(requests.ownership.command), null);
      assert.deepEqual(await asCommand(requests.verify.command), noAccess);
      assert.equal(await asCommand(requests.forcePreview.command), null);
      assert.deepEqual(await asCommand(requests.overlays.command), notOverlay);
    } finally {
      await server.shutdown();
    }
  });
});

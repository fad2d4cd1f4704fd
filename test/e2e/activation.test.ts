// The packaged extension, installed from its .vsix into a real VS Code, starts when the user opens a
// YAML file: its status bar item appears and its output channel is created.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireEditor, startEditor } from './harness';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx:1.27
`;

test('the packaged extension activates on a YAML file in VS Code', { timeout: 600_000 }, async (t) => {
  const prepared = requireEditor(t);
  if (!prepared) return;
  const editor = await startEditor(t, { name: 'activation', ...prepared, files: { 'web.yaml': deployment } });

  assert.equal(await editor.statusBarItem(), undefined, 'nothing of the extension before a YAML file is open');
  const opened = Date.now();
  await editor.openFile('web.yaml');
  const status = await editor.waitForStatus((item) => item.text !== '', 'the Kube Conflict Hints status bar item');
  editor.time('activation', opened);
  await editor.screenshot('activated');
  assert.ok(status.text.length > 0);
  await editor.waitFor(
    async () => editor.outputChannelLogs(),
    (logs) => logs.length > 0,
    'the "Kube Conflict Hints" output channel',
  );
});

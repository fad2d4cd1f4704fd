// In a real VS Code: a user who opens a GitHub workflow and a docker-compose file first, with a
// kubeconfig whose credentials come from an exec plugin (as kubelogin, gke-gcloud-auth-plugin or
// `aws eks get-token` provide them, which may open a browser login). The extension starts on those
// files, but runs no plugin and sends no request until a Kubernetes manifest is opened; then the
// status and the findings appear as usual.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { readAuditEvents } from '../support/cluster';
import { requireCluster } from '../support/env';
import { execKubeconfig } from '../support/exec-kubeconfig';
import { connect } from '../support/seed';
import { requireEditor, startEditor, type Editor } from './harness';
import { conflictScenario, mismatch, settingsFor } from './scenarios';

const workflow = `name: ci
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci && npm test
`;

const compose = `services:
  web:
    image: nginx:1.27
    ports:
      - "8080:80"
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: example
`;

/**
 * The language client's trace (kubeConflictHints.trace.server: verbose) in the extension's output
 * channel: the messages it exchanged with the language server, as text.
 */
function trace(editor: Editor): string {
  return editor
    .outputChannelLogs()
    .map((file) => fs.readFileSync(file, 'utf8'))
    .join('\n');
}

/** Whether the trace shows the server's answer to a diagnostics pull for a document whose URI ends with `name`. */
function diagnosticsAnswered(log: string, name: string): boolean {
  const asked = [
    ...log.matchAll(/Sending request 'textDocument\/diagnostic - \((\d+)\)'\.\s*Params: (\{[\s\S]*?\n\})/g),
  ];
  return asked.some(
    ([, id, params]) =>
      params!.includes(`${name}"`) && log.includes(`Received response 'textDocument/diagnostic - (${id})'`),
  );
}

test(
  'a workflow and a compose file first: no exec plugin, no request, until a manifest is opened',
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG names the audit log');
    const scenario = await conflictScenario(connect('admin', cluster.kubeconfig), 'e2e-unrelated');
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-unrelated-'));
    const kube = execKubeconfig(cluster.kubeconfig, scratch, 'exec-plugin');
    const started = Date.now();
    // This editor's language servers only: other editors may run beside it, against the same cluster.
    const agents = new Set<string>();
    const fromEditor = () => {
      for (const agent of editor.languageServerUserAgents()) agents.add(agent);
      return readAuditEvents(cluster.auditLog).filter(
        (e) => agents.has(e.userAgent ?? '') && Date.parse(e.requestReceivedTimestamp ?? '') >= started,
      );
    };

    const editor = await startEditor(t, {
      name: 'unrelated-yaml',
      ...prepared,
      files: {
        '.github/workflows/ci.yml': workflow,
        'docker-compose.yml': compose,
        [scenario.file.path]: scenario.file.text,
      },
      settings: settingsFor(kube.file, 'plugin', { 'kubeConflictHints.trace.server': 'verbose' }),
    });
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));

    // VS Code gives compose files a language of their own (dockercompose), YAML or not; opened
    // first, anything the extension would do for it comes before what it does for ci.yml.
    await editor.openFile('docker-compose.yml');
    await editor.openFile('.github/workflows/ci.yml');
    // The positive signal: the language server has read the workflow (it answered the editor's
    // diagnostics pull for it). Had it connected for it, the status would already say so.
    await editor.waitFor(
      async () => trace(editor),
      (log) => diagnosticsAnswered(log, 'ci.yml'),
      "the server's answer for ci.yml in the trace",
    );
    assert.equal(editor.languageServerUserAgents().length, 1, 'one language server of this editor runs');
    const idle = await editor.waitForStatus(
      (item) => item.icons.includes('circle-outline'),
      'the status bar to say no cluster was contacted yet',
    );
    assert.equal(idle.warning, false, 'waiting for a manifest is no trouble');
    assert.match(await editor.statusBarTooltip(), /no cluster has been contacted/);
    await editor.screenshot('unrelated-files');
    assert.deepEqual(kube.runs(), [], 'the exec plugin ran for a workflow and a compose file');
    assert.deepEqual(
      fromEditor().map((e) => `${e.verb} ${e.requestURI}`),
      [],
      'requests in the audit log before a manifest was open',
    );
    assert.doesNotMatch(
      trace(editor),
      /"health": "(connected|unreachable|unauthenticated|forbidden)"/,
      'the server reported a cluster',
    );
    assert.deepEqual(
      (await editor.problems()).filter((p) => p.source === 'kube-conflict-hints'),
      [],
      'nothing of ours on YAML that is not a manifest',
    );

    const opened = Date.now();
    await editor.openFile(scenario.file.path);
    await editor.waitForStatus(
      (item) => item.icons.includes('check') && item.text === 'plugin',
      'the status bar to show the connected context',
    );
    await editor.waitForProblems(
      (seen) => !mismatch(seen, scenario.expected),
      `the conflict warnings: ${JSON.stringify(scenario.expected)}`,
    );
    await editor.screenshot('manifest-open');
    assert.ok(kube.runs().length > 0, 'the plugin ran once the manifest was open');
    assert.ok(
      kube.runs().every((at) => at >= opened),
      `the plugin ran before the manifest was opened (${kube.runs().join(', ')} < ${opened})`,
    );
    await editor.waitFor(
      async () => fromEditor().filter((e) => e.objectRef?.namespace === scenario.namespace).length,
      (n) => n > 0,
      "the manifest's reads in the audit log",
    );
    const early = fromEditor().filter((e) => Date.parse(e.requestReceivedTimestamp!) < opened);
    assert.deepEqual(
      early.map((e) => `${e.verb} ${e.requestURI}`),
      [],
      'requests before the manifest was opened',
    );
  },
);

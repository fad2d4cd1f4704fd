// Runs inside desktop VS Code (see run.ts): the issue-6 scenarios of test/e2e/scenarios.ts, driven
// through the VS Code API instead of the UI. The extension under test is the installed .vsix. The
// untrusted-folder scenario is left to test/e2e: test-electron starts VS Code with trust disabled.
// The status bar is not readable through the API; the code-server suite checks it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import * as vscode from 'vscode';
import { apply, connect, type KubeObject } from '../support/seed';
import { kubeconfigThrough, startClusterProxy } from '../e2e/cluster-proxy';
import {
  alreadyExistsScenario,
  conflictScenario,
  expectedConflicts,
  liveChangeScenario,
  mismatch,
  settingsFor,
  staleResourceVersionScenario,
  userFieldManager,
  type ExpectedProblem,
  type ScenarioFile,
  type ScenarioSettings,
  type SeenProblem,
} from '../e2e/scenarios';

const timeoutMs = 60_000;
const kubeconfig = process.env.KCH_KUBECONFIG ?? '';
const workspace = process.env.KCH_WORKSPACE ?? '';

const severities: Record<vscode.DiagnosticSeverity, SeenProblem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'info',
};

function seen(uri: vscode.Uri): SeenProblem[] {
  return vscode.languages.getDiagnostics(uri).map((d) => ({
    severity: severities[d.severity],
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    line: d.range.start.line + 1,
  }));
}

/** Resolves when the diagnostics of `uri` agree with `expected`; fails with the last difference. */
function waitForProblems(uri: vscode.Uri, expected: readonly ExpectedProblem[], what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (mismatch(seen(uri), expected)) return false;
      done();
      resolve();
      return true;
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(`timed out waiting for ${what}: ${mismatch(seen(uri), expected)}; seen ${JSON.stringify(seen(uri))}`),
      );
    }, timeoutMs);
    const subscription = vscode.languages.onDidChangeDiagnostics(() => check());
    const done = () => {
      clearTimeout(timer);
      subscription.dispose();
    };
    check();
  });
}

async function useSettings(settings: ScenarioSettings): Promise<void> {
  const config = vscode.workspace.getConfiguration();
  for (const key of ['kubeConflictHints.kubeconfig', 'kubeConflictHints.context', 'kubeConflictHints.applyMode']) {
    await config.update(key, settings[key], vscode.ConfigurationTarget.Global);
  }
}

async function open(file: ScenarioFile, settings: ScenarioSettings): Promise<vscode.TextEditor> {
  await useSettings(settings);
  const full = path.join(workspace, file.path);
  fs.writeFileSync(full, file.text);
  const document = await vscode.workspace.openTextDocument(full);
  return vscode.window.showTextDocument(document);
}

function positionOf(document: vscode.TextDocument, word: string): vscode.Position {
  const offset = document.getText().indexOf(word);
  assert.ok(offset >= 0, `"${word}" in ${document.uri.fsPath}`);
  return document.positionAt(offset + 1);
}

async function hoverText(document: vscode.TextDocument, word: string): Promise<string> {
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
    'vscode.executeHoverProvider',
    document.uri,
    positionOf(document, word),
  );
  return hovers
    .flatMap((hover) => hover.contents)
    .map((content) => (typeof content === 'string' ? content : content.value))
    .join('\n');
}

async function applyQuickFix(document: vscode.TextDocument, word: string, title: RegExp): Promise<void> {
  const position = positionOf(document, word);
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    document.uri,
    new vscode.Range(position, position),
    vscode.CodeActionKind.QuickFix.value,
  );
  const action = actions.find((a) => title.test(a.title));
  assert.ok(action?.edit, `a quick fix ${title}; offered: ${JSON.stringify(actions.map((a) => a.title))}`);
  assert.ok(await vscode.workspace.applyEdit(action.edit));
}

const scenarios: { name: string; run(): Promise<void> }[] = [
  {
    name: 'conflicts: two errors, the owner on hover, and the quick fix removes replicas',
    async run() {
      const conn = connect('admin', kubeconfig);
      const scenario = await conflictScenario(conn, 'vscode-conflicts');
      const editor = await open(scenario.file, settingsFor(kubeconfig));
      await waitForProblems(editor.document.uri, scenario.expected, 'the two conflict errors');
      const hover = await hoverText(editor.document, scenario.hover.word);
      for (const owner of scenario.hover.includes) assert.ok(hover.includes(owner), `hover names ${owner}: ${hover}`);
      await applyQuickFix(editor.document, scenario.fix.word, scenario.fix.title);
      const remaining = await expectedConflicts(conn, editor.document.getText());
      assert.equal(remaining.length, 1);
      await waitForProblems(editor.document.uri, remaining, 'only the image error');
    },
  },
  {
    name: 'AlreadyExists: a ConfigMap that exists, with applyMode create',
    async run() {
      const scenario = await alreadyExistsScenario(connect('admin', kubeconfig));
      const editor = await open(scenario.file, settingsFor(kubeconfig, 'admin', scenario.settings));
      await waitForProblems(editor.document.uri, scenario.expected, 'the AlreadyExists error');
    },
  },
  {
    name: 'stale resourceVersion: the error, and the quick fix that removes it',
    async run() {
      const conn = connect('admin', kubeconfig);
      const scenario = await staleResourceVersionScenario(conn);
      const editor = await open(scenario.file, settingsFor(kubeconfig));
      await waitForProblems(editor.document.uri, scenario.expected, 'the stale resourceVersion error');
      await applyQuickFix(editor.document, scenario.fix.word, scenario.fix.title);
      await waitForProblems(editor.document.uri, [], 'no error after the fix');
      const answer = await apply(conn, userFieldManager, parseYaml(editor.document.getText()) as KubeObject, {
        dryRun: true,
      });
      assert.ok(answer.ok, `the server accepts the fixed manifest (answered ${answer.status})`);
    },
  },
  {
    name: 'the diagnostics follow the live object while the file is open',
    async run() {
      const conn = connect('admin', kubeconfig);
      const scenario = await liveChangeScenario(conn);
      const editor = await open(scenario.file, settingsFor(kubeconfig));
      await waitForProblems(editor.document.uri, [], 'no conflict at first');
      await scenario.takeOver();
      const expected = await expectedConflicts(conn, scenario.file.text);
      await waitForProblems(editor.document.uri, expected, 'the conflict after the take-over');
      await scenario.remove();
      await waitForProblems(editor.document.uri, [], 'no conflict once the object is gone');
    },
  },
  {
    name: 'the cluster stops: hovers and known diagnostics keep working',
    async run() {
      const scenario = await conflictScenario(connect('admin', kubeconfig), 'vscode-stops');
      const proxy = await startClusterProxy(process.env.KCH_SERVER ?? '');
      try {
        const throughProxy = kubeconfigThrough(kubeconfig, proxy.server, path.join(workspace, '.proxy-kubeconfig'));
        const editor = await open(scenario.file, settingsFor(throughProxy));
        await waitForProblems(editor.document.uri, scenario.expected, 'the conflict warnings while connected');
        await proxy.stop();
        const replicasLine = scenario.expected.reduce((line, p) => Math.min(line, p.line), Infinity);
        await editor.edit((edit) => edit.insert(new vscode.Position(replicasLine, 0), '  minReadySeconds: 5\n'));
        const hover = await hoverText(editor.document, scenario.hover.word);
        assert.ok(hover.includes('kube-controller-manager'), `the hover still names the owner: ${hover}`);
        const shifted = scenario.expected.map((p) => ({ ...p, line: p.line > replicasLine ? p.line + 1 : p.line }));
        await waitForProblems(editor.document.uri, shifted, 'the known warnings after typing');
      } finally {
        await proxy.stop();
      }
    },
  },
];

/** Called by VS Code's test runner (extensionTestsPath); rejects when a scenario failed. */
export async function run(): Promise<void> {
  assert.ok(kubeconfig && workspace, 'KCH_KUBECONFIG and KCH_WORKSPACE are set by run.ts');
  const failures: string[] = [];
  for (const scenario of scenarios) {
    const started = Date.now();
    try {
      await scenario.run();
      console.log(`ok   ${scenario.name} (${Date.now() - started} ms)`);
    } catch (error) {
      failures.push(scenario.name);
      console.log(`FAIL ${scenario.name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  }
  if (failures.length)
    throw new Error(`${failures.length} of ${scenarios.length} scenarios failed: ${failures.join('; ')}`);
}

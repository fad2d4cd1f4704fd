// Ownership at a glance in a real VS Code: a Deployment whose replicas an autoscaler owns and whose
// image someone changed with `kubectl edit`. At the end of those two lines the editor draws who owns
// them (inlay hints), and nothing on the lines the user's own apply owns; "Toggle ownership hints"
// takes them away and brings them back. The screenshot is the README's (docs/ownership-hints.png).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { connect } from '../support/seed';
import { requireEditor, startEditor, type Editor } from './harness';
import { conflictScenario, lineOfKey, settingsFor } from './scenarios';

/** The lines the active editor draws, top to bottom, as text (inlay hints are drawn inside them). */
function drawnLines(editor: Editor): Promise<string[]> {
  return editor.page.evaluate(() => {
    const lines = [
      ...document.querySelectorAll<HTMLElement>('.editor-group-container.active .monaco-editor .view-lines .view-line'),
    ];
    lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
    return lines.map((line) => (line.textContent ?? '').replace(/\u00a0/g, ' ').trimEnd());
  });
}

test(
  'ownership hints: the other owners at the end of their lines, and the toggle takes them away',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const scenario = await conflictScenario(conn, 'e2e-hints');
    const text = scenario.file.text;
    const lines = text.split('\n');

    // The cluster is the folder's setting: code-server reads the user's kubeconfig and context
    // (machine-overridable settings) as empty once the toggle has rewritten the user settings.
    const editor = await startEditor(t, {
      name: 'ownership-hints',
      ...prepared,
      files: {
        [scenario.file.path]: text,
        '.vscode/settings.json': JSON.stringify(settingsFor(cluster.kubeconfig), null, 2),
      },
    });
    await editor.openFile(scenario.file.path);
    await editor.waitForStatus(
      (item) => item.icons.includes('check') && item.text === 'admin',
      'the status bar to show the connected context',
    );

    const replicas = lineOfKey(text, 'replicas') - 1;
    const image = lineOfKey(text, 'image') - 1;
    const hinted = (drawn: string[], line: number, label: RegExp) =>
      drawn[line] !== undefined &&
      drawn[line]!.startsWith(lines[line]!) &&
      label.test(drawn[line]!.slice(lines[line]!.length).trim());
    const withHints = (drawn: string[]) =>
      hinted(drawn, replicas, /^kube-controller-manager \(scale\)$/) &&
      hinted(drawn, image, /^kubectl-edit · \d+ (s|min) ago$/);
    const drawn = await editor.waitFor(
      () => drawnLines(editor),
      withHints,
      `the hints on line ${replicas + 1} (the autoscaler) and line ${image + 1} (kubectl edit)`,
    );
    // Every other line is drawn as written: the user's own apply owns them.
    for (const [i, line] of lines.entries()) {
      if (i !== replicas && i !== image && i < drawn.length)
        assert.equal(drawn[i], line.trimEnd(), `line ${i + 1} carries no hint`);
    }
    await editor.screenshot('ownership-hints');

    // Off: the two lines are drawn as written (the editor asked the server again and got none).
    await editor.runCommand('Kube Conflict Hints: Toggle ownership hints');
    const asWritten = (d: string[]) =>
      d[replicas] === lines[replicas]!.trimEnd() && d[image] === lines[image]!.trimEnd();
    await editor.waitFor(() => drawnLines(editor), asWritten, 'the lines drawn without hints after the toggle');
    await editor.screenshot('ownership-hints-off');

    // On again: the same hints come back, so their absence was the setting's.
    await editor.runCommand('Kube Conflict Hints: Toggle ownership hints');
    await editor.waitFor(() => drawnLines(editor), withHints, 'the hints back after toggling again');
  },
);

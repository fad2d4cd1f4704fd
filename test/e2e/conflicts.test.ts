// Issue 6, first scenario, in a real VS Code: a Deployment whose replicas an autoscaler owns and whose
// image someone changed with `kubectl edit`. The user sees two errors on those keys, hovers
// `replicas` to learn who owns it, and applies the quick fix that removes it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '../support/seed';
import { requireCluster } from '../support/env';
import { positionOfKey, problemPosition, requireEditor, startEditor } from './harness';
import { conflictScenario, expectedConflicts, mismatch, settingsFor } from './scenarios';

test(
  'conflicts: two errors, the owner on hover, and the quick fix removes replicas',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const scenario = await conflictScenario(conn);

    const editor = await startEditor(t, {
      name: 'conflicts',
      ...prepared,
      files: { [scenario.file.path]: scenario.file.text },
      settings: settingsFor(cluster.kubeconfig),
    });
    await editor.openFile(scenario.file.path);
    await editor.waitForStatus(
      (item) => item.icons.includes('check') && item.text === 'admin',
      'the status bar to show the connected context',
    );
    const warnings = await editor.waitForProblems(
      (seen) => !mismatch(seen, scenario.expected),
      `the errors the server predicts: ${JSON.stringify(scenario.expected)}`,
    );
    await editor.screenshot('warnings');

    const hover = await editor.hover(positionOfKey(scenario.file.text, scenario.hover.word), {
      expect: new RegExp(scenario.hover.includes.map(escape).join('|')),
    });
    for (const owner of scenario.hover.includes) assert.ok(hover.includes(owner), `hover names ${owner}: ${hover}`);
    await editor.screenshot('hover-replicas');

    // On the squiggle of the replicas error, where the Problems panel says it starts.
    const fixAt = problemPosition(warnings, positionOfKey(scenario.file.text, scenario.fix.word).line);
    // The helper applies nothing unless exactly one item has the title asked for.
    await assert.rejects(
      editor.quickFix(fixAt, 'Remove .spec.replicas'),
      /no enabled quick fix/,
      'a title that is only the start of an item',
    );
    await assert.rejects(
      editor.quickFix(fixAt, /^Remove /),
      /more than one enabled quick fix/,
      'a title several items have',
    );
    assert.equal(await editor.isDirty(), false, 'a refused quick fix changes nothing');
    await editor.quickFix(fixAt, scenario.fix.title);
    // The editor's own text, saved: exactly the replicas line is gone.
    const text = await editor.save();
    assert.equal(
      text,
      withoutLine(scenario.file.text, fixAt.line),
      'the quick fix removes the replicas line and nothing else',
    );
    // What remains must be exactly what the server now answers for the edited text.
    const remaining = await expectedConflicts(conn, text);
    assert.equal(remaining.length, 1, 'the server still reports the image conflict');
    await editor.waitForProblems(
      (seen) => !mismatch(seen, remaining),
      `only the image warning: ${JSON.stringify(remaining)}`,
    );
    await editor.screenshot('after-quick-fix');
  },
);

function withoutLine(text: string, line: number): string {
  return text
    .split('\n')
    .filter((_, index) => index !== line - 1)
    .join('\n');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Issue 6 in a real VS Code: the live object changes (from the test, as another tool would) while the
// user has the file open, and the diagnostics follow without the user touching the file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { connect } from '../support/seed';
import { requireEditor, startEditor } from './harness';
import { expectedConflicts, liveChangeScenario, mismatch, settingsFor } from './scenarios';

test('the diagnostics follow the live object while the file is open', { timeout: 600_000 }, async (t) => {
  const cluster = requireCluster(t);
  const prepared = cluster && requireEditor(t);
  if (!cluster || !prepared) return;
  const conn = connect('admin', cluster.kubeconfig);
  const scenario = await liveChangeScenario(conn);

  const editor = await startEditor(t, {
    name: 'live-changes',
    ...prepared,
    files: { [scenario.file.path]: scenario.file.text },
    settings: settingsFor(cluster.kubeconfig),
  });
  await editor.openFile(scenario.file.path);
  // Generous: on a loaded CI machine the first requests may time out, and the status recovers at the
  // next probe (up to 30 s apart); if it does not, the error quotes the tooltip's reason.
  await editor.waitForStatus(
    (item) => item.icons.includes('check'),
    'the status bar to show the cluster connected',
    120_000,
  );
  // The CodeLens shows the object was read (it names its managers); no problem yet, as the server
  // agrees, and "the object exists" is a hint, off the Problems panel.
  await editor.waitFor(
    () => editor.codeLenses(),
    (lenses) => lenses.some((lens) => lens.startsWith('no conflicts · managed by')),
    'the CodeLens to show the object read, with no conflict',
  );
  await editor.waitFor(
    () => editor.problemsPanelMessage(),
    (message) => /^No problems/.test(message),
    'the Problems panel empty',
  );
  await editor.screenshot('before');

  await scenario.takeOver();
  const expected = await expectedConflicts(conn, scenario.file.text);
  if (expected.length !== 1)
    throw new Error(`the server reports ${expected.length} conflicts after the take-over, expected 1`);
  await editor.waitForProblems(
    (problems) => !mismatch(problems, expected),
    `the conflict the server now predicts: ${JSON.stringify(expected)}`,
  );
  await editor.screenshot('taken-over');

  await scenario.remove();
  // First what the user sees once the extension has read the deletion: the CodeLens calls the object
  // new. Only then does an empty Problems panel mean something, and the panel must say it is empty.
  await editor.waitFor(
    () => editor.codeLenses(),
    (lenses) => lenses.includes('new object: nothing to conflict with'),
    'the CodeLens to call the object new once it is gone',
  );
  await editor.waitForProblems(
    (problems) => problems.length === 0,
    'no problem (not even the exists note) once the object is gone',
  );
  assert.match(
    await editor.problemsPanelMessage(),
    /No problems have been detected/,
    'the Problems panel itself says it lists nothing',
  );
  await editor.screenshot('deleted');
});

// Issue 6 in a real VS Code: the 409s that are not about ownership. A ConfigMap that exists while the
// user's applyMode is `create` (AlreadyExists), and a manifest holding a resourceVersion that is no
// longer current (the optimistic lock), with the quick fix that removes it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, connect, type KubeObject } from '../support/seed';
import { positionOfKey, problemPosition, requireEditor, startEditor } from './harness';
import {
  alreadyExistsScenario,
  mismatch,
  settingsFor,
  staleResourceVersionScenario,
  userFieldManager,
} from './scenarios';

test('AlreadyExists: a ConfigMap that exists, with applyMode create', { timeout: 600_000 }, async (t) => {
  const cluster = requireCluster(t);
  const prepared = cluster && requireEditor(t);
  if (!cluster || !prepared) return;
  const scenario = await alreadyExistsScenario(connect('admin', cluster.kubeconfig));

  const editor = await startEditor(t, {
    name: 'already-exists',
    ...prepared,
    files: { [scenario.file.path]: scenario.file.text },
    settings: settingsFor(cluster.kubeconfig, 'admin', scenario.settings),
  });
  await editor.openFile(scenario.file.path);
  const seen = await editor.waitForProblems(
    (problems) => !mismatch(problems, scenario.expected),
    `the AlreadyExists error: ${JSON.stringify(scenario.expected)}`,
  );
  assert.equal(seen.filter((p) => p.severity === 'error').length, 1);
  await editor.screenshot('already-exists');
});

test('stale resourceVersion: the error, and the quick fix that removes it', { timeout: 600_000 }, async (t) => {
  const cluster = requireCluster(t);
  const prepared = cluster && requireEditor(t);
  if (!cluster || !prepared) return;
  const conn = connect('admin', cluster.kubeconfig);
  const scenario = await staleResourceVersionScenario(conn);

  const editor = await startEditor(t, {
    name: 'stale-resource-version',
    ...prepared,
    files: { [scenario.file.path]: scenario.file.text },
    settings: settingsFor(cluster.kubeconfig),
  });
  await editor.openFile(scenario.file.path);
  const errors = await editor.waitForProblems(
    (problems) => !mismatch(problems, scenario.expected),
    `the stale resourceVersion error: ${JSON.stringify(scenario.expected)}`,
  );
  await editor.screenshot('stale-resource-version');

  // On the squiggle of the error (the stale value), where the Problems panel says it starts.
  const fixAt = problemPosition(errors, positionOfKey(scenario.file.text, scenario.fix.word).line);
  await editor.quickFix(fixAt, scenario.fix.title);
  // The editor's own text, saved: exactly the resourceVersion line is gone.
  const text = await editor.save();
  assert.equal(
    text,
    scenario.file.text
      .split('\n')
      .filter((_, index) => index !== fixAt.line - 1)
      .join('\n'),
    'the quick fix removes the resourceVersion line and nothing else',
  );
  // The CodeLens shows the fixed text was read again (it counted the error before); only then is the
  // absence of the error worth anything.
  await editor.waitFor(
    () => editor.codeLenses(),
    (lenses) => lenses.some((lens) => lens.startsWith('no conflicts')),
    'the CodeLens to count no conflicts in the fixed text',
  );
  // "The object exists" is news, a hint off the Problems panel: the panel says itself that it is empty.
  await editor.waitFor(
    () => editor.problemsPanelMessage(),
    (message) => /^No problems/.test(message),
    'the Problems panel empty after the fix',
  );
  await editor.screenshot('after-quick-fix');
  // The fixed text is what the server now accepts.
  const answer = await apply(conn, userFieldManager, parseYaml(text) as KubeObject, { dryRun: true });
  assert.ok(answer.ok, `the server accepts the fixed manifest (answered ${answer.status})`);
});

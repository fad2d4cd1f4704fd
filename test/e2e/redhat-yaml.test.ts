// In a real VS Code next to Red Hat's YAML extension, which most Kubernetes users run: each syntax
// error appears once (Red Hat's), and a broken document does not hide the other documents'
// conflicts. The Marketplace cannot be reached here, so the extension beside ours is a stand-in
// built by test/e2e/fixtures/redhat-yaml/: the real yaml-language-server from the npm registry,
// the language server inside Red Hat's extension, under Red Hat's extension id redhat.vscode-yaml.
// With kubeConflictHints.syntaxErrors set to "always" the same errors show twice: the test can see
// a duplicate when there is one. Left to Red Hat's extension or not, a document that does not parse
// leaves the file "not judged" in the status bar, until it is fixed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { configMap, connect, create, freshNamespace, objectOf } from '../support/seed';
import { redHatYamlVsix } from './fixtures/redhat-yaml/build';
import { requireEditor, startEditor, type Problem } from './harness';
import { settingsFor } from './scenarios';

test(
  "next to Red Hat's YAML language service, each syntax error appears once and the conflicts stay",
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'e2e-redhat');
    for (const name of ['app-config', 'other-config']) {
      objectOf(await create(admin, 'kubectl-create', configMap(namespace, name, { mode: 'fast' })), `create ${name}`);
    }
    const documents = [
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  name: twice\n  namespace: ${namespace}\n`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n  namespace: ${namespace}\ndata:\n  list: [unclosed\n`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-config\n  namespace: ${namespace}\ndata:\n  mode: safe\n`,
    ];
    const text = documents.join('---\n');
    const lines = text.split('\n');
    const lineOf = (pattern: RegExp, occurrence = 0) =>
      lines.map((l, i) => (pattern.test(l) ? i + 1 : 0)).filter(Boolean)[occurrence]!;
    const duplicateLine = lineOf(/^ {2}name: twice$/, 1);
    const brokenLine = lineOf(/\[unclosed$/);
    const conflictLines = [lineOf(/^ {2}mode: safe$/, 0), lineOf(/^ {2}mode: safe$/, 1)];

    const editor = await startEditor(t, {
      name: 'redhat-yaml',
      ...prepared,
      otherExtensions: [await redHatYamlVsix()],
      files: { 'configs.yaml': text },
      // No schema catalog from the network for the YAML service.
      settings: settingsFor(cluster.kubeconfig, 'admin', { 'yaml.schemaStore.enable': false }),
    });
    await editor.openFile('configs.yaml');

    const yamlService = (p: Problem) => p.source === 'YAML';
    const ours = (p: Problem) => p.source === 'kube-conflict-hints';
    // The broken document's error may be placed at its end: the line of the next `---`.
    const syntaxProblems = (problems: Problem[]) =>
      problems.filter(
        (p) =>
          p.severity !== 'info' &&
          (p.line === duplicateLine || (p.line !== undefined && p.line >= brokenLine && p.line <= brokenLine + 1)),
      );
    const conflictsShown = (problems: Problem[]) =>
      conflictLines.every((line) =>
        problems.some((p) => ours(p) && p.line === line && /managed by "kubectl-create"/.test(p.message)),
      );
    const yamlShown = (problems: Problem[]) =>
      problems.some((p) => yamlService(p) && p.line === duplicateLine) &&
      problems.some((p) => yamlService(p) && p.line !== duplicateLine);

    // Both language services have answered: Red Hat's errors and our conflicts are in the Problems panel.
    const seen = await editor.waitForProblems(
      (problems) => conflictsShown(problems) && yamlShown(problems),
      "the YAML service's syntax errors and our conflict warnings",
    );
    await editor.screenshot('next-to-redhat-yaml');
    const syntax = syntaxProblems(seen);
    assert.ok(syntax.length >= 2, `the syntax errors: ${JSON.stringify(syntax)}`);
    assert.deepEqual(syntax.filter(ours), [], 'our copy of a syntax error the YAML service reports');
    assert.equal(
      seen.filter((p) => p.line === duplicateLine).length,
      1,
      `the duplicate key, once: ${JSON.stringify(seen)}`,
    );
    // Ours says nothing of the broken document, yet it was not judged: the status bar says so, and why.
    const notJudged = await editor.waitForStatus(
      (s) => s.text.endsWith(' not judged'),
      'the status bar: this file not judged',
    );
    assert.ok(notJudged.warning, JSON.stringify(notJudged));
    assert.match(await editor.statusBarTooltip(), /This file: YAML syntax error: .+ \(shown by redhat\.vscode-yaml\)/);
    await editor.screenshot('not-judged-next-to-redhat-yaml');

    // The same file with syntaxErrors "always": now each error shows twice, which is what the user
    // would see without the detection.
    editor.writeFile('.vscode/settings.json', JSON.stringify({ 'kubeConflictHints.syntaxErrors': 'always' }));
    const doubled = await editor.waitForProblems(
      (problems) => syntaxProblems(problems).some(ours) && conflictsShown(problems),
      'our own syntax errors once the setting says "always"',
    );
    await editor.screenshot('syntax-errors-always');
    assert.equal(
      doubled.filter((p) => p.line === duplicateLine).length,
      2,
      `the duplicate key, twice: ${JSON.stringify(doubled)}`,
    );

    // The broken document fixed on disk (the editor follows the file): judged, the status calm again.
    editor.writeFile('configs.yaml', text.replace('[unclosed', '[closed]'));
    await editor.waitForProblems(
      (problems) => !problems.some((p) => p.line === brokenLine && p.severity === 'error') && conflictsShown(problems),
      'the syntax error gone',
    );
    const judged = await editor.waitForStatus((s) => !s.text.includes('not judged'), 'the status bar: the file judged');
    assert.equal(judged.warning, false, JSON.stringify(judged));
  },
);

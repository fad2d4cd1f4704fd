// The Problems panel holds problems. A file of 300 Deployments that all exist, five of them scaled
// by an autoscaler: the panel lists exactly the five conflicts the API server's own dry runs report,
// not 300 "the object exists" notes around them (news is a hint, which VS Code keeps off the panel;
// the CodeLens above each object still says it exists and who manages it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, type KubeObject, objectOf, webDeployment } from '../support/seed';
import { requireEditor, startEditor } from './harness';
import { mismatch, settingsFor, toYaml, userFieldManager, type ExpectedProblem } from './scenarios';
import { expectedConflicts } from './scenarios';

const count = 300;
const scaled = [7, 61, 150, 222, 299];

test(
  `${count} existing Deployments, ${scaled.length} scaled by an autoscaler: the Problems panel lists exactly the ${scaled.length} conflicts`,
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'e2e-quiet');
    const manifests: KubeObject[] = Array.from({ length: count }, (_, i) =>
      webDeployment(namespace, `web-${String(i).padStart(3, '0')}`),
    );
    for (const m of manifests) objectOf(await apply(conn, userFieldManager, m), `apply ${m.metadata.name}`);
    for (const i of scaled) await autoscale(conn, manifests[i]!, 5);

    const documents = manifests.map(toYaml);
    const text = documents.map((d) => `---\n${d}`).join('');
    // What the server says of each scaled object, on the lines of the whole file.
    const expected: ExpectedProblem[] = [];
    for (const i of scaled) {
      const offset = documents.slice(0, i).reduce((lines, d) => lines + d.split('\n').length, 0) + 1;
      for (const p of await expectedConflicts(conn, documents[i]!)) expected.push({ ...p, line: p.line + offset });
    }
    assert.equal(expected.length, scaled.length, 'the server reports one conflict per scaled Deployment');

    const editor = await startEditor(t, {
      name: 'quiet-panel',
      ...prepared,
      files: { 'deployments.yaml': text },
      settings: settingsFor(cluster.kubeconfig),
    });
    await editor.openFile('deployments.yaml');
    const seen = await editor.waitForProblems(
      (problems) => !mismatch(problems, expected),
      `exactly the ${expected.length} conflicts: ${JSON.stringify(expected)}`,
      180_000,
    );
    assert.equal(seen.filter((p) => p.severity === 'info').length, 0, 'no "exists" note in the panel');
    await editor.waitFor(
      () => editor.codeLenses(),
      (lenses) => lenses.some((lens) => / · managed by kubectl/.test(lens)),
      'the CodeLens still says who manages each object',
    );
    await editor.screenshot('five-conflicts');
  },
);

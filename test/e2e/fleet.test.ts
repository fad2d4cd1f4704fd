// Several contexts in a real VS Code (`kubeConflictHints.contexts`), against three real API servers
// with their own histories (test/support/fleet.ts): the status bar names each context with its
// health, the Problems panel has each context's conflict naming it, the hover on `replicas` is one
// table with each context's live value and managers, and the Fleet view lists the object with each
// context's state. The screenshots are the README's (hover-fleet.png, fleet-view.png).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scratchDir } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { fleetKubeconfig, seedFleetHistories } from '../support/fleet';
import { positionOfKey, requireEditor, startEditor } from './harness';

test(
  'several contexts: each one in the status bar, findings naming their contexts, the hover table and the Fleet view',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const dir = scratchDir('e2e-fleet');
    const { kubeconfig, clusters } = await fleetKubeconfig(dir, cluster.kubeconfig);
    const { files } = await seedFleetHistories(clusters);
    const web = files['web.yaml'];

    const editor = await startEditor(t, {
      name: 'fleet',
      ...prepared,
      files: {
        'web.yaml': web,
        'settings.yaml': files['settings.yaml'],
        '.vscode/settings.json': JSON.stringify(
          {
            'kubeConflictHints.kubeconfig': kubeconfig,
            'kubeConflictHints.contexts': ['staging', 'prod-eu', 'prod-us'],
          },
          null,
          2,
        ),
      },
    });
    await editor.openFile('web.yaml');
    const status = await editor.waitForStatus(
      (item) => item.icons.filter((i) => i === 'check').length === 3 && /staging.*prod-eu.*prod-us/.test(item.text),
      'the status bar to show the three contexts connected',
    );
    assert.equal(status.warning, false);

    const problems = await editor.waitForProblems(
      (ps) => ps.filter((p) => p.severity === 'error').length === 2,
      'the two conflicts, each naming its context',
    );
    const errors = problems.filter((p) => p.severity === 'error').map((p) => p.message);
    assert.ok(
      errors.some((m) => m.startsWith('[prod-eu] .spec.replicas is managed by "kube-controller-manager"')),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((m) => m.startsWith('[staging] .spec.template.spec.containers[name="app"].image')),
      errors.join('\n'),
    );

    const hover = await editor.hover(positionOfKey(web, 'replicas'), { expect: /prod-us\s+no such object/ });
    assert.match(hover, /\.spec\.replicas\s*in 3 contexts/);
    assert.match(hover, /staging\s+3\s+kubectl/);
    assert.match(hover, /prod-eu\s+5\s+kube-controller-manager \(scale\)/);
    await editor.screenshot('hover-fleet');

    await editor.runCommand('Kube Conflict Hints: Show the Fleet view (each object in each context)');
    const rows = await editor.waitFor(
      () =>
        editor.page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>('.monaco-list-row')].map((row) =>
            row.innerText.replace(/\s+/g, ' ').trim(),
          ),
        ),
      (seen) =>
        seen.some((r) => r.includes('Deployment') && r.includes('prod-eu: conflict with kube-controller-manager')),
      'the Fleet view to list the Deployment with each context',
    );
    const deployment = rows.find((r) => r.includes('Deployment'))!;
    assert.match(
      deployment,
      /staging: conflict with kubectl-edit │ prod-eu: conflict with kube-controller-manager │ prod-us: missing/,
    );
    // Each context is a row under the object; a click on one jumps to the object's first line.
    const prodEu = editor.page.locator('.monaco-list-row', { hasText: /^prod-eu/ }).first();
    await prodEu.waitFor({ state: 'visible' });
    await editor.screenshot('fleet-view');
    await prodEu.click();
    // (A single click leaves the keyboard in the view, as VS Code's trees do.)
    await editor.waitFor(
      () => editor.caret(),
      (c) => c.file === 'web.yaml' && c.line === 1 && c.column === 1,
      'the caret on the Deployment after a click in the Fleet view',
    );
  },
);

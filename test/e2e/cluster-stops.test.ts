// Issue 6 in a real VS Code: the cluster goes away while the user works. The editor reaches the API
// server through a proxy of its own, which the test stops, so the shared API server keeps serving the
// other tests. The status bar must say so; typing and hovers keep working from what is known, and
// say that it is old. Back on a new address, with the kubeconfig rewritten, the editor follows.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { connect } from '../support/seed';
import { kubeconfigThrough, startClusterProxy } from './cluster-proxy';
import { positionOfKey, requireEditor, startEditor } from './harness';
import { conflictScenario, mismatch, settingsFor } from './scenarios';

test(
  'the cluster stops: the status bar says so, typing and hovers still work and say their facts are old; back on a new port, the editor follows the rewritten kubeconfig',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const scenario = await conflictScenario(connect('admin', cluster.kubeconfig), 'e2e-stops');
    const proxy = await startClusterProxy(cluster.server);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-stops-'));
    const kubeconfig = kubeconfigThrough(cluster.kubeconfig, proxy.server, path.join(scratch, 'kubeconfig'));

    const editor = await startEditor(t, {
      name: 'cluster-stops',
      ...prepared,
      files: { [scenario.file.path]: scenario.file.text },
      settings: settingsFor(kubeconfig),
    });
    t.after(async () => {
      await proxy.stop();
      fs.rmSync(scratch, { recursive: true, force: true });
    });
    await editor.openFile(scenario.file.path);
    await editor.waitForStatus(
      (item) => item.icons.includes('check') && !item.warning,
      'the status bar to show the cluster connected',
    );
    await editor.waitForProblems((seen) => !mismatch(seen, scenario.expected), 'the conflict warnings while connected');

    await proxy.stop();
    // Typing makes the extension look again; the answer now is that nobody is there.
    const replicas = positionOfKey(scenario.file.text, 'replicas');
    await editor.typeOnNewLineAfter(replicas.line, 'minReadySeconds: 5');
    // The editor's own text, saved: the typed line right below replicas, at its indentation.
    const lines = scenario.file.text.split('\n');
    const indentation = /^\s*/.exec(lines[replicas.line - 1] ?? '')?.[0] ?? '';
    lines.splice(replicas.line, 0, `${indentation}minReadySeconds: 5`);
    assert.equal(await editor.save(), lines.join('\n'), 'the typed line is in the file, below replicas');

    const status = await editor.waitForStatus(
      (item) => item.icons.includes('debug-disconnect'),
      'the status bar to say the cluster is unreachable',
      90_000,
    );
    assert.ok(status.warning, 'the unreachable status stands out (warning background)');
    assert.match(await editor.statusBarTooltip(), /unreachable/i);
    await editor.screenshot('unreachable');

    const hover = await editor.hover(replicas, { expect: /kube-controller-manager/ });
    assert.ok(hover.includes('kube-controller-manager'), 'the hover still names the owner');
    assert.match(
      hover,
      /Not live: as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d/,
      'the hover says its facts are old',
    );
    // What is known still stands: the same warnings, below the typed line moved down by one, each
    // saying that it rests on old facts.
    const shifted = scenario.expected.map((p) => ({ ...p, line: p.line > replicas.line ? p.line + 1 : p.line }));
    const old = /\(as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\)$/;
    await editor.waitForProblems(
      (seen) => !mismatch(seen, shifted) && seen.filter((p) => p.severity !== 'info').every((p) => old.test(p.message)),
      `the known warnings after typing, marked old: ${JSON.stringify(shifted)}`,
    );
    await editor.screenshot('unreachable-hover');

    // The cluster comes back on another address, and the kubeconfig is rewritten to say so (a new file
    // renamed over it, as tools write it): the editor follows, with no reload and no command.
    const back = await startClusterProxy(cluster.server);
    t.after(() => back.stop());
    fs.renameSync(kubeconfigThrough(cluster.kubeconfig, back.server, path.join(scratch, 'kubeconfig.new')), kubeconfig);
    await editor.waitForStatus(
      (item) => item.icons.includes('check') && !item.warning,
      'the status bar connected again, at the new address',
    );
    await editor.waitForProblems(
      (seen) => !mismatch(seen, shifted) && !seen.some((p) => old.test(p.message)),
      'the warnings live again, nothing marked old',
    );
    assert.ok(back.connections() > 0, 'the editor reached the new address');
    await editor.screenshot('back-on-a-new-address');
  },
);

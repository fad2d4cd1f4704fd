// Issue 6 in a real VS Code: a folder the user does not trust. Kubeconfig exec plugins run programs, so
// the extension must not contact any cluster there: no diagnostics from the cluster, and no request
// in the API server's audit log (nor any connection through the proxy the editor is pointed at).
// Trusting the folder afterwards shows the same observation does see requests when there are some.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { readAuditEvents, waitForAuditEvent } from '../support/cluster';
import { requireCluster } from '../support/env';
import { connect, request } from '../support/seed';
import { kubeconfigThrough, startClusterProxy } from './cluster-proxy';
import { positionOfKey, requireEditor, startEditor } from './harness';
import { conflictScenario, mismatch, settingsFor } from './scenarios';

test(
  'untrusted folder: no diagnostics from the cluster and no request from the extension',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG names the audit log');
    const admin = connect('admin', cluster.kubeconfig);
    const scenario = await conflictScenario(admin, 'e2e-untrusted');
    const proxy = await startClusterProxy(cluster.server);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-untrusted-'));
    // User settings, not the folder's: restrictedConfigurations keep an untrusted folder from choosing.
    const kubeconfig = kubeconfigThrough(cluster.kubeconfig, proxy.server, path.join(scratch, 'kubeconfig'));

    const editor = await startEditor(t, {
      name: 'untrusted',
      ...prepared,
      files: { [scenario.file.path]: scenario.file.text },
      settings: settingsFor(kubeconfig),
      trusted: false,
    });
    // Registered after the editor's teardown, so the editor goes first and never sees the proxy stop.
    t.after(async () => {
      await proxy.stop();
      fs.rmSync(scratch, { recursive: true, force: true });
    });
    await editor.openFile(scenario.file.path);
    await editor.waitForStatus((item) => item.icons.includes('shield'), 'the status bar to say cluster access is off');
    // Hovering a contested key is what would read the cluster in a trusted folder. The hover itself must
    // come (the extension works on the text), without an owner from the cluster.
    const hover = await editor.hover(positionOfKey(scenario.file.text, 'replicas'), { expect: /\.spec\.replicas/ });
    assert.ok(!hover.includes('kube-controller-manager'), `no owner from the cluster in the hover: ${hover}`);
    const problems = await editor.problems();
    assert.equal(mismatch(problems, []), undefined, `no conflict diagnostics: ${JSON.stringify(problems)}`);
    assert.ok(!problems.some((p) => /exists/.test(p.message)), 'no note that the object exists');
    assert.match(
      await editor.problemsPanelMessage(),
      /No problems have been detected/,
      'the Problems panel itself says it lists nothing',
    );
    await editor.screenshot('untrusted');
    assert.equal(proxy.connections(), 0, 'no connection to the cluster');
    const fromExtension = () =>
      readAuditEvents(cluster.auditLog).filter(
        (e) => e.userAgent?.startsWith('kube-conflict-hints') && e.objectRef?.namespace === scenario.namespace,
      );
    // The audit log is written as requests complete: a request of the test's own, after the hover,
    // shows the log has caught up before its silence about the extension counts.
    const sentinelUri = `/api/v1/namespaces/${scenario.namespace}/configmaps/untrusted-sentinel`;
    await request(admin, 'GET', sentinelUri);
    assert.ok(
      await waitForAuditEvent(cluster.auditLog, (e) => e.requestURI === sentinelUri),
      'the sentinel request is in the audit log',
    );
    assert.deepEqual(fromExtension(), [], "no request for the file's namespace in the audit log");

    // The same observations, once the user trusts the folder.
    await editor.trustWorkspace();
    await editor.waitForProblems((seen) => !mismatch(seen, scenario.expected), 'the conflict warnings once trusted');
    assert.ok(proxy.connections() > 0, 'trusted: the extension connects');
    await editor.waitFor(
      async () => fromExtension().length,
      (count) => count > 0,
      "the extension's reads in the audit log",
    );
    await editor.screenshot('trusted');
  },
);

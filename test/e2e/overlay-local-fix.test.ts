// Fixes that say what else they touch, in a real VS Code: a base Deployment used by staging and
// production, both applied by kubectl (server-side) with the real kustomize's output, production
// then scaled by an autoscaler. With production left out by kustomizeOverlays, its kustomization
// says why it is silent (a hint, the status bar "not judged", *Choose Kustomize overlays…* as its
// fix); chosen again, the status bar is back. On the base, the fixes that edit it name staging in
// their titles, and the one local to production, applied and saved, creates a patch of
// production's own: the conflict goes, and the base — staging's too — is left as it was.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, type KubeObject, objectOf } from '../support/seed';
import { requireTool } from '../tools/tools';
import { positionOfKey, problemPosition, requireEditor, startEditor, type Problem } from './harness';
import { overlayBase, settingsFor } from './scenarios';

const baseDeployment = overlayBase['base/deployment.yaml'];

const ours = (p: Problem) => p.source === 'kube-conflict-hints';
const isConflict = (p: Problem) =>
  ours(p) &&
  p.severity === 'error' &&
  /kube-controller-manager/.test(p.message) &&
  /overlay production/.test(p.message);

test(
  'a fix on a base two overlays use names the other, and the one local to production leaves the base alone; a left-out overlay says why it is silent',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const kustomize = requireTool(t, 'kustomize');
    const prepared = cluster && kustomize && requireEditor(t);
    if (!cluster || !kustomize || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const namespaces = {
      staging: await freshNamespace(conn, 'e2e-local-stg'),
      production: await freshNamespace(conn, 'e2e-local-prd'),
    };
    const files: Record<string, string> = {
      ...overlayBase,
      'overlays/staging/kustomization.yaml': `namespace: ${namespaces.staging}\nresources:\n- ../../base\n`,
      'overlays/production/kustomization.yaml': `namespace: ${namespaces.production}\nresources:\n- ../../base\n`,
      // The folder's choice: staging only.
      '.vscode/settings.json': JSON.stringify({ 'kubeConflictHints.kustomizeOverlays': ['overlays/staging'] }),
    };
    const editor = await startEditor(t, {
      name: 'overlay-local-fix',
      ...prepared,
      files,
      settings: settingsFor(cluster.kubeconfig, 'admin', { 'kubeConflictHints.kustomizePath': kustomize }),
    });
    const build = (overlay: string) => {
      const built = spawnSync(kustomize, ['build', overlay], {
        cwd: editor.workspace,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(built.status, 0, built.stderr);
      return built.stdout;
    };
    for (const overlay of ['overlays/staging', 'overlays/production']) {
      for (const doc of parseAllDocuments(build(overlay)))
        objectOf(await apply(conn, 'kubectl', doc.toJS() as KubeObject), `kubectl apply --server-side ${overlay}`);
    }
    await autoscale(
      conn,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: namespaces.production } },
      5,
    );
    const stagingBefore = build('overlays/staging');

    // Production left out: its kustomization is not judged, and says so.
    const kustomization = 'overlays/production/kustomization.yaml';
    await editor.openFile(kustomization);
    await editor.waitForStatus(
      (item) => item.icons.includes('warning') && / not judged$/.test(item.text),
      "the status bar: the left-out overlay's file is not judged",
      120_000,
    );
    assert.match(
      await editor.statusBarTooltip(),
      /This file: No chosen overlay uses the file: Not judged: no chosen Kustomize overlay uses this file \(overlay production uses it and is left out/,
    );
    await editor.hover({ line: 1, column: 1 }, { expect: /Not judged: no chosen Kustomize overlay uses this file/ });
    await editor.screenshot('left-out-overlay');
    assert.ok((await editor.quickFixTitles({ line: 1, column: 1 })).includes('Choose Kustomize overlays…'));

    // Every overlay chosen again (the folder's setting emptied): judged, the status bar is no longer "not judged".
    editor.writeFile('.vscode/settings.json', JSON.stringify({ 'kubeConflictHints.kustomizeOverlays': [] }));
    await editor.waitForStatus(
      (item) => !/ not judged$/.test(item.text),
      "the status bar: the overlay's file judged again",
      120_000,
    );

    // The base: production's conflict, and fixes that say staging renders the base too.
    const baseFile = 'base/deployment.yaml';
    await editor.openFile(baseFile);
    const at = positionOfKey(baseDeployment, 'replicas');
    const problems = await editor.waitForProblems(
      (ps) => ps.some((p) => isConflict(p) && p.line === at.line),
      `production's conflict on ${baseFile} line ${at.line}`,
      120_000,
    );
    const where = problemPosition(problems.filter(isConflict), at.line);
    const titles = await editor.quickFixTitles(where);
    assert.ok(
      titles.some((title) =>
        /^Use the live value 5 for \.spec\.replicas here, also used by overlay staging/.test(title),
      ),
      JSON.stringify(titles),
    );
    assert.ok(
      titles.some((title) => /^Remove \.spec\.replicas here, also used by overlay staging/.test(title)),
      JSON.stringify(titles),
    );
    await editor.quickFix(where, /^Use the live value 5 for \.spec\.replicas in overlay production only/);
    // The fix created a patch and edited production's kustomization, in files not open before: saved as a user saves them all.
    await editor.runCommand('File: Save All Files');
    const patch = path.join(editor.workspace, 'overlays/production/deployment-web-patch.yaml');
    await editor.waitFor(
      async () => (fs.existsSync(patch) ? fs.readFileSync(patch, 'utf8') : ''),
      (text) => /replicas: 5/.test(text),
      'the new patch of production on disk',
    );
    assert.match(
      fs.readFileSync(path.join(editor.workspace, kustomization), 'utf8'),
      /\npatches:\n- path: deployment-web-patch\.yaml\n$/,
    );
    await editor.waitForProblems(
      (ps) => !ps.some(isConflict),
      'the conflict gone once production renders again',
      120_000,
    );
    await editor.screenshot('after-local-fix');
    assert.equal(
      fs.readFileSync(path.join(editor.workspace, baseFile), 'utf8'),
      baseDeployment,
      'the base is not edited',
    );
    assert.equal(build('overlays/staging'), stagingBefore, 'staging renders as before');
    const sent = parseAllDocuments(build('overlays/production'))
      .map((d) => d.toJS() as KubeObject)
      .find((o) => o.kind === 'Deployment')!;
    objectOf(await apply(conn, 'kubectl', sent, { dryRun: true }), 'the dry-run apply of production after the fix');
  },
);

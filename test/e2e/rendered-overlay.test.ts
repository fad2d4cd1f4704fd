// A Kustomize overlay in a real VS Code: a base Deployment used by two overlays (staging and
// production), production's strategic-merge patch setting `replicas:`. Both overlays were applied by
// kubectl (server-side) with the real kustomize's output, then an autoscaler scaled production. The
// autoscaler's conflict shows on the patch's `replicas:` line, naming the overlay and the manager;
// the base (judged once per overlay) and the kustomization show nothing false; the hover on the patch
// line names the owner, and the quick fix there, once saved, makes the re-render clear the conflict.
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, type KubeObject, objectOf } from '../support/seed';
import { requireTool } from '../tools/tools';
import { positionOfKey, problemPosition, requireEditor, startEditor, type Editor, type Problem } from './harness';
import { overlayBase as base, settingsFor } from './scenarios';

const overlays = (namespace: string) => ({
  'overlays/staging/kustomization.yaml': `namePrefix: staging-
namespace: ${namespace}
resources:
- ../../base
`,
  'overlays/production/kustomization.yaml': `namePrefix: prod-
namespace: ${namespace}
resources:
- ../../base
patches:
- path: replicas.yaml
`,
  'overlays/production/replicas.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
`,
});

const ours = (p: Problem) => p.source === 'kube-conflict-hints';
const isConflict = (p: Problem) =>
  ours(p) && p.severity !== 'info' && /kube-controller-manager/.test(p.message) && /overlay production/.test(p.message);
/** What a patch, a base or a kustomization must never get from its own text. */
const noise = new Set([
  'yaml-syntax',
  'duplicate-key',
  'yaml-decode',
  'would-delete',
  'kind-not-served',
  'invalid-manifest',
]);

/** A problem of the Problems panel with the workspace file it is listed under (`dir/name`). */
interface FileProblem extends Problem {
  file: string;
  /** The diagnostic's code as the panel shows it beside the source (`field-conflict`). */
  code?: string;
}

/**
 * The Problems panel grouped by file: each marker row with the file row above it. The harness reads
 * the markers alone; here several files of one overlay carry findings on the same line numbers.
 */
async function problemsByFile(editor: Editor): Promise<FileProblem[]> {
  await editor.problems(); // opens the panel when it is closed
  return editor.page.evaluate(() => {
    const rows = [...document.querySelectorAll<HTMLElement>('.markers-panel .monaco-list-row')];
    rows.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    const out: FileProblem[] = [];
    let file = '';
    for (const row of rows) {
      const icon = row.querySelector('.marker-icon');
      if (!icon) {
        // A file row: its name, and its folder relative to the workspace as the description.
        const name = (row.querySelector('.label-name')?.textContent ?? '').trim();
        const dir = (row.querySelector('.label-description')?.textContent ?? '').trim();
        file = dir ? `${dir}/${name}` : name;
        continue;
      }
      const severity = icon.classList.contains('error')
        ? 'error'
        : icon.classList.contains('warning')
          ? 'warning'
          : 'info';
      const message = (row.querySelector('.marker-message')?.textContent ?? '').trim();
      const source = row.querySelector('.marker-source')?.textContent?.trim();
      const code = row
        .querySelector('.marker-code')
        ?.textContent?.trim()
        .replace(/^\(|\)$/g, '');
      const position = /\[Ln (\d+), Col (\d+)\]/.exec(row.querySelector('.marker-line')?.textContent ?? '');
      out.push({
        file,
        severity,
        message,
        ...(source ? { source } : {}),
        ...(code ? { code } : {}),
        ...(position ? { line: Number(position[1]), column: Number(position[2]) } : {}),
      });
    }
    return out;
  });
}

async function waitForFileProblems(
  editor: Editor,
  until: (problems: FileProblem[]) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<FileProblem[]> {
  return editor.waitFor(() => problemsByFile(editor), until, what, timeoutMs);
}

const inFile = (file: string) => (p: FileProblem) => p.file === file;

/**
 * The language server's last full answer to a diagnostics pull for the document whose URI ends with
 * `file`, as the client's verbose trace logged it; undefined before there is one.
 */
interface AnsweredDiagnostic {
  message: string;
  code?: string;
  /** LSP's: 1 error … 4 hint. */
  severity?: number;
  range: { start: { line: number } };
}

function lastDiagnosticsAnswer(editor: Editor, file: string): AnsweredDiagnostic[] | undefined {
  const log = editor
    .outputChannelLogs()
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
  const ids = [...log.matchAll(/Sending request 'textDocument\/diagnostic - \((\d+)\)'\.\s*Params: (\{[\s\S]*?\n\})/g)]
    .filter(([, , params]) => params!.includes(`/${file}"`))
    .map(([, id]) => id!);
  let last: AnsweredDiagnostic[] | undefined;
  for (const id of ids) {
    const answer = new RegExp(
      `Received response 'textDocument/diagnostic - \\(${id}\\)' in \\d+ms\\.\\s*Result: (\\{[\\s\\S]*?\\n\\})`,
    ).exec(log);
    if (!answer) continue;
    const result = JSON.parse(answer[1]!) as { kind: string; items?: AnsweredDiagnostic[] };
    if (result.kind === 'full') last = result.items ?? [];
  }
  return last;
}

test(
  'an overlay: the autoscaler conflict on the patch line, nothing false on the base or the kustomization, the owner on hover, the quick fix clears it',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const kustomize = requireTool(t, 'kustomize');
    const prepared = cluster && kustomize && requireEditor(t);
    if (!cluster || !kustomize || !prepared) return;
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'e2e-kustomize');
    const files: Record<string, string> = { ...base, ...overlays(namespace) };

    const editor = await startEditor(t, {
      name: 'rendered-overlay',
      ...prepared,
      files,
      // The kustomize binary is the user's own setting (machine scope).
      settings: settingsFor(cluster.kubeconfig, 'admin', { 'kubeConflictHints.kustomizePath': kustomize }),
    });

    // The history: both overlays applied as `kubectl apply -k --server-side` sends them (the real
    // kustomize's output, field manager kubectl), then an autoscaler scales production to 5.
    for (const overlay of ['overlays/staging', 'overlays/production']) {
      const built: SpawnSyncReturns<string> = spawnSync(kustomize, ['build', overlay], {
        cwd: editor.workspace,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(built.status, 0, built.stderr);
      for (const doc of parseAllDocuments(built.stdout)) {
        const object = doc.toJS() as KubeObject | null;
        if (object) objectOf(await apply(conn, 'kubectl', object), `kubectl apply --server-side ${overlay}`);
      }
    }
    await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'prod-web', namespace } }, 5);

    const patchFile = 'overlays/production/replicas.yaml';
    const baseFile = 'base/deployment.yaml';
    const kustomizationFile = 'overlays/production/kustomization.yaml';
    const patch = files[patchFile]!;
    const at = positionOfKey(patch, 'replicas');

    // The patch: the conflict on its `replicas:` line, naming the overlay and the autoscaler.
    await editor.openFile(patchFile);
    const onPatch = (
      await waitForFileProblems(
        editor,
        (ps) => ps.some((p) => p.file === patchFile && isConflict(p) && p.line === at.line),
        `the autoscaler conflict on ${patchFile} line ${at.line}`,
        120_000,
      )
    ).filter(inFile(patchFile));
    assert.deepEqual(
      onPatch.filter((p) => !isConflict(p) && p.severity !== 'info'),
      [],
      'nothing but the conflict on the patch: no deletion predicted from a patch',
    );
    assert.ok(
      onPatch.filter(isConflict).every((p) => p.line === at.line),
      `the conflict only on the replicas line: ${JSON.stringify(onPatch)}`,
    );
    await editor.screenshot('patch-conflict');

    // The hover on the patch line: the rendered object and the owner of its replicas.
    const hover = await editor.hover(at, {
      expect: /Deployment prod-web in overlay production[\s\S]*kube-controller-manager/,
    });
    assert.match(hover, /scale/);
    await editor.screenshot('patch-conflict-hover');
    // Back at the start, where opening the tab again expects the caret.
    await editor.goTo({ line: 1, column: 1 });

    // The base, judged once per overlay: each overlay's object is read (the exists hints on its name,
    // in the server's answer: the positive sign), and nothing false is said — the conflict is the
    // patch's, not the base's. The hints are news, off the Problems panel.
    await editor.openFile(baseFile);
    const nameLine = positionOfKey(files[baseFile]!, 'name').line;
    const bothRead = (items: AnsweredDiagnostic[] | undefined, overlays: readonly string[]) =>
      items !== undefined &&
      overlays.every((o) =>
        items.some(
          (d) =>
            d.code === 'exists' && d.severity === 4 && d.range.start.line === nameLine - 1 && d.message.includes(o),
        ),
      );
    const onBase = (await editor.waitFor(
      async () => lastDiagnosticsAnswer(editor, baseFile),
      (items) => bothRead(items, ['overlay staging', 'overlay production']),
      `the exists hints of both overlays on ${baseFile} line ${nameLine}, in the server's answer`,
      120_000,
    ))!;
    assert.deepEqual(
      onBase.filter((d) => d.severity !== 4 || noise.has(d.code ?? '')),
      [],
      'no conflict, no syntax error, no deletion, no kind-not-served on the base',
    );
    assert.deepEqual(
      (await problemsByFile(editor)).filter(inFile(baseFile)),
      [],
      `the Problems panel lists nothing for ${baseFile}`,
    );
    await editor.screenshot('base-clean');

    // The kustomization: the server's answer for it (from the same renders) holds nothing.
    await editor.openFile(kustomizationFile);
    const answer = await editor.waitFor(
      async () => lastDiagnosticsAnswer(editor, kustomizationFile),
      (items) => items !== undefined,
      `the server's diagnostics for ${kustomizationFile} in the trace`,
    );
    assert.deepEqual(
      answer,
      [],
      `nothing on ${kustomizationFile}: it is not a Kustomization object the cluster would be asked about`,
    );
    const listed = await problemsByFile(editor);
    assert.deepEqual(
      listed.filter(inFile(kustomizationFile)),
      [],
      `the Problems panel lists nothing for ${kustomizationFile}`,
    );
    assert.ok(
      listed.some((p) => p.file === patchFile && isConflict(p)),
      `the panel still lists the patch's conflict, so it was read by file: ${JSON.stringify(listed)}`,
    );
    await editor.screenshot('kustomization-clean');

    // The quick fix on the patch line: take the live value, save, and the re-render clears the conflict.
    await editor.openFile(patchFile);
    await editor.quickFix(
      problemPosition(onPatch.filter(isConflict), at.line),
      /^Use the live value 5 for \.spec\.replicas/,
    );
    const saved = await editor.save();
    assert.match(saved, /^ {2}replicas: 5$/m, 'the fix writes the live value into the patch');
    assert.equal(
      saved.replace(/^ {2}replicas: 5$/m, '  replicas: 3'),
      patch,
      'the fix changes nothing else of the patch',
    );
    await waitForFileProblems(
      editor,
      (ps) => !ps.some(isConflict),
      'the conflict gone once the overlay renders again',
      120_000,
    );
    // The overlay was rendered and judged again, not just dropped: the base still has its hints.
    await editor.openFile(baseFile);
    await editor.waitFor(
      async () => lastDiagnosticsAnswer(editor, baseFile),
      (items) => bothRead(items, ['overlay production']),
      `the hint of overlay production on ${baseFile}, in the server's answer`,
    );
    assert.deepEqual(
      (await problemsByFile(editor)).filter((p) => ours(p) && p.severity !== 'info'),
      [],
      'no error or warning left in the overlay',
    );
    await editor.screenshot('after-quick-fix');
  },
);

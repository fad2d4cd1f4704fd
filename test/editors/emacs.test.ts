// The language server in Emacs with eglot: Debian's Emacs 28 with elpa-eglot and elpa-yaml-mode, in
// batch mode, loading the init.el and .dir-locals.el of docs/editors.md as they stand there (read from
// the doc, so the doc cannot drift from what is tried), driven by test/editors/emacs.el against the
// local kube-apiserver. An autoscaler owns .spec.replicas; the user's manifest sets 3. The kubeconfig's
// current context is one that may not read the object, and only the project's .dir-locals.el names
// the right one: the conflict appears only if eglot delivered the settings. The diagnostic must sit on
// the replicas line in Flymake, the hover must name the owner, the documented ownership command must
// show the live object, and the quick fix picked from eglot-code-actions must clear it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, objectOf, webDeployment, webDeploymentText } from '../support/seed';
import { runEditor } from './editor-process';

const root = path.resolve(import.meta.dirname, '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

/** Emacs's version line when Emacs, eglot and yaml-mode all load; otherwise undefined. */
function emacs(): string | undefined {
  const found = spawnSync(
    'emacs',
    ['--batch', '--eval', "(progn (require 'eglot) (require 'yaml-mode) (princ (emacs-version)))"],
    { encoding: 'utf8' },
  );
  return found.status === 0 ? found.stdout.split('\n')[0] : undefined;
}

/** The ```elisp blocks of docs/editors.md's Emacs section: init.el, .dir-locals.el, the ownership command. */
function documentedElisp(): { init: string; dirLocals: string; ownership: string } {
  const doc = fs.readFileSync(path.join(root, 'docs', 'editors.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Emacs'));
  assert.ok(section, 'docs/editors.md has an Emacs section');
  const blocks = [...section.matchAll(/^```elisp\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 3, 'the Emacs section shows init.el, .dir-locals.el and the ownership command');
  return { init: blocks[0], dirLocals: blocks[1], ownership: blocks[2] };
}

interface EmacsResult {
  steps: string[];
  error?: string;
  mode?: string;
  command?: string[];
  diagnostic?: { line: number; text: string; message: string };
  hover?: string;
  ownership?: string;
  offered?: string[];
  text?: string;
  remaining?: string[];
}

test(
  'Emacs (eglot): the conflict on its line in Flymake, the owner in the hover, and a quick fix that clears it',
  { timeout: 240_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const version = emacs();
    if (!version) {
      // scripts/test.mjs installs them (apt) before the run; a machine without them cannot run this.
      const why =
        'Emacs with eglot and yaml-mode is missing: scripts/test.mjs installs them with apt-get install emacs-nox elpa-eglot elpa-yaml-mode';
      if (process.env.CI === 'true') assert.fail(why);
      t.skip(why);
      return;
    }
    t.diagnostic(version);
    const documented = documentedElisp();
    // The documented per-project value names a context; here it is the one that may read the object.
    assert.match(documented.dirLocals, /:context "staging"/);
    const dirLocals = documented.dirLocals.replace(':context "staging"', ':context "admin"');

    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'emacs');
    const manifest = webDeployment(namespace, 'web');
    objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
    await autoscale(conn, manifest, 5);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-emacs-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const project = path.join(dir, 'project');
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(project);
    fs.mkdirSync(bin);
    // The documented command, `kube-conflict-hints` on PATH, as `npm install -g` would put it there.
    fs.writeFileSync(path.join(bin, 'kube-conflict-hints'), `#!/bin/sh\nexec '${process.execPath}' '${cli}' "$@"\n`, {
      mode: 0o755,
    });
    const kubeconfig = parseYaml(fs.readFileSync(cluster.kubeconfig, 'utf8')) as Record<string, unknown>;
    kubeconfig['current-context'] = 'stranger';
    fs.writeFileSync(path.join(dir, 'kubeconfig'), toYaml(kubeconfig), { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'init.el'), `${documented.init}\n${documented.ownership}`);
    fs.writeFileSync(path.join(project, '.dir-locals.el'), dirLocals);

    const file = path.join(project, 'web.yaml');
    const text = webDeploymentText(namespace);
    fs.writeFileSync(file, text);
    const resultFile = path.join(dir, 'result.json');

    // Batch Emacs loads no init file, and so skips what its startup does before one: activating the
    // installed packages (Debian's elpa-* among them). That comes first, then init.el, then the driver.
    const args = [
      '--batch',
      '--eval',
      '(package-activate-all)',
      '-l',
      path.join(dir, 'init.el'),
      '-l',
      path.join(import.meta.dirname, 'emacs.el'),
    ];
    const stderr = await runEditor('emacs', args, {
      cwd: project,
      env: {
        PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
        // Emacs's own files (~/.emacs.d, project lists) stay in the scratch folder.
        HOME: dir,
        KUBECONFIG: path.join(dir, 'kubeconfig'),
        KCH_MANIFEST: file,
        KCH_RESULT: resultFile,
        KCH_WAIT_MS: '90000',
      },
    });

    assert.ok(fs.existsSync(resultFile), `Emacs wrote no result; stderr: ${stderr}`);
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as EmacsResult;
    assert.equal(
      result.error,
      undefined,
      `the Emacs Lisp script failed after ${result.steps.join(', ')}: ${result.error}\nstderr: ${stderr}`,
    );

    assert.equal(result.mode, 'yaml-mode');
    assert.deepEqual(result.command, ['kube-conflict-hints', 'lsp', '--stdio'], 'eglot started the documented command');
    const replicasLine = text.split('\n').findIndex((l) => l.includes('replicas: 3'));
    assert.equal(result.diagnostic?.line, replicasLine, 'the diagnostic is on the replicas line');
    assert.match(result.diagnostic?.message ?? '', /\.spec\.replicas is managed by "kube-controller-manager"/);
    assert.match(
      result.diagnostic?.text ?? '',
      /^kube-conflict-hints \[field-conflict\]: /,
      'Flymake shows it with its source and code',
    );
    assert.match(result.hover ?? '', /kube-controller-manager/, 'the hover names the owner');
    assert.match(result.hover ?? '', /scale/, 'the hover says it came through the scale subresource');
    assert.match(
      result.ownership ?? '',
      /replicas: 5\s+# kube-controller-manager/,
      'the ownership view shows the live value and its owner',
    );
    assert.ok(
      result.offered?.some((o) => o.startsWith('Remove .spec.replicas')),
      `offered: ${JSON.stringify(result.offered)}`,
    );
    assert.doesNotMatch(result.text ?? '', /replicas:/, 'the fix removed replicas from the buffer');
    assert.match(result.text ?? '', /image: nginx:1\.25/, 'and left the rest alone');
    assert.equal(fs.readFileSync(file, 'utf8'), result.text, 'and the saved file is the fixed text');
    assert.deepEqual(result.steps, ['opened', 'started', 'diagnosed', 'hovered', 'ownership', 'fixed', 'cleared']);
  },
);

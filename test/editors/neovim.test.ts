// The language server in a real editor other than VS Code: Debian's Neovim (0.7, which has no pull
// diagnostics, so this proves the pushed ones), headless, driven by test/editors/neovim.lua with the
// configuration docs/editors.md gives, against the local kube-apiserver. An autoscaler owns
// .spec.replicas; the user's manifest sets 3. The diagnostic must sit on the replicas line, the
// hover must name the owner, and the quick fix picked from the code-action menu must clear it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, objectOf, webDeployment, webDeploymentText } from '../support/seed';
import { runEditor } from './editor-process';

const root = path.resolve(import.meta.dirname, '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

function neovim(): string | undefined {
  const found = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.split('\n')[0] : undefined;
}

interface NeovimResult {
  steps: string[];
  error?: string;
  diagnostic?: { line: number; col: number; message: string };
  hover?: string;
  offered?: string[];
  text?: string;
  remaining?: string[];
}

test(
  'Neovim: the conflict on its line, the owner in the hover, and a quick fix that clears it',
  { timeout: 240_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const version = neovim();
    if (!version) {
      // scripts/test.mjs installs Neovim (apt) before the run; a machine without it cannot run this.
      if (process.env.CI === 'true')
        assert.fail('nvim is not installed: scripts/test.mjs installs it with apt-get install neovim');
      t.skip('nvim is not installed (apt-get install neovim)');
      return;
    }
    t.diagnostic(version);

    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'neovim');
    const manifest = webDeployment(namespace, 'web');
    objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
    await autoscale(conn, manifest, 5);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-neovim-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'web.yaml');
    const text = webDeploymentText(namespace);
    fs.writeFileSync(file, text);
    const resultFile = path.join(dir, 'result.json');

    const stderr = await runEditor(
      'nvim',
      ['--headless', '--clean', '-n', '-i', 'NONE', '-c', `luafile ${path.join(import.meta.dirname, 'neovim.lua')}`],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          // Neovim's own files (swap, shada, logs) stay in the scratch folder.
          HOME: dir,
          XDG_STATE_HOME: path.join(dir, 'state'),
          XDG_DATA_HOME: path.join(dir, 'data'),
          XDG_CONFIG_HOME: path.join(dir, 'config'),
          XDG_CACHE_HOME: path.join(dir, 'cache'),
          // The default of the documented configuration: the kubeconfig comes from KUBECONFIG.
          KUBECONFIG: cluster.kubeconfig,
          KCH_CONTEXT: 'admin',
          KCH_NODE: process.execPath,
          KCH_CLI: cli,
          KCH_MANIFEST: file,
          KCH_RESULT: resultFile,
          KCH_WAIT_MS: '90000',
        },
      },
    );

    assert.ok(fs.existsSync(resultFile), `Neovim wrote no result; stderr: ${stderr}`);
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as NeovimResult;
    assert.equal(result.error, undefined, `the Lua script failed after ${result.steps.join(', ')}: ${result.error}`);

    const replicasLine = text.split('\n').findIndex((l) => l.includes('replicas: 3'));
    assert.equal(result.diagnostic?.line, replicasLine, 'the diagnostic is on the replicas line');
    assert.match(result.diagnostic?.message ?? '', /\.spec\.replicas is managed by "kube-controller-manager"/);
    assert.match(result.hover ?? '', /kube-controller-manager/, 'the hover names the owner');
    assert.match(result.hover ?? '', /scale/, 'the hover says it came through the scale subresource');
    assert.ok(
      result.offered?.some((o) => o.startsWith('Remove .spec.replicas')),
      `offered: ${JSON.stringify(result.offered)}`,
    );
    assert.doesNotMatch(result.text ?? '', /replicas:/, 'the fix removed replicas from the buffer');
    assert.match(result.text ?? '', /image: nginx:1\.25/, 'and left the rest alone');
    assert.deepEqual(result.steps, ['opened', 'started', 'diagnosed', 'hovered', 'fixed', 'cleared']);
  },
);

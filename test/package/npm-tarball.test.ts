// The package as users get it: `npm pack` in the checkout, `npm install <tarball>` in an empty
// folder with no registry to reach (an unreachable registry, an empty cache and --offline: any
// download would fail the install), then the `kube-conflict-hints` command against the local
// kube-apiserver — the check finds the autoscaler's conflict, and `lsp` answers an editor.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, objectOf, webDeployment } from '../support/seed';

const root = path.resolve(import.meta.dirname, '..', '..');

/** What the package may hold: the bundles, the manifest, the README, the licence, schemas, grammars. */
const allowed = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^dist\/(cli|cli-bundle|server|server-bundle|client)\.js$/,
  /^schemas\/[\w.-]+\.json$/,
  /^syntaxes\/[\w.-]+\.json$/,
  /^docs\/conflict-hover\.png$/,
];

function listFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
    );
}

test(
  'npm pack → npm install in an empty folder without a registry → kube-conflict-hints check and lsp work',
  { timeout: 300_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-tarball-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    // No registry can be reached, nothing is cached: an install that needed a download would fail.
    const npmEnv = {
      ...process.env,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_cache: path.join(scratch, 'npm-cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };

    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], {
        cwd: root,
        env: npmEnv,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { filename: string; files: { path: string }[] }[];
    const tarball = path.join(scratch, packed[0]!.filename);
    const packedFiles = packed[0]!.files.map((f) => f.path);
    const outside = packedFiles.filter((f) => !allowed.some((re) => re.test(f)));
    assert.deepEqual(outside, [], `files outside the allow-list: ${outside.join(', ')}`);
    for (const needed of [
      'package.json',
      'dist/cli.js',
      'dist/cli-bundle.js',
      'dist/server.js',
      'dist/server-bundle.js',
      'schemas/findings.schema.json',
    ])
      assert.ok(packedFiles.includes(needed), `${needed} missing from the tarball`);

    const project = path.join(scratch, 'project');
    fs.mkdirSync(project);
    const install = spawnSync('npm', ['install', '--offline', '--no-package-lock', tarball], {
      cwd: project,
      env: npmEnv,
      encoding: 'utf8',
    });
    assert.equal(install.status, 0, `npm install failed:\n${install.stdout}\n${install.stderr}`);
    // The bundles carry every dependency: the package is the only thing installed.
    assert.deepEqual(
      fs.readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.')),
      ['kube-conflict-hints'],
    );
    const installed = JSON.parse(
      fs.readFileSync(path.join(project, 'node_modules', 'kube-conflict-hints', 'package.json'), 'utf8'),
    ) as { dependencies?: object };
    assert.equal(installed.dependencies, undefined, 'no runtime dependencies to download');
    assert.ok(
      listFiles(path.join(project, 'node_modules', 'kube-conflict-hints')).every((f) =>
        allowed.some((re) => re.test(f)),
      ),
    );

    // A history: applied by kubectl, then an autoscaler set replicas through the scale subresource.
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'tarball');
    const manifest = webDeployment(namespace, 'web');
    objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
    await autoscale(conn, manifest, 5);
    fs.writeFileSync(path.join(project, 'web.yaml'), JSON.stringify(manifest, null, 2));

    // As docs/ci.md says to run it in CI: npx finds the installed command, and must not download it.
    const check = spawnSync('npx', ['--no-install', 'kube-conflict-hints', 'check', 'web.yaml'], {
      cwd: project,
      env: { ...npmEnv, KUBECONFIG: cluster.kubeconfig },
      encoding: 'utf8',
    });
    assert.equal(check.status, 1, `exit 1 for a conflict; stderr: ${check.stderr}`);
    assert.match(
      check.stdout,
      /^web\.yaml:\d+:\d+ error field-conflict \.spec\.replicas is managed by "kube-controller-manager"/m,
    );
    const version = spawnSync('npx', ['--no-install', 'kube-conflict-hints', '--version'], {
      cwd: project,
      env: npmEnv,
      encoding: 'utf8',
    });
    assert.equal(version.stdout.trim(), JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);

    // As the README installs it for everyone: `npm install -g --offline` of the tarball (into a prefix
    // of the test's own), the command then found on that prefix's bin folder.
    const global = path.join(scratch, 'global');
    const installGlobal = spawnSync('npm', ['install', '-g', '--offline', '--prefix', global, tarball], {
      cwd: scratch,
      env: npmEnv,
      encoding: 'utf8',
    });
    assert.equal(installGlobal.status, 0, `npm install -g failed:\n${installGlobal.stdout}\n${installGlobal.stderr}`);
    const globalVersion = spawnSync(path.join(global, 'bin', 'kube-conflict-hints'), ['--version'], {
      cwd: scratch,
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    });
    assert.equal(globalVersion.status, 0, globalVersion.stderr);
    assert.equal(
      globalVersion.stdout.trim(),
      JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version,
    );

    // The installed `lsp` command answers an editor's initialize.
    const bin = path.join(project, 'node_modules', '.bin', 'kube-conflict-hints');
    const serverInfo = await new Promise<string>((resolve, reject) => {
      const child = spawn(bin, ['lsp', '--stdio'], {
        cwd: project,
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no answer to initialize; got: ${out}`));
      }, 60_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const match = /"serverInfo":\{"name":"([^"]+)"/.exec(out);
        if (match) {
          clearTimeout(timer);
          child.kill();
          resolve(match[1]!);
        }
      });
      child.on('error', reject);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { processId: null, rootUri: null, capabilities: {} },
      });
      child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    assert.equal(serverInfo, 'kube-conflict-hints');
  },
);

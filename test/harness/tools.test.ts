// The rendering tools the tests use are the real ones, at the versions test/tools/ pins: each runs
// and says its version; `helm create` scaffolds the chart users start from, and `helm template`
// renders it into manifests the product reads without a syntax problem; kustomize renders an
// overlay as `kubectl kustomize` does. Without the module proxy, building them fails with one line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { repoRoot } from '../support/cluster';
import { pinnedTools, requireTool, type ToolName } from '../tools/tools';

const pinned = new Map(pinnedTools().map((t) => [t.name, t]));

function tempDir(t: TestContext, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `kch-${prefix}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs a tool with a home of its own: Helm keeps its caches and repositories under it. */
function run(binary: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const home = path.join(cwd, '.home');
  const r = spawnSync(binary, args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
    },
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const versionCommands: { name: ToolName; args: string[] }[] = [
  { name: 'helm4', args: ['version', '--template', '{{ .Version }}'] },
  { name: 'helm3', args: ['version', '--template', '{{ .Version }}'] },
  { name: 'kustomize', args: ['version'] },
];

for (const { name, args } of versionCommands) {
  test(`${name} runs and reports the pinned version ${pinned.get(name)!.version}`, (t) => {
    const binary = requireTool(t, name);
    if (!binary) return;
    const r = run(binary, args, tempDir(t, name));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), pinned.get(name)!.version);
  });
}

for (const name of ['helm4', 'helm3'] as const) {
  test(`${name}: helm create scaffolds a chart that helm template renders into manifests without a syntax problem`, (t) => {
    const binary = requireTool(t, name);
    if (!binary) return;
    const dir = tempDir(t, name);
    const created = run(binary, ['create', 'shop'], dir);
    assert.equal(created.status, 0, created.stderr);
    for (const f of ['Chart.yaml', 'values.yaml', 'templates/deployment.yaml', 'templates/_helpers.tpl']) {
      assert.ok(fs.existsSync(path.join(dir, 'shop', f)), `helm create wrote shop/${f}`);
    }
    // The template is what users edit, and it is not YAML: the product must never parse it as such.
    assert.match(
      fs.readFileSync(path.join(dir, 'shop', 'templates', 'deployment.yaml'), 'utf8'),
      /\{\{-? include "shop\.fullname" \. }}/,
    );

    const rendered = run(binary, ['template', 'web', './shop', '--namespace', 'store'], dir);
    assert.equal(rendered.status, 0, rendered.stderr);
    // Each object says the template it comes from: what maps a finding back to the source.
    assert.match(rendered.stdout, /^# Source: shop\/templates\/deployment\.yaml$/m);
    const parsed = parseManifestText(rendered.stdout);
    assert.deepEqual(parsed.problems, []);
    const kinds = parsed.resources.map((r) => `${r.kind}/${r.name}`);
    for (const expected of ['ServiceAccount/web-shop', 'Service/web-shop', 'Deployment/web-shop'])
      assert.ok(kinds.includes(expected), `${expected} in ${kinds.join(', ')}`);
    const deployment = parsed.resources.find((r) => r.kind === 'Deployment')!;
    assert.equal((deployment.object.spec as { replicas?: number }).replicas, 1, 'replicaCount: 1 from values.yaml');
  });
}

test('kustomize renders an overlay (namePrefix, namespace, a patch) as kubectl kustomize does', (t) => {
  const binary = requireTool(t, 'kustomize');
  if (!binary) return;
  const dir = tempDir(t, 'kustomize');
  const files: Record<string, string> = {
    'base/kustomization.yaml': 'resources:\n- deployment.yaml\n',
    'base/deployment.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n',
    'overlay/kustomization.yaml':
      'namePrefix: prod-\nnamespace: shop\nresources:\n- ../base\npatches:\n- path: replicas.yaml\n',
    'overlay/replicas.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n',
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const ours = run(binary, ['build', 'overlay'], dir);
  assert.equal(ours.status, 0, ours.stderr);
  const parsed = parseManifestText(ours.stdout);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(
    parsed.resources.map((r) => [r.kind, r.namespace, r.name, (r.object.spec as { replicas: number }).replicas]),
    [['Deployment', 'shop', 'prod-web', 3]],
  );
  const kubectl = run('kubectl', ['kustomize', 'overlay'], dir);
  assert.equal(kubectl.status, 0, kubectl.stderr);
  assert.deepEqual(
    parseManifestText(kubectl.stdout).resources.map((r) => r.object),
    parsed.resources.map((r) => r.object),
  );
});

test('building the tools without the module proxy fails with one clear line', (t) => {
  const tmp = tempDir(t, 'tools-build');
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test', 'tools', 'build.ts')], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: {
      ...process.env,
      KCH_TOOLS_DIR: path.join(tmp, 'tools'),
      GOPROXY: 'off',
      GOMODCACHE: path.join(tmp, 'modcache'),
      GOFLAGS: '-mod=mod',
    },
    timeout: 120_000,
  });
  assert.equal(r.status, 1);
  // A progress line may precede the failure (the download starts before it can fail).
  const failures = r.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('tools: building '));
  assert.equal(failures.length, 1, r.stderr);
  assert.match(
    failures[0]!,
    /^tools: cannot download the Go modules for helm4 \(is the Go module proxy reachable\? GOPROXY=off\)/,
  );
  assert.equal(r.stdout, '', 'no tool paths are printed');
});

test('building the tools without Go fails with one clear line', (t) => {
  const tmp = tempDir(t, 'tools-nogo');
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test', 'tools', 'build.ts')], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, KCH_TOOLS_DIR: path.join(tmp, 'tools'), PATH: '/nonexistent' },
    timeout: 120_000,
  });
  assert.equal(r.status, 1);
  assert.deepEqual(
    r.stderr.split('\n').filter((l) => l.trim()),
    [
      'tools: Go is not installed (no `go` on PATH): Helm and kustomize for the tests are built from source with Go >= 1.26',
    ],
  );
});

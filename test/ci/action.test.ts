// The composite GitHub Action (action.yml): valid for GitHub Actions' metadata syntax (the subset in
// test/ci/fixtures/github-action.schema.json), SARIF uploaded by GitHub's official action, inputs
// never pasted into scripts — and its check step, run here by bash as the runner runs it, against
// the local kube-apiserver with a kubeconfig from a "secret", and against a snapshot.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { scratchDir, writeFiles } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { apply, autoscale, connect, freshNamespace, objectOf, webDeployment } from '../support/seed';

const root = path.resolve(import.meta.dirname, '..', '..');

interface Step {
  id?: string;
  name?: string;
  if?: string;
  run?: string;
  shell?: string;
  uses?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parseYaml(fs.readFileSync(path.join(root, 'action.yml'), 'utf8')) as Action;

test("action.yml is valid for GitHub Actions' metadata syntax", () => {
  const schema = JSON.parse(
    fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'github-action.schema.json'), 'utf8'),
  );
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  assert.ok(validate(action), JSON.stringify(validate.errors, null, 2));
  // The outputs and later steps name steps that exist.
  const ids = new Set(action.runs.steps.map((s) => s.id).filter(Boolean));
  const referenced =
    JSON.stringify(action)
      .match(/steps\.([\w-]+)\./g)
      ?.map((r) => r.split('.')[1]) ?? [];
  assert.deepEqual(
    referenced.filter((id) => !ids.has(id)),
    [],
  );
  // And the inputs they read are declared.
  const inputs =
    JSON.stringify(action.runs)
      .match(/inputs\.([\w-]+)/g)
      ?.map((r) => r.split('.')[1]!) ?? [];
  assert.deepEqual(
    inputs.filter((name) => !(name in action.inputs)),
    [],
  );
});

test("action.yml uploads SARIF with GitHub's own action, passes inputs to scripts only through the environment, and installs this version", () => {
  const upload = action.runs.steps.find((s) => s.uses?.startsWith('github/codeql-action/upload-sarif@'));
  assert.ok(upload, 'an upload-sarif step');
  assert.match(upload.uses!, /^github\/codeql-action\/upload-sarif@v\d+$/);
  assert.equal(upload.with?.sarif_file, '${{ steps.check.outputs.sarif }}');
  for (const step of action.runs.steps) {
    // An input pasted into a script would be run as code (a context name with `$(...)` in it).
    assert.doesNotMatch(step.run ?? '', /\$\{\{/, `step "${step.name}" pastes an expression into its script`);
  }
  const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
  assert.equal(action.inputs.version?.default, version, 'the action installs the version it is released with');
});

/** Runs the action's check step with bash, as the runner would with these inputs. */
function runCheckStep(inputs: Record<string, string>, workspace: string) {
  const step = action.runs.steps.find((s) => s.id === 'check')!;
  const temp = fs.mkdtempSync(path.join(workspace, '.runner-temp-'));
  const output = path.join(temp, 'github-output');
  fs.writeFileSync(output, '');
  const bin = path.join(temp, 'kube-conflict-hints');
  fs.writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${path.join(root, 'dist', 'cli.js')}" "$@"\n`, {
    mode: 0o755,
  });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: temp,
    RUNNER_TEMP: temp,
    GITHUB_OUTPUT: output,
    KCH_BIN: bin,
  };
  for (const [name, value] of Object.entries(step.env ?? {})) {
    const input = /^\$\{\{ inputs\.([\w-]+) \}\}$/.exec(value)![1]!;
    env[name] = inputs[input] ?? action.inputs[input]?.default ?? '';
  }
  const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
    cwd: workspace,
    env,
    encoding: 'utf8',
  });
  const outputs = Object.fromEntries(
    fs
      .readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, outputs, temp };
}

let prepared: Promise<{ workspace: string; kubeconfig: string; replicasLine: number }> | undefined;
function workspaceWithConflict(t: TestContext) {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  prepared ??= (async () => {
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'action');
    const manifest = webDeployment(namespace, 'web');
    objectOf(await apply(conn, 'kubectl', manifest), 'apply as kubectl');
    await autoscale(conn, manifest, 5);
    const workspace = scratchDir('action');
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    writeFiles(workspace, { 'k8s/web.yaml': text });
    return {
      workspace,
      kubeconfig: cluster.kubeconfig,
      replicasLine: text.split('\n').findIndex((l) => l.includes('"replicas"')) + 1,
    };
  })();
  return prepared;
}

function assertAnnotatedAndSarif(result: ReturnType<typeof runCheckStep>, replicasLine: number) {
  assert.equal(result.status, 0, `findings leave the failing to the last step; stderr: ${result.stderr}`);
  assert.equal(result.outputs['exit-code'], '1');
  assert.match(
    result.stdout,
    new RegExp(
      `^::error file=k8s/web\\.yaml,line=${replicasLine},col=\\d+,endLine=${replicasLine},endColumn=\\d+,title=[^:]*\\(field-conflict\\)::.*\\.spec\\.replicas is managed by "kube-controller-manager"`,
      'm',
    ),
  );
  const sarif = JSON.parse(fs.readFileSync(result.outputs.sarif!, 'utf8')) as {
    version: string;
    runs: {
      results: {
        ruleId: string;
        locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[];
      }[];
    }[];
  };
  assert.equal(sarif.version, '2.1.0');
  const conflict = sarif.runs[0]!.results.find((r) => r.ruleId === 'field-conflict');
  assert.equal(conflict?.locations[0]?.physicalLocation.artifactLocation.uri, 'k8s/web.yaml');
  assert.equal(conflict?.locations[0]?.physicalLocation.region.startLine, replicasLine);
}

test(
  "the action's check step with a kubeconfig from a secret: annotations, SARIF, exit code 1 as an output, no kubeconfig left behind",
  { timeout: 120_000 },
  async (t) => {
    const ready = await workspaceWithConflict(t);
    if (!ready) return;
    const result = runCheckStep(
      { paths: 'k8s', kubeconfig: fs.readFileSync(ready.kubeconfig, 'utf8'), context: 'admin' },
      ready.workspace,
    );
    assertAnnotatedAndSarif(result, ready.replicasLine);
    assert.deepEqual(
      fs.readdirSync(result.temp).filter((f) => f.includes('kubeconfig')),
      [],
      'the secret is not left on disk',
    );
  },
);

test(
  "the action's check step against a snapshot: the same annotations, no cluster",
  { timeout: 120_000 },
  async (t) => {
    const ready = await workspaceWithConflict(t);
    if (!ready) return;
    const snapshot = spawnSync(
      process.execPath,
      [path.join(root, 'dist', 'cli.js'), 'snapshot', '--out', 'snap', '--kubeconfig', ready.kubeconfig, 'k8s'],
      { cwd: ready.workspace, encoding: 'utf8' },
    );
    assert.equal(snapshot.status, 0, snapshot.stderr);
    // KUBECONFIG points nowhere: a snapshot check must not need a cluster.
    const result = runCheckStep({ paths: 'k8s', snapshot: 'snap' }, ready.workspace);
    assertAnnotatedAndSarif(result, ready.replicasLine);
  },
);

test(
  "the action's check step fails at once on a cluster problem (exit 2), with the reason in the log",
  { timeout: 120_000 },
  async (t) => {
    const ready = await workspaceWithConflict(t);
    if (!ready) return;
    const result = runCheckStep(
      { paths: 'k8s', kubeconfig: fs.readFileSync(ready.kubeconfig, 'utf8'), context: 'no-such-context' },
      ready.workspace,
    );
    assert.equal(result.status, 2);
    assert.equal(result.outputs['exit-code'], '2');
    assert.match(result.stderr, /no-such-context/);
  },
);

// The force preview on the command line, against the real kube-apiserver: under each field conflict
// of `check`, what forcing would take from that manager and who takes it back, and the command to
// force with the check's own cluster flags; in JSON the object's `forcePreview` (valid against
// schemas/findings.schema.json), in SARIF the result's properties. The same judgement as the
// editor's "Preview forcing…" (core/findings/force-preview.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { stringify } from 'yaml';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { connect, freshNamespace } from '../support/seed';
import { autoscaledAndEdited } from '../support/seed-scenarios';
import { lineOf, repoRoot, runCli, scratchDir, writeFiles } from './cli-process';

interface Setup {
  cluster: TestClusterInfo;
  namespace: string;
  dir: string;
  text: string;
}

let setup: Promise<Setup> | undefined;

/** A Deployment applied, an autoscaler targeting it scaling it through /scale, its image edited by hand. */
async function prepared(t: TestContext): Promise<Setup | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  setup ??= (async () => {
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'cli-force');
    const { manifest } = await autoscaledAndEdited(admin, namespace, 'web-hpa');
    const dir = scratchDir('force');
    const text = stringify(manifest);
    writeFiles(dir, { 'k8s/web.yaml': text });
    return { cluster, namespace, dir, text };
  })();
  return setup;
}

const imagePath = '.spec.template.spec.containers[name="app"].image';

test('text: under each conflict what forcing takes from whom and who takes it back, then the command', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await runCli(['check', '--kubeconfig', s.cluster.kubeconfig, '--context', 'admin', 'k8s/web.yaml'], {
    cwd: s.dir,
  });
  assert.equal(run.status, 1, run.stderr);
  const lines = run.stdout.split('\n');
  const header = lines.indexOf(`deployments.apps/web (namespace ${s.namespace})`);
  assert.ok(header >= 0, run.stdout);
  assert.deepEqual(lines.slice(header + 1, lines.indexOf('', header)), [
    `k8s/web.yaml:${lineOf(s.text, /^ {2}replicas:/)}:13 error field-conflict .spec.replicas is managed by "kube-controller-manager" with subresource "scale" using apps/v1 (an autoscaler): live 5, manifest 3 — kubectl apply --server-side would fail`,
    '  forcing takes .spec.replicas from kube-controller-manager (Update, scale), which will take it back: an autoscaler (HorizontalPodAutoscaler web-hpa) scales this Deployment',
    `k8s/web.yaml:${lineOf(s.text, /image: nginx/)}:18 error field-conflict ${imagePath} is managed by "kubectl-edit" using apps/v1 (a manual kubectl edit): live "nginx:1.26", manifest "nginx:1.25" — kubectl apply --server-side would fail`,
    `  forcing takes ${imagePath} from kubectl-edit (Update); nothing is known to take it back (a manual kubectl edit)`,
    `  to force: kubectl apply --server-side --force-conflicts --field-manager=kubectl --kubeconfig=${s.cluster.kubeconfig} --context=admin -f k8s/web.yaml`,
  ]);
});

test("json: the object's forcePreview, valid against the schema; sarif: each conflict's result carries its part", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await runCli(
    [
      'check',
      '--kubeconfig',
      s.cluster.kubeconfig,
      '--context',
      'admin',
      '-n',
      s.namespace,
      '--field-manager',
      'ci-deploy',
      '--format',
      'json',
      'k8s/web.yaml',
    ],
    { cwd: s.dir },
  );
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as {
    objects: {
      forcePreview?: {
        losses: {
          manager: string;
          operation: string;
          subresource?: string;
          time?: string;
          fields: { path: string; liveValue?: unknown; manifestValue?: unknown }[];
          takesBack?: { certainty: string; kind: string; by: string };
        }[];
        command: string;
      };
    }[];
  };
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(
    JSON.parse(fs.readFileSync(path.join(repoRoot, 'schemas/findings.schema.json'), 'utf8')),
  );
  assert.ok(validate(report), ajv.errorsText(validate.errors));
  const preview = report.objects.find((o) => o.forcePreview)?.forcePreview;
  assert.ok(preview, run.stdout);
  assert.deepEqual(
    preview.losses.map((l) => ({
      manager: l.manager,
      operation: l.operation,
      subresource: l.subresource,
      fields: l.fields,
      takesBack: l.takesBack && `${l.takesBack.by} ${l.takesBack.certainty} (${l.takesBack.kind})`,
    })),
    [
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'scale',
        fields: [{ path: '.spec.replicas', liveValue: 5, manifestValue: 3 }],
        takesBack: 'kube-controller-manager will (autoscaler)',
      },
      {
        manager: 'kubectl-edit',
        operation: 'Update',
        subresource: undefined,
        fields: [{ path: imagePath, liveValue: 'nginx:1.26', manifestValue: 'nginx:1.25' }],
        takesBack: undefined,
      },
    ],
  );
  assert.match(preview.losses[1]!.time ?? '', /^20\d\d-/);
  // The manifest names its namespace: the command repeats the other flags, not -n (kubectl refuses one that differs).
  assert.equal(
    preview.command,
    `kubectl apply --server-side --force-conflicts --field-manager=ci-deploy --kubeconfig=${s.cluster.kubeconfig} --context=admin -f k8s/web.yaml`,
  );

  const sarif = await runCli(
    ['check', '--kubeconfig', s.cluster.kubeconfig, '--context', 'admin', '--format', 'sarif', 'k8s/web.yaml'],
    { cwd: s.dir },
  );
  assert.equal(sarif.status, 1, sarif.stderr);
  const results = (
    JSON.parse(sarif.stdout) as {
      runs: {
        results: {
          ruleId: string;
          properties?: {
            path?: string;
            forcePreview?: { text: string; manager: string; takesBack?: { certainty: string } };
          };
        }[];
      }[];
    }
  ).runs[0]!.results;
  const conflicts = results.filter((r) => r.ruleId === 'field-conflict');
  assert.deepEqual(
    conflicts.map((r) => [
      r.properties?.path,
      r.properties?.forcePreview?.manager,
      r.properties?.forcePreview?.takesBack?.certainty,
    ]),
    [
      ['.spec.replicas', 'kube-controller-manager', 'will'],
      [imagePath, 'kubectl-edit', undefined],
    ],
  );
  assert.match(
    conflicts[0]!.properties!.forcePreview!.text,
    /which will take it back: an autoscaler \(HorizontalPodAutoscaler web-hpa\)/,
  );
});

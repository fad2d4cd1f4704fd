// `npm run demo`: the product on a real API server from a clean clone: about 15 minutes the first time (building kube-apiserver and etcd), seconds after.
// Starts the local kube-apiserver (building it the first time), writes a realistic history into the
// namespace kch-demo through the seeding helpers — an autoscaler, a `kubectl edit`, a Helm release,
// a ConfigMap made with `kubectl create`, an export that went stale — then runs the command-line
// check on examples/ and says how to see the same in VS Code.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ClusterError, repoRoot, up, withClusterLock } from './cluster';
import { helmInstalled, editedAndAutoscaled } from './seed-scenarios';
import {
  apply,
  configMap,
  connect,
  create,
  deleteObject,
  get,
  kubectlEdit,
  objectOf,
  type Connection,
  type KubeObject,
} from './seed';

const namespace = 'kch-demo';
const examples = path.join(repoRoot, 'examples');
const exportedFile = path.join(examples, 'apply', 'feature-flags.yaml');
const cli = path.join(repoRoot, 'dist', 'cli.js');

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Every object the demo writes, removed first so that the demo can run again on the same cluster. */
const demoObjects = [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } },
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shop-web', namespace } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-config', namespace } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'feature-flags', namespace } },
];

async function seed(conn: Connection): Promise<void> {
  const ns = await create(conn, 'kubectl-create', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  if (!ns.ok && ns.status !== 409) objectOf(ns, `namespace ${namespace}`);
  for (const ref of demoObjects) {
    const gone = await deleteObject(conn, ref);
    if (!gone.ok && gone.status !== 404) objectOf(gone, `delete ${ref.kind} ${ref.metadata.name}`);
  }

  say(`  web           kubectl apply --server-side (replicas 3, nginx:1.25), kubectl edit (image nginx:1.26),`);
  say(`                an autoscaler scales it to 5 through the scale subresource`);
  await editedAndAutoscaled(conn, namespace, 'web');
  say(`  shop-*        helm install shop: a Deployment and a ConfigMap applied by the field manager "helm"`);
  await helmInstalled(conn, namespace, 'shop');
  say(`  settings      kubectl create configmap settings`);
  objectOf(
    await create(conn, 'kubectl-create', configMap(namespace, 'settings', { retries: '3', timeout: '30s' })),
    'create settings',
  );

  say(`  feature-flags applied, exported with kubectl get -o yaml to examples/apply/feature-flags.yaml,`);
  say(`                then someone turned checkout on with kubectl edit: the export is now stale`);
  const flags = configMap(namespace, 'feature-flags', { checkout: 'off', search: 'on' });
  objectOf(await apply(conn, 'kubectl', flags), 'apply feature-flags');
  writeExport(objectOf(await get(conn, flags), 'read feature-flags'));
  objectOf(await kubectlEdit(conn, flags, { data: { checkout: 'on' } }), 'kubectl edit feature-flags');
}

/** What `kubectl get configmap feature-flags -o yaml` prints (managedFields hidden, as kubectl does by default). */
function writeExport(live: KubeObject): void {
  const { managedFields: _hidden, ...metadata } = live.metadata;
  const exported = { ...live, metadata };
  const header =
    '# Exported with `kubectl get configmap feature-flags -o yaml` by npm run demo; the object has\n# changed since, so the resourceVersion below is stale.\n';
  // YAML 1.1 quoting, as kubectl prints: `off` unquoted would be read back as false.
  fs.writeFileSync(exportedFile, header + toYaml(exported, { version: '1.1' }));
}

/** dist/cli.js, bundled by the project's own bundle script (only the command line: the demo needs no more). */
function buildCli(): void {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'bundle.mjs'), '--only=cli'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('bundling the command line failed');
}

/** Runs the check, shows it as the user would type it, and returns its output. */
function check(kubeconfig: string, args: string[]): { output: string; status: number | null } {
  const shown = ['npx', 'kube-conflict-hints', 'check', '--kubeconfig', path.relative(repoRoot, kubeconfig), ...args];
  say(`\n$ ${shown.join(' ')}`);
  const run = spawnSync(process.execPath, [cli, 'check', '--kubeconfig', kubeconfig, ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  say(`(exit ${run.status}: ${run.status === 1 ? 'findings' : run.status === 0 ? 'clean' : 'error'})`);
  return { output: run.stdout, status: run.status };
}

async function main(): Promise<number> {
  say('Starting the local API server (the first run builds kube-apiserver and etcd: about 15 minutes on two cores)...');
  const env = await withClusterLock(up);
  process.env.KCH_KUBECONFIG = env.kubeconfig;
  say(`kube-apiserver at ${env.server}\n\nWriting a history into namespace ${namespace}:`);
  await seed(connect('admin', env.kubeconfig));
  buildCli();

  // The check needs only reads: the read-only user `viewer` is enough.
  const applied = check(env.kubeconfig, ['--context', 'viewer', 'examples/apply']);
  const created = check(env.kubeconfig, ['--context', 'viewer', '--mode', 'create', 'examples/create']);
  say('\nThe same, confirmed by the API server itself with dry runs (dryRun=All: nothing is stored):');
  const verified = check(env.kubeconfig, ['--context', 'admin', '--verify', 'examples/apply']);

  const expected: [string, string][] = [
    ['field-conflict', applied.output],
    ['stale-resource-version', applied.output],
    ['already-exists', created.output],
  ];
  const missing = expected
    .filter(([code, output]) => !new RegExp(`^examples/\\S+:\\d+:\\d+ \\w+ ${code} `, 'm').test(output))
    .map(([code]) => code);
  if (missing.length > 0 || verified.status !== 1 || /dry-run-differs/.test(verified.output)) {
    process.stderr.write(
      `demo: the check did not show what the history should cause (missing: ${missing.join(', ') || 'none'}; verify exit ${verified.status})\n`,
    );
    return 1;
  }

  say(`
To see the same in VS Code:
  npm run package && code --install-extension dist/kube-conflict-hints.vsix
  then in the settings: "kubeConflictHints.kubeconfig": "${env.kubeconfig}",
                        "kubeConflictHints.context": "viewer"
  and open the folder examples/: the findings above show on the exact keys, as you type.
Offline, for CI: npx kube-conflict-hints snapshot --kubeconfig ${path.relative(repoRoot, env.kubeconfig)} --out snap examples
                 npx kube-conflict-hints check --snapshot snap examples/apply
The local API server keeps running for that; stop it with: npm run cluster:down`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`demo: ${e instanceof ClusterError || e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);

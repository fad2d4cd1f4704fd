// Several clusters at once, for the tests of checks across contexts: the cluster the run already
// uses (npm test starts it) plays `staging`, and two more real API servers, each with its own port,
// etcd, certificates and tokens, play `prod-eu` and `prod-us`. They are started on first use by the
// project's own cluster script with a state directory of their own (.cache/fleet/<name>), shared by
// every test file of a run, and stopped by scripts/test.mjs at its end.
//
// A kubeconfig with all of them is written per test folder: contexts `staging`, `prod-eu`,
// `prod-us`, plus `gone` (a port where nothing listens: refused at once) and `silent` (a TCP server
// that accepts and never answers: only a time limit ends it).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { withLock } from './cluster';
import { startLatencyProxy } from './latency-proxy';
import { apply, autoscale, configMap, connect, create, kubectlEdit, objectOf, webDeployment } from './seed';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const clusterCli = path.join(repoRoot, 'test', 'support', 'cluster-cli.ts');
export const fleetRoot = path.join(repoRoot, '.cache', 'fleet');
export const extraClusters = ['prod-eu', 'prod-us'] as const;

export interface FleetCluster {
  readonly name: string;
  /** The admin kubeconfig of that cluster alone (contexts admin, viewer, stranger). */
  readonly kubeconfig: string;
  readonly server: string;
}

function clusterCliRun(command: 'up', name: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', clusterCli, command], {
    cwd: repoRoot,
    env: { ...process.env, KCH_CLUSTER_STATE_DIR: path.join(fleetRoot, name) },
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10 * 60_000,
  });
  return { status: r.status, stderr: r.stderr };
}

let started: Promise<FleetCluster[]> | undefined;

/** The two extra clusters, started (or found running) once per process. */
export function extraFleet(): Promise<FleetCluster[]> {
  started ??= withLock(path.join(repoRoot, '.cache', 'fleet.lock'), async () => {
    fs.mkdirSync(fleetRoot, { recursive: true });
    const out: FleetCluster[] = [];
    for (const name of extraClusters) {
      const r = clusterCliRun('up', name);
      if (r.status !== 0) throw new Error(`starting the cluster ${name} failed: ${r.stderr.slice(-2000)}`);
      const env = JSON.parse(fs.readFileSync(path.join(fleetRoot, name, 'env.json'), 'utf8')) as {
        kubeconfig: string;
        server: string;
      };
      out.push({ name, kubeconfig: env.kubeconfig, server: env.server });
    }
    return out;
  });
  return started;
}

/** A TCP port that accepts connections and never says a word, for as long as the process lives. */
async function silentServer(): Promise<number> {
  const server = net.createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return (server.address() as net.AddressInfo).port;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface KubeconfigFile {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
}

/**
 * A kubeconfig in `dir` holding every cluster of the fleet as a context (the run's own cluster as
 * `staging`), each with `user` (admin by default) and `namespace`, plus `gone` and `silent`.
 */
export async function fleetKubeconfig(
  dir: string,
  staging: string,
  options: {
    user?: 'admin' | 'viewer' | 'stranger';
    namespace?: string;
    /** Also contexts `copy-1` … `copy-N`, each another name for staging, prod-eu or prod-us in turn (for the bench). */
    copies?: number;
    /** Each cluster reached through a relay that adds this round trip (test/support/latency-proxy.ts). */
    roundTripMs?: number;
  } = {},
): Promise<{ kubeconfig: string; clusters: Record<string, string> }> {
  const user = options.user ?? 'admin';
  const sources: [string, string][] = [
    ['staging', staging],
    ...(await extraFleet()).map((c): [string, string] => [c.name, c.kubeconfig]),
  ];
  const merged: KubeconfigFile = { clusters: [], users: [], contexts: [] };
  const clusters: Record<string, string> = {};
  for (const [name, file] of sources) {
    const k = parseYaml(fs.readFileSync(file, 'utf8')) as KubeconfigFile;
    const cluster = k.clusters[0];
    const server = options.roundTripMs
      ? (await startLatencyProxy(String(cluster.cluster.server), options.roundTripMs / 2)).url
      : cluster.cluster.server;
    merged.clusters.push({ name, cluster: { ...cluster.cluster, server } });
    clusters[name] = file;
    merged.users.push({ name: `${name}-${user}`, user: k.users.find((u) => u.name === user)!.user });
    merged.contexts.push({
      name,
      context: { cluster: name, user: `${name}-${user}`, namespace: options.namespace ?? 'default' },
    });
  }
  for (let i = 0; i < (options.copies ?? 0); i++) {
    const of = merged.contexts[i % sources.length].context;
    merged.contexts.push({ name: `copy-${i + 1}`, context: { ...of } });
  }
  // Unreachable in two ways, with the staging cluster's credentials (never sent: nothing answers).
  const anyUser = merged.users[0].user;
  for (const [name, port] of [
    ['gone', await closedPort()],
    ['silent', await silentServer()],
  ] as const) {
    merged.clusters.push({ name, cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } });
    merged.users.push({ name, user: anyUser });
    merged.contexts.push({ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } });
  }
  const kubeconfig = path.join(dir, 'fleet-kubeconfig');
  fs.writeFileSync(kubeconfig, toYaml({ apiVersion: 'v1', kind: 'Config', ...merged, 'current-context': 'staging' }), {
    mode: 0o600,
  });
  return { kubeconfig, clusters };
}

/**
 * The fleet's histories in a fresh namespace of each cluster (the command line's and the editor's
 * fleet tests read the same): the Deployment `web` applied by kubectl everywhere but prod-us, its
 * image then edited by hand in staging and its replicas scaled by the autoscaler in prod-eu; the
 * ConfigMap `settings` applied in all three, then edited by hand the same way in both production
 * clusters. Returns the namespace and the manifests as written (web.yaml: replicas on line 9,
 * image on line 20; settings.yaml: mode on line 7).
 */
export async function seedFleetHistories(
  clusters: Record<string, string>,
): Promise<{ namespace: string; files: Record<'web.yaml' | 'settings.yaml', string> }> {
  const namespace = `fleet-${Math.random().toString(36).slice(2, 8)}`;
  const conns = Object.fromEntries(Object.entries(clusters).map(([name, file]) => [name, connect('admin', file)]));
  for (const conn of Object.values(conns))
    objectOf(
      await create(conn, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
      'namespace',
    );
  const web = webDeployment(namespace, 'web');
  objectOf(await apply(conns.staging!, 'kubectl', web), 'apply web in staging');
  objectOf(
    await kubectlEdit(conns.staging!, web, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } },
    }),
    'edit web in staging',
  );
  objectOf(await apply(conns['prod-eu']!, 'kubectl', web), 'apply web in prod-eu');
  await autoscale(conns['prod-eu']!, web, 5);
  const settings = configMap(namespace, 'settings', { mode: 'fast' });
  for (const name of ['staging', 'prod-eu', 'prod-us'])
    objectOf(await apply(conns[name]!, 'kubectl', settings), `apply settings in ${name}`);
  for (const name of ['prod-eu', 'prod-us'])
    objectOf(await kubectlEdit(conns[name]!, settings, { data: { mode: 'safe' } }), `edit settings in ${name}`);
  return {
    namespace,
    files: {
      'web.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: web',
        `  namespace: ${namespace}`,
        '  labels:',
        '    app: web',
        'spec:',
        '  replicas: 3',
        '  selector:',
        '    matchLabels:',
        '      app: web',
        '  template:',
        '    metadata:',
        '      labels:',
        '        app: web',
        '    spec:',
        '      containers:',
        '        - name: app',
        '          image: nginx:1.25',
        '          ports:',
        '            - containerPort: 8080',
        '',
      ].join('\n'),
      'settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  mode: fast\n`,
    },
  };
}

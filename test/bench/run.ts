// `npm run bench`: the figures that shape the design, each next to a peer measured side by side.
//  1. Parsing a 2,000-document file (test/bench/parse.ts): full parse, re-parse after one edit,
//     the longest event-loop block.
//  2. Editing a 500-document file in the language server against the real local API server, warm
//     cache: time from didChange to diagnostics (median, p95) and API requests per edit (from the
//     server's audit log: the truth about what was sent), against the peer a user would otherwise
//     run, `kubectl apply --server-side --dry-run=server -f` on the same file.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseManifestText } from '../../server/src/core/manifest';
import { startTestServer } from '../support/lsp-client';
import { apply, connect, freshNamespace, objectOf, scale } from '../support/seed';

const root = path.resolve(import.meta.dirname, '../..');
const documents = Number(process.env.KCH_BENCH_DOCUMENTS ?? 500);
const edits = Number(process.env.KCH_BENCH_EDITS ?? 40);

function clusterEnv(): { kubeconfig: string; auditLog: string } {
  if (process.env.KCH_KUBECONFIG && process.env.KCH_AUDIT_LOG) return { kubeconfig: process.env.KCH_KUBECONFIG, auditLog: process.env.KCH_AUDIT_LOG };
  execFileSync('node', ['--import', 'tsx', 'test/support/cluster-cli.ts', 'up'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  return JSON.parse(fs.readFileSync(path.join(root, '.cache/cluster/env.json'), 'utf8'));
}

const deploymentDoc = (namespace: string, i: number, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: ${namespace}
  labels: {app: web-${i}}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web-${i}}
  template:
    metadata:
      labels: {app: web-${i}}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports:
        - containerPort: 8080
        resources: {limits: {cpu: 500m}}
`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function auditCount(auditLog: string, since: number, userAgentPrefix: string): number {
  let n = 0;
  for (const line of fs.readFileSync(auditLog, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { stage: string; userAgent?: string; requestReceivedTimestamp: string };
    if (e.stage !== 'ResponseComplete' && e.stage !== 'ResponseStarted') continue;
    if (!e.userAgent?.startsWith(userAgentPrefix)) continue;
    if (Date.parse(e.requestReceivedTimestamp) >= since) n++;
  }
  return n;
}

async function editingBenchmark(): Promise<void> {
  const cluster = clusterEnv();
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'bench');
  // Every tenth Deployment exists, scaled by an autoscaler: a conflict on replicas.
  for (let i = 0; i < documents; i += 10) {
    objectOf(await apply(admin, 'kubectl', yamlToObject(deploymentDoc(namespace, i, 3)) as never));
    objectOf(await scale(admin, 'kube-controller-manager', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `web-${i}`, namespace } }, 5));
  }
  const text = Array.from({ length: documents }, (_, i) => deploymentDoc(namespace, i, 3)).join('---\n');
  const expectedConflicts = Math.ceil(documents / 10);
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  const uri = 'file:///bench/big.yaml';
  await server.open(uri, text);
  const warmStart = performance.now();
  await server.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'field-conflict').length === expectedConflicts, 120_000);
  const warmMs = performance.now() - warmStart;

  const since = Date.now();
  const times: number[] = [];
  let current = text;
  for (let n = 0; n < edits; n++) {
    // Type one character into a label value of some document (a different one each time).
    const target = `app: web-${(n * 37) % documents}}`;
    current = current.replace(target, `app: web-${(n * 37) % documents}x}`);
    const t0 = performance.now();
    await server.change(uri, current);
    const ds = await server.diagnostics(uri);
    times.push(performance.now() - t0);
    if (ds.filter((x) => x.code === 'field-conflict').length !== expectedConflicts) throw new Error('an edit changed the conflicts: the benchmark is not measuring what it says');
  }
  // Watches stay open; everything received after `since` would be a request caused by editing.
  await new Promise((r) => setTimeout(r, 1500));
  const requests = auditCount(cluster.auditLog, since, 'kube-conflict-hints');
  await server.shutdown();

  const file = path.join(os.tmpdir(), `kch-bench-${process.pid}.yaml`);
  fs.writeFileSync(file, text);
  const peerTimes: number[] = [];
  for (let n = 0; n < 3; n++) {
    const t0 = performance.now();
    const r = spawnSync('kubectl', ['--kubeconfig', cluster.kubeconfig, '--context', 'admin', 'apply', '--server-side', '--dry-run=server', '-f', file], { encoding: 'utf8' });
    peerTimes.push(performance.now() - t0);
    if (r.status !== 0 && !/conflict/i.test(r.stderr)) throw new Error(`kubectl failed: ${r.stderr.slice(0, 300)}`);
  }
  fs.rmSync(file, { force: true });
  times.sort((a, b) => a - b);
  peerTimes.sort((a, b) => a - b);
  const median = percentile(times, 50);
  const peer = percentile(peerTimes, 50);
  console.log(`\nediting a ${documents}-document file against the local API server (${edits} edits, warm cache)`);
  console.log(`  first full answer (cold caches):        ${warmMs.toFixed(0)} ms`);
  console.log(`  didChange -> diagnostics, median:        ${median.toFixed(1)} ms`);
  console.log(`  didChange -> diagnostics, p95:           ${percentile(times, 95).toFixed(1)} ms`);
  console.log(`  API requests during the edits:           ${requests} (${(requests / edits).toFixed(2)} per edit)`);
  console.log(`  peer: kubectl apply --server-side --dry-run=server -f (same file), median of 3: ${peer.toFixed(0)} ms`);
  console.log(`  ratio peer / our median:                 ${(peer / median).toFixed(0)}x`);
}

/** The seeding helpers take JSON objects: the YAML is read by the product's own manifest reader. */
function yamlToObject(text: string) {
  return parseManifestText(text).resources[0]!.object;
}

async function main(): Promise<void> {
  const parse = spawnSync('node', ['--import', 'tsx', path.join(root, 'test/bench/parse.ts'), '2000'], { stdio: 'inherit' });
  if (parse.status !== 0) process.exit(parse.status ?? 1);
  await editingBenchmark();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

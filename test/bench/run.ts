// `npm run bench`: the figures that shape the design, each next to a peer measured side by side.
//  1. Parsing a 2,000-document file (test/bench/parse.ts): full parse, re-parse after one edit,
//     the longest event-loop block.
//  2. The cold paths, as whole processes against the real local API server, each paired with the
//     peer a user would otherwise run, `kubectl apply --server-side --dry-run=server -f`, on the
//     same input in the same run (medians of KCH_BENCH_RUNS paired runs, default 3): `check` on 200
//     Deployments, on a CRD-heavy install file and on a directory of ~100 files; the bundled
//     language server from process start to all diagnostics for 200 objects; its first full
//     answer for a 2,000-document file and its peak RSS with those 2,000 objects cached.
//     On a busy machine the absolute times are upper bounds; the ratios are the figures. The
//     processes start as every start after the first does, from the compile cache the first left;
//     that first start is measured once and printed beside the rows.
//  3. Editing a 500-document file in the bundled language server (its own process, as VS Code runs
//     it) against the real local API server, warm cache: time from didChange to diagnostics
//     (median, p95) and API requests per edit (from the server's audit log: the truth about what
//     was sent), next to kubectl on the same file. The first three edits of the fresh server, which
//     also compile the edit path, are printed apart from the figures.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { startTestServer } from '../support/lsp-client';
import { apply, connect, freshNamespace, objectOf, scale, type Connection } from '../support/seed';
import { crdInstallFile, deploymentDoc, deploymentsFile, seeded, writeDirectory } from './generate';

const root = path.resolve(import.meta.dirname, '../..');
const documents = Number(process.env.KCH_BENCH_DOCUMENTS ?? 500);
const edits = Number(process.env.KCH_BENCH_EDITS ?? 40);
const runs = Math.max(1, Number(process.env.KCH_BENCH_RUNS ?? 3));

interface Cluster {
  kubeconfig: string;
  auditLog: string;
  /** Whether this run started the local API server (and so stops it at the end). */
  startedHere: boolean;
}

function clusterEnv(): Cluster {
  if (process.env.KCH_KUBECONFIG && process.env.KCH_AUDIT_LOG)
    return { kubeconfig: process.env.KCH_KUBECONFIG, auditLog: process.env.KCH_AUDIT_LOG, startedHere: false };
  const running =
    spawnSync('node', ['--import', 'tsx', 'test/support/cluster-cli.ts', 'status'], { cwd: root, stdio: 'ignore' })
      .status === 0;
  execFileSync('node', ['--import', 'tsx', 'test/support/cluster-cli.ts', 'up'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { ...JSON.parse(fs.readFileSync(path.join(root, '.cache/cluster/env.json'), 'utf8')), startedHere: !running };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

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

// ---------------------------------------------------------------------------------------------------
// The cold paths

/** Runs a whole process to its end; its wall time in ms. Exit 0 (clean) and 1 (findings) are answers. */
function timedProcess(
  command: string,
  args: string[],
  accept: (status: number | null, stderr: string) => boolean,
): number {
  const t0 = performance.now();
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (!accept(r.status, r.stderr))
    throw new Error(
      `\`${path.basename(command)} ${args.slice(0, 6).join(' ')} ...\` failed (exit ${r.status}): ${r.stderr.slice(0, 400)}`,
    );
  return ms;
}

function checkRun(cluster: Cluster, target: string): number {
  return timedProcess(
    process.execPath,
    [
      path.join(root, 'dist/cli.js'),
      'check',
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      '--format',
      'json',
      target,
    ],
    (status) => status === 0 || status === 1,
  );
}

function kubectlRun(cluster: Cluster, target: string): number {
  const recursive = fs.statSync(target).isDirectory() ? ['-R'] : [];
  // A server-side apply that conflicts exits non-zero and says so: that is kubectl's answer.
  return timedProcess(
    'kubectl',
    [
      '--kubeconfig',
      cluster.kubeconfig,
      '--context',
      'admin',
      'apply',
      '--server-side',
      '--dry-run=server',
      ...recursive,
      '-f',
      target,
    ],
    (status, stderr) => status === 0 || /conflict/i.test(stderr),
  );
}

/** The language server as VS Code runs it (the bundle, its own process, stdio) from spawn to the full answer. */
async function serverRun(
  cluster: Cluster,
  text: string,
  conflicts: number,
): Promise<{ ms: number; peakRssKiB: number }> {
  const t0 = performance.now();
  const server = await startTestServer({
    process: true,
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin' },
  });
  const uri = 'file:///bench/cold.yaml';
  await server.open(uri, text);
  await server.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'field-conflict').length === conflicts, 300_000);
  const ms = performance.now() - t0;
  const status = fs.readFileSync(`/proc/${server.child!.pid}/status`, 'utf8');
  const peakRssKiB = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
  await server.shutdown();
  return { ms, peakRssKiB };
}

interface Row {
  work: string;
  product: number[];
  peer?: number[];
  goal: string;
  holds: (product: number, ratio?: number) => boolean;
  unit?: 'ms' | 'MB';
}

function printRow(row: Row): void {
  const p = median(row.product);
  const shown = row.unit === 'MB' ? `${p.toFixed(0)} MB` : `${(p / 1000).toFixed(2)} s`;
  let line = `  ${row.work.padEnd(62)} ${shown.padStart(9)}`;
  let ratio: number | undefined;
  if (row.peer) {
    const q = median(row.peer);
    // The median of the paired ratios: each pair ran back to back, under the same load.
    ratio = median(row.peer.map((peer, i) => peer / row.product[i]!));
    line += `   kubectl ${(q / 1000).toFixed(2).padStart(6)} s   ratio ${ratio.toFixed(2).padStart(5)}x`;
  } else line += ' '.repeat(36);
  line += `   goal ${row.goal.padEnd(9)} ${row.holds(p, ratio) ? 'holds' : 'NOT MET'}`;
  console.log(line);
}

async function seedDeployments(admin: Connection, namespace: string, upTo: number): Promise<void> {
  for (let i = 0; i < upTo; i++) {
    if (!seeded(i)) continue;
    objectOf(await apply(admin, 'kubectl', yamlToObject(deploymentDoc(namespace, i, 3)) as never));
    objectOf(
      await scale(
        admin,
        'kube-controller-manager',
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `web-${i}`, namespace } },
        5,
      ),
    );
  }
}

async function coldBenchmark(cluster: Cluster): Promise<void> {
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'bench-cold');
  await seedDeployments(admin, namespace, 2000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-bench-'));
  try {
    const small = deploymentsFile(namespace, 200);
    const smallFile = path.join(work, 'deployments-200.yaml');
    fs.writeFileSync(smallFile, small.text);
    const install = crdInstallFile(namespace);
    const installFile = path.join(work, 'install.yaml');
    fs.writeFileSync(installFile, install.text);
    const dir = path.join(work, 'manifests');
    const directory = writeDirectory(dir, namespace, 95);
    const big = deploymentsFile(namespace, 2000);

    const rows = {
      check200: {
        work: '`check`, 200 Deployments, cold',
        product: [] as number[],
        peer: [] as number[],
        goal: '>= 10x',
        holds: (_: number, r?: number) => r! >= 10,
      },
      checkCrd: {
        work: `\`check\`, install file ${(install.text.length / 1e6).toFixed(2)} MB, ${install.crds} CRDs + ${install.objects} objects`,
        product: [] as number[],
        peer: [] as number[],
        goal: '>= 5x',
        holds: (_: number, r?: number) => r! >= 5,
      },
      checkDir: {
        work: `\`check\`, a directory of 95 files (${directory.objects} objects)`,
        product: [] as number[],
        peer: [] as number[],
        goal: '>= 8x',
        holds: (_: number, r?: number) => r! >= 8,
      },
      server200: {
        work: 'language server, process start -> all diagnostics, 200 objects',
        product: [] as number[],
        peer: [] as number[],
        goal: '>= 10x',
        holds: (_: number, r?: number) => r! >= 10,
      },
      server2000: {
        work: 'language server, 2,000-document file: first full answer',
        product: [] as number[],
        goal: '<= 1.5 s',
        holds: (p: number) => p <= 1500,
      },
      rss2000: {
        work: 'language server, 2,000 objects open and cached: peak RSS',
        product: [] as number[],
        goal: '<= 120 MB',
        holds: (p: number) => p <= 120,
        unit: 'MB' as const,
      },
    };
    // The compile cache of this bench's own (server/src/launch/compile-cache.ts): the first start of
    // each entry compiles the bundle and leaves its code for every later start, as after an install.
    process.env.XDG_CACHE_HOME = path.join(work, 'cache-home');
    const firstCheck = checkRun(cluster, smallFile);
    const firstServer = (await serverRun(cluster, small.text, small.conflicts)).ms;
    // Paired: each run measures the product and kubectl back to back, alternating which goes
    // first, so a change in the machine's load falls on both sides of a ratio.
    for (let n = 0; n < runs; n++) {
      process.stderr.write(`bench: cold paths, run ${n + 1} of ${runs}\n`);
      const pair = async (
        row: { product: number[]; peer: number[] },
        product: () => number | Promise<number>,
        peer: () => number,
      ) => {
        if (n % 2 === 0) {
          row.product.push(await product());
          row.peer.push(peer());
        } else {
          row.peer.push(peer());
          row.product.push(await product());
        }
      };
      await pair(
        rows.check200,
        () => checkRun(cluster, smallFile),
        () => kubectlRun(cluster, smallFile),
      );
      await pair(
        rows.checkCrd,
        () => checkRun(cluster, installFile),
        () => kubectlRun(cluster, installFile),
      );
      await pair(
        rows.checkDir,
        () => checkRun(cluster, dir),
        () => kubectlRun(cluster, dir),
      );
      await pair(
        rows.server200,
        async () => (await serverRun(cluster, small.text, small.conflicts)).ms,
        () => kubectlRun(cluster, smallFile),
      );
      const bigRun = await serverRun(cluster, big.text, big.conflicts);
      rows.server2000.product.push(bigRun.ms);
      rows.rss2000.product.push(bigRun.peakRssKiB / 1024);
    }
    const load = os.loadavg()[0]!.toFixed(1);
    console.log(
      `\ncold paths against the local API server: medians of ${runs} paired runs (load average now ${load} on ${os.cpus().length} cores)`,
    );
    for (const row of Object.values(rows)) printRow(row);
    console.log(
      `  the first start after an install, with no compile cache yet (once each): \`check\`, 200 Deployments ${(firstCheck / 1000).toFixed(2)} s; language server, 200 objects ${(firstServer / 1000).toFixed(2)} s`,
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Editing

async function editingBenchmark(cluster: Cluster): Promise<void> {
  const admin = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(admin, 'bench');
  // Every tenth Deployment exists, scaled by an autoscaler: a conflict on replicas.
  for (let i = 0; i < documents; i += 10) {
    objectOf(await apply(admin, 'kubectl', yamlToObject(deploymentDoc(namespace, i, 3)) as never));
    objectOf(
      await scale(
        admin,
        'kube-controller-manager',
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `web-${i}`, namespace } },
        5,
      ),
    );
  }
  const text = Array.from({ length: documents }, (_, i) => deploymentDoc(namespace, i, 3)).join('---\n');
  const expectedConflicts = Math.ceil(documents / 10);
  // The bundled server in its own process, as VS Code runs it: the bench's own heap (the cold
  // paths' files and outputs) and its garbage collections stay out of the server's times.
  const server = await startTestServer({
    process: true,
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin' },
  });
  const uri = 'file:///bench/big.yaml';
  await server.open(uri, text);
  const warmStart = performance.now();
  await server.diagnosticsUntil(
    uri,
    (d) => d.filter((x) => x.code === 'field-conflict').length === expectedConflicts,
    120_000,
  );
  const warmMs = performance.now() - warmStart;

  const since = Date.now();
  const times: number[] = [];
  let current = text;
  // The first edits of a fresh server also compile and optimise the edit path: they are reported
  // on their own line, and the figures are those of the typing that follows.
  const warmUp = 3;
  const firstEdits: number[] = [];
  for (let n = 0; n < warmUp + edits; n++) {
    // Type one character into a label value of some document (a different one each time), sent
    // as VS Code sends it: the change alone (the server asks for incremental sync).
    const target = `app: web-${(n * 37) % documents}}`;
    const at = current.indexOf(target) + target.length - 1;
    current = `${current.slice(0, at)}x${current.slice(at)}`;
    // The bench's own garbage is collected before, not during, a measured edit (npm run bench
    // gives node --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    const t0 = performance.now();
    await server.insert(uri, at, 'x');
    const ds = await server.diagnostics(uri);
    (n < warmUp ? firstEdits : times).push(performance.now() - t0);
    if (ds.filter((x) => x.code === 'field-conflict').length !== expectedConflicts)
      throw new Error('an edit changed the conflicts: the benchmark is not measuring what it says');
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
    const r = spawnSync(
      'kubectl',
      [
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        'apply',
        '--server-side',
        '--dry-run=server',
        '-f',
        file,
      ],
      { encoding: 'utf8' },
    );
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
  console.log(
    `  the ${warmUp} first edits of the new server: ${firstEdits.map((t) => `${t.toFixed(0)} ms`).join(', ')} (not in the figures below)`,
  );
  console.log(`  didChange -> diagnostics, median:        ${median.toFixed(1)} ms`);
  const p95 = percentile(times, 95);
  console.log(
    `  didChange -> diagnostics, p95:           ${p95.toFixed(1)} ms   goal <= 25 ms ${p95 <= 25 ? 'holds' : 'NOT MET'}`,
  );
  console.log(
    `  API requests during the edits:           ${requests} (${(requests / edits).toFixed(2)} per edit)   goal 0 ${requests === 0 ? 'holds' : 'NOT MET'}`,
  );
  console.log(
    `  peer: kubectl apply --server-side --dry-run=server -f (same file), median of 3: ${peer.toFixed(0)} ms`,
  );
  console.log(`  ratio peer / our median:                 ${(peer / median).toFixed(0)}x`);
}

/** The seeding helpers take JSON objects: the YAML is read by the product's own manifest reader. */
function yamlToObject(text: string) {
  return parseManifestText(text).resources[0]!.object;
}

async function main(): Promise<void> {
  // The bundles the processes run: minified, as the npm package and the .vsix ship them
  // (KCH_BENCH_PRODUCTION=0: as `npm test` builds them, with source maps). Afterwards dist/ is
  // built again as `npm run build` leaves it.
  const production = process.env.KCH_BENCH_PRODUCTION !== '0';
  const bundle = (minified: boolean) =>
    execFileSync(
      process.execPath,
      [path.join(root, 'scripts/bundle.mjs'), '--only=cli,server', ...(minified ? ['--production'] : [])],
      { cwd: root, stdio: 'inherit' },
    );
  bundle(production);
  process.on('exit', () => {
    if (production) bundle(false);
  });
  const size = (file: string) => `${(fs.statSync(path.join(root, 'dist', file)).size / 1e6).toFixed(2)} MB`;
  console.log(
    `bundles: dist/cli-bundle.js ${size('cli-bundle.js')}, dist/server-bundle.js ${size('server-bundle.js')}${production ? ' (minified, as shipped)' : ''}; ${new Date().toISOString().slice(0, 16)}Z, load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );
  const parse = spawnSync('node', ['--import', 'tsx', path.join(root, 'test/bench/parse.ts'), '2000'], {
    stdio: 'inherit',
  });
  if (parse.status !== 0) process.exit(parse.status ?? 1);
  const cluster = clusterEnv();
  try {
    await coldBenchmark(cluster);
    await editingBenchmark(cluster);
  } finally {
    if (cluster.startedHere)
      spawnSync('node', ['--import', 'tsx', 'test/support/cluster-cli.ts', 'down'], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

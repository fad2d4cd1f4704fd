// Where the time of a cold `check` goes: CPU profiles (node --cpu-prof) of the bundled CLI on each
// slow path, on files whose objects all exist with histories (test/bench/generate.ts, seeded as
// `npm run bench` seeds them): one ConfigMap with a conflict, the same ConfigMap among 20,000 others,
// 200 existing Deployments and the CRD-heavy install file; and `fleet`: 20 existing Deployments
// checked in one context and in ten (three API servers, test/support/fleet.ts), each 40 ms away;
// against the running local API server, read back through the bundle's source map so that time is
// charged to the package that spent it.
// Also the cost of only loading the bundle (`--version` against a bare `node -e 0`).
//
//   npm run cluster:up && node --import tsx test/bench/profile.ts [--keep=<dir>] [--only=one,crowded,200,install,fleet]
// (dist/ as `npm test` or `npm run bench` built it; KCH_KUBECONFIG, or the cluster's env.json). Each
// profiled check is a second run: the first leaves the compile cache every later start uses
// (server/src/launch/compile-cache.ts). The namespaces it seeds are removed at the end, but for the
// crowded one, which `npm run bench` keeps too.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { SourceMap } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readEnv } from '../support/cluster';
import { fleetKubeconfig } from '../support/fleet';
import { connect } from '../support/seed';
import { nodeStartMs, userEnvironment } from './environment';
import { crdInstallFile, existingDeployments, settingsConfigMap, type ExistingWorkload } from './generate';
import {
  crowdedNamespace,
  ensureCrowd,
  ensureNamespace,
  removeInstallCrds,
  removeNamespace,
  seedExisting,
  workloadNamespace,
} from './workloads';

const root = path.resolve(import.meta.dirname, '../..');
// What users run (the entry, which starts the bundle through the compile cache); samples are in the bundle.
const cli = path.join(root, 'dist/cli.js');
const bundle = path.join(root, 'dist/cli-bundle.js');
const keep = process.argv.find((a) => a.startsWith('--keep='))?.slice(7);
const paths = ['one', 'crowded', '200', 'install', 'fleet'] as const;
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
for (const p of only ?? []) if (!(paths as readonly string[]).includes(p)) throw new Error(`--only: no path ${p}`);
const profiles = new Set(only ?? paths);

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const sourceMap = new SourceMap(JSON.parse(fs.readFileSync(`${bundle}.map`, 'utf8')));

/** The package (or product folder) a bundled position came from. */
function origin(url: string, line: number, column: number): string {
  if (!url) return '';
  if (!url.endsWith('/dist/cli-bundle.js')) return url.startsWith('node:') ? 'node internals' : url;
  const entry = sourceMap.findEntry(line, column) as { originalSource?: string };
  const source = entry.originalSource ?? '';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (pkg) return pkg[1]!;
  const own = /(server\/src\/.+)$/.exec(source);
  return own ? own[1]! : source || 'dist/cli-bundle.js';
}

function summarize(profile: CpuProfile, title: string): void {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++)
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const { callFrame: f } = byNode.get(id)!;
    total += ms;
    const where = f.url ? origin(f.url, f.lineNumber, f.columnNumber) : f.functionName;
    const key = f.url ? `${f.functionName || '(anonymous)'}  [${where}]` : f.functionName;
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
    byOrigin.set(where, (byOrigin.get(where) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\n${title}: ${total.toFixed(0)} ms sampled`);
  console.log('  by origin (self time):');
  for (const [k, ms] of top(byOrigin, 10))
    console.log(`    ${ms.toFixed(0).padStart(6)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
  console.log('  top functions (self time):');
  for (const [k, ms] of top(byFunction, 15))
    console.log(`    ${ms.toFixed(0).padStart(6)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
}

function profiled(kubeconfig: string, target: string, dir: string, title: string): void {
  const args = [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
    `--cpu-prof-name=${title.replace(/\W+/g, '-')}.cpuprofile`,
    cli,
    'check',
    '--kubeconfig',
    kubeconfig,
    '--context',
    'admin',
    '--format',
    'json',
    target,
  ];
  // Node's options name the compile cache a start reads (launch/compile-cache.ts): the first run,
  // with the same options, leaves the cache the profiled one starts from, as every start after an
  // install does. Its profile is overwritten by the second's.
  spawnSync(process.execPath, args);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0 && r.status !== 1) throw new Error(`check failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  const file = path.join(dir, `${title.replace(/\W+/g, '-')}.cpuprofile`);
  summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, `${title} (whole process ${ms.toFixed(0)} ms)`);
}

/**
 * The fleet path: `check` of the same existing Deployments in one context and in ten (three API
 * servers under ten names, test/support/fleet.ts), each cluster 40 ms away through a relay in this
 * process (test/support/latency-proxy.ts), so the check runs in a child that does not block it.
 */
async function profiledFleet(
  kubeconfig: string,
  contexts: readonly string[],
  target: string,
  dir: string,
  title: string,
) {
  const name = `${title.replace(/\W+/g, '-')}.cpuprofile`;
  const args = [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
    `--cpu-prof-name=${name}`,
    cli,
    'check',
    '--kubeconfig',
    kubeconfig,
    ...contexts.flatMap((c) => ['--context', c]),
    '--format',
    'json',
    target,
  ];
  const run = async () => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (status !== 0 && status !== 1) throw new Error(`check failed (exit ${status}): ${stderr.slice(0, 300)}`);
    return performance.now() - t0;
  };
  await run();
  const ms = await run();
  summarize(
    JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CpuProfile,
    `${title} (whole process ${ms.toFixed(0)} ms)`,
  );
}

function medianOf(n: number, fn: () => number): number {
  const v = Array.from({ length: n }, fn).sort((a, b) => a - b);
  return v[Math.floor(n / 2)]!;
}

async function main(): Promise<void> {
  const kubeconfig = process.env.KCH_KUBECONFIG ?? readEnv().kubeconfig;
  const admin = connect('admin', kubeconfig);
  const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kch-profile-'));
  fs.mkdirSync(dir, { recursive: true });
  const namespaces: string[] = [];
  /** The fleet's namespaces in the other two clusters. */
  const others: [ReturnType<typeof connect>, string][] = [];
  // Each path: its workload seeded in a namespace of its own (the crowded one kept between runs).
  const seeded = async (prefix: string, make: (namespace: string) => ExistingWorkload) => {
    const namespace = await workloadNamespace(admin, prefix);
    namespaces.push(namespace);
    const workload = make(namespace);
    await seedExisting(admin, workload.existing);
    return workload;
  };
  const file = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  try {
    const targets: [string, string][] = [];
    if (profiles.has('one'))
      targets.push([
        'check, one ConfigMap',
        file('one.yaml', (await seeded('bench-profile-one', settingsConfigMap)).text),
      ]);
    if (profiles.has('crowded')) {
      await ensureCrowd(admin);
      targets.push([
        'check, one ConfigMap among 20,000',
        file('crowded.yaml', settingsConfigMap(crowdedNamespace).text),
      ]);
    }
    if (profiles.has('200')) {
      const workload = await seeded('bench-profile-200', (ns) => existingDeployments(ns, 200));
      targets.push(['check, 200 existing Deployments', file('deployments-200.yaml', workload.text)]);
    }
    if (profiles.has('install')) {
      const workload = await seeded('bench-profile-install', crdInstallFile);
      targets.push(['check, CRD-heavy install file, existing', file('install.yaml', workload.text)]);
    }
    console.log(
      `${new Date().toISOString().slice(0, 16)}Z, load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; dist/cli-bundle.js ${(fs.statSync(bundle).size / 1e6).toFixed(2)} MB`,
    );
    const environment = userEnvironment();
    if (environment) console.log(environment);
    const bare = nodeStartMs();
    const load = medianOf(5, () => {
      const t0 = performance.now();
      spawnSync(process.execPath, [cli, '--version']);
      return performance.now() - t0;
    });
    console.log(
      `node -e 0: ${bare.toFixed(0)} ms; dist/cli.js --version: ${load.toFixed(0)} ms (loading and compiling the bundle: ${(load - bare).toFixed(0)} ms), medians of 5`,
    );
    for (const [title, target] of targets) profiled(kubeconfig, target, dir, title);
    if (profiles.has('fleet')) {
      // The same 20 Deployments with the same histories in the three clusters, as the bench's fleet rows.
      const workload = await seeded('bench-profile-fleet', (ns) => existingDeployments(ns, 20));
      const namespace = namespaces.at(-1)!;
      const fleetDir = path.join(dir, 'fleet');
      fs.mkdirSync(fleetDir, { recursive: true });
      const local = await fleetKubeconfig(fleetDir, kubeconfig, { copies: 10 });
      for (const [name, file] of Object.entries(local.clusters)) {
        if (name === 'staging') continue;
        const conn = connect('admin', file);
        await ensureNamespace(conn, namespace);
        await seedExisting(conn, workload.existing);
        others.push([conn, namespace]);
      }
      const remoteDir = path.join(fleetDir, 'remote');
      fs.mkdirSync(remoteDir);
      const remote = await fleetKubeconfig(remoteDir, kubeconfig, { copies: 10, roundTripMs: 40 });
      const target = file('fleet.yaml', workload.text);
      const ten = Array.from({ length: 10 }, (_, i) => `copy-${i + 1}`);
      await profiledFleet(remote.kubeconfig, ['staging'], target, dir, 'check, 20 Deployments, one context 40 ms away');
      await profiledFleet(remote.kubeconfig, ten, target, dir, 'check, the same in 10 contexts 40 ms away');
    }
    if (keep) console.log(`\nprofiles kept in ${dir} (open them in Chrome DevTools > Performance)`);
  } finally {
    for (const namespace of namespaces) await removeNamespace(admin, namespace);
    for (const [conn, namespace] of others) await removeNamespace(conn, namespace);
    if (profiles.has('install')) await removeInstallCrds(admin);
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`profile: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

// Where the time of a cold `check` goes: CPU profiles (node --cpu-prof) of the bundled CLI on the
// 200 Deployments and on the CRD-heavy install file, against the running local API server, read
// back through the bundle's source map so that time is charged to the package that spent it.
// Also the cost of only loading the bundle (`--version` against a bare `node -e 0`).
//
//   npm run cluster:up && node --import tsx test/bench/profile.ts [--keep=<dir>]
// (dist/ as `npm test` or `npm run bench` built it). Each profiled check is a second run: the first
// leaves the compile cache every later start uses (server/src/launch/compile-cache.ts).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { SourceMap } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { apply, connect, freshNamespace, objectOf, scale } from '../support/seed';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { crdInstallFile, deploymentDoc, deploymentsFile, seeded } from './generate';

const root = path.resolve(import.meta.dirname, '../..');
// What users run (the entry, which starts the bundle through the compile cache); samples are in the bundle.
const cli = path.join(root, 'dist/cli.js');
const bundle = path.join(root, 'dist/cli-bundle.js');
const keep = process.argv.find((a) => a.startsWith('--keep='))?.slice(7);

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
  const args = [cli, 'check', '--kubeconfig', kubeconfig, '--context', 'admin', '--format', 'json', target];
  spawnSync(process.execPath, args);
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${title.replace(/\W+/g, '-')}.cpuprofile`, ...args],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const ms = performance.now() - t0;
  if (r.status !== 0 && r.status !== 1) throw new Error(`check failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  const file = path.join(dir, `${title.replace(/\W+/g, '-')}.cpuprofile`);
  summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, `${title} (whole process ${ms.toFixed(0)} ms)`);
}

function medianOf(n: number, fn: () => number): number {
  const v = Array.from({ length: n }, fn).sort((a, b) => a - b);
  return v[Math.floor(n / 2)]!;
}

async function main(): Promise<void> {
  const env = JSON.parse(fs.readFileSync(path.join(root, '.cache/cluster/env.json'), 'utf8')) as { kubeconfig: string };
  const admin = connect('admin', env.kubeconfig);
  const namespace = await freshNamespace(admin, 'bench-profile');
  for (let i = 0; i < 200; i++) {
    if (!seeded(i)) continue;
    objectOf(
      await apply(admin, 'kubectl', parseManifestText(deploymentDoc(namespace, i)).resources[0]!.object as never),
    );
    objectOf(
      await scale(
        admin,
        'kube-controller-manager',
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `web-${i}`, namespace } },
        5,
      ),
    );
  }
  const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kch-profile-'));
  fs.mkdirSync(dir, { recursive: true });
  try {
    const small = path.join(dir, 'deployments-200.yaml');
    fs.writeFileSync(small, deploymentsFile(namespace, 200).text);
    const install = path.join(dir, 'install.yaml');
    fs.writeFileSync(install, crdInstallFile(namespace).text);
    console.log(
      `${new Date().toISOString().slice(0, 16)}Z, load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; dist/cli-bundle.js ${(fs.statSync(bundle).size / 1e6).toFixed(2)} MB`,
    );
    const bare = medianOf(5, () => {
      const t0 = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      return performance.now() - t0;
    });
    const load = medianOf(5, () => {
      const t0 = performance.now();
      spawnSync(process.execPath, [cli, '--version']);
      return performance.now() - t0;
    });
    console.log(
      `node -e 0: ${bare.toFixed(0)} ms; dist/cli.js --version: ${load.toFixed(0)} ms (loading and compiling the bundle: ${(load - bare).toFixed(0)} ms), medians of 5`,
    );
    profiled(env.kubeconfig, small, dir, 'check, 200 Deployments');
    profiled(env.kubeconfig, install, dir, 'check, CRD-heavy install file');
    if (keep) console.log(`\nprofiles kept in ${dir} (open them in Chrome DevTools > Performance)`);
  } finally {
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

// Where the language server's memory goes on the bench's file of 2,000 existing Deployments (the
// peak RSS row), one server process at a time, with whatever Node options are being tried:
//
//   npm run cluster:up && node scripts/bundle.mjs --production --only=cli,server
//   node --import tsx test/bench/memory.ts [--node="<options>"] [--count=2000] [--every=10]
//        [--snapshot-at=<MB>] [--dir=/tmp/kch-memory] [--round-trip=<ms>]
//
// Seeds the objects, with the bench's histories, in the namespace kch-bench-memory (kept between
// runs: seeded again only when it holds fewer), starts the server as the editor does (its
// serverExecArgv, then --node's), opens the file and waits for every conflict the histories make.
// The server's RSS is read from /proc every 10 ms by this process, so the samples go on while the
// server's event loop is busy; --every=N prints every Nth. --snapshot-at: the server runs with
// --heapsnapshot-signal and is sent the signal when its RSS first passes that many MB; the snapshot
// (live objects only: V8 collects first) is written to --dir. --round-trip: the server reaches the
// API server through a relay that delays every byte (test/support/latency-proxy.ts), a cluster that
// far away.
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { readEnv } from '../support/cluster';
import { startLatencyProxy } from '../support/latency-proxy';
import { startTestServer } from '../support/lsp-client';
import { connect, request } from '../support/seed';
import { existingDeployments } from './generate';
import { ensureNamespace, seedExisting } from './workloads';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const namespace = 'kch-bench-memory';

async function main(): Promise<void> {
  const env = readEnv();
  const admin = connect('admin', env.kubeconfig);
  const count = Number(flag('count') ?? 2000);
  const workload = existingDeployments(namespace, count);
  await ensureNamespace(admin, namespace);
  const held = await request(admin, 'GET', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
    query: { limit: '1' },
  });
  const list = held.body as { items?: unknown[]; metadata?: { remainingItemCount?: number } };
  if ((list.items?.length ?? 0) + (list.metadata?.remainingItemCount ?? 0) < count) {
    console.log(`seeding ${count} Deployments in ${namespace}`);
    await seedExisting(admin, workload.existing);
  }
  const expected = [...workload.conflicts.values()].reduce((n, c) => n + c.length, 0);
  const extra = (flag('node') ?? '').split(' ').filter(Boolean);
  const snapshotAt = flag('snapshot-at') ? Number(flag('snapshot-at')) : undefined;
  const dir = flag('dir') ?? '/tmp/kch-memory';
  if (snapshotAt) fs.mkdirSync(dir, { recursive: true });

  let kubeconfig = env.kubeconfig;
  const roundTrip = Number(flag('round-trip') ?? 0);
  if (roundTrip > 0) {
    const config = parse(fs.readFileSync(env.kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    for (const c of config.clusters) c.cluster.server = (await startLatencyProxy(c.cluster.server, roundTrip / 2)).url;
    kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kch-memory-')), 'kubeconfig');
    fs.writeFileSync(kubeconfig, stringify(config));
  }
  const t0 = performance.now();
  const server = await startTestServer({
    process: true,
    execArgv: [...extra, ...(snapshotAt ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] : [])],
    settings: { kubeconfig, context: 'admin' },
  });
  const pid = server.child!.pid!;
  const samples: { ms: number; rss: number }[] = [];
  let signalled = false;
  const timer = setInterval(() => {
    let status: string;
    try {
      status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return; // The server has exited.
    }
    const rss = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]) / 1024;
    samples.push({ ms: performance.now() - t0, rss });
    if (snapshotAt !== undefined && !signalled && rss >= snapshotAt) {
      signalled = true;
      process.kill(pid, 'SIGUSR2');
    }
  }, 10);
  const uri = 'file:///bench/memory.yaml';
  await server.open(uri, workload.text);
  await server.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'field-conflict').length === expected, 300_000);
  const ms = performance.now() - t0;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  clearInterval(timer);
  // A snapshot of a large heap takes seconds to write.
  if (signalled) await new Promise((resolve) => setTimeout(resolve, 5000));
  await server.shutdown();
  const every = Number(flag('every') ?? 0);
  if (every > 0)
    for (const s of samples.filter((_, i) => i % every === 0))
      console.log(`${s.ms.toFixed(0).padStart(6)} ms ${s.rss.toFixed(0).padStart(4)} MB`);
  const peak = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1]) / 1024;
  console.log(
    `${count} objects: every conflict after ${ms.toFixed(0)} ms (timed from the spawn, with the snapshot if any), peak RSS ${peak.toFixed(1)} MB${extra.length ? ` with ${extra.join(' ')}` : ''}`,
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

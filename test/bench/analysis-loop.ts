// The CPU of `check`'s judgement of a file, in one process, many times over the same facts: what the
// prediction and the other per-object judgements cost once V8 has optimised them, with less noise
// than whole processes on a shared machine. The facts are read from the cluster once (the first
// round, not counted); each counted round judges fresh copies of the live objects (nothing decoded
// from them in an earlier round is reused) and prints the median and least CPU per round.
//
//   npx esbuild test/bench/analysis-loop.ts --bundle --platform=node --format=cjs --target=node20 \
//     --minify --sourcemap --outfile=/tmp/analysis-loop.js
//   node --expose-gc /tmp/analysis-loop.js <file or directory> [rounds] [--json=<report file>]
//
// Bundled as the product is: through tsx, every function made inside another is wrapped to keep its
// name, which makes closures far dearer than they are in the product. The kubeconfig: KCH_KUBECONFIG,
// else the local cluster's (run from the repository's root); context `admin`. The objects must exist, as
// test/bench/workloads.ts seeds them (test/bench/profile.ts --keep=<dir> leaves the files it checked).
import * as fs from 'node:fs';
import { runCheck } from '../../server/src/cli/check';
import { liveFactsReader, type FactsReader } from '../../server/src/cli/facts';
import { collectManifestFiles } from '../../server/src/cli/files';
import { formatJson } from '../../server/src/cli/format-json';
import { createClusterConnection } from '../../server/src/cluster/connection';
import type { ManifestResource } from '../../server/src/core/manifest/manifest';

const [, , target, roundsArg] = process.argv;
const jsonOut = process.argv.find((a) => a.startsWith('--json='))?.slice(7);
const rounds = Number(roundsArg ?? 10);

/** The local cluster's kubeconfig, as test/support/cluster.ts records it (a bundle has no import.meta to find it by). */
function localKubeconfig(): string {
  const env = JSON.parse(fs.readFileSync('.cache/cluster/env.json', 'utf8')) as { kubeconfig: string };
  return env.kubeconfig;
}

async function main(): Promise<void> {
  if (!target) throw new Error('usage: analysis-loop <file or directory> [rounds] [--json=<file>]');
  const connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG ?? localKubeconfig(), context: 'admin', namespace: '' },
    { userAgent: 'kch-analysis-loop', liveObjects: { follow: false }, diskCache: true },
  );
  const live = liveFactsReader(connection);
  type Answer = Awaited<ReturnType<FactsReader['read']>>;
  const captured = new Map<string, Answer>();
  const key = (r: ManifestResource) => `${r.apiVersion}/${r.kind}/${r.namespace ?? ''}/${r.name ?? ''}`;
  let round: Map<string, Answer> | undefined;
  const reader: FactsReader = {
    source: live.source,
    prepare: () => live.prepare?.(),
    expect: (resources) => (round ? Promise.resolve() : (live.expect?.(resources) ?? Promise.resolve())),
    async read(resource) {
      if (round) return round.get(key(resource))!;
      const answer = await live.read(resource);
      captured.set(key(resource), answer);
      return answer;
    },
    close() {},
  };
  // A directory's manifests, as the command line collects them.
  const files = collectManifestFiles([target], { stdin: false });
  if (!files.ok) throw new Error(files.message);
  const check = () => runCheck(files.files, reader, { fieldManager: 'kubectl', applyMode: 'serverSide' }, undefined);
  const first = await check();
  if (!first.ok) throw new Error(`check failed: ${JSON.stringify(first).slice(0, 300)}`);
  if (jsonOut) fs.writeFileSync(jsonOut, formatJson(first.report));
  const cpu: number[] = [];
  for (let i = 0; i < rounds; i++) {
    round = new Map();
    for (const [k, answer] of captured) {
      const state = answer.ok ? answer.facts.live : undefined;
      round.set(
        k,
        answer.ok && state?.state === 'exists'
          ? { ...answer, facts: { ...answer.facts, live: { state: 'exists', object: structuredClone(state.object) } } }
          : answer,
      );
    }
    (globalThis as { gc?: () => void }).gc?.();
    const start = process.cpuUsage();
    await check();
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  if (cpu.length > 0)
    console.log(
      `${target}: CPU per round median ${cpu[Math.floor(cpu.length / 2)]!.toFixed(1)} ms, least ${cpu[0]!.toFixed(1)} ms (${rounds} rounds)`,
    );
  live.close();
  process.exit(0);
}

void main();

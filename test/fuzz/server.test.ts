// The fuzz campaign through the language server: the bundled server (dist/server.js) runs as its
// own process over stdio, as behind VS Code, connected to the local kube-apiserver where objects
// with contested fields exist under the names the inputs use. Each input is opened (or typed over
// an open document), its diagnostics pulled, hovered, offered quick fixes and code lenses, and
// sometimes shown in the ownership view. No request may get an error response, the process must
// not exit, no request may take more than its budget relative to a plain parse of the same input,
// and the server's memory must stay bounded.
//
// 2,000 inputs with a fixed seed; KCH_FUZZ_ITERATIONS (a tenth of it here) and KCH_FUZZ_SEED run
// longer or other campaigns, KCH_FUZZ_ONLY replays one input (see README.md).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { requireCluster, testCluster } from '../support/env';
import { startTestServer, type TestServer } from '../support/lsp-client';
import {
  apply,
  autoscale,
  configMap,
  connect,
  freshNamespace,
  get,
  objectOf,
  update,
  webDeployment,
} from '../support/seed';
import { allowedMs, MiB, peakRss, plainParse, processCpuMs, saveFailure, timeMs } from './budget';
import { campaignSettings, fuzzInput, inputRng } from './generate';

/** A request to the server takes a round trip and a settings look-up on top of the work. */
const REQUEST_FLOOR_MS = 1500;

let server: TestServer | undefined;
let namespace = '';
let exited: string | undefined;

before(async () => {
  const cluster = testCluster();
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  namespace = await freshNamespace(admin, 'fuzz');
  // The names the generated inputs use, with histories that give conflicts, existence and owners.
  objectOf(await apply(admin, 'kubectl', webDeployment(namespace, 'web')), 'apply web');
  const web = objectOf(
    await get(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }),
  );
  (web.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image =
    'nginx:1.26';
  objectOf(await update(admin, 'kubectl-edit', web), 'edit web');
  await autoscale(admin, web, 5);
  for (const name of ['app', 'db', 'cfg', 'x', 'app-config']) {
    objectOf(
      await apply(admin, 'kubectl', configMap(namespace, name, { k: 'v', app: 'web' }, { app: name })),
      `apply ${name}`,
    );
    const cm = objectOf(await get(admin, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }));
    (cm as unknown as { data: Record<string, string> }).data.k = 'edited';
    objectOf(await update(admin, 'helm', cm), `update ${name}`);
  }
  server = await startTestServer({
    process: true,
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace },
  });
  server.child!.once('exit', (code, signal) => (exited = `the server process exited (${code ?? signal})`));
});

after(async () => {
  if (server && !exited) await server.shutdown();
});

/**
 * Runs a request and returns what it cost the server: its CPU time (see budget.ts; waiting for the
 * cluster is not the server's work), or the clock where there is no /proc. An error response rejects.
 */
async function timed<T>(request: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const pid = server?.child?.pid;
  const before = pid !== undefined ? processCpuMs(pid) : undefined;
  const start = performance.now();
  const value = await request();
  const after = pid !== undefined ? processCpuMs(pid) : undefined;
  return { value, ms: before !== undefined && after !== undefined ? after - before : performance.now() - start };
}

test('fuzz: the language server answers every request for any input, within its time budget and bounded memory', async (t) => {
  if (!requireCluster(t)) return;
  const s = server!;
  const pid = s.child!.pid!;
  const { seed, iterations, only } = campaignSettings(2000);
  const indexes = only !== undefined ? [only] : Array.from({ length: iterations }, (_, i) => i);
  const uris = Array.from({ length: 6 }, (_, i) => `file:///fuzz/doc-${i}.yaml`);
  const opened = new Set<string>();
  const failures: string[] = [];
  let requests = 0;
  const codes = new Map<string, number>();
  let largest = 0;
  const rssAtStart = peakRss(pid);
  const started = performance.now();

  for (const index of indexes) {
    // The inputs use `namespace: default` and names the cluster holds in the test's namespace.
    const input = fuzzInput(seed, index, { stress: 0.003 });
    const text = input.text.replace(/namespace: default/g, `namespace: ${namespace}`);
    largest = Math.max(largest, text.length);
    const rng = inputRng(seed ^ 0x27d4eb2f, index);
    const uri = rng.pick(uris);
    const where = `seed ${seed}, input ${index} (${input.shape}, ${text.length} characters)`;
    const slow: string[] = [];
    let baseline: number | undefined;
    const check = (name: string, ms: number) => {
      if (ms <= REQUEST_FLOOR_MS) return;
      baseline ??= timeMs(() => plainParse(text), 3);
      const allowed = allowedMs(baseline, REQUEST_FLOOR_MS);
      if (ms > allowed)
        slow.push(
          `${name}: ${ms.toFixed(0)} ms, allowed ${allowed.toFixed(0)} ms (plain parse ${baseline.toFixed(1)} ms)`,
        );
    };
    try {
      if (!opened.has(uri)) {
        await s.open(uri, text, input.languageId);
        opened.add(uri);
      } else {
        await s.change(uri, text);
      }
      const diagnostics = await timed(() => s.diagnostics(uri));
      requests++;
      for (const d of diagnostics.value) codes.set(String(d.code), (codes.get(String(d.code)) ?? 0) + 1);
      check('diagnostics', diagnostics.ms);
      const lines = text.split('\n').length;
      for (let i = 0; i < 3; i++) {
        const hover = await timed(() => s.hover(uri, { line: rng.int(lines), character: rng.int(30) }));
        requests++;
        check('hover', hover.ms);
      }
      const withData: Diagnostic[] = diagnostics.value.filter((d) => d.data !== undefined).slice(0, 3);
      for (const d of withData) {
        const actions = await timed(() => s.codeActions(uri, d.range, [d]));
        requests++;
        check('code actions', actions.ms);
      }
      if (rng.chance(0.2)) {
        const all = await timed(() =>
          s.codeActions(
            uri,
            { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } },
            diagnostics.value,
            ['source.fixAll'],
          ),
        );
        requests++;
        check('fix all', all.ms);
      }
      if (rng.chance(0.3)) {
        const lenses = await timed(() => s.codeLenses(uri));
        requests++;
        check('code lenses', lenses.ms);
      }
      if (rng.chance(0.1)) {
        const view = await timed(() =>
          s.request('kubeConflictHints/ownership', { uri, position: { line: rng.int(lines), character: 0 } }),
        );
        requests++;
        check('ownership view', view.ms);
      }
      if (rng.chance(0.05)) {
        await s.close(uri);
        opened.delete(uri);
      }
    } catch (e) {
      failures.push(
        `${where}: ${exited ?? (e as Error).stack ?? String(e)}\n  ${saveFailure('server', seed, index, input.text)}`,
      );
    }
    if (slow.length > 0)
      failures.push(
        `${where} is over its time budget:\n  ${slow.join('\n  ')}\n  ${saveFailure('server', seed, index, input.text)}`,
      );
    if (exited || failures.length >= 5) break;
  }

  const peak = peakRss(pid);
  console.log(
    `fuzz server: seed ${seed}, ${indexes.length} inputs, ${requests} requests in ${((performance.now() - started) / 1000).toFixed(1)} s; server peak RSS ${peak ? (peak / MiB).toFixed(0) : '?'} MiB (at start ${rssAtStart ? (rssAtStart / MiB).toFixed(0) : '?'} MiB); largest input ${(largest / 1024).toFixed(0)} KiB\n  diagnostics: ${[...codes].map(([c, n]) => `${c} ${n}`).join(', ')}`,
  );
  assert.deepEqual(failures, [], `fuzz failures (seed ${seed}):\n${failures.join('\n\n')}`);
  assert.equal(exited, undefined);
  if (peak !== undefined && rssAtStart !== undefined) {
    assert.ok(
      peak - rssAtStart < 1024 * MiB,
      `the server's peak RSS grew by ${((peak - rssAtStart) / MiB).toFixed(0)} MiB`,
    );
  }

  // After all that, the server still does its job: the contested Deployment's two conflicts.
  const uri = 'file:///fuzz/after.yaml';
  await s.open(
    uri,
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ${namespace}\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n`,
  );
  const ds = await s.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'field-conflict').length === 2);
  assert.deepEqual(
    ds
      .filter((x) => x.code === 'field-conflict')
      .map((x) => x.message.split(' ')[0])
      .sort(),
    ['.spec.replicas', '.spec.template.spec.containers[name="app"].image'],
  );
});

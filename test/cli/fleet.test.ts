// `check` across several contexts against three real API servers at once (test/support/fleet.ts),
// each with its own history: staging edited by hand, prod-eu scaled by an autoscaler, prod-us
// without the Deployment; a ConfigMap edited by hand the same way in both production clusters.
// What users see: each finding naming its context, one line for a finding shared by contexts, a
// table of each object in each context, an unreachable or silent context that holds nobody back,
// globs over the kubeconfig's contexts, and a snapshot of every context read back offline.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { requireCluster } from '../support/env';
import { fleetKubeconfig, seedFleetHistories } from '../support/fleet';
import { clusterCredentials, startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { repoRoot, runCli, scratchDir, writeFiles, type CliRun } from './cli-process';

interface Setup {
  dir: string;
  kubeconfig: string;
  namespace: string;
}

let setup: Promise<Setup> | undefined;

function prepared(t: TestContext): Promise<Setup> | undefined {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  setup ??= (async () => {
    const dir = scratchDir('fleet');
    const { kubeconfig, clusters } = await fleetKubeconfig(dir, cluster.kubeconfig);
    const { namespace, files } = await seedFleetHistories(clusters);
    writeFiles(dir, { 'k8s/web.yaml': files['web.yaml'], 'k8s/settings.yaml': files['settings.yaml'] });
    return { dir, kubeconfig, namespace };
  })();
  return setup;
}

function check(s: Setup, args: readonly string[]): Promise<CliRun> {
  return runCli(['check', '--kubeconfig', s.kubeconfig, ...args, 'k8s/'], { cwd: s.dir });
}

interface PublicFinding {
  file: string;
  code: string;
  message: string;
  path?: string;
  context?: string;
  range: { start: { line: number } };
  manager?: { manager: string };
}

function findingsOf(run: CliRun): PublicFinding[] {
  return (JSON.parse(run.stdout) as { findings: PublicFinding[] }).findings;
}

/** One finding as the test names it: `context file:line code path manager`. */
function named(f: PublicFinding): string {
  return `${f.context} ${f.file}:${f.range.start.line + 1} ${f.code} ${f.path ?? ''} ${f.manager?.manager ?? ''}`.trim();
}

test('each context is judged against its own history, and every finding names its context', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--context', 'staging', '--context', 'prod-eu', '--context', 'prod-us', '-o', 'json']);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as { source: { kind: string; contexts: { context: string }[] } };
  assert.equal(report.source.kind, 'fleet');
  assert.deepEqual(
    report.source.contexts.map((c) => c.context),
    ['staging', 'prod-eu', 'prod-us'],
  );
  const conflicts = findingsOf(run)
    .filter((f) => f.code === 'field-conflict')
    .map(named)
    .sort();
  assert.deepEqual(conflicts, [
    'prod-eu k8s/settings.yaml:7 field-conflict .data.mode kubectl-edit',
    'prod-eu k8s/web.yaml:9 field-conflict .spec.replicas kube-controller-manager',
    'prod-us k8s/settings.yaml:7 field-conflict .data.mode kubectl-edit',
    'staging k8s/web.yaml:20 field-conflict .spec.template.spec.containers[name="app"].image kubectl-edit',
  ]);
  // The Deployment exists in staging and prod-eu, not in prod-us: nothing there says it exists.
  const exists = findingsOf(run).filter((f) => f.code === 'exists' && f.file === 'k8s/web.yaml');
  assert.deepEqual(exists.map((f) => f.context).sort(), ['prod-eu', 'staging']);

  // The JSON holds to its published schema, fleet source and contexts included.
  const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, 'schemas', 'findings.schema.json'), 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const valid = ajv.compile(schema);
  assert.ok(valid(JSON.parse(run.stdout)), JSON.stringify(valid.errors));
});

test('the text report says a shared finding once, naming its contexts, and tables each object by context', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--context', 'staging', '--context', 'prod-eu', '--context', 'prod-us']);
  assert.equal(run.status, 1, run.stderr);
  const lines = run.stdout.split('\n');
  const shared = lines.filter((l) => l.startsWith('k8s/settings.yaml:7:') && l.includes('field-conflict'));
  assert.equal(shared.length, 1, `one line for the conflict both production clusters share:\n${run.stdout}`);
  assert.match(shared[0], /error field-conflict \[prod-eu, prod-us\] /);
  assert.ok(
    lines.some((l) => /^k8s\/web\.yaml:9:\d+ error field-conflict \[prod-eu\] .*kube-controller-manager/.test(l)),
    run.stdout,
  );
  assert.ok(
    lines.some((l) => /^k8s\/web\.yaml:20:\d+ error field-conflict \[staging\] .*kubectl-edit/.test(l)),
    run.stdout,
  );
  // The table: a header naming the contexts, one row per object.
  const header = lines.findIndex((l) => /^object\s+staging\s+prod-eu\s+prod-us$/.test(l));
  assert.ok(header >= 0, run.stdout);
  const row = (name: string) => lines.slice(header + 1).find((l) => l.startsWith(name)) ?? '';
  assert.match(
    row('deployments.apps/web'),
    /conflict with kubectl-edit\s+conflict with kube-controller-manager\s+missing$/,
  );
  assert.match(row('configmaps/settings'), /exists\s+conflict with kubectl-edit\s+conflict with kubectl-edit$/);
  assert.match(lines.at(-2) ?? '', /against 3 contexts \(staging, prod-eu, prod-us\)/);
});

test('what differs between the clusters that hold an object is said on its line, as information', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, [
    '--context',
    'staging',
    '--context',
    'prod-eu',
    '--context',
    'prod-us',
    '--verbose',
    '-o',
    'json',
  ]);
  const drift = findingsOf(run)
    .filter((f) => f.code === 'context-drift')
    .map((f) => `${f.file}:${f.range.start.line + 1} ${f.message}`)
    .sort();
  assert.deepEqual(drift, [
    // staging's replicas are kubectl's 3, prod-eu's the autoscaler's 5; prod-us has no Deployment.
    'k8s/settings.yaml:7 .data.mode differs between contexts: staging "fast" (kubectl); prod-eu "safe" (kubectl-edit); prod-us "safe" (kubectl-edit)',
    'k8s/web.yaml:20 .spec.template.spec.containers[name="app"].image differs between contexts: staging "nginx:1.26" (kubectl-edit); prod-eu "nginx:1.25" (kubectl)',
    'k8s/web.yaml:9 .spec.replicas differs between contexts: staging 3 (kubectl); prod-eu 5 (kube-controller-manager (scale))',
  ]);
  // Information: the exit code is the conflicts', and the text prints it only with --verbose.
  const text = await check(s, ['--contexts', 'staging', '--contexts', 'prod-eu', '--verbose']);
  assert.match(
    text.stdout,
    /^k8s\/web\.yaml:9:\d+ information context-drift \.spec\.replicas differs between contexts: staging 3 \(kubectl\); prod-eu 5/m,
  );
});

test('an unreachable context and a silent one are not judged, and hold the others back no longer than the limit', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, [
    '--context',
    'gone',
    '--context',
    'silent',
    '--context',
    'prod-eu',
    '--context-timeout',
    '5',
    '-o',
    'json',
  ]);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as {
    source: { contexts: { context: string; problem?: { state: string; message: string } }[] };
    notJudged: { context?: string; reason: string }[];
  };
  const byName = Object.fromEntries(report.source.contexts.map((c) => [c.context, c.problem?.state ?? 'judged']));
  assert.deepEqual(byName, { gone: 'unreachable', silent: 'timed out', 'prod-eu': 'judged' });
  assert.deepEqual(report.notJudged.map((n) => n.context).sort(), ['gone', 'silent']);
  // prod-eu was judged in full all the same.
  assert.ok(
    findingsOf(run).some((f) => f.context === 'prod-eu' && f.path === '.spec.replicas'),
    run.stdout,
  );

  const text = await check(s, ['--context', 'gone', '--context', 'prod-eu']);
  assert.match(text.stdout, /configmaps\/settings.*\s+unreachable\s+conflict with kubectl-edit$/m);
  assert.match(
    text.stdout,
    /1 not judged:\n {2}k8s\/settings\.yaml \[gone\] every object: cannot reach the cluster at \S+ \(context gone\)/,
  );
});

test('--contexts takes every context a glob matches; a glob or a name that matches none is a usage error', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--contexts', 'prod-*', '-o', 'json']);
  assert.equal(run.status, 1, run.stderr);
  const contexts = new Set(findingsOf(run).map((f) => f.context));
  assert.deepEqual([...contexts].sort(), ['prod-eu', 'prod-us']);

  const none = await check(s, ['--contexts', 'qa-*']);
  assert.equal(none.status, 2);
  assert.match(
    none.stderr,
    /--contexts "qa-\*" matches no context \(contexts: staging, prod-eu, prod-us, gone, silent\)/,
  );
  const typo = await check(s, ['--context', 'staging', '--context', 'prd-eu']);
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /context "prd-eu" is not in the kubeconfig/);
});

test('GitHub annotations and SARIF results name the context', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const github = await check(s, ['--contexts', 'prod-*', '-o', 'github']);
  const annotations = github.stdout.split('\n').filter((l) => l.startsWith('::error file=k8s/settings.yaml'));
  assert.deepEqual(annotations.map((l) => /::\[(prod-[a-z]+)\] configmaps\/settings/.exec(l)?.[1]).sort(), [
    'prod-eu',
    'prod-us',
  ]);
  const sarif = await check(s, ['--contexts', 'prod-*', '-o', 'sarif']);
  const results = (
    JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; properties?: { context?: string } }[] }[] }
  ).runs[0].results.filter((r) => r.ruleId === 'field-conflict');
  assert.deepEqual(results.map((r) => r.properties?.context).sort(), ['prod-eu', 'prod-eu', 'prod-us']);
});

test('a snapshot of several contexts is read back offline with the same findings per context', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const out = path.join(s.dir, 'fleet-snapshot');
  const taken = await runCli(
    ['snapshot', '--kubeconfig', s.kubeconfig, '--context', 'staging', '--context', 'prod-eu', '--out', out, 'k8s/'],
    { cwd: s.dir },
  );
  assert.equal(taken.status, 0, taken.stderr);
  assert.match(taken.stdout, /^\[staging\] saved 2 live objects/m);
  assert.match(taken.stdout, /^\[prod-eu\] saved 2 live objects/m);
  const live = await check(s, ['--context', 'staging', '--context', 'prod-eu', '-o', 'json']);
  const offline = await runCli(['check', '--snapshot', out, '-o', 'json', 'k8s/'], { cwd: s.dir });
  assert.equal(offline.status, 1, offline.stderr);
  const findings = (run: CliRun) =>
    findingsOf(run)
      .filter((f) => f.code === 'field-conflict' || f.code === 'exists')
      .map(named)
      .sort();
  assert.deepEqual(findings(offline), findings(live));
  assert.ok(findings(offline).length >= 4);

  // A hostile index never steers a read out of the snapshot.
  const index = path.join(out, 'fleet.json');
  const saved = fs.readFileSync(index, 'utf8');
  fs.writeFileSync(index, saved.replace('"context-2"', '"../../etc"'));
  const refused = await runCli(['check', '--snapshot', out, 'k8s/'], { cwd: s.dir });
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /the folder "\.\.\/\.\.\/etc" is not context-N/);
  fs.writeFileSync(index, saved);
});

test('contexts whose servers publish a document under the same hash read it once between them, and judge alike', async (t) => {
  const s = await prepared(t);
  const cluster = requireCluster(t);
  if (!s || !cluster) return;
  // Two servers as far as the product can tell (two recording proxies: two URLs, two disk caches)
  // in front of one API server: the same OpenAPI documents under the same hashes.
  const { ca, token } = clusterCredentials(cluster.kubeconfig, 'admin');
  const proxies = [await startRecordingProxy(cluster.server, ca), await startRecordingProxy(cluster.server, ca)];
  t.after(() => Promise.all(proxies.map((p) => p.stop())));
  const kubeconfig = path.join(s.dir, 'two-servers.json');
  const names = ['east', 'west'];
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: proxies.map((p, i) => ({
        name: names[i],
        cluster: { server: p.server, 'insecure-skip-tls-verify': true },
      })),
      users: [{ name: 'admin', user: { token } }],
      contexts: names.map((name) => ({ name, context: { cluster: name, user: 'admin', namespace: s.namespace } })),
      'current-context': 'east',
    }),
    { mode: 0o600 },
  );
  const run = await runCli(
    // One context after the other: contexts that start together each ask (none waits on another's
    // cluster), and then share what they parse (test/unit/cluster/share.test.ts).
    [
      'check',
      '--kubeconfig',
      kubeconfig,
      '--context',
      'east',
      '--context',
      'west',
      '--parallel',
      '1',
      '-o',
      'json',
      'k8s/',
    ],
    { cwd: s.dir, env: { XDG_CACHE_HOME: path.join(s.dir, 'two-servers-cache') } },
  );
  assert.equal(run.status, 1, run.stderr);
  const documents = (p: RecordingProxy) =>
    p.exchanges().flatMap((e) => (/^\/openapi\/v3\/.+\?hash=/.test(e.url) ? [e.url] : []));
  const [east, west] = proxies.map(documents) as [string[], string[]];
  // Each server is asked its index, which names the documents by hash…
  for (const p of proxies) assert.ok(p.exchanges().some((e) => e.url === '/openapi/v3'));
  // …and each document (v1 and apps/v1 at least) is read from one of them only.
  const all = [...east, ...west];
  assert.ok(
    all.some((u) => u.startsWith('/openapi/v3/apis/apps/v1?hash=')),
    all.join(', '),
  );
  assert.ok(
    all.some((u) => u.startsWith('/openapi/v3/api/v1?hash=')),
    all.join(', '),
  );
  assert.equal(new Set(all).size, all.length, `a document read twice: ${all.join(', ')}`);
  // The same history, judged alike in both: the same findings but for the context.
  const byContext = (context: string) =>
    findingsOf(run)
      .filter((f) => f.context === context)
      .map((f) => named({ ...f, context: '' }))
      .sort();
  assert.ok(
    byContext('east').some((f) => / field-conflict \.spec\.template\.spec\.containers\[name="app"\]\.image /.test(f)),
    byContext('east').join('\n'),
  );
  assert.deepEqual(byContext('west'), byContext('east'));
});

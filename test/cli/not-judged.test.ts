// Silence means safe, on the command line: the summary counts the objects judged and lists under it,
// with its place and why, every object or input that was not judged, and the exit code is then
// never 0. One case per reason the check meets for real — helm missing from PATH, a template helm
// refuses, a values file helm refuses, an overlay kustomize refuses, a flow-style file kubectl reads
// as JSON, a kind the cluster does not serve, an object a snapshot lacks, a namespace the user may
// not read (before: the whole check stopped, exit 2) — against the real API
// server, helm and kustomize, in text and JSON; and each goes away when its cause does: a clean run
// says "N objects judged" and exits 0.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { apply, connect, freshNamespace, objectOf, request, type Connection } from '../support/seed';
import { requireTool } from '../tools/tools';
import { lineOf, runCli, scratchDir, writeFiles, type CliRun } from './cli-process';

interface JsonReport {
  summary: { objects: number; judged: number; notJudged: number; errors: number; warnings: number };
  findings: { file: string; code: string; range: { start: { line: number } } }[];
  notJudged: {
    file: string;
    title: string;
    reason: string;
    code?: string;
    range?: { start: { line: number; character: number } };
  }[];
}

const configMap = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`;

/** A chart of one ConfigMap, written by hand (no helm is needed to write it). */
const chart = (
  template = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  level: {{ .Values.level | quote }}\n',
) => ({
  'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
  'charts/web/values.yaml': 'level: info\n',
  'charts/web/templates/settings.yaml': template,
});

/** PATH without any folder that holds a helm. */
const pathWithoutHelm = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((d) => d !== '' && !fs.existsSync(path.join(d, 'helm')))
  .join(path.delimiter);

interface Setup {
  cluster: TestClusterInfo;
  namespace: string;
  repo: string;
  /** The cluster flags, with the namespace. */
  flags: string[];
}

async function setup(t: TestContext, prefix: string, files: Record<string, string>): Promise<Setup | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  const namespace = await freshNamespace(connect('admin', cluster.kubeconfig), prefix);
  const repo = scratchDir(prefix);
  writeFiles(repo, files);
  return {
    cluster,
    namespace,
    repo,
    flags: ['--kubeconfig', cluster.kubeconfig, '--context', 'admin', '-n', namespace],
  };
}

/** The same check in text and in JSON. */
async function check(
  s: Setup,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ text: CliRun; json: CliRun; report: JsonReport }> {
  const [text, json] = [
    await runCli(['check', ...s.flags, ...args], { cwd: s.repo, env }),
    await runCli(['check', ...s.flags, '--format', 'json', ...args], { cwd: s.repo, env }),
  ];
  assert.ok(json.status === 0 || json.status === 1, `${json.status}: ${json.stderr}`);
  return { text, json, report: JSON.parse(json.stdout) as JsonReport };
}

/**
 * What the user is told: exit 1; the summary line with the objects judged and `N not judged:`, then
 * one line per entry, `place title: code reason`; the JSON's counts and entries, the same.
 */
function assertNotJudged(
  r: Awaited<ReturnType<typeof check>>,
  expected: { judged: number; entries: { place: string; code?: string; reason: RegExp }[] },
): void {
  const { text, json, report } = r;
  assert.equal(text.status, 1, `text: ${text.stderr}\n${text.stdout}`);
  assert.equal(json.status, 1, json.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  const at = lines.findIndex((l) => / not judged:$/.test(l));
  assert.ok(at >= 0, text.stdout);
  assert.match(
    lines[at]!,
    new RegExp(
      `^\\d+ errors?, \\d+ warnings?, \\d+ information( \\(not shown; --verbose shows them\\))? — ${expected.judged} objects? judged in \\d+ files?, serverSide as "[^"]+", against context admin; ${expected.entries.length} not judged:$`,
    ),
  );
  const listed = lines.slice(at + 1);
  assert.equal(listed.length, expected.entries.length, text.stdout);
  for (const [i, e] of expected.entries.entries()) {
    assert.ok(listed[i]!.startsWith(`  ${e.place} `), `${listed[i]} at ${e.place}`);
    if (e.code) assert.ok(listed[i]!.includes(`: ${e.code} `), `${listed[i]}: ${e.code}`);
    assert.match(listed[i]!, e.reason);
  }

  assert.equal(report.summary.judged, expected.judged, JSON.stringify(report.summary));
  assert.equal(report.summary.notJudged, expected.entries.length, JSON.stringify(report.notJudged, null, 1));
  assert.deepEqual(
    report.notJudged.map((n) =>
      `${n.file}${n.range ? `:${n.range.start.line + 1}:${n.range.start.character + 1}` : ''} ${n.code ?? ''}`.trim(),
    ),
    expected.entries.map((e) => `${e.place} ${e.code ?? ''}`.trim()),
  );
  for (const [i, e] of expected.entries.entries()) assert.match(report.notJudged[i]!.reason, e.reason);
}

/** Exit 0, every object judged, nothing listed. */
function assertAllJudged(r: Awaited<ReturnType<typeof check>>, judged: number): void {
  assert.equal(r.text.status, 0, `${r.text.stderr}\n${r.text.stdout}`);
  assert.equal(r.json.status, 0, r.json.stderr);
  assert.match(
    r.text.stdout,
    new RegExp(`— ${judged} objects? judged in \\d+ files?, serverSide as "[^"]+", against context admin\\n$`),
  );
  assert.doesNotMatch(r.text.stdout, /not judged/);
  assert.deepEqual(
    { judged: r.report.summary.judged, notJudged: r.report.summary.notJudged, list: r.report.notJudged },
    { judged, notJudged: 0, list: [] },
  );
}

test('a clean run says how many objects were judged, and exits 0', async (t) => {
  const s = await setup(t, 'nj-clean', { 'k8s/settings.yaml': `${configMap('a')}---\n${configMap('b')}` });
  if (!s) return;
  const r = await check(s, ['k8s']);
  assertAllJudged(r, 2);
  assert.equal(
    r.text.stdout,
    `0 errors, 0 warnings, 0 information — 2 objects judged in 1 file, serverSide as "kubectl", against context admin\n`,
  );
});

test('a chart checked without helm on PATH is not judged (tool-missing on its Chart.yaml), the manifests beside it are; with helm it is judged', async (t) => {
  const s = await setup(t, 'nj-nohelm', { ...chart(), 'k8s/settings.yaml': configMap('plain') });
  const helm = requireTool(t, 'helm4');
  if (!s || !helm) return;
  const without = await check(s, ['.'], { PATH: pathWithoutHelm });
  assertNotJudged(without, {
    judged: 1,
    entries: [
      { place: 'charts/web/Chart.yaml:1:1', code: 'tool-missing', reason: /cannot render release web: .*helm/ },
    ],
  });
  assert.ok(without.report.findings.some((f) => f.code === 'tool-missing' && f.file === 'charts/web/Chart.yaml'));

  // helm on PATH: the chart's ConfigMap is judged too.
  const binDir = path.join(s.repo, '.bin');
  fs.mkdirSync(binDir);
  fs.symlinkSync(helm, path.join(binDir, 'helm'));
  assertAllJudged(await check(s, ['.'], { PATH: `${binDir}${path.delimiter}${pathWithoutHelm}` }), 2);
});

test('a chart with a template error is not judged, listed once at the template line helm names; fixed, it is judged', async (t) => {
  const s = await setup(
    t,
    'nj-template',
    chart(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: {{ include "no-such-template" . }}\n',
    ),
  );
  const helm = requireTool(t, 'helm4');
  if (!s || !helm) return;
  const broken = await check(s, ['--helm', 'charts/web', '--helm-binary', helm]);
  // Shown on Chart.yaml and on the template; one input, so one entry, where helm's words point.
  assert.deepEqual(
    broken.report.findings.filter((f) => f.code === 'render-failed').map((f) => f.file),
    ['charts/web/Chart.yaml', 'charts/web/templates/settings.yaml'],
  );
  assertNotJudged(broken, {
    judged: 0,
    entries: [
      {
        place: 'charts/web/templates/settings.yaml:6:12',
        code: 'render-failed',
        reason: /cannot render release web: .*no-such-template/,
      },
    ],
  });

  writeFiles(s.repo, chart());
  assertAllJudged(await check(s, ['--helm', 'charts/web', '--helm-binary', helm]), 1);
});

test('a values file helm refuses leaves the chart not judged, listed on the values file', async (t) => {
  const s = await setup(t, 'nj-values', { ...chart(), 'bad-values.yaml': 'level: warn\nreplicas: [1, 2\n' });
  const helm = requireTool(t, 'helm4');
  if (!s || !helm) return;
  const refused = await check(s, ['--helm', 'charts/web', '--helm-binary', helm, '--values', 'bad-values.yaml']);
  const place = refused.report.notJudged[0]?.file;
  assert.equal(place, 'bad-values.yaml', JSON.stringify(refused.report.notJudged));
  const line = refused.report.notJudged[0]!.range!.start.line + 1;
  assertNotJudged(refused, {
    judged: 0,
    entries: [
      {
        place: `bad-values.yaml:${line}:1`,
        code: 'render-failed',
        reason: /cannot render release web: .*bad-values\.yaml/,
      },
    ],
  });

  writeFiles(s.repo, { 'bad-values.yaml': 'level: warn\nreplicas: [1, 2]\n' });
  assertAllJudged(await check(s, ['--helm', 'charts/web', '--helm-binary', helm, '--values', 'bad-values.yaml']), 1);
});

test('an overlay kustomize refuses is not judged, listed at the entry that names what is missing; the overlay beside it is judged', async (t) => {
  const s = await setup(t, 'nj-overlay', {
    'base/kustomization.yaml': 'resources:\n- settings.yaml\n',
    'base/settings.yaml': configMap('settings'),
    'overlays/good/kustomization.yaml': 'resources:\n- ../../base\n',
    'overlays/broken/kustomization.yaml': 'resources:\n- ../../base\n- missing.yaml\n',
  });
  const kustomize = requireTool(t, 'kustomize');
  if (!s || !kustomize) return;
  const args = ['--kustomize-binary', kustomize, '-k', 'overlays/good', '-k', 'overlays/broken'];
  const broken = await check(s, args);
  assertNotJudged(broken, {
    judged: 1,
    entries: [
      {
        place: 'overlays/broken/kustomization.yaml:3:3',
        code: 'render-failed',
        reason: /cannot render overlay broken: .*missing\.yaml/,
      },
    ],
  });

  writeFiles(s.repo, { 'overlays/broken/missing.yaml': configMap('extra') });
  assertAllJudged(await check(s, args), 3);
});

test('a flow-style file kubectl reads as JSON is not judged (yaml-syntax), the file beside it is', async (t) => {
  const s = await setup(t, 'nj-flow', {
    'k8s/flow.yaml': '{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}\n',
    'k8s/settings.yaml': configMap('plain'),
  });
  if (!s) return;
  const refused = await check(s, ['k8s']);
  assertNotJudged(refused, {
    judged: 1,
    entries: [{ place: 'k8s/flow.yaml:1:2', code: 'yaml-syntax', reason: /kubectl reads it as JSON/ }],
  });

  writeFiles(s.repo, { 'k8s/flow.yaml': '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flow"}}\n' });
  assertAllJudged(await check(s, ['k8s']), 2);
});

test('an object of a kind the cluster does not serve is not judged (kind-not-served), the object beside it is', async (t) => {
  const widget = 'apiVersion: widgets.nothing.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n';
  const s = await setup(t, 'nj-kind', { 'k8s/app.yaml': `${configMap('plain')}---\n${widget}` });
  if (!s) return;
  const text = fs.readFileSync(path.join(s.repo, 'k8s/app.yaml'), 'utf8');
  const unknown = await check(s, ['k8s']);
  assertNotJudged(unknown, {
    judged: 1,
    entries: [{ place: `k8s/app.yaml:${lineOf(text, /^kind: Widget/)}:7`, code: 'kind-not-served', reason: /Widget/ }],
  });
  assert.equal(unknown.report.summary.objects, 2);

  writeFiles(s.repo, { 'k8s/app.yaml': configMap('plain') });
  assertAllJudged(await check(s, ['k8s']), 1);
});

test('an object a snapshot does not hold is not judged (it exited 0 before), the one it holds is', async (t) => {
  const s = await setup(t, 'nj-snapshot', { 'k8s/a.yaml': configMap('a'), 'k8s/b.yaml': configMap('b') });
  if (!s) return;
  const saved = await runCli(['snapshot', ...s.flags, '--out', 'snap', 'k8s/a.yaml'], { cwd: s.repo });
  assert.equal(saved.status, 0, saved.stderr);
  // Read from the snapshot alone: no cluster flags but the namespace.
  const offline: Setup = { ...s, flags: ['--snapshot', 'snap', '-n', s.namespace] };
  const text = await runCli(['check', ...offline.flags, 'k8s'], { cwd: s.repo });
  const json = await runCli(['check', ...offline.flags, '--format', 'json', 'k8s'], { cwd: s.repo });
  assert.equal(text.status, 1, `${text.stderr}\n${text.stdout}`);
  assert.equal(json.status, 1, json.stderr);
  const report = JSON.parse(json.stdout) as JsonReport;
  assert.deepEqual({ judged: report.summary.judged, notJudged: report.summary.notJudged }, { judged: 1, notJudged: 1 });
  assert.deepEqual(
    report.notJudged.map((n) => [n.file, n.title]),
    [['k8s/b.yaml', `configmaps/b (namespace ${s.namespace})`]],
  );
  assert.match(report.notJudged[0]!.reason, /not in the snapshot/);
  const lines = text.stdout.trimEnd().split('\n');
  assert.match(
    lines.at(-2)!,
    /— 1 object judged in 2 files, serverSide as "kubectl", against snapshot snap; 1 not judged:$/,
  );
  assert.match(
    lines.at(-1)!,
    new RegExp(
      `^  k8s/b\\.yaml configmaps/b \\(namespace ${s.namespace}\\): the live object is not known: not in the snapshot$`,
    ),
  );

  const judged = await runCli(['check', ...offline.flags, 'k8s/a.yaml'], { cwd: s.repo });
  assert.equal(judged.status, 0, judged.stdout);
  assert.match(judged.stdout, /— 1 object judged in 1 file, serverSide as "kubectl", against snapshot snap\n$/);
});

/** Lets `user` read ConfigMaps in `namespace`, and returns once the API server's authorizer says so. */
async function allowConfigMaps(admin: Connection, user: Connection, namespace: string): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io/v1';
  objectOf(
    await apply(admin, 'kch-test', {
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name: 'read-configmaps', namespace },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
    }),
    'role',
  );
  objectOf(
    await apply(admin, 'kch-test', {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: 'read-configmaps', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.user }],
    }),
    'binding',
  );
  // The authorizer learns of a binding through its informers: wait for the read it allows to be answered.
  while ((await request(user, 'GET', `/api/v1/namespaces/${namespace}/configmaps`)).status !== 200)
    await new Promise((r) => setTimeout(r, 100));
}

test('an object in a namespace the user may not read is not judged, the object the user may read is; a user who may read nothing is still exit 2', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const stranger = connect('stranger', cluster.kubeconfig);
  const [readable, closed] = [await freshNamespace(admin, 'nj-readable'), await freshNamespace(admin, 'nj-closed')];
  const withNamespace = (name: string, namespace: string) =>
    configMap(name).replace(`name: ${name}\n`, `name: ${name}\n  namespace: ${namespace}\n`);
  const repo = scratchDir('nj-forbidden');
  writeFiles(repo, {
    'k8s/open.yaml': withNamespace('open', readable),
    'k8s/closed.yaml': withNamespace('closed', closed),
  });
  const s: Setup = {
    cluster,
    namespace: readable,
    repo,
    flags: ['--kubeconfig', cluster.kubeconfig, '--context', 'stranger'],
  };

  // Nothing readable yet: the credential is the problem, one line and exit 2, as before.
  const nothing = await runCli(['check', ...s.flags, 'k8s'], { cwd: repo });
  assert.equal(nothing.status, 2, nothing.stdout);
  assert.match(nothing.stderr, /refuses: .*User "stranger" cannot/);

  await allowConfigMaps(admin, stranger, readable);
  const r = await check(s, ['k8s']);
  const lines = r.text.stdout.trimEnd().split('\n');
  assert.equal(r.text.status, 1, `${r.text.stderr}\n${r.text.stdout}`);
  assert.match(
    lines.at(-2)!,
    /— 1 object judged in 2 files, serverSide as "kubectl", against context stranger; 1 not judged:$/,
  );
  assert.match(
    lines.at(-1)!,
    new RegExp(
      `^  k8s/closed\\.yaml ConfigMap/closed \\(v1, namespace ${closed}\\): the cluster refuses to let it be read: .*User "stranger" cannot (get|list) resource "configmaps" .*in the namespace "${closed}".*\\(the check needs get on its kind in its namespace, and list where it reads many objects of that kind\\)$`,
    ),
  );
  assert.equal(r.json.status, 1);
  assert.deepEqual(
    { judged: r.report.summary.judged, notJudged: r.report.notJudged.map((n) => n.file) },
    { judged: 1, notJudged: ['k8s/closed.yaml'] },
  );

  // Both read, both judged: a user who may only read is refused the apply (403), which is a judgement, not a gap.
  await allowConfigMaps(admin, stranger, closed);
  const both = await check(s, ['k8s']);
  assert.equal(both.text.status, 1, both.text.stdout);
  assert.match(both.text.stdout, /error forbidden configmaps "closed" is forbidden: User "stranger" cannot patch/);
  assert.match(
    both.text.stdout,
    /^2 errors, .* — 2 objects judged in 2 files, serverSide as "kubectl", against context stranger\n$/m,
  );
});

test("the CI formats carry what was not judged: SARIF in the run's properties, GitHub and GitLab one entry for a reason no finding carries", async (t) => {
  const widget = 'apiVersion: widgets.nothing.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n';
  const s = await setup(t, 'nj-formats', {
    'k8s/a.yaml': configMap('a'),
    'k8s/b.yaml': configMap('b'),
    'k8s/widget.yaml': widget,
  });
  if (!s) return;
  const saved = await runCli(['snapshot', ...s.flags, '--out', 'snap', 'k8s/a.yaml'], { cwd: s.repo });
  assert.equal(saved.status, 0, saved.stderr);
  const run = (format: string) =>
    runCli(['check', '--snapshot', 'snap', '-n', s.namespace, '--format', format, 'k8s'], { cwd: s.repo });
  const [sarif, github, gitlab] = [await run('sarif'), await run('github'), await run('gitlab')];
  for (const r of [sarif, github, gitlab]) assert.equal(r.status, 1, r.stderr);
  const missing = `configmaps/b (namespace ${s.namespace})`;

  const log = JSON.parse(sarif.stdout) as {
    runs: {
      results: { ruleId: string }[];
      properties: {
        judged: number;
        notJudged: number;
        notJudgedList: { file: string; title: string; code?: string; reason: string }[];
      };
    }[];
  };
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  const validSarif = ajv.compile(
    JSON.parse(
      fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'sarif-2.1.0-subset.schema.json'), 'utf8'),
    ),
  );
  assert.ok(validSarif(log), ajv.errorsText(validSarif.errors));
  const props = log.runs[0]!.properties;
  assert.deepEqual({ judged: props.judged, notJudged: props.notJudged }, { judged: 1, notJudged: 2 });
  assert.deepEqual(props.notJudgedList.map((n) => [n.file, n.code ?? n.title]).sort(), [
    ['k8s/b.yaml', missing],
    ['k8s/widget.yaml', 'kind-not-served'],
  ]);
  assert.ok(log.runs[0]!.results.some((r) => r.ruleId === 'kind-not-served'));

  const lines = github.stdout.trimEnd().split('\n');
  assert.ok(
    lines.includes(
      `::warning file=k8s/b.yaml,title=Not judged::${missing}: the live object is not known: not in the snapshot`,
    ),
    github.stdout,
  );
  assert.ok(
    lines.some(
      (l) => l.startsWith('::error file=k8s/widget.yaml,') && l.includes('title=Kind not served (kind-not-served)'),
    ),
    github.stdout,
  );
  assert.match(
    lines.at(-1)!,
    /^kube-conflict-hints: 1 error\(s\), 0 warning\(s\), 0 information — 1 object\(s\) judged, 2 not judged in 3 file\(s\), /,
  );

  const issues = JSON.parse(gitlab.stdout) as { check_name: string; severity: string; location: { path: string } }[];
  const validGitlab = new Ajv({ allErrors: true, strict: false }).compile(
    JSON.parse(
      fs.readFileSync(
        path.join(import.meta.dirname, '..', 'ci', 'fixtures', 'gitlab-code-quality.schema.json'),
        'utf8',
      ),
    ),
  );
  assert.ok(validGitlab(issues), JSON.stringify(validGitlab.errors));
  assert.deepEqual(issues.map((i) => [i.check_name, i.severity, i.location.path]).sort(), [
    ['kube-conflict-hints/kind-not-served', 'critical', 'k8s/widget.yaml'],
    ['kube-conflict-hints/not-judged', 'major', 'k8s/b.yaml'],
  ]);
});

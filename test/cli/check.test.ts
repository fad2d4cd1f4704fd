// `kube-conflict-hints check` against the real kube-apiserver: a history written the way real tools
// write it (an autoscaler, kubectl edit, Helm, kubectl create, an export gone stale), the manifests a
// user holds, and what the command prints for them — compiler-style text, JSON valid against
// schemas/findings.schema.json, SARIF valid against SARIF 2.1.0 — with its exit codes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { stringify as toYaml } from 'yaml';
import { readAuditEvents } from '../support/cluster';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { apply, configMap, connect, create, freshNamespace, get, kubectlEdit, objectOf } from '../support/seed';
import { editedAndAutoscaled, helmInstalled } from '../support/seed-scenarios';
import { lineOf, repoRoot, runCli, scratchDir, writeFiles, type CliRun } from './cli-process';

interface Setup {
  cluster: TestClusterInfo;
  namespace: string;
  dir: string;
  texts: Record<string, string>;
}

let setup: Promise<Setup> | undefined;

/** One history and one folder of manifests for the whole file; each test reads them. */
async function prepared(t: TestContext): Promise<Setup | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  setup ??= (async () => {
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'cli-check');
    await editedAndAutoscaled(conn, namespace, 'web');
    await helmInstalled(conn, namespace, 'shop');
    objectOf(
      await create(conn, 'kubectl-create', configMap(namespace, 'settings', { retries: '3' })),
      'create settings',
    );
    const steady = configMap(namespace, 'steady', { color: 'blue' });
    objectOf(await apply(conn, 'kubectl', steady), 'apply steady');
    objectOf(await apply(conn, 'kubectl', configMap(namespace, 'steady-too', { size: 'm' })), 'apply steady-too');
    // Applied with a key the manifest no longer has: the next apply deletes it (information).
    objectOf(
      await apply(conn, 'kubectl', configMap(namespace, 'trimmed', { keep: 'yes', drop: 'no' })),
      'apply trimmed',
    );
    const flags = configMap(namespace, 'feature-flags', { checkout: 'off' });
    objectOf(await apply(conn, 'kubectl', flags), 'apply feature-flags');
    const exported = objectOf(await get(conn, flags), 'read feature-flags');
    delete exported.metadata.managedFields;
    objectOf(await kubectlEdit(conn, flags, { data: { checkout: 'on' } }), 'edit feature-flags');

    const texts: Record<string, string> = {
      'apply/web.yaml': [
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
      'apply/shop-config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-config\n  namespace: ${namespace}\ndata:\n  log.level: debug\n`,
      // YAML 1.1 quoting, as kubectl prints: `off` unquoted would be read back as false.
      'apply/feature-flags.yaml': toYaml(exported, { version: '1.1' }),
      'apply/new.json': JSON.stringify(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'brand-new', namespace }, data: { a: 'b' } },
        null,
        2,
      ),
      'steady/steady.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: steady\n  namespace: ${namespace}\ndata:\n  color: blue\n`,
      'steady/more.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: steady-too\n  namespace: ${namespace}\ndata:\n  size: m\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trimmed\n  namespace: ${namespace}\ndata:\n  keep: "yes"\n  drop: "no"\n`,
      'create/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  retries: "3"\n`,
    };
    const dir = scratchDir('check');
    writeFiles(dir, texts);
    return { cluster, namespace, dir, texts };
  })();
  return setup;
}

function check(s: Setup, args: string[], context = 'admin'): Promise<CliRun> {
  return runCli(['check', '--kubeconfig', s.cluster.kubeconfig, '--context', context, ...args], { cwd: s.dir });
}

interface JsonFinding {
  file: string;
  code: string;
  severity: string;
  message: string;
  path?: string;
  manager?: { manager: string; operation: string; subresource?: string };
  range: { start: { line: number; character: number } };
}

const imagePath = '.spec.template.spec.containers[name="app"].image';

test('text: a compiler-style line on the exact key for each conflict, grouped under the object, exit 1', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--verbose', 'apply']);
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stderr, '');
  const web = s.texts['apply/web.yaml']!;
  const replicasLine = lineOf(web, /^ {2}replicas:/);
  const imageLine = lineOf(web, /image: nginx/);
  const lines = run.stdout.split('\n');
  const header = lines.indexOf(`deployments.apps/web (namespace ${s.namespace})`);
  assert.ok(header >= 0, run.stdout);
  const block = lines.slice(header + 1, lines.indexOf('', header));
  // The changed scalar is marked on its value: the column of `3`, of `nginx:1.25`.
  assert.deepEqual(block, [
    'apply/web.yaml:4:9 information exists deployments.apps "web" exists; managed by "kubectl", "kube-controller-manager", "kubectl-edit"',
    `apply/web.yaml:${replicasLine}:13 error field-conflict .spec.replicas is managed by "kube-controller-manager" with subresource "scale" using apps/v1 (an autoscaler): live 5, manifest 3 — kubectl apply --server-side would fail`,
    '  forcing takes .spec.replicas from kube-controller-manager (Update, scale); nothing is known to take it back (no HorizontalPodAutoscaler in this namespace targets this Deployment now)',
    `apply/web.yaml:${imageLine}:18 error field-conflict ${imagePath} is managed by "kubectl-edit" using apps/v1 (a manual kubectl edit): live "nginx:1.26", manifest "nginx:1.25" — kubectl apply --server-side would fail`,
    `  forcing takes ${imagePath} from kubectl-edit (Update); nothing is known to take it back (a manual kubectl edit)`,
    `  to force: kubectl apply --server-side --force-conflicts --field-manager=kubectl --kubeconfig=${s.cluster.kubeconfig} --context=admin -f apply/web.yaml`,
  ]);
  assert.match(
    run.stdout,
    new RegExp(
      `^configmaps/shop-config \\(namespace ${s.namespace}\\)\\n.*\\napply/shop-config\\.yaml:7:14 error field-conflict \\.data\\.log\\.level is managed by "helm"`,
      'm',
    ),
  );
  const flagsRv = lineOf(s.texts['apply/feature-flags.yaml']!, /resourceVersion:/);
  assert.match(
    run.stdout,
    new RegExp(`^apply/feature-flags\\.yaml:${flagsRv}:\\d+ error stale-resource-version `, 'm'),
  );
  assert.doesNotMatch(run.stdout, /brand-new/, 'a new object without findings is not listed');
  assert.match(
    lines.at(-2)!,
    /^5 errors, 0 warnings, 3 information — 4 objects judged in 4 files, serverSide as "kubectl", against context admin$/,
  );
});

test('json: the Finding records with their file, valid against schemas/findings.schema.json', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--format', 'json', 'apply']);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as {
    findings: JsonFinding[];
    summary: Record<string, number>;
    objects: { title: string }[];
  };
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(
    JSON.parse(fs.readFileSync(path.join(repoRoot, 'schemas/findings.schema.json'), 'utf8')),
  );
  assert.ok(validate(report), ajv.errorsText(validate.errors));

  const conflicts = report.findings
    .filter((f) => f.code === 'field-conflict')
    .map((f) => `${f.file} ${f.path} ${f.manager?.manager}`);
  assert.deepEqual(conflicts.sort(), [
    'apply/feature-flags.yaml .data.checkout kubectl-edit',
    'apply/shop-config.yaml .data.log.level helm',
    'apply/web.yaml .spec.replicas kube-controller-manager',
    `apply/web.yaml ${imagePath} kubectl-edit`,
  ]);
  assert.deepEqual(
    report.findings.filter((f) => f.code === 'stale-resource-version').map((f) => f.file),
    ['apply/feature-flags.yaml'],
  );
  assert.equal(report.summary.objects, 4);
  assert.ok(
    report.objects.some((o) => o.title === `configmaps/brand-new (namespace ${s.namespace})`),
    'objects lists the clean one too',
  );
});

test('sarif: valid SARIF 2.1.0, one result per finding on its 1-based region, rules with help links', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const [sarifRun, jsonRun] = await Promise.all([
    check(s, ['--format', 'sarif', 'apply']),
    check(s, ['--format', 'json', 'apply']),
  ]);
  assert.equal(sarifRun.status, 1, sarifRun.stderr);
  const sarif = JSON.parse(sarifRun.stdout) as {
    runs: {
      tool: { driver: { rules: { id: string; helpUri: string }[] } };
      results: {
        ruleId: string;
        ruleIndex: number;
        level: string;
        locations: {
          physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } };
        }[];
      }[];
    }[];
  };
  // strictRequired off: SARIF's own `anyOf: [{required: [text]}, {required: [id]}]` names properties declared beside it.
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  const validate = ajv.compile(
    JSON.parse(fs.readFileSync(path.join(repoRoot, 'test/fixtures/sarif-2.1.0-subset.schema.json'), 'utf8')),
  );
  assert.ok(validate(sarif), ajv.errorsText(validate.errors));

  const [run] = sarif.runs;
  const findings = (JSON.parse(jsonRun.stdout) as { findings: JsonFinding[] }).findings;
  const levels = { error: 'error', warning: 'warning', information: 'note' } as Record<string, string>;
  assert.deepEqual(
    run!.results.map((r) => {
      const loc = r.locations[0]!.physicalLocation;
      return `${loc.artifactLocation.uri}:${loc.region.startLine}:${loc.region.startColumn} ${r.level} ${r.ruleId}`;
    }),
    findings.map(
      (f) => `${f.file}:${f.range.start.line + 1}:${f.range.start.character + 1} ${levels[f.severity]} ${f.code}`,
    ),
  );
  for (const r of run!.results) {
    const rule = run!.tool.driver.rules[r.ruleIndex]!;
    assert.equal(rule.id, r.ruleId);
    assert.match(rule.helpUri, /^https:\/\/kubernetes\.io\/docs\//);
  }
});

test('by default the text says what needs a look and a summary; --verbose adds the information lines', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const [quiet, verbose, minimum] = await Promise.all([
    check(s, ['apply']),
    check(s, ['--verbose', 'apply']),
    check(s, ['--min-severity', 'information', 'apply']),
  ]);
  assert.equal(quiet.status, 1, quiet.stderr);
  assert.doesNotMatch(quiet.stdout, /^\S+:\d+:\d+ information /m, 'no information line by default');
  const web = s.texts['apply/web.yaml']!;
  const lines = quiet.stdout.split('\n');
  const header = lines.indexOf(`deployments.apps/web (namespace ${s.namespace})`);
  assert.deepEqual(
    lines.slice(header + 1, lines.indexOf('', header)).map((l) => l.split(' ').slice(0, 3).join(' ')),
    [
      `apply/web.yaml:${lineOf(web, /^ {2}replicas:/)}:13 error field-conflict`,
      '  forcing',
      `apply/web.yaml:${lineOf(web, /image: nginx/)}:18 error field-conflict`,
      '  forcing',
      '  to',
    ],
  );
  assert.match(
    lines.at(-2)!,
    /^5 errors, 0 warnings, 3 information \(not shown; --verbose shows them\) — 4 objects judged in 4 files, serverSide as "kubectl", against context admin$/,
  );
  // Everything else is the same: the verbose run is the quiet run plus the information lines.
  const withoutInformation = verbose.stdout.split('\n').filter((l) => !/^\S+:\d+:\d+ information /.test(l));
  assert.deepEqual(withoutInformation.slice(0, -2), lines.slice(0, -2));
  assert.equal(verbose.stdout.split('\n').filter((l) => /^\S+:\d+:\d+ information /.test(l)).length, 3);
  assert.equal(minimum.stdout, verbose.stdout);
  assert.deepEqual([verbose.status, minimum.status], [1, 1]);
});

test('a folder where every object exists and nothing conflicts: one summary line, exit 0; --verbose says the rest', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const [quiet, verbose, errorsOnly] = await Promise.all([
    check(s, ['steady']),
    check(s, ['--verbose', 'steady']),
    check(s, ['--min-severity', 'error', 'steady']),
  ]);
  assert.equal(quiet.status, 0, quiet.stdout + quiet.stderr);
  assert.equal(quiet.stderr, '');
  assert.equal(
    quiet.stdout,
    '0 errors, 0 warnings, 3 information (not shown; --verbose shows them) — 3 objects judged in 2 files, serverSide as "kubectl", against context admin\n',
  );
  assert.equal(errorsOnly.stdout, quiet.stdout);
  assert.equal(verbose.status, 0, verbose.stderr);
  assert.match(
    verbose.stdout,
    /^steady\/steady\.yaml:4:9 information exists configmaps "steady" exists; managed by "kubectl"$/m,
  );
  assert.match(
    verbose.stdout,
    /^steady\/more\.yaml:4:9 information exists configmaps "steady-too" exists; managed by "kubectl"$/m,
  );
  assert.match(
    verbose.stdout,
    /^steady\/more\.yaml:\d+:\d+ information exists configmaps "trimmed" exists; managed by "kubectl"$/m,
  );
  assert.match(verbose.stdout, /^0 errors, 0 warnings, 3 information — 3 objects judged in 2 files/m);
  // JSON and SARIF keep every finding whatever the text shows.
  const json = await check(s, ['--format', 'json', 'steady']);
  assert.equal(json.status, 0);
  assert.equal((JSON.parse(json.stdout) as { findings: unknown[] }).findings.length, 3);
});

test("--mode create: AlreadyExists on the name, in the server's words", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['--mode', 'create', 'create']);
  assert.equal(run.status, 1, run.stderr);
  assert.match(
    run.stdout,
    /^create\/settings\.yaml:4:9 error already-exists configmaps "settings" already exists; managed by "kubectl-create" — kubectl create would fail/m,
  );
});

test('a read-only user is told, per object, that the server refuses the apply (403) in its words; its --verify dry runs are refused the same way, and agree', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const [asViewer, asAdmin] = await Promise.all([
    check(s, ['--format', 'json', 'apply'], 'viewer'),
    check(s, ['--format', 'json', 'apply'], 'admin'),
  ]);
  assert.equal(asViewer.status, 1, asViewer.stderr);
  type Shown = { file: string; code: string; serverMessage?: string };
  const findings = (r: CliRun) => (JSON.parse(r.stdout) as { findings: Shown[] }).findings;
  // The viewer reads what the admin reads, but may patch nothing: the server's 403 comes before
  // the conflicts, so each object the admin is told of gets that refusal alone.
  const files = (list: Shown[]) => [...new Set(list.map((f) => f.file))].sort();
  assert.deepEqual(
    files(findings(asViewer)),
    files(findings(asAdmin).filter((f) => f.code !== 'exists'))
      .concat('apply/new.json')
      .sort(),
  );
  for (const f of findings(asViewer)) {
    assert.equal(f.code, 'forbidden');
    assert.match(
      f.serverMessage ?? '',
      new RegExp(
        `^\\S+ "[^"]+" is forbidden: User "viewer" cannot patch resource "\\w+" in API group "(apps)?" in the namespace "${s.namespace}"$`,
      ),
    );
  }
  // The dry runs are refused the same way (403), which is the answer predicted: they agree.
  const verify = await check(s, ['--verify', 'apply'], 'viewer');
  assert.equal(verify.status, 1, verify.stderr);
  assert.doesNotMatch(verify.stdout, /dry-run-differs/);
  for (const object of ['deployments.apps/web', 'configmaps/feature-flags', 'configmaps/shop-config'])
    assert.match(
      verify.stdout,
      new RegExp(`^${object.replace('.', '\\.')} \\(namespace ${s.namespace}\\) — the dry run agrees$`, 'm'),
    );
});

test("a user the cluster does not authorize (context stranger) gets exit 2 and the server's refusal", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const run = await check(s, ['apply'], 'stranger');
  assert.equal(run.status, 2, run.stdout);
  assert.equal(run.stdout, '');
  assert.match(
    run.stderr,
    /^kube-conflict-hints: the cluster at https:\/\/127\.0\.0\.1:\d+ \(context stranger\) refuses: .*User "stranger" cannot (get|list) resource .*\(the check needs get on the manifests' kinds \(list where many objects of a kind are read\)\)\n$/,
  );
});

test("--verify: the server's dry runs agree with every prediction, and every write was a dry run", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const started = new Date().toISOString();
  const run = await check(s, ['--verify', 'apply']);
  assert.equal(run.status, 1, run.stderr);
  assert.doesNotMatch(run.stdout, /dry-run-differs/);
  assert.match(
    run.stdout,
    new RegExp(`^deployments\\.apps/web \\(namespace ${s.namespace}\\) — the dry run agrees$`, 'm'),
  );
  assert.match(
    run.stdout,
    new RegExp(`^configmaps/feature-flags \\(namespace ${s.namespace}\\) — the dry run agrees$`, 'm'),
  );
  const created = await check(s, ['--verify', '--mode', 'create', 'create']);
  assert.match(created.stdout, /— the dry run agrees/);
  // The product never changes the cluster: its only writes carry dryRun=All.
  const writes = readAuditEvents(s.cluster.auditLog).filter(
    (e) =>
      (e.userAgent ?? '').startsWith('kube-conflict-hints/') &&
      !['get', 'list', 'watch'].includes(e.verb) &&
      (e as { requestReceivedTimestamp?: string }).requestReceivedTimestamp! >= started,
  );
  assert.ok(writes.length >= 5, `dry runs seen in the audit log: ${writes.length}`);
  for (const w of writes) assert.match(w.requestURI, /[?&]dryRun=All(&|$)/, w.requestURI);
  // A check judges what one list answered: it opens no watch (it needs no watch right either).
  const ours = readAuditEvents(s.cluster.auditLog).filter(
    (e) =>
      (e.userAgent ?? '').startsWith('kube-conflict-hints/') &&
      / \(check\)$/.test(e.userAgent ?? '') &&
      (e as { requestReceivedTimestamp?: string }).requestReceivedTimestamp! >= started,
  );
  assert.ok(
    ours.some((e) => e.verb === 'list'),
    'the checks listed their kinds',
  );
  assert.deepEqual(
    ours.filter((e) => e.verb === 'watch').map((e) => e.requestURI),
    [],
  );
});

test("--verify shows the server's answer where it differs from the prediction", async (t) => {
  const s = await prepared(t);
  if (!s) return;
  // A data key the API's validation refuses (a config key has no spaces): validation is the
  // server's own code, beyond what ownership and the schema can predict.
  writeFiles(s.dir, {
    'odd/bad-key.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\n  namespace: ${s.namespace}\ndata:\n  "no spaces": b\n`,
  });
  const run = await check(s, ['--verify', 'odd']);
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /— the dry run answers: ConfigMap "odd" is invalid: .*valid config key/);
  assert.match(
    run.stdout,
    /^odd\/bad-key\.yaml:1:1 error dry-run-differs the server refuses the manifest: ConfigMap "odd" is invalid: .*; the prediction did not foresee it$/m,
  );
});

test('a list conflict: the line shows the item where the live and the manifest lists part, not the first items they share', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'cli-lists');
  const args = [
    '--listen-address=0.0.0.0:8080',
    '--log-level=info',
    '--metrics-bind-address=:9090',
    '--cache-dir=/var/cache/shop',
    '--catalog-url=http://catalog.shop.svc:8080',
    '--payment-url=http://payments.shop.svc:8080',
  ];
  const manifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'lists', namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'lists' } },
      template: {
        metadata: { labels: { app: 'lists' } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.25', args }] },
      },
    },
  };
  objectOf(await apply(conn, 'kubectl', manifest), 'apply');
  // kubectl edit of one item of the (atomic) list: the list is kubectl-edit's now.
  objectOf(
    await kubectlEdit(conn, manifest, {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                args: args.map((a, i) => (i === 4 ? '--catalog-url=http://catalog-v2.shop.svc:8080' : a)),
              },
            ],
          },
        },
      },
    }),
    'edit',
  );
  const dir = scratchDir('cli-lists');
  writeFiles(dir, { 'lists.yaml': toYaml(manifest) });
  const run = await runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', 'lists.yaml'], {
    cwd: dir,
  });
  assert.equal(run.status, 1, run.stderr);
  const line = run.stdout
    .split('\n')
    .find((l) => l.includes(' error field-conflict .spec.template.spec.containers[name="app"].args '));
  assert.ok(line, run.stdout);
  assert.ok(line.includes('live ..."--catalog-url=http://catalog-v2.shop.svc:8080",'), line);
  assert.ok(line.includes('manifest ..."--catalog-url=http://catalog.shop.svc:8080",'), line);
});

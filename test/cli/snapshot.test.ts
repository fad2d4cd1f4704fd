// Offline snapshots against the real kube-apiserver: `snapshot` saves what the check reads, and
// `check --snapshot` then gives the same findings as the live check — on the seeding scenarios and
// on the differential corpus (test/differential/scenarios) — with no cluster at all. A directory of
// `kubectl get -o yaml --show-managed-fields` output works as the live objects too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { crdDir, historyIn, loadScenarios, withNamespace, scenarioDir, type Scenario } from '../differential/scenario';
import { replayHistory } from '../differential/replay';
import { requireCluster, type TestClusterInfo } from '../support/env';
import {
  apply,
  configMap,
  connect,
  create,
  freshNamespace,
  get,
  kubectlEdit,
  objectOf,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { waitForOpenApi } from '../support/seed-crd';
import {
  ancientChanges,
  argoSynced,
  clientSideApplied,
  editedAndAutoscaled,
  helmInstalled,
  managedFieldsReset,
  widgetWithHistory,
} from '../support/seed-scenarios';
import { runCli, scratchDir, writeFiles, type CliRun } from './cli-process';

/** Manifests grouped by how they are sent: one check per group, as a user runs one command per pipeline. */
interface Group {
  mode: 'serverSide' | 'clientSide' | 'create';
  fieldManager: string;
  files: Record<string, string>;
}

function groupFor(groups: Map<string, Group>, mode: Group['mode'], fieldManager: string): Group {
  const key = `${mode}-${fieldManager}`;
  let group = groups.get(key);
  if (!group) groups.set(key, (group = { mode, fieldManager, files: {} }));
  return group;
}

const seedHistories: { name: string; run: (conn: Connection, ns: string) => Promise<{ manifest: KubeObject }[]> }[] = [
  { name: 'edited-and-autoscaled', run: async (c, ns) => [await editedAndAutoscaled(c, ns)] },
  { name: 'client-side-applied', run: async (c, ns) => [await clientSideApplied(c, ns)] },
  { name: 'helm-installed', run: async (c, ns) => Object.values(await helmInstalled(c, ns)) },
  { name: 'argo-synced', run: async (c, ns) => [await argoSynced(c, ns)] },
  { name: 'managed-fields-reset', run: async (c, ns) => [await managedFieldsReset(c, ns)] },
  { name: 'ancient-changes', run: async (c, ns) => [await ancientChanges(c, ns)] },
  { name: 'widget-with-history', run: async (c, ns) => [await widgetWithHistory(c, ns)] },
  {
    name: 'stale-export',
    run: async (c, ns) => {
      const flags = configMap(ns, 'flags', { checkout: 'off' });
      objectOf(await apply(c, 'kubectl', flags), 'apply flags');
      const exported = objectOf(await get(c, flags), 'read flags');
      delete exported.metadata.managedFields;
      objectOf(await kubectlEdit(c, flags, { data: { checkout: 'on' } }), 'edit flags');
      return [{ manifest: exported }, { manifest: configMap(ns, 'not-there-yet', { a: 'b' }) }];
    },
  },
];

interface Corpus {
  cluster: TestClusterInfo;
  dir: string;
  groups: Map<string, Group>;
  /** Histories replayed: every seed history and every scenario of the corpus that names its object. */
  replayed: number;
  /** What replaying should give: seedHistories.length + the scenarios with a metadata.name. */
  expected: number;
  /** Manifests written for the checks: one per scenario, one per seed manifest and mode. */
  manifests: number;
  /** Scenarios without a name (generateName): no object to look up, live or in a snapshot. */
  unnamed: string[];
  broken: string[];
}

/** The CRDs the corpus writes objects of, installed and published in OpenAPI before any replay. */
async function installCorpusCrds(conn: Connection): Promise<void> {
  const keys: string[] = [];
  for (const file of fs.readdirSync(crdDir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parseYaml(fs.readFileSync(path.join(crdDir, file), 'utf8')) as KubeObject & {
      spec: { group: string; versions: { name: string; served: boolean }[] };
    };
    objectOf(await apply(conn, 'kch-test-setup', crd, { force: true }), `install ${file}`);
    // A version that is not served publishes no OpenAPI.
    keys.push(...crd.spec.versions.filter((v) => v.served).map((v) => `apis/${crd.spec.group}/${v.name}`));
  }
  await waitForOpenApi(conn, keys);
}

let corpus: Promise<Corpus> | undefined;

async function prepared(t: TestContext): Promise<Corpus | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  corpus ??= (async () => {
    const conn = connect('admin', cluster.kubeconfig);
    const groups = new Map<string, Group>();
    const broken: string[] = [];
    const unnamed: string[] = [];
    let replayed = 0;
    let manifests = 0;
    for (const history of seedHistories) {
      const ns = await freshNamespace(conn, `snap-${history.name}`.slice(0, 40));
      for (const [i, { manifest }] of (await history.run(conn, ns)).entries()) {
        const modes: Group['mode'][] = ['serverSide', 'create'];
        for (const mode of modes)
          groupFor(groups, mode, 'kubectl').files[`${history.name}-${i}.yaml`] = toYaml(manifest);
        manifests += modes.length;
      }
      replayed++;
    }
    // The differential corpus: each scenario's history in a namespace of its own. It is part of
    // the project; its absence is a broken checkout, not a reason to compare less.
    if (!fs.existsSync(scenarioDir)) throw new Error(`the scenario corpus ${scenarioDir} is missing`);
    await installCorpusCrds(conn);
    const scenarios: Scenario[] = loadScenarios().filter((s) => !s.excluded);
    let expected = seedHistories.length;
    for (const scenario of scenarios) {
      const ns = await freshNamespace(conn, 'snap-corpus');
      const text = withNamespace(scenario.manifest, ns);
      // Duplicate keys are what some scenarios are about: read them as kubectl does, the last one
      // winning. A manifest of several objects names the last one (the differential suite's rule).
      const probe = parseYaml(text.split(/^---$/m).at(-1)!, { uniqueKeys: false }) as KubeObject;
      // A generateName manifest names no object to look up, live or in a snapshot.
      if (!probe.metadata?.name) {
        unnamed.push(scenario.name);
        continue;
      }
      expected++;
      try {
        await replayHistory(conn, historyIn(scenario.history, ns), probe, ns);
      } catch (e) {
        broken.push(`${scenario.file}: ${scenario.name}: ${(e as Error).message}`);
        continue;
      }
      const ext = /^\s*\{/.test(scenario.manifest) ? 'json' : 'yaml';
      groupFor(groups, scenario.mode ?? 'serverSide', scenario.fieldManager ?? 'kubectl').files[
        `${scenario.name}.${ext}`
      ] = text;
      manifests++;
      replayed++;
    }
    const dir = scratchDir('snapshot');
    for (const [key, group] of groups) writeFiles(path.join(dir, 'manifests', key), group.files);
    return { cluster, dir, groups, replayed, expected, manifests, unnamed, broken };
  })();
  return corpus;
}

/**
 * An object as a snapshot can know it: the force preview's takeover list is the same, but who takes
 * the fields back depends on the namespace's autoscalers, which a snapshot does not save, and the
 * command repeats the live check's --kubeconfig and --context.
 */
function sameOffline(object: unknown): unknown {
  // A snapshot saves no Argo CD Application or Flux Kustomization: who applies an object is seen
  // alike (`appliedBy`, docs/gitops.md), its policy and the sentence naming it are the live check's.
  const { appliedBy, ...rest } = object as {
    appliedBy?: { policy?: unknown; text?: unknown }[];
    forcePreview?: { losses: { takesBack?: unknown; note?: unknown }[]; command?: string };
  };
  const o = appliedBy
    ? { ...rest, appliedBy: appliedBy.map((a) => ({ ...a, policy: undefined, text: undefined })) }
    : rest;
  if (!o.forcePreview) return o;
  return {
    ...o,
    forcePreview: {
      ...o.forcePreview,
      command: undefined,
      losses: o.forcePreview.losses.map((l) => ({ ...l, takesBack: undefined, note: undefined })),
    },
  };
}

function json(run: CliRun): { findings: unknown[]; objects: unknown[]; summary: Record<string, number> } {
  assert.ok(run.status === 0 || run.status === 1, `exit ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { findings: unknown[]; objects: unknown[]; summary: Record<string, number> };
}

test('check --snapshot gives the same findings as the live check, with no cluster, on every history', async (t) => {
  const c = await prepared(t);
  if (!c) return;
  // Every history replays: a scenario that no longer replays is a failure, not a smaller comparison.
  assert.deepEqual(c.broken, [], `histories that did not replay:\n${c.broken.join('\n')}`);
  assert.equal(c.replayed, c.expected, 'every seed history and every named scenario replayed');
  assert.ok(c.expected > seedHistories.length, 'the scenario corpus took part');
  t.diagnostic(
    `${c.replayed} histories replayed; without an object name (generateName): ${c.unnamed.join(', ') || 'none'}`,
  );
  let compared = 0;
  const codes = new Set<string>();
  for (const [key, group] of c.groups) {
    const manifests = path.join('manifests', key);
    const snapshotDir = path.join(c.dir, 'snapshots', key);
    const checkArgs = ['--format', 'json', '--mode', group.mode, '--field-manager', group.fieldManager, manifests];
    // The live check and the snapshot as a user who may send every apply: a read-only user is told
    // the server's 403 first, which a snapshot, holding no user, never says (and may not send the
    // dry-run probe that tells whether a Secret is immutable).
    const live = await runCli(['check', '--kubeconfig', c.cluster.kubeconfig, '--context', 'admin', ...checkArgs], {
      cwd: c.dir,
    });
    const saved = await runCli(
      ['snapshot', '--kubeconfig', c.cluster.kubeconfig, '--context', 'admin', '--out', snapshotDir, manifests],
      { cwd: c.dir },
    );
    assert.equal(saved.status, 0, saved.stderr);
    assert.match(saved.stdout, /^saved \d+ live objects?, \d+ absent, \d+ OpenAPI documents? to /);
    // No kubeconfig at all: the offline check cannot reach a cluster even by accident.
    const offline = await runCli(['check', '--snapshot', snapshotDir, ...checkArgs], {
      cwd: c.dir,
      env: { KUBECONFIG: path.join(c.dir, 'none') },
    });
    const [l, o] = [json(live), json(offline)];
    assert.deepEqual(o.findings, l.findings, `findings of ${key}`);
    assert.deepEqual(o.objects.map(sameOffline), l.objects.map(sameOffline), `objects of ${key}`);
    assert.deepEqual(o.summary, l.summary);
    for (const f of l.findings as { code: string }[]) codes.add(f.code);
    compared += Object.keys(group.files).length;
  }
  assert.equal(compared, c.manifests, 'every replayed manifest was compared');
  t.diagnostic(`${compared} manifests compared; codes seen: ${[...codes].sort().join(', ')}`);
  for (const code of ['field-conflict', 'already-exists', 'stale-resource-version', 'exists'])
    assert.ok(codes.has(code), `the corpus provokes ${code}`);
});

test('taking a snapshot again replaces the earlier one; a non-empty foreign directory is refused', async (t) => {
  const c = await prepared(t);
  if (!c) return;
  const snapshotDir = path.join(c.dir, 'again');
  const args = ['snapshot', '--kubeconfig', c.cluster.kubeconfig, '--out', snapshotDir];
  assert.equal((await runCli([...args, path.join('manifests', 'serverSide-kubectl')], { cwd: c.dir })).status, 0);
  const before = fs.readdirSync(path.join(snapshotDir, 'objects')).length;
  const second = await runCli([...args, 'configmap/flags', '-n', 'default'], { cwd: c.dir });
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stdout, /^saved 0 live objects, 1 absent, 1 OpenAPI document to /);
  assert.ok(before > 0);
  assert.equal(
    fs.readdirSync(path.join(snapshotDir, 'objects')).length,
    0,
    'the objects of the first snapshot are gone',
  );

  writeFiles(c.dir, { 'foreign/notes.txt': 'mine\n' });
  const refused = await runCli([...args.slice(0, -1), path.join(c.dir, 'foreign'), 'configmap/flags'], { cwd: c.dir });
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /foreign is not empty and holds no snapshot\.json/);
  assert.equal(fs.readFileSync(path.join(c.dir, 'foreign/notes.txt'), 'utf8'), 'mine\n');
});

test('objects whose names no file name can hold as they are are each saved, apart', async (t) => {
  const c = await prepared(t);
  if (!c) return;
  const conn = connect('admin', c.cluster.kubeconfig);
  // The longest namespace and name the server takes: together longer than a file name may be.
  const namespace = `snap-long-${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}-${'n'.repeat(46)}`;
  objectOf(
    await create(conn, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
    'long namespace',
  );
  const role = (name: string): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules: [],
  });
  // Role names may hold ':' and '_': written as file names, the two would be one.
  const objects = [
    role('reader:pods'),
    role('reader_pods'),
    configMap(namespace, `long-${'x'.repeat(248)}`, { a: 'b' }),
  ];
  for (const o of objects) objectOf(await apply(conn, 'kubectl', o), `apply ${o.metadata.name}`);
  const manifests = path.join(c.dir, 'odd-names');
  writeFiles(manifests, Object.fromEntries(objects.map((o, i) => [`${i}.yaml`, toYaml(o)])));
  const snapshotDir = path.join(c.dir, 'odd-names-snapshot');
  const saved = await runCli(['snapshot', '--kubeconfig', c.cluster.kubeconfig, '--out', snapshotDir, manifests]);
  assert.equal(saved.status, 0, saved.stderr);
  assert.match(saved.stdout, /^saved 3 live objects, 0 absent/);
  assert.equal(fs.readdirSync(path.join(snapshotDir, 'objects')).length, 3);
  const offline = json(await runCli(['check', '--snapshot', snapshotDir, '--format', 'json', manifests]));
  const live = json(await runCli(['check', '--kubeconfig', c.cluster.kubeconfig, '--format', 'json', manifests]));
  assert.deepEqual(offline.findings, live.findings);
  assert.equal((offline.findings as { code: string }[]).filter((f) => f.code === 'exists').length, 3);
});

test('kubectl get -o yaml --show-managed-fields output works as the live objects of a snapshot', async (t) => {
  const c = await prepared(t);
  if (!c) return;
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  assert.equal(kubectl.status, 0, 'kubectl is on PATH');
  const conn = connect('admin', c.cluster.kubeconfig);
  const ns = await freshNamespace(conn, 'snap-kubectl');
  const { manifest: web } = await editedAndAutoscaled(conn, ns);
  const manifests = path.join(c.dir, 'kubectl-manifests');
  writeFiles(manifests, { 'web.yaml': toYaml(web), 'config.yaml': toYaml(configMap(ns, 'web-config', { a: 'b' })) });
  objectOf(await apply(conn, 'kubectl', configMap(ns, 'web-config', { a: 'b' })), 'apply web-config');

  // With the discovery and OpenAPI of a snapshot, but the live objects as kubectl printed them.
  const snapshotDir = path.join(c.dir, 'kubectl-snapshot');
  assert.equal(
    (await runCli(['snapshot', '--kubeconfig', c.cluster.kubeconfig, '--out', snapshotDir, manifests])).status,
    0,
  );
  fs.rmSync(path.join(snapshotDir, 'objects'), { recursive: true });
  const dump = spawnSync(
    'kubectl',
    [
      '--kubeconfig',
      c.cluster.kubeconfig,
      '--context',
      'viewer',
      '-n',
      ns,
      'get',
      'deployment/web',
      'configmap/web-config',
      '-o',
      'yaml',
      '--show-managed-fields',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(dump.status, 0, dump.stderr);
  assert.match(dump.stdout, /kind: List/);
  writeFiles(snapshotDir, { 'from-kubectl/live.yaml': dump.stdout });

  const live = json(await runCli(['check', '--kubeconfig', c.cluster.kubeconfig, '--format', 'json', manifests]));
  const offline = json(await runCli(['check', '--snapshot', snapshotDir, '--format', 'json', manifests]));
  assert.deepEqual(offline.findings, live.findings);
  assert.ok((live.findings as { code: string }[]).some((f) => f.code === 'field-conflict'));

  // kubectl's output alone: existence is known, ownership needs the schema the snapshot would hold.
  const bare = path.join(c.dir, 'kubectl-only');
  writeFiles(bare, { 'live.yaml': dump.stdout });
  const created = await runCli(['check', '--snapshot', bare, '--mode', 'create', manifests]);
  assert.equal(created.status, 1);
  assert.match(
    created.stdout,
    /error already-exists deployments\.apps "web" already exists; managed by "kubectl", "kube-controller-manager", "kubectl-edit"/,
  );
  const applied = await runCli(['check', '--snapshot', bare, manifests]);
  assert.match(
    applied.stdout,
    /note: no OpenAPI document for apps\/v1 in the snapshot: field conflicts are not predicted/,
  );
});

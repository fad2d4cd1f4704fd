// The Helm family of the rendered differential suite (rendered/helm.yaml). For a scenario, in a
// namespace of its own on the real kube-apiserver:
//   1. install the chart with the real Helm (4 or 3, test/tools/) and replay the other writes
//      (an autoscaler, kubectl edit, Argo CD, another release);
//   2. check the chart as `check --helm` does (render with the user's helm, predict as that Helm
//      sends, move findings to template and values lines), reading the cluster through the product;
//   3. ask the server: every rendered object, with the ownership metadata Helm adds, sent as Helm
//      sends it — Helm 4 a server-side apply as `helm` (force=false, Strict), Helm 3 an update (a
//      strategic-merge patch, or a create) as `helm` — with dryRun=All;
//   4. the conflicts the server names (field and manager) must be the product's field-conflict
//      findings, object by object; every one must land on exactly the source lines the scenario
//      names; Helm's own refusal to adopt another release's objects (the real `helm install`, which
//      fails) must be the product's owned-by-release findings; and where a Helm 4 apply is accepted,
//      the fields a real apply removes must be the would-delete findings (none on a Helm release).
//
// chart: scaffold (what `helm create mychart` writes, by the Helm 4 under test: what users start
// from) or shop (test/fixtures/charts/shop: a subchart, ranges, a repeated document). `expect` names,
// for every field the server reports in conflict, the source lines (`file: text`, file relative to
// the chart, the text at the position: the scaffold's lines are Helm's, so they are found by text).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createClusterConnection, type ClusterConnection } from '../../server/src/cluster';
import { checkHelmCharts } from '../../server/src/cli/check-helm';
import { liveFactsReader, ObjectReads, type FactsReader } from '../../server/src/cli/facts';
import type { CheckedObject } from '../../server/src/cli/report';
import {
  apply as applyObject,
  connect,
  freshNamespace,
  get,
  objectOf,
  objectPath,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { requireTool } from '../tools/tools';
import { scratchDir } from '../cli/cli-process';
import { removedRoots, sendRaw, serverStatus } from './oracle';
import { replayHistory } from './replay';
import type { CheckedSources, RendererFamily, ScenarioBase, ScenarioContext } from './rendered-scenario';
import type { HistoryStep } from './scenario';

export interface HelmScenario extends ScenarioBase {
  chart: 'scaffold' | 'shop';
  helm: 3 | 4;
  release?: string;
  /** Values files written into the chart, given to the install and the check in this order. */
  valuesFiles?: Record<string, string>;
  history: ({ helmInstall: { release?: string; set?: string[] } } | HistoryStep)[];
  expect?: { path: string; at: string[] }[];
  owned?: string[];
}

const ordinarySteps = [
  'apply',
  'create',
  'update',
  'patch',
  'scale',
  'clientSideApply',
  'resetManagedFields',
  'delete',
];
const shopChart = path.join(import.meta.dirname, '..', 'fixtures', 'charts', 'shop');

/** What every Helm scenario shares: the product's connection, and the scaffolded chart. */
interface Shared {
  kubeconfig: string;
  admin: Connection;
  connection: ClusterConnection;
  reader: FactsReader;
  work: string;
  scaffold: string;
}
let shared: Promise<Shared> | undefined;

function setUp(kubeconfig: string, helm4: string): Promise<Shared> {
  shared ??= (async () => {
    const connection = await createClusterConnection(
      { kubeconfig, context: 'admin' },
      { userAgent: `kch-differential-helm-${process.pid}` },
    );
    const work = scratchDir('diff-helm');
    // What users start from: the chart the Helm under test scaffolds.
    const created = runHelm(work, helm4, ['create', 'mychart'], work);
    assert.equal(created.status, 0, `helm create: ${created.stderr}`);
    return {
      kubeconfig,
      admin: connect('admin', kubeconfig),
      connection,
      reader: liveFactsReader(connection),
      work,
      scaffold: path.join(work, 'mychart'),
    };
  })();
  return shared;
}

export const helmFamily: RendererFamily<HelmScenario> = {
  label: 'Helm charts',
  minimum: 15,
  parse(raw, base, where) {
    if (raw.chart !== 'scaffold' && raw.chart !== 'shop') throw new Error(`${where}: chart must be scaffold or shop`);
    if (raw.helm !== 3 && raw.helm !== 4) throw new Error(`${where}: helm must be 3 or 4`);
    const history = (raw.history ?? []) as HelmScenario['history'];
    for (const step of history) {
      const kinds = Object.keys(step).filter((k) => k !== 'repeat');
      if (kinds.length !== 1 || ![...ordinarySteps, 'helmInstall'].includes(kinds[0]!))
        throw new Error(`${where}: unknown history step ${kinds.join(', ')}`);
    }
    const expect = (raw.expect ?? []) as NonNullable<HelmScenario['expect']>;
    for (const e of expect) {
      if (
        typeof e.path !== 'string' ||
        !Array.isArray(e.at) ||
        e.at.length === 0 ||
        e.at.some((a) => !/^[^:]+: ./.test(a))
      )
        throw new Error(`${where}: expect needs path and at: ['file: text', ...] (${JSON.stringify(e)})`);
    }
    if ((base.server === 'accepted') !== (expect.length === 0))
      throw new Error(`${where}: an accepted scenario expects no conflict, a conflict scenario names them`);
    return {
      ...base,
      chart: raw.chart,
      helm: raw.helm,
      history,
      expect,
      ...(typeof raw.release === 'string' ? { release: raw.release } : {}),
      ...(raw.valuesFiles ? { valuesFiles: raw.valuesFiles as Record<string, string> } : {}),
      ...(Array.isArray(raw.owned) ? { owned: raw.owned as string[] } : {}),
    };
  },
  // The scaffold is Helm 4's `helm create`, whichever Helm installs the chart.
  tool: (t, s) => {
    const helm4 = requireTool(t, 'helm4');
    return helm4 && s.helm === 3 ? requireTool(t, 'helm3') : helm4;
  },
  run: async (s, helm, context) =>
    runScenario(s, helm, context, await setUp(context.kubeconfig, process.env.KCH_HELM4!)),
  prepare: async (s, helm, context) =>
    prepareScenario(s, helm, context, await setUp(context.kubeconfig, process.env.KCH_HELM4!)),
  close() {
    void shared?.then((s) => {
      s.reader.close();
      s.connection.dispose();
    });
  },
};

function runHelm(
  work: string,
  helm: string,
  args: string[],
  cwd: string,
  kubeconfig?: string,
): { status: number | null; stdout: string; stderr: string } {
  const home = path.join(work, '.home');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  const r = spawnSync(helm, args, { cwd, encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The chart copied and its values files written, and the history replayed, in a namespace of its own. */
async function setUpScenario(
  s: HelmScenario,
  helm: string,
  { prefix }: ScenarioContext,
  { kubeconfig, admin, work, scaffold }: Shared,
) {
  const namespace = await freshNamespace(admin, prefix);
  const release = s.release ?? 'web';
  const chart = path.join(work, prefix, s.chart === 'scaffold' ? 'mychart' : 'shop');
  fs.cpSync(s.chart === 'scaffold' ? scaffold : shopChart, chart, { recursive: true });
  const valuesFiles = Object.entries(s.valuesFiles ?? {}).map(([name, text]) => {
    fs.writeFileSync(path.join(chart, name), text);
    return path.join(chart, name);
  });
  const valuesArgs = valuesFiles.flatMap((f) => ['--values', f]);
  const helmHere = (args: string[]) => runHelm(work, helm, args, path.dirname(chart), kubeconfig);

  // 1. The history.
  for (const step of s.history) {
    if ('helmInstall' in step) {
      const r = helmHere([
        'install',
        step.helmInstall.release ?? release,
        chart,
        '--kube-context',
        'admin',
        '--namespace',
        namespace,
        ...valuesArgs,
        ...(step.helmInstall.set ?? []).flatMap((v) => ['--set', v]),
      ]);
      assert.equal(r.status, 0, `helm install: ${r.stderr}`);
    } else {
      // NAMESPACE in a step stands for the scenario's namespace (a release's namespace annotation).
      const concrete = JSON.parse(JSON.stringify(step).replaceAll('NAMESPACE', namespace)) as HistoryStep;
      await replayHistory(
        admin,
        [concrete],
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
        namespace,
      );
    }
  }
  return { namespace, release, chart, valuesFiles, valuesArgs, helmHere };
}

/** The chart checked as the release the scenario installs, in the editor and with `check --helm`. */
async function prepareScenario(
  s: HelmScenario,
  helm: string,
  context: ScenarioContext,
  shared: Shared,
): Promise<CheckedSources> {
  const { namespace, release, chart, valuesFiles } = await setUpScenario(s, helm, context, shared);
  // Every file of the chart and its subcharts that a finding can land on.
  const files = fs
    .readdirSync(chart, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ya?ml|tpl)$/.test(f))
    .map((f) => path.join(chart, f));
  return {
    folder: path.dirname(chart),
    files,
    cliArgs: [
      '--helm',
      chart,
      '--helm-binary',
      helm,
      '--release',
      release,
      '--namespace',
      namespace,
      ...valuesFiles.flatMap((f) => ['--values', f]),
    ],
    settings: {
      helmPath: helm,
      helmRelease: release,
      namespace,
      helmValuesFiles: valuesFiles.map((f) => path.relative(chart, f)),
    },
  };
}

async function runScenario(s: HelmScenario, helm: string, context: ScenarioContext, shared: Shared): Promise<void> {
  const { reader, admin } = shared;
  const { namespace, release, chart, valuesFiles, valuesArgs, helmHere } = await setUpScenario(
    s,
    helm,
    context,
    shared,
  );

  // 2. The product, as `check --helm` runs it.
  const checked = await checkHelmCharts(
    { charts: [chart], valuesFiles, release, namespace, named: { release, namespace }, settings: { helm } },
    new ObjectReads(reader),
    undefined,
  );
  assert.ok(checked.ok, `check --helm: ${JSON.stringify(checked)}`);
  if (!checked.ok) return;
  const byObject = new Map<string, CheckedObject[]>();
  for (const o of checked.objects)
    if (o.object)
      byObject.set(`${o.object.kind}/${o.object.name}`, [
        ...(byObject.get(`${o.object.kind}/${o.object.name}`) ?? []),
        o,
      ]);
  const findingsOf = (key: string) =>
    (byObject.get(key) ?? []).flatMap((o) => o.findings.map((f) => ({ ...f, file: o.file })));
  // Never a finding from a template's own text, and the chart renders.
  for (const o of checked.objects)
    for (const f of o.findings)
      assert.ok(
        !['yaml-syntax', 'duplicate-key', 'kind-not-served', 'render-failed'].includes(f.code),
        `${o.file}: ${f.code} ${f.message}`,
      );

  // 3. The truth: the rendered objects as Helm sends them, to the server, as dry runs.
  const rendered = helmHere(['template', release, chart, '--namespace', namespace, '--skip-tests', ...valuesArgs]);
  assert.equal(rendered.status, 0, rendered.stderr);
  const objects = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o && !o.metadata?.annotations?.['helm.sh/hook']);
  assert.ok(objects.length > 0);
  let sawConflict = false;
  const locatedPaths = new Set<string>();
  for (const rawObject of objects) {
    const key = `${rawObject.kind}/${rawObject.metadata.name}`;
    const sent = withHelmMetadata(rawObject, release, namespace);
    const target = await objectPath(admin, sent);
    const live = await get(admin, sent);
    const exists = live.ok;
    let answer;
    if (s.helm === 4) {
      answer = await sendRaw(
        admin,
        'PATCH',
        target,
        { dryRun: 'All', fieldManager: 'helm', force: 'false', fieldValidation: 'Strict' },
        'application/apply-patch+yaml',
        JSON.stringify(sent),
      );
    } else if (exists) {
      answer = await sendRaw(
        admin,
        'PATCH',
        target,
        { dryRun: 'All', fieldManager: 'helm' },
        'application/strategic-merge-patch+json',
        JSON.stringify(sent),
      );
    } else {
      answer = await sendRaw(
        admin,
        'POST',
        target.replace(/\/[^/]*$/, ''),
        { dryRun: 'All', fieldManager: 'helm' },
        'application/json',
        JSON.stringify(sent),
      );
    }
    const status = serverStatus(answer);
    if (status) assert.equal(status.code, 409, `${key}: the server refused for another reason: ${status.message}`);
    const serverConflicts = (status?.causes ?? []).map((c) => {
      const [message, field] = c.split(' @ ') as [string, string];
      return `${/conflict with "([^"]+)"/.exec(message)?.[1]} ${field}`;
    });
    sawConflict ||= serverConflicts.length > 0;
    const findings = findingsOf(key);
    const conflicts = findings.filter((f) => f.code === 'field-conflict');
    const predicted = [...new Set(conflicts.map((f) => `${f.manager?.manager} ${f.path}`))];
    assert.deepEqual(
      predicted.sort(),
      serverConflicts.sort(),
      `${key}: conflicts predicted vs the server's (${status?.message ?? 'accepted'})`,
    );

    // 4. Every conflict on exactly the source lines the scenario names.
    for (const p of new Set(conflicts.map((f) => f.path!))) {
      const want = s.expect?.find((e) => e.path === p);
      assert.ok(want, `${key} ${p}: the scenario names no source lines for this conflict`);
      const at = conflicts
        .filter((f) => f.path === p)
        .map((f) => `${path.relative(chart, path.resolve(f.file))}:${f.range.start.line}:${f.range.start.character}`);
      const expected = want.at.map((w) => sourceLine(chart, w));
      assert.deepEqual([...new Set(at)].sort(), expected.sort(), `${key} ${p}: the finding's source lines`);
      locatedPaths.add(p);
    }

    // Helm's own ownership check, on the template line of the object's name.
    const owned = findings.filter((f) => f.code === 'owned-by-release');
    assert.equal(
      owned.length > 0,
      (s.owned ?? []).includes(key),
      `${key}: owned-by-release ${JSON.stringify(owned.map((f) => f.message))}`,
    );
    for (const f of owned)
      assert.ok(/templates\//.test(f.file) && f.path === '.metadata.name', `${key}: owned-by-release on ${f.file}`);

    // Deletions: a Helm 4 apply the server accepts, sent for real, removes exactly the would-delete fields.
    if (s.helm === 4 && !status && exists && owned.length === 0) {
      const beforeApply = objectOf(live, 'read before the real apply');
      const applied = objectOf(await applyObject(admin, 'helm', sent), 'the real apply');
      const removed = removedRoots(beforeApply as never, applied as never);
      const wouldDelete = [...new Set(findings.filter((f) => f.code === 'would-delete').map((f) => f.path ?? ''))];
      assert.deepEqual(wouldDelete.sort(), removed.sort(), `${key}: would-delete vs what the real apply removed`);
    }
  }
  assert.equal(
    sawConflict ? 'fieldConflict' : 'accepted',
    s.server,
    'the history no longer provokes what the scenario is about',
  );
  assert.deepEqual(
    [...locatedPaths].sort(),
    (s.expect ?? []).map((e) => e.path).sort(),
    'every expected conflict was found and located',
  );

  // Helm itself refuses another release's objects: the real install fails, naming the ownership metadata.
  if ((s.owned ?? []).length > 0) {
    const r = helmHere(['install', release, chart, '--kube-context', 'admin', '--namespace', namespace, ...valuesArgs]);
    assert.notEqual(r.status, 0, 'helm install adopted objects it should refuse');
    assert.match(r.stderr, /invalid ownership metadata/);
  }
}

/** The object as Helm sends it (its pkg/action setMetadataVisitor): written here, independent of the product. */
function withHelmMetadata(object: KubeObject, release: string, namespace: string): KubeObject {
  const copy = JSON.parse(JSON.stringify(object)) as KubeObject;
  copy.metadata.namespace = namespace;
  copy.metadata.labels = { ...(copy.metadata.labels ?? {}), 'app.kubernetes.io/managed-by': 'Helm' };
  copy.metadata.annotations = {
    ...(copy.metadata.annotations ?? {}),
    'meta.helm.sh/release-name': release,
    'meta.helm.sh/release-namespace': namespace,
  };
  return copy;
}

/** `file: text` → `file:line:character` (zero-based) of the first line holding the text, at the text. */
function sourceLine(chart: string, spec: string): string {
  const [file, text] = [spec.slice(0, spec.indexOf(': ')), spec.slice(spec.indexOf(': ') + 2)];
  const lines = fs.readFileSync(path.join(chart, file), 'utf8').split('\n');
  const line = lines.findIndex((l) => l.includes(text));
  assert.ok(line >= 0, `${file} holds no line with ${JSON.stringify(text)}`);
  return `${file}:${line}:${lines[line]!.indexOf(text)}`;
}

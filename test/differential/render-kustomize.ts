// The Kustomize family of the rendered differential suite (rendered/kustomize.yaml). For a scenario,
// in a namespace of its own on the real kube-apiserver:
//   1. write the scenario's source tree and replay its history (the rendered output applied by the
//      test's own kustomize, an autoscaler, `kubectl edit`, another tool, a client-side apply);
//   2. the truth: render the checked target with the real kustomize (KCH_KUSTOMIZE, built by
//      test/tools/: what `kubectl apply -k` would send) and send every object to the server as a
//      dry run, read over plain HTTPS: a server-side apply (the user's field manager, force=false),
//      or in `mode: create` the POST of `kubectl create -k`;
//   3. the scenario's `expect` must be exactly the server's answers (the history still provokes
//      its situation): its field conflicts, an AlreadyExists, or a refusal before ownership;
//   4. the product, run as a user runs it (`check --format json -k DIR`), must name exactly the
//      server's answers for every rendered object (`field-conflict` with field and manager,
//      `already-exists`, `invalid-manifest` for a refusal), each on the `at` line, written by hand
//      from the source files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  apply,
  clientSideApply,
  connect,
  freshNamespace,
  objectOf,
  objectPath,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { requireTool } from '../tools/tools';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';
import { sendRaw, serverStatus } from './oracle';
import { replayHistory } from './replay';
import {
  inNamespace,
  type CheckedSources,
  type RendererFamily,
  type ScenarioBase,
  type ScenarioContext,
} from './rendered-scenario';
import type { HistoryStep } from './scenario';

/** A history step of a Kustomize scenario: the ordinary steps, plus the rendered output applied. */
export type RenderedStep =
  | HistoryStep
  /** Render `target` with the test's own tool and server-side apply every object it prints. */
  | { applyRendered: { target: string; manager: string; force?: boolean } }
  /** Render `target` and send every object as plain `kubectl apply` does (client-side). */
  | { clientSideApplyRendered: { target: string } };

/** The findings a scenario can expect, each the product's word for one answer of the server. */
const findingCodes = ['field-conflict', 'already-exists', 'invalid-manifest'] as const;
type ExpectedCode = (typeof findingCodes)[number];

/** One answer the server gives, and where the user must read it. */
export interface ExpectedFinding {
  /** `Kind/name` of the rendered object, as rendered (prefixes and generator hashes: `name-*`). */
  object: string;
  /**
   * `field-conflict` (the default): a conflict the server names on `path` with `manager`;
   * `already-exists`: the create is refused as AlreadyExists; `invalid-manifest`: the server
   * refuses the object before ownership (any answer but a conflict), on `path`.
   */
  code?: ExpectedCode;
  /** The field in the server's notation. */
  path?: string;
  /** The field manager the server names. */
  manager?: string;
  /** `file:line` (1-based, relative to the scenario's tree): where the finding must land. */
  at: string;
}

export interface KustomizeScenario extends ScenarioBase {
  /** Relative path → text; `${namespace}` is the scenario's own namespace. */
  files: Record<string, string>;
  history: RenderedStep[];
  /** What the user checks: the kustomization folder rendered, sent by `kubectl apply --server-side -k` (default) or `kubectl create -k`. */
  check: { target: string; fieldManager?: string; mode?: 'serverSide' | 'create' };
  expect: ExpectedFinding[];
}

const extraSteps = ['applyRendered', 'clientSideApplyRendered'];
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

interface JsonFinding {
  file: string;
  code: string;
  path?: string;
  manager?: { manager: string };
  range: { start: { line: number } };
  rendered?: { index: number };
}

interface Rendered {
  objects: KubeObject[];
}

/** One scratch folder for the run (removed at exit), a subfolder per scenario. */
let scratch: string | undefined;

export const kustomizeFamily: RendererFamily<KustomizeScenario> = {
  label: 'Kustomize overlays',
  minimum: 15,
  /**
   * A scenario's `use: [name, ...]` starts its tree from the file's `filesets` (its own `files`
   * override them), so a base shared by many scenarios is written once and its line numbers are
   * read in one place.
   */
  parse(raw, base, where, doc) {
    const filesets = doc.filesets ?? {};
    const files: Record<string, string> = {};
    for (const set of (raw.use ?? []) as string[]) {
      if (!filesets[set]) throw new Error(`${where}: no fileset ${set}`);
      Object.assign(files, filesets[set]);
    }
    Object.assign(files, (raw.files ?? {}) as Record<string, string>);
    const history = (raw.history ?? []) as RenderedStep[];
    for (const step of history) {
      const kinds = Object.keys(step).filter((k) => k !== 'repeat');
      if (kinds.length !== 1 || ![...ordinarySteps, ...extraSteps].includes(kinds[0]!))
        throw new Error(`${where}: unknown history step ${kinds.join(', ')}`);
    }
    const check = raw.check as KustomizeScenario['check'] | undefined;
    if (!check || typeof check.target !== 'string') throw new Error(`${where}: check.target is missing`);
    if (check.mode !== undefined && check.mode !== 'serverSide' && check.mode !== 'create')
      throw new Error(`${where}: check.mode must be serverSide or create`);
    const expect = (raw.expect ?? []) as ExpectedFinding[];
    for (const e of expect) {
      if (!/^[^:]+:\d+$/.test(e.at ?? ''))
        throw new Error(`${where}: expect.at must be file:line (${JSON.stringify(e)})`);
      if (!(e.at.split(':')[0]! in files))
        throw new Error(`${where}: expect.at names a file the scenario does not have: ${e.at}`);
      if (e.code !== undefined && !findingCodes.includes(e.code))
        throw new Error(`${where}: expect.code must be one of ${findingCodes.join(', ')}`);
      if (
        (e.code ?? 'field-conflict') === 'field-conflict' &&
        (typeof e.path !== 'string' || typeof e.manager !== 'string')
      )
        throw new Error(`${where}: a field conflict names its path and manager (${JSON.stringify(e)})`);
      if (e.code === 'invalid-manifest' && typeof e.path !== 'string')
        throw new Error(`${where}: a refusal names the field it is about (${JSON.stringify(e)})`);
    }
    // The answer the history is built to get, and the findings that are that answer.
    const answerOf: Record<ExpectedCode, string> = {
      'field-conflict': 'fieldConflict',
      'already-exists': 'alreadyExists',
      'invalid-manifest': 'rejected',
    };
    if ((base.server === 'accepted') !== (expect.length === 0))
      throw new Error(`${where}: an accepted scenario expects nothing, any other names what the server says`);
    if (expect.some((e) => answerOf[e.code ?? 'field-conflict'] !== base.server))
      throw new Error(
        `${where}: server: ${base.server} expects only ${
          Object.entries(answerOf)
            .filter(([, a]) => a === base.server)
            .map(([c]) => c)
            .join(', ') || 'nothing'
        }`,
      );
    return { ...base, files, history, check, expect };
  },
  tool: (t) => requireTool(t, 'kustomize'),
  run: runScenario,
  prepare: prepareScenario,
};

function render(tool: string, dir: string, target: string): string {
  const out = spawnSync(tool, ['build', target], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  if (out.status !== 0) throw new Error(`kustomize build ${target}: ${out.stderr || out.error?.message}`);
  return out.stdout;
}

/** The scenario's tree written and its history replayed, in a namespace of its own. */
async function setUpScenario(scenario: KustomizeScenario, tool: string, { kubeconfig, prefix }: ScenarioContext) {
  const admin = connect('admin', kubeconfig);
  const namespace = await freshNamespace(admin, prefix);
  scratch ??= scratchDir('rendered');
  const dir = path.join(scratch, prefix);
  writeFiles(dir, inNamespace(scenario.files, namespace));
  const renders = new Map<string, Rendered>();
  const rendered = (target: string): Rendered => {
    let r = renders.get(target);
    if (!r) {
      r = {
        objects: parseAllDocuments(render(tool, dir, target))
          .map((d) => d.toJS() as KubeObject)
          .filter((o) => o !== null),
      };
      renders.set(target, r);
    }
    return r;
  };

  // 1. The history.
  for (const [n, raw] of inNamespace(scenario.history, namespace).entries()) {
    await replayStep(admin, raw, rendered, renders, namespace, `history step ${n + 1}`);
  }
  return { admin, namespace, dir, rendered };
}

/** The overlay checked as the scenario says, in the editor (it alone chosen) and with `check -k`. */
async function prepareScenario(
  scenario: KustomizeScenario,
  tool: string,
  context: ScenarioContext,
): Promise<CheckedSources> {
  const { dir } = await setUpScenario(scenario, tool, context);
  const fieldManager = scenario.check.fieldManager ?? 'kubectl';
  const mode = scenario.check.mode ?? 'serverSide';
  return {
    folder: dir,
    files: Object.keys(scenario.files).map((f) => path.join(dir, f)),
    cliArgs: ['--field-manager', fieldManager, '--mode', mode, '--kustomize-binary', tool, '-k', scenario.check.target],
    settings: { kustomizePath: tool, fieldManager, applyMode: mode, kustomizeOverlays: [scenario.check.target] },
  };
}

async function runScenario(scenario: KustomizeScenario, tool: string, context: ScenarioContext): Promise<void> {
  const { admin, namespace, dir, rendered } = await setUpScenario(scenario, tool, context);
  const { kubeconfig } = context;

  // 2. The truth: a dry run of every rendered object, as the user would send it. Each answer is
  // written as the product's finding for it: `field-conflict PATH by MANAGER`, `already-exists`,
  // `invalid-manifest` (refused before ownership: what the server says is kept for the message).
  const fieldManager = scenario.check.fieldManager ?? 'kubectl';
  const mode = scenario.check.mode ?? 'serverSide';
  const checked = rendered(scenario.check.target).objects;
  const server = new Map<number, string[]>();
  const refusals: string[] = [];
  for (const [index, object] of checked.entries()) {
    const url = await objectPath(admin, object);
    const answer =
      mode === 'create'
        ? await sendRaw(
            admin,
            'POST',
            url.slice(0, url.lastIndexOf('/')),
            { dryRun: 'All', fieldManager },
            'application/json',
            JSON.stringify(object),
          )
        : await sendRaw(
            admin,
            'PATCH',
            url,
            { dryRun: 'All', fieldManager, force: 'false' },
            'application/apply-patch+yaml',
            JSON.stringify(object),
          );
    const status = serverStatus(answer);
    if (!status) continue;
    if (status.code === 409 && status.reason === 'AlreadyExists') {
      server.set(index, ['already-exists']);
    } else if (status.code === 409) {
      assert.ok(
        status.causes.length > 0,
        `${nameOf(object)}: a 409 without the conflicting fields: ${JSON.stringify(status)}`,
      );
      server.set(
        index,
        status.causes
          .map((c) => {
            const [message, field] = c.split(' @ ');
            const manager = /conflict with "([^"]+)"/.exec(message ?? '')?.[1] ?? message;
            return `field-conflict ${field} by ${manager}`;
          })
          .sort(),
      );
    } else {
      assert.ok(
        status.code >= 400 && status.code < 500,
        `${nameOf(object)}: the server failed (${status.code}), it did not answer about the object: ${JSON.stringify(status)}`,
      );
      server.set(index, ['invalid-manifest']);
      refusals.push(`${nameOf(object)}: ${status.code} ${status.reason} ${status.message}`);
    }
  }

  // 3. The scenario's own list must be the server's: the history still provokes its situation.
  const keyOf = (code: string, path?: string, manager?: string) =>
    code === 'field-conflict' ? `${code} ${path} by ${manager}` : code;
  const expected = new Map<number, string[]>();
  const expectedAt = new Map<string, string>();
  for (const e of inNamespace(scenario.expect, namespace)) {
    const index = checked.findIndex((o) => matchesName(`${o.kind}/${o.metadata.name}`, e.object));
    assert.ok(
      index >= 0,
      `expect names ${e.object}, which ${scenario.check.target} does not render (${checked.map(nameOf).join(', ')})`,
    );
    const key = keyOf(e.code ?? 'field-conflict', e.path, e.manager);
    expected.set(index, [...(expected.get(index) ?? []), key].sort());
    expectedAt.set(`${index} ${key}`, e.at);
  }
  assert.deepEqual(
    byObject(server, checked),
    byObject(expected, checked),
    `the scenario expects other answers than the server gives: fix the history or the expectation${refusals.length ? ` (refused: ${refusals.join('; ')})` : ''}`,
  );

  // 4. The product, as a user runs it.
  const run = await runCli(
    [
      'check',
      '--kubeconfig',
      kubeconfig,
      '--context',
      'admin',
      '--format',
      'json',
      '--field-manager',
      fieldManager,
      '--mode',
      mode,
      '--kustomize-binary',
      tool,
      '-k',
      scenario.check.target,
    ],
    { cwd: dir },
  );
  assert.ok(run.status === 0 || run.status === 1, `check exited ${run.status}: ${run.stderr}`);
  if (server.size > 0) assert.equal(run.status, 1, 'refusals are findings: exit 1');
  const report = JSON.parse(run.stdout) as { findings: JsonFinding[] };
  const answers = report.findings.filter((f) => (findingCodes as readonly string[]).includes(f.code));
  const product = new Map<number, string[]>();
  const productAt = new Map<string, string[]>();
  for (const f of answers) {
    assert.ok(f.rendered, `a finding without its rendered object: ${JSON.stringify(f)}`);
    const key = keyOf(f.code, f.path, f.manager?.manager);
    const list = product.get(f.rendered.index) ?? [];
    if (!list.includes(key)) product.set(f.rendered.index, [...list, key].sort());
    const at = `${f.rendered.index} ${key}`;
    productAt.set(at, [...(productAt.get(at) ?? []), `${f.file}:${f.range.start.line + 1}`]);
  }
  assert.deepEqual(
    byObject(product, checked),
    byObject(server, checked),
    `the product’s findings vs the server’s dry run${refusals.length ? ` (refused: ${refusals.join('; ')})` : ''}`,
  );

  // Each finding on the source line that sets the field.
  for (const [key, at] of expectedAt) {
    assert.deepEqual(
      productAt.get(key),
      [at],
      `${key}: reported at ${JSON.stringify(productAt.get(key))}, expected on ${at}`,
    );
  }
}

async function replayStep(
  admin: Connection,
  step: RenderedStep,
  rendered: (target: string) => Rendered,
  renders: Map<string, Rendered>,
  namespace: string,
  what: string,
): Promise<void> {
  if ('applyRendered' in step) {
    const s = step.applyRendered;
    for (const o of rendered(s.target).objects)
      objectOf(await apply(admin, s.manager, o, s.force ? { force: true } : {}), `${what}: apply ${nameOf(o)}`);
    return;
  }
  if ('clientSideApplyRendered' in step) {
    for (const o of rendered(step.clientSideApplyRendered.target).objects)
      objectOf(await clientSideApply(admin, o), `${what}: kubectl apply ${nameOf(o)}`);
    return;
  }
  // Names with `*` (a generator's hash) are the rendered object's that matches, among the targets
  // rendered so far (by earlier steps).
  const all = [...renders.values()].flatMap((r) => r.objects.map(nameOf));
  const resolve = (name: string) =>
    name.includes('*') ? (all.find((n) => matchesName(n.split('/')[1]!, name)) ?? name).split('/').pop()! : name;
  const concrete = JSON.parse(JSON.stringify(step)) as HistoryStep;
  const kind = Object.keys(concrete).find((k) => k !== 'repeat')!;
  const body = (
    concrete as unknown as Record<
      string,
      { target?: { name: string; apiVersion: string; kind: string }; object?: KubeObject }
    >
  )[kind]!;
  if (body.target) body.target.name = resolve(body.target.name);
  if (body.object) body.object.metadata.name = resolve(body.object.metadata.name);
  const target =
    body.target ??
    (body.object
      ? { apiVersion: body.object.apiVersion, kind: body.object.kind, name: body.object.metadata.name }
      : undefined);
  assert.ok(target, `${what}: a step on a rendered object names it (target or object)`);
  await replayHistory(
    admin,
    [concrete],
    { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: target.name, namespace } },
    namespace,
  );
}

function matchesName(name: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(name);
}

function nameOf(o: KubeObject): string {
  return `${o.kind}/${o.metadata.name}`;
}

function byObject(byIndex: Map<number, string[]>, objects: KubeObject[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [i, list] of [...byIndex].sort((a, b) => a[0] - b[0]))
    out[objects[i] ? nameOf(objects[i]!) : `#${i}`] = list;
  return out;
}

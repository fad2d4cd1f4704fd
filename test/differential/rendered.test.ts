// The differential proof for rendered sources (overlays; charts). For every scenario of
// test/differential/rendered/*.yaml, in a namespace of its own on the real kube-apiserver:
//   1. write the scenario's source tree and replay its history (the rendered output applied by the
//      test's own kustomize, an autoscaler, `kubectl edit`, another tool, a client-side apply);
//   2. the truth: render the checked target with the real tool and send every object to the server
//      as a dry-run server-side apply (the user's field manager, force=false), read over plain HTTPS;
//   3. the product, run as a user runs it (`check --format json -k DIR`), must name exactly the
//      server's conflicts for every rendered object (field and manager);
//   4. each conflict must land on the source file and line the scenario names, written by hand from
//      the source files; the scenario's list must itself be exactly the server's conflicts.
// The last test prints `agreement: N/N rendered scenarios` and fails unless every scenario agreed.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { requireCluster } from '../support/env';
import { apply, clientSideApply, connect, freshNamespace, objectOf, objectPath, type Connection, type KubeObject } from '../support/seed';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';
import { sendRaw, serverStatus } from './oracle';
import { replayHistory } from './replay';
import { inNamespace, loadRenderedScenarios, type RenderedScenario, type RenderedStep } from './rendered-scenario';
import { kustomizeRenderer, type ScenarioRenderer } from './render-kustomize';
import type { HistoryStep } from './scenario';

/** Each renderer family's way to render and check; a new family adds its line. */
const renderers: Record<string, ScenarioRenderer> = {
  kustomize: kustomizeRenderer,
};

const scenarios = loadRenderedScenarios();
/** One scratch folder for the run (removed at exit), a subfolder per scenario. */
let scratch: string | undefined;
const outcomes = new Map<string, 'agreed' | 'disagreed' | 'excluded'>();

interface JsonFinding {
  file: string;
  code: string;
  path?: string;
  manager?: { manager: string };
  range: { start: { line: number } };
  rendered?: { index: number };
}

describe('differential: rendered sources vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, scenario] of scenarios.entries()) {
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (scenario.excluded) {
        outcomes.set(scenario.name, 'excluded');
        t.skip(`excluded: ${scenario.excluded}`);
        return;
      }
      const cluster = requireCluster(t);
      const renderer = renderers[scenario.renderer];
      assert.ok(renderer, `no renderer ${scenario.renderer}`);
      const tool = renderer.tool(t);
      if (!cluster || !tool) return;
      outcomes.set(scenario.name, 'disagreed');
      await runScenario(scenario, renderer, tool, cluster.kubeconfig, `kr${n}`);
      outcomes.set(scenario.name, 'agreed');
    });
  }
});

test('agreement over the rendered corpus', (t) => {
  if (!requireCluster(t)) return;
  const counted = scenarios.filter((s) => !s.excluded);
  const agreed = counted.filter((s) => outcomes.get(s.name) === 'agreed');
  const excluded = scenarios.length - counted.length;
  const line = `agreement: ${agreed.length}/${counted.length} rendered scenarios${excluded ? ` (${excluded} excluded, reasons in the corpus)` : ''}`;
  console.log(line);
  t.diagnostic(line);
  const kustomize = counted.filter((s) => s.renderer === 'kustomize').length;
  assert.ok(kustomize >= 15, `the corpus has ${kustomize} Kustomize scenarios; at least 15 are needed`);
  const failed = counted.filter((s) => outcomes.get(s.name) !== 'agreed').map((s) => s.name);
  assert.deepEqual(failed, [], 'every rendered scenario must agree with the server');
});

// -------------------------------------------------------------------------------------------------

interface Rendered {
  objects: KubeObject[];
}

async function runScenario(scenario: RenderedScenario, renderer: ScenarioRenderer, tool: string, kubeconfig: string, prefix: string): Promise<void> {
  const admin = connect('admin', kubeconfig);
  const namespace = await freshNamespace(admin, prefix);
  scratch ??= scratchDir('rendered');
  const dir = path.join(scratch, prefix);
  writeFiles(dir, inNamespace(scenario.files, namespace));
  const renders = new Map<string, Rendered>();
  const rendered = (target: string): Rendered => {
    let r = renders.get(target);
    if (!r) {
      r = { objects: parseAllDocuments(renderer.render(tool, dir, target)).map((d) => d.toJS() as KubeObject).filter((o) => o !== null) };
      renders.set(target, r);
    }
    return r;
  };

  // 1. The history.
  for (const [n, raw] of inNamespace(scenario.history, namespace).entries()) {
    await replayStep(admin, raw, rendered, renders, namespace, `history step ${n + 1}`);
  }

  // 2. The truth: a dry run of every rendered object, as the user would send it.
  const fieldManager = scenario.check.fieldManager ?? 'kubectl';
  const checked = rendered(scenario.check.target).objects;
  const server = new Map<number, string[]>();
  for (const [index, object] of checked.entries()) {
    const answer = await sendRaw(admin, 'PATCH', await objectPath(admin, object), { dryRun: 'All', fieldManager, force: 'false' }, 'application/apply-patch+yaml', JSON.stringify(object));
    const status = serverStatus(answer);
    if (!status) continue;
    assert.ok(status.code === 409 && status.causes.length > 0, `${nameOf(object)}: the server refused for another reason than field conflicts: ${JSON.stringify(status)}`);
    server.set(index, status.causes.map((c) => {
      const [message, field] = c.split(' @ ');
      const manager = /conflict with "([^"]+)"/.exec(message ?? '')?.[1] ?? message;
      return `${field} by ${manager}`;
    }).sort());
  }

  // The scenario's own list must be the server's: the history still provokes its situation.
  const expected = new Map<number, string[]>();
  const expectedAt = new Map<string, string>();
  for (const e of scenario.expect) {
    const index = checked.findIndex((o) => matchesName(`${o.kind}/${o.metadata.name}`, e.object));
    assert.ok(index >= 0, `expect names ${e.object}, which ${scenario.check.target} does not render (${checked.map(nameOf).join(', ')})`);
    expected.set(index, [...(expected.get(index) ?? []), `${e.path} by ${e.manager}`].sort());
    expectedAt.set(`${index} ${e.path} by ${e.manager}`, e.at);
  }
  assert.deepEqual(byObject(server, checked), byObject(expected, checked), 'the scenario expects other conflicts than the server reports: fix the history or the expectation');

  // 3. The product, as a user runs it.
  const run = await runCli(['check', '--kubeconfig', kubeconfig, '--context', 'admin', '--format', 'json', '--field-manager', fieldManager, ...renderer.checkArgs(tool, scenario.check.target)], { cwd: dir });
  assert.ok(run.status === 0 || run.status === 1, `check exited ${run.status}: ${run.stderr}`);
  if (server.size > 0) assert.equal(run.status, 1, 'conflicts are findings: exit 1');
  const report = JSON.parse(run.stdout) as { findings: JsonFinding[] };
  const conflicts = report.findings.filter((f) => f.code === 'field-conflict');
  const product = new Map<number, string[]>();
  const productAt = new Map<string, string[]>();
  for (const f of conflicts) {
    assert.ok(f.rendered, `a conflict without its rendered object: ${JSON.stringify(f)}`);
    const key = `${f.path} by ${f.manager?.manager}`;
    const list = product.get(f.rendered.index) ?? [];
    if (!list.includes(key)) product.set(f.rendered.index, [...list, key].sort());
    const at = `${f.rendered.index} ${key}`;
    productAt.set(at, [...(productAt.get(at) ?? []), `${f.file}:${f.range.start.line + 1}`]);
  }
  assert.deepEqual(byObject(product, checked), byObject(server, checked), 'the product’s conflicts vs the server’s dry run');

  // 4. Each conflict on the source line that sets the field.
  for (const [key, at] of expectedAt) {
    assert.deepEqual(productAt.get(key), [at], `${key}: reported at ${JSON.stringify(productAt.get(key))}, expected on ${at}`);
  }
}

async function replayStep(admin: Connection, step: RenderedStep, rendered: (target: string) => Rendered, renders: Map<string, Rendered>, namespace: string, what: string): Promise<void> {
  if ('applyRendered' in step) {
    const s = step.applyRendered;
    for (const o of rendered(s.target).objects) objectOf(await apply(admin, s.manager, o, s.force ? { force: true } : {}), `${what}: apply ${nameOf(o)}`);
    return;
  }
  if ('clientSideApplyRendered' in step) {
    for (const o of rendered(step.clientSideApplyRendered.target).objects) objectOf(await clientSideApply(admin, o), `${what}: kubectl apply ${nameOf(o)}`);
    return;
  }
  // Names with `*` (a generator's hash) are the rendered object's that matches, among the targets
  // rendered so far (by earlier steps).
  const all = [...renders.values()].flatMap((r) => r.objects.map(nameOf));
  const resolve = (name: string) => (name.includes('*') ? (all.find((n) => matchesName(n.split('/')[1]!, name)) ?? name).split('/').pop()! : name);
  const concrete = JSON.parse(JSON.stringify(step)) as HistoryStep;
  const kind = Object.keys(concrete).find((k) => k !== 'repeat')!;
  const body = (concrete as unknown as Record<string, { target?: { name: string; apiVersion: string; kind: string }; object?: KubeObject }>)[kind]!;
  if (body.target) body.target.name = resolve(body.target.name);
  if (body.object) body.object.metadata.name = resolve(body.object.metadata.name);
  const target = body.target ?? (body.object ? { apiVersion: body.object.apiVersion, kind: body.object.kind, name: body.object.metadata.name } : undefined);
  assert.ok(target, `${what}: a step on a rendered object names it (target or object)`);
  await replayHistory(admin, [concrete], { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: target.name, namespace } }, namespace);
}

function matchesName(name: string, pattern: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

function nameOf(o: KubeObject): string {
  return `${o.kind}/${o.metadata.name}`;
}

function byObject(byIndex: Map<number, string[]>, objects: KubeObject[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [i, list] of [...byIndex].sort((a, b) => a[0] - b[0])) out[objects[i] ? nameOf(objects[i]!) : `#${i}`] = list;
  return out;
}

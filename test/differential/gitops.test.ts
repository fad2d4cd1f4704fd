// The GitOps corpus: the product's prediction of a controller's sync (core/gitops/controller-apply.ts)
// against what the controller's own apply code does on the real kube-apiserver. For every scenario of
// test/differential/gitops/*.yaml, in a namespace of its own:
//   1. replay the history: the ordinary writes (replay.ts) and `sync` steps, where the real
//      controller applies what Git holds (test/support/gitops-appliers.ts: Flux's fluxcd/pkg/ssa
//      resource manager with kustomize-controller's options, Argo CD's kubectl with its flags);
//   2. predict the judged sync as the product does, from reads only: the live object and the schema
//      through the product's ClusterConnection, the manifest through the product's parser;
//   3. run the judged sync with the real controller code, read the object again;
//   4. the two must agree on who owns each field afterwards (every managedFields entry's paths) and
//      on every value that changed (gitops-oracle.ts reads both off plain JSON).
// The last test prints `agreement: N/N GitOps scenarios` and fails unless every scenario agreed and
// the corpus holds at least 40.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as path from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import {
  createClusterConnection,
  createFactsSource,
  type ClusterConnection,
  type FactsSource,
} from '../../server/src/cluster';
import {
  encodeManagedFields,
  predictControllerApply,
  type ControllerApplyPrediction,
} from '../../server/src/core/gitops/controller-apply';
import type { ArgoIgnoreRule, ControllerRequest } from '../../server/src/core/gitops/model';
import type { JsonObject } from '../../server/src/core/json';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { auditSentinel, kubernetesVersion, readAuditEvents, repoRoot } from '../support/cluster';
import { requireCluster } from '../support/env';
import { requireTool } from '../tools/tools';
import {
  argoClientSideApply,
  argoServerSideApply,
  ensureFluxApply,
  fluxApply,
  helmUpgrade,
  respectIgnoreDifferences,
} from '../support/gitops-appliers';
import { connect, freshNamespace, get, request, type Connection, type KubeObject } from '../support/seed';
import { ownersOf, valueChanges } from './gitops-oracle';
import {
  gitText,
  loadGitopsScenarios,
  type GitopsScenario,
  type GitopsStep,
  type IgnoreRule,
  type SyncStep,
} from './gitops-scenario';
import { replayHistory } from './replay';
import { withNamespace } from './scenario';

const scenarios = loadGitopsScenarios();
const outcomes = new Map<string, 'agreed' | 'disagreed'>();
const userAgent = `kch-gitops-${process.pid}-${Date.now().toString(36)}`;
const defaultKustomization = { name: 'apps', namespace: 'flux-system' };
let admin: Connection;
let connection: ClusterConnection;
let facts: FactsSource;
let ready = false;

before(async () => {
  if (!process.env.KCH_KUBECONFIG || !fs.existsSync(process.env.KCH_KUBECONFIG)) return;
  admin = connect('admin');
  await ensureFluxApply();
  connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG, context: 'admin' },
    { userAgent },
  );
  facts = createFactsSource(connection);
  ready = true;
});

after(() => {
  facts?.dispose();
  connection?.dispose();
});

describe('GitOps: prediction vs the controllers’ own apply code', { concurrency: 4 }, () => {
  for (const [n, scenario] of scenarios.entries()) {
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (!requireCluster(t)) return;
      // Helm's upgrade is the tests' Helm 4 (scripts/test.mjs builds it): without it, skip (fail under CI).
      const usesHelm = [scenario.applier, ...scenario.history.map((s) => ('sync' in s ? s.sync.applier : undefined))];
      if (usesHelm.includes('helm-upgrade') && !requireTool(t, 'helm4')) return;
      assert.ok(ready, 'the suite setup did not finish');
      outcomes.set(scenario.name, 'disagreed');
      await runScenario(scenario, `kg${n}`);
      outcomes.set(scenario.name, 'agreed');
    });
  }
});

test('the product only read: every write came from the controllers', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  if (!cluster.auditLog) {
    if (process.env.CI === 'true') assert.fail('KCH_AUDIT_LOG is not set: the audit log is the only proof');
    t.skip('KCH_AUDIT_LOG is not set');
    return;
  }
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const sent = readAuditEvents(cluster.auditLog).filter((e) => e.userAgent === userAgent);
  assert.ok(sent.length > 0, 'no request of the product in the audit log');
  // Reads and dry runs only: the access reviews of the user's permission are created with dryRun=All.
  const writes = sent
    .filter((e) => !['get', 'list', 'watch'].includes(e.verb) && !/[?&]dryRun=All(&|$)/.test(e.requestURI ?? ''))
    .map((e) => `${e.verb} ${e.requestURI}`);
  assert.deepEqual(writes, [], 'the prediction sent requests that change the cluster');
});

test('agreement over the GitOps corpus', (t) => {
  if (!requireCluster(t)) return;
  const agreed = scenarios.filter((s) => outcomes.get(s.name) === 'agreed');
  const line = `agreement: ${agreed.length}/${scenarios.length} GitOps scenarios`;
  console.log(line);
  t.diagnostic(line);
  assert.ok(scenarios.length >= 40, `the corpus has ${scenarios.length} scenarios; at least 40 are needed`);
  const failed = scenarios.filter((s) => outcomes.get(s.name) !== 'agreed').map((s) => s.name);
  assert.deepEqual(failed, [], 'every scenario must agree with the controller');
});

// -------------------------------------------------------------------------------------------------

async function runScenario(scenario: GitopsScenario, prefix: string): Promise<void> {
  const kubeconfig = process.env.KCH_KUBECONFIG!;
  const namespace = await freshNamespace(admin, prefix);
  const text = withNamespace(gitText(scenario), namespace);
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, 'Git holds one object per scenario');
  const resource = parsed.resources[0]!;
  const ref: KubeObject = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', namespace },
  };

  // 1. The history, the controller's earlier syncs included.
  const steps = JSON.parse(JSON.stringify(scenario.history).replaceAll('${namespace}', namespace)) as GitopsStep[];
  for (const step of steps) {
    if ('sync' in step) await sync(scenario, step.sync, namespace, kubeconfig);
    else await replayHistory(admin, [step], ref, namespace);
  }
  const beforeAnswer = await get(admin, ref);
  const liveBefore = beforeAnswer.ok ? beforeAnswer.object : undefined;

  // 2. The product's prediction, from reads only.
  const loaded = await facts.load({
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    name: ref.metadata.name,
    namespace,
  });
  assert.equal(loaded.kind.state, 'served', `kind: ${JSON.stringify(loaded.kind)}`);
  if (loaded.kind.state !== 'served') return;
  assert.ok(loaded.schema, 'no schema');
  const live = loaded.live.state === 'exists' ? loaded.live.object : undefined;
  assert.equal(
    live?.metadata && (live.metadata as JsonObject).resourceVersion,
    liveBefore?.metadata.resourceVersion,
    'the product read the object as the history left it',
  );
  const prediction = predictControllerApply({
    live,
    manifest: resource.object,
    request: requestOf(scenario, namespace),
    schema: loaded.schema,
    resource: { group: loaded.kind.group, resource: loaded.kind.resource },
    ...(loaded.versions ? { versions: loaded.versions } : {}),
  });

  // 3. The controller's own apply.
  const truthOutcome = await sync(scenario, undefined, namespace, kubeconfig);
  const afterAnswer = await get(admin, ref);
  assert.ok(afterAnswer.ok, 'the object is there after the sync');
  const liveAfter = afterAnswer.object;

  if (process.env.KCH_GITOPS_CAPTURE && scenario.capture)
    captureFixture(scenario, text, requestOf(scenario, namespace), liveBefore, liveAfter);

  // 4. Agreement.
  const report = (): string =>
    [
      `history: ${JSON.stringify(ownersOf(liveBefore?.metadata.managedFields))}`,
      `predicted outcome ${prediction.outcome}, the controller: ${truthOutcome}`,
    ].join('\n');
  if (process.env.KCH_DIFF_VERBOSE) console.log(scenario.name, report(), describe_(prediction));
  assert.equal(prediction.outcome, scenario.outcome, `the scenario is about a sync that is ${scenario.outcome}`);
  if (truthOutcome !== undefined) assert.equal(truthOutcome, scenario.outcome, `the controller's sync\n${report()}`);
  assert.deepEqual(
    ownersOf(encodeManagedFields(prediction.owners) as unknown[]),
    ownersOf(liveAfter.metadata.managedFields),
    `owners after the sync (predicted, then the server's)\n${report()}`,
  );
  if (liveBefore) {
    assert.deepEqual(
      valueChanges(liveBefore, prediction.after as KubeObject | undefined),
      valueChanges(liveBefore, liveAfter),
      `values changed by the sync (predicted, then the server's)\n${report()}`,
    );
  }
}

/**
 * test/fixtures/gitops/controller-apply/<capture>.yaml: what the unit tests of controller-apply.ts
 * predict from (the object as the history left it, Git's text, the request) and hold the prediction
 * to (the object the server returned after the controller's sync).
 */
function captureFixture(
  scenario: GitopsScenario,
  text: string,
  request: ControllerRequest,
  before: KubeObject | undefined,
  after: KubeObject,
): void {
  const dir = path.join(repoRoot, 'test', 'fixtures', 'gitops', 'controller-apply');
  fs.mkdirSync(dir, { recursive: true });
  const fixture = {
    scenario: scenario.name,
    applier: scenario.applier,
    server: kubernetesVersion,
    manifest: text,
    request,
    live: before ?? null,
    after,
  };
  fs.writeFileSync(path.join(dir, `${scenario.capture}.yaml`), stringify(fixture, { lineWidth: 0 }));
}

function describe_(p: ControllerApplyPrediction): string {
  return JSON.stringify({
    outcome: p.outcome,
    changed: p.changed.map((c) => ({ ...c, path: c.path.map((e) => (e.kind === 'field' ? e.name : e)) })),
    owners: ownersOf(encodeManagedFields(p.owners) as unknown[]),
  });
}

function requestOf(scenario: GitopsScenario, namespace: string): ControllerRequest {
  const ignore = (scenario.ignore ?? []).map(argoRule);
  switch (scenario.applier) {
    case 'flux':
      return {
        applier: 'flux-kustomize',
        fieldManager: 'kustomize-controller',
        kustomization: scenario.kustomization ?? defaultKustomization,
        ...(scenario.fluxIgnore ? { ignorePaths: scenario.fluxIgnore } : {}),
      };
    case 'argocd-server-side':
      return {
        applier: 'argocd-server-side',
        fieldManager: 'argocd-controller',
        ignore,
        respectIgnoreDifferences: scenario.respectIgnoreDifferences ?? false,
      };
    case 'helm-upgrade':
      return { applier: 'flux-helm', fieldManager: 'helm', release: { name: 'web', namespace } };
    case 'argocd-client-side':
      return {
        applier: 'argocd-client-side',
        fieldManager: 'argocd-controller',
        ignore,
        respectIgnoreDifferences: scenario.respectIgnoreDifferences ?? false,
      };
  }
}

function argoRule(rule: IgnoreRule): ArgoIgnoreRule {
  return {
    ...(rule.group !== undefined ? { group: rule.group } : {}),
    kind: rule.kind,
    ...(rule.name ? { name: rule.name } : {}),
    jsonPointers: rule.jsonPointers ?? [],
    jqPathExpressions: [],
    managedFieldsManagers: rule.managedFieldsManagers ?? [],
  };
}

/**
 * One sync by the real controller code: a history's `step`, or the judged sync (no step), as the
 * step's applier (else the scenario's). Returns what the controller reported, where it says it
 * (kubectl's server-side apply does not: undefined).
 */
async function sync(
  scenario: GitopsScenario,
  step: SyncStep | undefined,
  namespace: string,
  kubeconfig: string,
): Promise<GitopsScenario['outcome'] | undefined> {
  const applier = step?.applier ?? scenario.applier;
  let text = withNamespace(gitText(scenario, step), namespace);
  const respect = step?.respectIgnoreDifferences ?? (step?.applier ? false : scenario.respectIgnoreDifferences);
  const rules = step?.ignore ?? (step?.applier ? [] : scenario.ignore) ?? [];
  if (applier !== 'flux' && respect && rules.length > 0) {
    const target = parseYaml(text) as KubeObject;
    const live = await get(admin, target);
    if (live.ok)
      text = respectIgnoreDifferences(
        target,
        live.object,
        rules.filter((r) => r.kind === target.kind),
      );
  }
  if (applier === 'flux') {
    const result = await fluxApply(kubeconfig, text, scenario.kustomization ?? defaultKustomization, {
      ...(scenario.fluxIgnore ? { ignore: scenario.fluxIgnore } : {}),
    });
    const action = result.changes[0]?.action;
    return action === 'configured' ? 'applied' : (action as GitopsScenario['outcome'] | undefined);
  }
  if (applier === 'helm-upgrade') {
    await helmUpgrade(kubeconfig, text, { name: 'web', namespace });
    return undefined;
  }
  if (applier === 'argocd-server-side') {
    await argoServerSideApply(kubeconfig, text);
    return undefined;
  }
  const said = await argoClientSideApply(kubeconfig, text);
  return / unchanged\s*$/.test(said) ? 'unchanged' : / created\s*$/.test(said) ? 'created' : 'applied';
}

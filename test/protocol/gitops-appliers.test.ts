// The language server names who really applies an object, over real JSON-RPC against the real local
// kube-apiserver with Argo CD's and Flux's CRDs: on the object's hover, the Argo CD Application with
// its policy (automated, self-heal, server-side apply) and the Flux Kustomization with its interval;
// on a field the controller owns, the same; an applier whose object does not exist says its policy is
// unknown and why; and the code lens above each object names the applier. With the applier setting
// (flux named, or auto: the Application whose source path holds the file, in a clone of its
// repository), the file is judged as the controller's request: what it takes from whom.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { testCluster } from '../support/env';
import { startTestServer, type TestServer } from '../support/lsp-client';
import { apply, connect, create, objectOf, patch, scale, type KubeObject } from '../support/seed';
import { applyTextEdits as applyEdits } from '../../server/src/core/manifest/edits';
import { seedAppliers, type AppliersScene } from '../support/seed-appliers';
import { accessUser } from '../support/access';
import { startTestServer as startServerAs } from '../support/lsp-client';

let scene: AppliersScene;
let server: TestServer;

before(async () => {
  const cluster = testCluster();
  // Under CI=true and outside it alike: these tests need the local API server (npm test starts one).
  if (!cluster) throw new Error('no local kube-apiserver: run through `npm test` or `npm run cluster:up`');
  scene = await seedAppliers(connect('admin', cluster.kubeconfig), 'gitops-appliers');
  server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
});
after(async () => server?.shutdown());

/** The manifest a user holds for a live object: what the tool applied, without what the server added. */
function manifestOf(live: KubeObject): string {
  const { name, namespace, labels, annotations } = live.metadata;
  return stringify({
    apiVersion: live.apiVersion,
    kind: live.kind,
    metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    ...(live.kind === 'Deployment'
      ? { spec: { replicas: 2, selector: (live.spec as { selector: unknown }).selector } }
      : { data: live.data }),
  });
}

/** Asks until `done` holds: a policy is read after the object, and the hover is pulled, not pushed. */
async function until<T>(ask: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await ask();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const hoverText = async (uri: string, line: number, character: number): Promise<string> => {
  const hover = await server.hover(uri, { line, character });
  const contents = hover?.contents;
  return contents && typeof contents === 'object' && 'value' in contents ? contents.value : '';
};

test('the hover on an object names the Argo CD application and its policy; on a field the controller owns too', async () => {
  const uri = 'file:///w/argo-web.yaml';
  const text = manifestOf(scene.objects['argo-tracked']);
  await server.open(uri, text);
  const sentence = `Applied by Argo CD application ${scene.app} (automated, self-heal, prune, server-side apply, RespectIgnoreDifferences, 1 ignoreDifferences rule)`;
  const onKind = await until(
    () => hoverText(uri, 1, 2),
    (h) => h.includes(sentence),
    'the Application in the hover',
  );
  assert.match(onKind, /_Seen: annotation argocd\.argoproj\.io\/tracking-id, manager argocd-controller\._/);
  const replicas = text.split('\n').findIndex((l) => /^ {2}replicas:/.test(l));
  const onField = await hoverText(uri, replicas, 3);
  assert.match(onField, /argocd-controller/);
  assert.ok(onField.includes(sentence), onField);
});

test('the code lens names the applier; a Kustomization that does not exist leaves its policy unknown, said why', async () => {
  const uri = 'file:///w/flux.yaml';
  const text = `${manifestOf(scene.objects['flux-kustomize'])}---\n${manifestOf(scene.objects['flux-gone'])}`;
  await server.open(uri, text);
  const lenses = await until(
    () => server.codeLenses(uri),
    (ls) => ls.length === 2 && ls.every((l) => /applied by/.test(l.command?.title ?? '')),
    'the lenses naming the appliers',
  );
  assert.deepEqual(
    lenses.map((l) => l.command?.title),
    [
      `no conflicts · managed by kustomize-controller · applied by Flux Kustomization ${scene.namespace}/shop`,
      `no conflicts · managed by kustomize-controller · applied by Flux Kustomization ${scene.namespace}/gone`,
    ],
  );
  const flux = await until(
    () => hoverText(uri, 1, 2),
    (h) => h.includes('every 10m'),
    'the Kustomization in the hover',
  );
  assert.ok(
    flux.includes(`Applied by Flux Kustomization ${scene.namespace}/shop every 10m (prune, path \`./apps/shop\`)`),
    flux,
  );
  const second = text.split('\n').findIndex((l, i) => i > 0 && l === 'kind: ConfigMap');
  const gone = await until(
    () => hoverText(uri, second, 2),
    (h) => h.includes('policy unknown'),
    'the unknown policy in the hover',
  );
  assert.match(
    gone,
    new RegExp(
      `Applied by Flux Kustomization ${scene.namespace}/gone \\(policy unknown: Flux Kustomization ${scene.namespace}/gone does not exist`,
    ),
  );
});

test('a change by hand to a Flux-applied Deployment: the replicas line says Flux puts it back, and the quick fix keeps Git’s value', async () => {
  const uri = 'file:///w/flux-web-by-hand.yaml';
  const live = scene.objects['flux-kustomize'];
  const text = manifestOf(live).replace('replicas: 2', 'replicas: 7');
  await server.open(uri, text);
  const diagnostics = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'gitops-reverts'));
  const reverts = diagnostics.filter((d) => d.code === 'gitops-reverts');
  assert.equal(reverts.length, 1, JSON.stringify(reverts));
  const lines = text.split('\n');
  assert.equal(lines[reverts[0]!.range.start.line]!.trim(), 'replicas: 7');
  assert.match(
    reverts[0]!.message,
    new RegExp(
      `^Flux Kustomization ${scene.namespace}/shop puts \\.spec\\.replicas back to 2 \\(Git's value\\) at its next reconciliation, every 10m`,
    ),
  );
  const actions = await server.codeActions(uri, reverts[0]!.range, reverts);
  const keep = actions.find((a) => a.title === "Keep Git's value 2 for .spec.replicas");
  assert.ok(keep?.edit, JSON.stringify(actions.map((a) => a.title)));
  const edits = Object.values(keep.edit.changes ?? {})[0]!;
  assert.deepEqual(
    edits.map((e) => e.newText),
    ['2'],
  );
  assert.ok(actions.some((a) => a.title === 'Remove .spec.replicas (leave it to Git)'));
  await server.close(uri);
});

test('an autoscaler targets a Flux-applied Deployment whose Git sets replicas: the replicas line says they fight, naming both, and the quick fix removes the line', async () => {
  const live = scene.objects['flux-kustomize'];
  const admin = connect('admin', testCluster()!.kubeconfig);
  objectOf(
    await apply(admin, 'kch-test-setup', {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'flux-web-hpa', namespace: scene.namespace },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: live.metadata.name },
        minReplicas: 2,
        maxReplicas: 6,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    }),
    'the autoscaler',
  );
  const uri = 'file:///w/flux-web-fight.yaml';
  const text = manifestOf(live);
  await server.open(uri, text);
  const diagnostics = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'gitops-fight'));
  const fight = diagnostics.filter((d) => d.code === 'gitops-fight');
  assert.equal(fight.length, 1, JSON.stringify(diagnostics.map((d) => d.message)));
  assert.equal(text.split('\n')[fight[0]!.range.start.line]!.trim(), 'replicas: 2');
  assert.match(
    fight[0]!.message,
    new RegExp(
      `^Flux Kustomization ${scene.namespace}/shop sets replicas: 2 every 10m, and the HorizontalPodAutoscaler flux-web-hpa sets it to its own count: they fight over \\.spec\\.replicas`,
    ),
  );
  assert.equal(fight[0]!.severity, 1, 'an error: Flux applies on its own schedule');
  const actions = await server.codeActions(uri, fight[0]!.range, fight);
  const remove = actions.find((a) => a.title === 'Remove replicas from Git (leave it to the autoscaler)');
  assert.ok(remove?.edit, JSON.stringify(actions.map((a) => a.title)));
  const edited = applyEdits(text, Object.values(remove.edit.changes ?? {})[0]!);
  assert.ok(!/replicas:/.test(edited), edited);
  await server.close(uri);
});

test('a user who may not list autoscalers: the replicas line of a Flux-applied Deployment says a fight is unknown and why, not silence', async (t) => {
  const live = scene.objects['flux-kustomize'];
  const admin = connect('admin', testCluster()!.kubeconfig);
  // May read the Deployment and the Kustomization, not the namespace's HorizontalPodAutoscalers.
  const user = await accessUser(admin, scene.namespace, 'no-autoscalers', {
    namespaced: [
      {
        namespace: scene.namespace,
        rules: [
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'patch'] },
          { apiGroups: ['kustomize.toolkit.fluxcd.io'], resources: ['kustomizations'], verbs: ['get'] },
        ],
      },
    ],
  });
  t.after(user.cleanup);
  const limited = await startServerAs({ settings: { kubeconfig: user.kubeconfig, context: user.context } });
  try {
    const uri = 'file:///w/flux-web-unknown-fight.yaml';
    const text = manifestOf(live);
    await limited.open(uri, text);
    const diagnostics = await limited.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'gitops-fight-unknown'));
    const unknown = diagnostics.filter((d) => d.code === 'gitops-fight-unknown');
    assert.equal(unknown.length, 1, JSON.stringify(diagnostics.map((d) => d.message)));
    assert.equal(text.split('\n')[unknown[0]!.range.start.line]!.trim(), 'replicas: 2');
    assert.match(
      unknown[0]!.message,
      new RegExp(
        `^Flux Kustomization ${scene.namespace}/shop sets replicas: 2 every 10m; whether a HorizontalPodAutoscaler sets it back \\(a fight\\) is unknown: HorizontalPodAutoscalers may not be listed here: listing horizontalpodautoscalers\\.autoscaling is not allowed`,
      ),
    );
    assert.ok(!diagnostics.some((d) => d.code === 'gitops-fight'), 'no fight claimed either');
  } finally {
    await limited.shutdown();
  }
});

test('with the applier set to flux, the file is Flux’s request: the replicas an autoscaler set are said taken, no conflict, and the quick fix annotates ssa: IfNotPresent', async () => {
  const cluster = testCluster()!;
  const live = scene.objects['flux-kustomize'];
  const admin = connect('admin', cluster.kubeconfig);
  objectOf(await scale(admin, 'kube-controller-manager', live, 5), 'the autoscaler’s scale write');
  server.setSettings({ kubeconfig: cluster.kubeconfig, context: 'admin', applier: 'flux' });
  try {
    const uri = 'file:///w/flux-web-request.yaml';
    const text = manifestOf(live);
    await server.open(uri, text);
    const diagnostics = await server.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'gitops-takes'));
    assert.deepEqual(
      diagnostics.filter((d) => d.code === 'field-conflict'),
      [],
      'the controller forces its apply',
    );
    const takes = diagnostics.filter((d) => d.code === 'gitops-takes');
    assert.equal(takes.length, 1, JSON.stringify(diagnostics.map((d) => d.message)));
    assert.equal(text.split('\n')[takes[0]!.range.start.line]!.trim(), 'replicas: 2');
    assert.match(
      takes[0]!.message,
      new RegExp(
        `^Flux Kustomization ${scene.namespace}/shop takes \\.spec\\.replicas from kube-controller-manager \\(scale\\) \\(5 → 2\\) at its next reconciliation \\(every 10m\\)`,
      ),
    );
    // The autoscaler of the test before scaled it: Flux's replicas and its count fight.
    const fight = diagnostics.find((d) => d.code === 'gitops-fight');
    assert.match(
      fight?.message ?? '',
      /sets replicas: 2 every 10m, and the HorizontalPodAutoscaler flux-web-hpa sets it back to 5/,
    );
    const actions = await server.codeActions(uri, takes[0]!.range, takes);
    const annotate = actions.find((a) => a.title.startsWith('Annotate kustomize.toolkit.fluxcd.io/ssa: IfNotPresent'));
    assert.ok(annotate?.edit, JSON.stringify(actions.map((a) => a.title)));
    const edited = applyEdits(text, Object.values(annotate.edit.changes ?? {})[0]!);
    assert.match(edited, /kustomize\.toolkit\.fluxcd\.io\/ssa: IfNotPresent/);
    await server.close(uri);
  } finally {
    server.setSettings({ kubeconfig: cluster.kubeconfig, context: 'admin' });
  }
});

test('applier auto (the default): a file of the repository an Argo CD Application applies, in a clone of it, is that Application’s request', async (t) => {
  const cluster = testCluster()!;
  const admin = connect('admin', cluster.kubeconfig);
  const live = scene.objects['argo-tracked'];
  const repoURL = `https://git.example.com/editor/${scene.namespace}.git`;
  const app = `editor-${scene.namespace.slice(-6)}`;
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: app, namespace: scene.namespace },
      spec: {
        project: 'default',
        source: { repoURL, path: 'deploy', targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace: scene.namespace },
        syncPolicy: { automated: { selfHeal: true }, syncOptions: ['ServerSideApply=true'] },
      },
    } as KubeObject),
    'the Application',
  );
  // Another writer changes a label Git sets.
  objectOf(
    await patch(admin, 'deploy-script', live, { metadata: { labels: { tier: 'web' } } }, { type: 'merge' }),
    'the script’s label',
  );
  // A clone of the Application's repository, its file in the source path.
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-editor-auto-'));
  t.after(() => fs.rmSync(top, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: top, encoding: 'utf8' });
  git('init', '-q');
  git('remote', 'add', 'origin', `git@git.example.com:editor/${scene.namespace}.git`);
  const file = path.join(top, 'deploy', 'web.yaml');
  fs.mkdirSync(path.dirname(file));
  const text = manifestOf({
    ...live,
    metadata: { ...live.metadata, labels: { ...live.metadata.labels, tier: 'frontend' } },
  });
  fs.writeFileSync(file, text);
  // A session of its own: the sources are read once per session.
  const fresh = await startServerAs({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
  try {
    const uri = pathToFileURL(file).href;
    await fresh.open(uri, text);
    const diagnostics = await fresh.diagnosticsUntil(uri, (d) => d.some((x) => x.code === 'gitops-takes'));
    const takes = diagnostics.filter((d) => d.code === 'gitops-takes');
    assert.deepEqual(
      takes.map((d) => d.message.replace(/ To keep the live value.*$/, '')),
      [
        `Argo CD application ${app} takes .metadata.labels.tier from deploy-script ("web" → "frontend") at its next sync.`,
      ],
    );
    assert.equal(text.split('\n')[takes[0]!.range.start.line]!.trim(), 'tier: frontend');
    assert.match(takes[0]!.message, new RegExp(`add to the Application ${app} spec\\.ignoreDifferences`));
    console.log(JSON.stringify(diagnostics.map((d) => [d.code, d.message])));
    const lenses = await fresh.codeLenses(uri);
    // (The object's tracking id names the scene's Application too: once its policy is read, two
    // Applications apply the object, which is an error of its own: their fight.)
    assert.match(lenses[0]?.command?.title ?? '', / · its GitOps controller takes 1 field at its next sync · /);
  } finally {
    await fresh.shutdown();
  }
});

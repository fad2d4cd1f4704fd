// Several contexts in the editor (`kubeConflictHints.contexts`) against three real API servers at
// once (test/support/fleet.ts), each with its own history: staging edited by hand, prod-eu scaled by
// an autoscaler, prod-us without the Deployment, the same hand edit of a ConfigMap in both
// production clusters. What the user sees over LSP: each finding naming its context, a finding
// shared by two contexts on one line naming both, the hover's table of live values and managers per
// context, fixes that say whose live value they take, the status bar with every context's health,
// and a context that does not answer (refused at once, or silent) holding nobody back.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import type { DocumentStateParams, FleetViewResult, ForcePreviewResult, StatusParams } from '../../server/src/protocol';
import { scratchDir } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { startFaultProxy } from '../support/fault-proxy';
import { fleetKubeconfig, seedFleetHistories } from '../support/fleet';
import { startTestServer } from '../support/lsp-client';

interface Setup {
  kubeconfig: string;
  uris: { web: string; settings: string };
  texts: { web: string; settings: string };
}

let setup: Promise<Setup> | undefined;

function prepared(t: TestContext): Promise<Setup> | undefined {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  setup ??= (async () => {
    const dir = scratchDir('fleet-editor');
    const { kubeconfig, clusters } = await fleetKubeconfig(dir, cluster.kubeconfig);
    const { files } = await seedFleetHistories(clusters);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return {
      kubeconfig,
      uris: {
        web: pathToFileURL(path.join(dir, 'web.yaml')).href,
        settings: pathToFileURL(path.join(dir, 'settings.yaml')).href,
      },
      texts: { web: files['web.yaml'], settings: files['settings.yaml'] },
    };
  })();
  return setup;
}

const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');
/** A diagnostic as the test names it: `line code message-start`. */
const named = (d: Diagnostic) => {
  const end = d.message.indexOf('] ') + 1;
  return `${d.range.start.line + 1} ${d.message.slice(0, end)} ${d.message.slice(end + 1).split(' ')[0]}`;
};

test('each context judged on its own history: every finding names its context, a finding shared by two is one diagnostic naming both, and an unreachable context is said without holding the others back', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const server = await startTestServer({
    settings: { kubeconfig: s.kubeconfig, contexts: ['staging', 'prod-*', 'gone'] },
  });
  t.after(() => server.shutdown());

  await server.open(s.uris.web, s.texts.web);
  const web = await server.diagnosticsUntil(s.uris.web, (ds) => conflicts(ds).length === 2, 60_000);
  assert.deepEqual(conflicts(web).map(named).sort(), [
    '20 [staging] .spec.template.spec.containers[name="app"].image',
    '9 [prod-eu] .spec.replicas',
  ]);
  assert.match(
    conflicts(web).find((d) => d.range.start.line === 8)!.message,
    /^\[prod-eu\] \.spec\.replicas is managed by "kube-controller-manager"/,
  );
  // Nothing of gone: its cluster refused the connection. The document says it was not judged there.
  assert.ok(
    web.every((d) => !d.message.includes('gone')),
    web.map((d) => d.message).join('\n'),
  );
  const state = (await server.waitForNotification(
    'kubeConflictHints/documentState',
    (p) => (p as DocumentStateParams).uri === s.uris.web && (p as DocumentStateParams).state === 'not-judged',
    30_000,
  )) as DocumentStateParams;
  assert.match(state.reason ?? '', /^Not judged in gone: cluster unreachable/);
  assert.doesNotMatch(state.reason ?? '', /staging|prod-eu|prod-us/);

  // The status bar: every context's health, under its name.
  const status = (await server.waitForNotification(
    'kubeConflictHints/status',
    (p) => {
      const c = (p as StatusParams).contexts;
      return (
        c?.find((x) => x.context === 'gone')?.health === 'unreachable' &&
        c.filter((x) => x.health === 'connected').length === 3
      );
    },
    30_000,
  )) as StatusParams;
  assert.deepEqual(
    status.contexts!.map((c) => [c.context, c.health]),
    [
      ['staging', 'connected'],
      ['prod-eu', 'connected'],
      ['prod-us', 'connected'],
      ['gone', 'unreachable'],
    ],
  );
  assert.equal(status.health, 'unreachable', 'summed up by the context in trouble');

  // What differs between the clusters that hold the Deployment: information on the field's line.
  const drift = await server.diagnosticsUntil(
    s.uris.web,
    (ds) => ds.some((d) => d.code === 'context-drift' && d.range.start.line === 8),
    60_000,
  );
  assert.match(
    drift.find((d) => d.code === 'context-drift' && d.range.start.line === 8)!.message,
    /^\.spec\.replicas differs between contexts: staging 3 \(kubectl\); prod-eu 5 \(kube-controller-manager \(scale\)\)$/,
  );

  // The same hand edit in both production clusters: one diagnostic on the line, naming both.
  await server.open(s.uris.settings, s.texts.settings);
  const settings = await server.diagnosticsUntil(s.uris.settings, (ds) => conflicts(ds).length > 0, 60_000);
  assert.deepEqual(conflicts(settings).map(named), ['7 [prod-eu, prod-us] .data.mode']);
  assert.match(conflicts(settings)[0]!.message, /is managed by "kubectl-edit"/);

  // Its fix takes the live value both production clusters hold, and says so.
  const mode = conflicts(settings)[0]!;
  const titles = (await server.codeActions(s.uris.settings, mode.range, [mode])).map((a) => a.title);
  assert.ok(
    titles.includes(
      'Use the live value "safe" of prod-eu, prod-us for .data.mode (share ownership with "kubectl-edit" using v1 in prod-eu, prod-us)',
    ),
    titles.join('\n'),
  );
  // On web.yaml each context's conflict offers its own context's fix.
  const replicas = conflicts(web).find((d) => d.range.start.line === 8)!;
  const replicasTitles = (await server.codeActions(s.uris.web, replicas.range, [replicas])).map((a) => a.title);
  assert.ok(
    replicasTitles.some((x) => x.startsWith('Use the live value 5 of prod-eu for .spec.replicas')),
    replicasTitles.join('\n'),
  );
  // Forcing is previewed in each cluster the conflict is in, each its own.
  assert.deepEqual(
    titles.filter((x) => x.startsWith('Preview forcing')),
    ['Preview forcing in prod-eu…', 'Preview forcing in prod-us…'],
  );
  const force = (await server.codeActions(s.uris.web, replicas.range, [replicas])).find(
    (a) => a.title === 'Preview forcing in prod-eu…',
  );
  assert.ok(force?.command);
  const preview = (await server.request('workspace/executeCommand', force.command)) as ForcePreviewResult;
  // prod-eu's: it takes the replicas from the autoscaler's writes through /scale.
  assert.deepEqual(
    preview.preview.losses.map((l) => [l.manager, l.subresource, l.fields.map((f) => f.path)]),
    [['kube-controller-manager', 'scale', ['.spec.replicas']]],
  );
  assert.match(preview.command, / --context=prod-eu /);
});

test('the hover on a field: one table with each context, its live value and the managers that own it', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const server = await startTestServer({
    settings: { kubeconfig: s.kubeconfig, contexts: ['staging', 'prod-eu', 'prod-us', 'gone'] },
  });
  t.after(() => server.shutdown());
  await server.open(s.uris.web, s.texts.web);
  await server.diagnosticsUntil(s.uris.web, (ds) => conflicts(ds).length === 2, 60_000);
  const hover = (await server.hover(s.uris.web, { line: 8, character: 4 })) as { contents: { value: string } };
  const rows = hover.contents.value.split('\n');
  assert.equal(rows[0], '**`.spec.replicas`** in 4 contexts (manifest: `3`)');
  assert.deepEqual(rows.slice(2), [
    '| context | live value | managers |',
    '|---|---|---|',
    '| staging | `3` | kubectl |',
    '| prod-eu | `5` | kube-controller-manager (scale) |',
    '| prod-us | _no such object_ |  |',
    rows.find((r) => r.startsWith('| gone |'))!,
  ]);
  assert.match(rows.at(-1)!, /^\| gone \| _cluster unreachable/);
  // On the object's name: each context's cell of the fleet table.
  const object = (await server.hover(s.uris.web, { line: 3, character: 9 })) as { contents: { value: string } };
  assert.match(object.contents.value, /\| staging \| conflict with kubectl-edit \|/);
  assert.match(object.contents.value, /\| prod-eu \| conflict with kube-controller-manager \|/);
  assert.match(object.contents.value, /\| prod-us \| missing \|/);
});

test('a silent context (a server that never answers) does not delay the others: their findings come while it is still being waited for', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const server = await startTestServer({ settings: { kubeconfig: s.kubeconfig, contexts: ['silent', 'prod-eu'] } });
  t.after(() => server.shutdown());
  const started = Date.now();
  await server.open(s.uris.web, s.texts.web);
  const ds = await server.diagnosticsUntil(s.uris.web, (d) => conflicts(d).length === 1, 60_000);
  assert.deepEqual(conflicts(ds).map(named), ['9 [prod-eu] .spec.replicas']);
  // The silent cluster is given up only after the request time limit (15 s): the answer came well before.
  assert.ok(Date.now() - started < 12_000, `prod-eu's findings took ${Date.now() - started} ms`);
  const silent = server.notifications
    .filter((n) => n.method === 'kubeConflictHints/status')
    .map((n) => (n.params as StatusParams).contexts?.find((c) => c.context === 'silent')?.health)
    .at(-1);
  assert.notEqual(silent, 'unreachable', 'silent is still being waited for');
});

test('the Fleet view: each open document judged in several contexts, each object with every context’s cell and the line it starts on', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const server = await startTestServer({
    settings: { kubeconfig: s.kubeconfig, contexts: ['staging', 'prod-eu', 'prod-us', 'gone'] },
  });
  t.after(() => server.shutdown());
  await server.open(s.uris.web, s.texts.web);
  await server.open(s.uris.settings, s.texts.settings);
  await server.diagnosticsUntil(s.uris.web, (ds) => conflicts(ds).length === 2, 60_000);
  await server.diagnosticsUntil(s.uris.settings, (ds) => conflicts(ds).length === 1, 60_000);
  await server.waitForNotification(
    'kubeConflictHints/status',
    (p) => (p as StatusParams).contexts?.find((x) => x.context === 'gone')?.health === 'unreachable',
    30_000,
  );
  const view = (await server.request('kubeConflictHints/fleet', {})) as FleetViewResult;
  assert.deepEqual(view.contexts, ['staging', 'prod-eu', 'prod-us', 'gone']);
  const rows = view.documents.flatMap((d) =>
    d.objects.map((o) => [
      path.basename(d.uri),
      o.title.replace(/ [^ ]+\//, ' '),
      o.line,
      o.cells.map((c) => `${c.context}: ${c.cell}`),
    ]),
  );
  assert.deepEqual(rows, [
    [
      'web.yaml',
      'Deployment web',
      0,
      [
        'staging: conflict with kubectl-edit',
        'prod-eu: conflict with kube-controller-manager',
        'prod-us: missing',
        'gone: not judged',
      ],
    ],
    [
      'settings.yaml',
      'ConfigMap settings',
      0,
      [
        'staging: exists',
        'prod-eu: conflict with kubectl-edit',
        'prod-us: conflict with kubectl-edit',
        'gone: not judged',
      ],
    ],
  ]);
});

test('one context selected is judged as that context alone; an entry that selects no context is said on the document', async (t) => {
  const s = await prepared(t);
  if (!s) return;
  const one = await startTestServer({ settings: { kubeconfig: s.kubeconfig, contexts: ['prod-e*'] } });
  t.after(() => one.shutdown());
  await one.open(s.uris.web, s.texts.web);
  const alone = await one.diagnosticsUntil(s.uris.web, (ds) => conflicts(ds).length === 1, 60_000);
  assert.match(conflicts(alone)[0]!.message, /^\.spec\.replicas is managed by "kube-controller-manager"/);
  const status = (await one.waitForNotification(
    'kubeConflictHints/status',
    (p) => (p as StatusParams).health === 'connected',
    30_000,
  )) as StatusParams;
  assert.equal(status.context, 'prod-eu');
  assert.equal(status.contexts, undefined);

  const two = await startTestServer({
    settings: { kubeconfig: s.kubeconfig, contexts: ['staging', 'nope-*', 'prod-eu'] },
  });
  t.after(() => two.shutdown());
  await two.open(s.uris.web, s.texts.web);
  await two.diagnosticsUntil(s.uris.web, (ds) => conflicts(ds).length === 2, 60_000);
  const state = (await two.waitForNotification(
    'kubeConflictHints/documentState',
    (p) => (p as DocumentStateParams).uri === s.uris.web && (p as DocumentStateParams).state === 'not-judged',
    30_000,
  )) as DocumentStateParams;
  assert.equal(state.reason, 'kubeConflictHints.contexts: "nope-*" matches no context of the kubeconfig.');
});

test('a context whose cluster stops answering after it judged the file: its findings and hover row say since when they are old, the others stay live', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster || !(await prepared(t))) return;
  // staging reached through a pass-through that the test closes; prod-eu directly.
  const dir = scratchDir('fleet-away');
  const proxy = await startFaultProxy(cluster.server, cluster.kubeconfig);
  t.after(() => proxy.close());
  const { kubeconfig, clusters } = await fleetKubeconfig(
    dir,
    proxy.kubeconfig(cluster.kubeconfig, path.join(dir, 'staging-through-proxy')),
  );
  const { files } = await seedFleetHistories(clusters);
  const uri = pathToFileURL(path.join(dir, 'web.yaml')).href;
  fs.writeFileSync(path.join(dir, 'web.yaml'), files['web.yaml']);
  const server = await startTestServer({ settings: { kubeconfig, contexts: ['staging', 'prod-eu'] } });
  t.after(() => server.shutdown());
  await server.open(uri, files['web.yaml']);
  await server.diagnosticsUntil(uri, (ds) => conflicts(ds).length === 2, 60_000);

  await proxy.close();
  await server.request('kubeConflictHints/refresh', { uri });
  const old = / \(as of \d\d:\d\d:\d\d — cluster unreachable since \d\d:\d\d:\d\d\)$/;
  const marked = await server.diagnosticsUntil(
    uri,
    (ds) => conflicts(ds).some((d) => d.message.startsWith('[staging]') && old.test(d.message)),
    60_000,
  );
  const prodEu = conflicts(marked).find((d) => d.message.startsWith('[prod-eu]'))!;
  assert.doesNotMatch(prodEu.message, /\(as of/, "prod-eu's facts are live");
  const state = (await server.waitForNotification(
    'kubeConflictHints/documentState',
    (p) => (p as DocumentStateParams).uri === uri && (p as DocumentStateParams).state === 'old',
    30_000,
  )) as DocumentStateParams;
  assert.match(state.reason ?? '', /^Judged on old facts: staging as of \d\d:\d\d:\d\d — cluster unreachable since/);
  const hover = (await server.hover(uri, { line: 8, character: 4 })) as { contents: { value: string } };
  assert.match(hover.contents.value, /^\*\*Not live in staging: as of \d\d:\d\d:\d\d — cluster unreachable since/);
  assert.match(hover.contents.value, /\| prod-eu \| `5` \|/);
});

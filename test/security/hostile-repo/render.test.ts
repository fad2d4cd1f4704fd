// A pull request is hostile input: the repository the product checks (in CI on pull requests, in an
// editor on a cloned repository) is the attacker's. These are the ways a repository could use the
// renders (helm template, kustomize build) to read what it may not, or to run what it may not, each
// tried for real: the real Helm 4 and kustomize, the real API server, the command line as CI runs
// it (text and SARIF) and, for a chart, the editor. A secret outside the repository is a file
// holding a unique marker; it must never be printed.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { readKustomizationFiles } from '../../../server/src/render/kustomize';
import { runTool } from '../../../server/src/render/run-tool';
import { runCli, scratchDir, writeFiles } from '../../cli/cli-process';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { startTestServer } from '../../support/lsp-client';
import { recordCluster } from '../../support/recording-proxy';
import { apply, connect, freshNamespace, objectOf } from '../../support/seed';
import { requireTool } from '../../tools/tools';

const uriOf = (file: string) => pathToFileURL(file).href;

/** A file outside the repository holding a marker nobody could guess, as a runner's secret would be. */
function outsideSecret(): { file: string; marker: string } {
  const marker = `kch-outside-${crypto.randomBytes(8).toString('hex')}`;
  const file = path.join(scratchDir('outside'), 'secret.txt');
  fs.writeFileSync(file, marker);
  return { file, marker };
}

/**
 * The live ConfigMap `probe` with `data.leaked` owned by another manager: any other value the
 * render gives it is a conflict, whose message quotes the rendered value.
 */
async function liveProbe(cluster: TestClusterInfo, prefix: string): Promise<string> {
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, prefix);
  objectOf(
    await apply(conn, 'other-team', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'probe', namespace },
      data: { leaked: 'live' },
    }),
    'the live ConfigMap',
  );
  return namespace;
}

const clusterArgs = (cluster: TestClusterInfo, namespace: string) => [
  '--kubeconfig',
  cluster.kubeconfig,
  '--context',
  'admin',
  '-n',
  namespace,
];

/** Whether a process is running (a zombie waiting for its parent to reap it is not). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The processes among `pids` still running once SIGKILL has had its effect (a kill is not instant). */
async function survivors(pids: readonly number[]): Promise<number[]> {
  for (let i = 0; i < 300 && pids.some(running); i++) await new Promise((r) => setTimeout(r, 100));
  return pids.filter(running);
}

/** A hostile chart: a template that prints a file the chart links to outside itself. */
function chartWithLinkOut(repo: string, outside: string): string {
  const chart = path.join(repo, 'shop');
  writeFiles(chart, {
    'Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
    'values.yaml': '{}\n',
    'templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: {{ .Files.Get "linked.txt" | quote }}\n',
  });
  fs.symlinkSync(outside, path.join(chart, 'linked.txt'));
  return chart;
}

test('item 1: a link out of a chart is refused: the file it names reaches neither the text, the SARIF nor the editor', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const namespace = await liveProbe(cluster, 'hostile-chart');
  const secret = outsideSecret();
  const repo = scratchDir('hostile-chart');
  const chart = chartWithLinkOut(repo, secret.file);

  for (const format of ['text', 'sarif']) {
    const run = await runCli(
      ['check', '--helm', 'shop', '--helm-binary', helm, ...clusterArgs(cluster, namespace), '--format', format],
      { cwd: repo },
    );
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(secret.marker), `${format}: the outside file was printed`);
    // Said, not silently dropped: the chart's render-failed error names the link.
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /linked\.txt is a link out of the chart/, format);
    if (format === 'sarif') {
      const results = (JSON.parse(run.stdout) as { runs: { results: { ruleId: string }[] }[] }).runs[0]!.results;
      assert.deepEqual(
        results.map((r) => r.ruleId),
        ['render-failed'],
      );
    }
  }

  // The editor: the same chart, opened in a trusted workspace with the user's helm.
  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace, helmPath: helm },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  const template = path.join(chart, 'templates', 'configmap.yaml');
  await server.open(uriOf(template), fs.readFileSync(template, 'utf8'));
  // The refusal is shown on the open file of the chart, for as long as the link is there.
  const diagnostics = await server.diagnosticsUntil(
    uriOf(template),
    (ds) => ds.some((d) => d.code === 'render-failed' && /link out of the chart/.test(d.message)),
    60_000,
  );
  assert.match(diagnostics.find((d) => d.code === 'render-failed')!.message, /linked\.txt/);
  assert.doesNotMatch(JSON.stringify([diagnostics, server.notifications]), new RegExp(secret.marker));
});

test('item 1: a chart at the root of a checkout cannot print .git/config (the credential CI checked out with) unless .helmignore leaves .git out', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const namespace = await liveProbe(cluster, 'hostile-git');
  const marker = `kch-git-${crypto.randomBytes(8).toString('hex')}`;
  const repo = scratchDir('hostile-git');
  // What actions/checkout leaves behind: the token in .git/config.
  writeFiles(repo, {
    '.git/config': `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${marker}\n`,
    'Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
    'templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: {{ .Files.Get ".git/config" | quote }}\n',
  });
  for (const format of ['text', 'sarif']) {
    const run = await runCli(
      ['check', '--helm', '.', '--helm-binary', helm, ...clusterArgs(cluster, namespace), '--format', format],
      { cwd: repo },
    );
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(marker), format);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /holds \.git/, format);
  }
  // A chart that leaves .git out, as `helm create` writes .helmignore, renders: the conflict, and an empty value.
  fs.writeFileSync(path.join(repo, '.helmignore'), '.git/\n');
  const run = await runCli(['check', '--helm', '.', '--helm-binary', helm, ...clusterArgs(cluster, namespace)], {
    cwd: repo,
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /field-conflict \.data\.leaked is managed by "other-team": live "live", manifest ""/);
  assert.doesNotMatch(run.stdout + run.stderr, new RegExp(marker));
});

test('item 1: in the editor, a values file the workspace settings name is not read through a link out of the workspace folder', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const namespace = await liveProbe(cluster, 'hostile-values');
  const secret = outsideSecret();
  fs.writeFileSync(secret.file, `leaked: ${secret.marker}\n`);
  const repo = scratchDir('hostile-values');
  writeFiles(repo, {
    'shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
    'shop/values.yaml': 'leaked: chart\n',
    'shop/templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: {{ .Values.leaked | quote }}\n',
  });
  // Beside the chart, inside the workspace folder: a link to a YAML file outside it (a kubeconfig, say).
  fs.symlinkSync(secret.file, path.join(repo, 'extra.yaml'));
  // helmValuesFiles is a setting the workspace's own .vscode/settings.json may write.
  const server = await startTestServer({
    settings: {
      kubeconfig: cluster.kubeconfig,
      context: 'admin',
      namespace,
      helmPath: helm,
      helmValuesFiles: ['../extra.yaml'],
    },
    workspaceFolders: [uriOf(repo)],
  });
  t.after(() => server.shutdown());
  const template = path.join(repo, 'shop', 'templates', 'configmap.yaml');
  await server.open(uriOf(template), fs.readFileSync(template, 'utf8'));
  const found = await server.diagnosticsUntil(
    uriOf(template),
    (ds) => ds.some((d) => d.code === 'field-conflict'),
    60_000,
  );
  // The chart rendered with its own values.yaml alone.
  assert.match(found.find((d) => d.code === 'field-conflict')!.message, /manifest "chart"/);
  assert.doesNotMatch(JSON.stringify([found, server.notifications]), new RegExp(secret.marker));
});

test('item 6: an empty, relative or in-repository PATH entry never runs a kustomize the repository planted', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-path');
  const repo = scratchDir('hostile-path');
  const ran = path.join(scratchDir('planted-ran'), 'ran');
  // The repository's own "kustomize", where an empty entry (the current folder: the overlay's), a
  // relative one and an absolute one into the repository would find it.
  const planted = `#!/bin/sh\necho "$0" >> ${JSON.stringify(ran)}\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\necho 'metadata: {name: planted}'\n`;
  writeFiles(repo, {
    'overlay/kustomization.yaml': 'resources:\n- configmap.yaml\n',
    'overlay/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: rendered\n',
  });
  for (const dir of ['overlay', 'overlay/bin', 'node_modules/.bin']) {
    fs.mkdirSync(path.join(repo, dir), { recursive: true });
    fs.writeFileSync(path.join(repo, dir, 'kustomize'), planted, { mode: 0o755 });
  }
  // The real kustomize comes last, behind every entry that leads into the repository.
  const PATH = [
    '',
    'bin',
    '.',
    path.join(repo, 'node_modules', '.bin'),
    path.dirname(kustomize),
    path.dirname(process.execPath),
    '/usr/bin',
    '/bin',
  ].join(':');
  for (const format of ['text', 'sarif']) {
    const run = await runCli(['check', '-k', 'overlay', ...clusterArgs(cluster, namespace), '--format', format], {
      cwd: repo,
      env: { PATH },
    });
    assert.equal(
      fs.existsSync(ran),
      false,
      `the planted kustomize ran: ${fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8') : ''}`,
    );
    // The real one did: the rendered ConfigMap's conflict with the other team is reported.
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /other-team/, format);
    assert.doesNotMatch(run.stdout, /planted/);
  }
});

test("item 6: a render runs in its own process group, and the whole group ends with it: a wrapper's child never outlives the check", async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-group');
  const repo = scratchDir('hostile-group');
  const pids = path.join(scratchDir('group-pids'), 'pids');
  writeFiles(repo, {
    'overlay/kustomization.yaml': 'resources:\n- configmap.yaml\n',
    'overlay/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: rendered\n',
  });
  // The user's kustomize is a wrapper that starts a long-lived child (holding the output pipe, as a
  // careless one would) and then runs the real tool.
  const wrapper = path.join(repo, 'tools', 'kustomize');
  fs.mkdirSync(path.dirname(wrapper));
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\nsleep 600 &\necho $! >> ${JSON.stringify(pids)}\n${JSON.stringify(kustomize)} "$@"\n`,
    { mode: 0o755 },
  );
  const run = await runCli(
    ['check', '-k', 'overlay', '--kustomize-binary', wrapper, ...clusterArgs(cluster, namespace)],
    { cwd: repo },
  );
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /other-team/);
  const started = fs.readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
  // Positive signal: the plain build and the build that says where objects come from, each with its child.
  assert.equal(started.length, 2);
  assert.deepEqual(await survivors(started), []);
});

test('item 6: a render stopped at its time limit ends its whole group, grandchildren included', async () => {
  const dir = scratchDir('hostile-timeout');
  const pids = path.join(dir, 'pids');
  // A tool that starts a child, which starts its own (a `git fetch` under kustomize), and waits for ever.
  const tool = path.join(dir, 'tool');
  fs.writeFileSync(
    tool,
    `#!/bin/sh\nsh -c 'sleep 600 & echo $! >> ${JSON.stringify(pids)}; wait' &\necho $! >> ${JSON.stringify(pids)}\necho $$ >> ${JSON.stringify(pids)}\nwait\n`,
    { mode: 0o755 },
  );
  const result = await runTool({ command: tool, args: [], cwd: dir, timeoutMs: 2000 });
  assert.equal(!result.ok && result.problem.kind, 'timeout');
  const started = fs.readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
  assert.equal(started.length, 3, 'the tool, its child and its grandchild');
  assert.deepEqual(await survivors(started), []);
});

test('item 6: helm and kustomize run under a hard memory limit', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !helm || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-memory');
  const repo = scratchDir('hostile-memory');
  const limits = scratchDir('limits');
  writeFiles(repo, {
    'overlay/kustomization.yaml': 'resources:\n- configmap.yaml\n',
    'overlay/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: rendered\n',
    'shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
    'shop/templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: rendered\n',
  });
  // Wrappers that write down the limits they were started with (and so the tool they exec) before running the real tool.
  const wrap = (name: string, real: string) => {
    const file = path.join(repo, 'tools', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `#!/bin/sh\ngrep '^Max data size' /proc/self/limits >> ${JSON.stringify(path.join(limits, name))}\nexec ${JSON.stringify(real)} "$@"\n`,
      { mode: 0o755 },
    );
    return file;
  };
  const run = await runCli(
    [
      'check',
      '-k',
      'overlay',
      '--kustomize-binary',
      wrap('kustomize', kustomize),
      '--helm',
      'shop',
      '--helm-binary',
      wrap('helm', helm),
      ...clusterArgs(cluster, namespace),
    ],
    { cwd: repo },
  );
  assert.equal(run.status, 1, run.stderr);
  for (const name of ['kustomize', 'helm']) {
    const lines = fs.readFileSync(path.join(limits, name), 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length > 0, name);
    for (const line of lines) {
      const [, soft, hard] = /^Max data size\s+(\S+)\s+(\S+)/.exec(line) ?? [];
      assert.ok(soft !== 'unlimited' && hard !== 'unlimited', `${name} ran without a memory limit: ${line}`);
      // Generous enough for any chart, bounded all the same.
      assert.ok(Number(hard) >= 1024 ** 3 && Number(hard) <= 8 * 1024 ** 3, line);
    }
  }
});

test("item 7: the product's own kustomization reader opens nothing outside the overlay: no ../ path, absolute path or link out", () => {
  const secret = outsideSecret();
  const repo = scratchDir('hostile-reader');
  const overlay = path.join(repo, 'overlay');
  const up = path.relative(overlay, '/');
  writeFiles(overlay, {
    'kustomization.yaml': `resources:\n- ${up}${secret.file}\n- ${secret.file}\n- linked.yaml\n- configmap.yaml\nconfigMapGenerator:\n- name: gen\n  files:\n  - key=linked.yaml\n`,
    'configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\n',
  });
  fs.symlinkSync(secret.file, path.join(overlay, 'linked.yaml'));
  const read = readKustomizationFiles(overlay);
  // Positive signal: the overlay's own files are read.
  assert.ok(read.has(`${overlay}/configmap.yaml`), [...read.keys()].join('\n'));
  for (const [file, text] of read) {
    assert.ok(file.startsWith(`${overlay}/`), `read ${file}`);
    assert.doesNotMatch(text, new RegExp(secret.marker), `read the outside file through ${file}`);
  }
});

test('item 7: an overlay that reaches out of the checked folder is not built, and nothing from there is printed', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-overlay');
  const secret = outsideSecret();
  // Outside the repository: a folder with a kustomization (kustomize builds any folder named as a
  // resource, wherever it is), and a plain file.
  const elsewhere = path.dirname(secret.file);
  writeFiles(elsewhere, {
    'kustomization.yaml': 'resources:\n- configmap.yaml\n',
    'configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: ${secret.marker}\n`,
  });
  const repo = scratchDir('hostile-overlay');
  writeFiles(repo, {
    'folder-out/kustomization.yaml': `resources:\n- ${path.relative(path.join(repo, 'folder-out'), elsewhere)}\n`,
    'link-out/kustomization.yaml': 'resources:\n- linked.yaml\n',
  });
  fs.symlinkSync(path.join(elsewhere, 'configmap.yaml'), path.join(repo, 'link-out', 'linked.yaml'));
  for (const format of ['text', 'sarif']) {
    const run = await runCli(
      [
        'check',
        '-k',
        'folder-out',
        '-k',
        'link-out',
        '--kustomize-binary',
        kustomize,
        ...clusterArgs(cluster, namespace),
        '--format',
        format,
      ],
      { cwd: repo },
    );
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(secret.marker), format);
    assert.equal(run.status, 1, run.stderr);
    if (format === 'sarif') {
      const results = (JSON.parse(run.stdout) as { runs: { results: { ruleId: string }[] }[] }).runs[0]!.results;
      assert.deepEqual(
        results.map((r) => r.ruleId),
        ['render-failed', 'render-failed'],
      );
    } else {
      assert.match(run.stdout, /folder outside/);
    }
  }
});

test('item 7: an overlay at the root of a checkout cannot generate from .git/config (the credential CI checked out with)', async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-git-overlay');
  const marker = `kch-git-${crypto.randomBytes(8).toString('hex')}`;
  const repo = scratchDir('hostile-git-overlay');
  writeFiles(repo, {
    '.git/config': `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${marker}\n`,
    // kustomize allows it: the file is in or below the kustomization's folder.
    'kustomization.yaml':
      'configMapGenerator:\n- name: probe\n  files:\n  - leaked=.git/config\ngeneratorOptions:\n  disableNameSuffixHash: true\n',
  });
  for (const format of ['text', 'sarif']) {
    const run = await runCli(
      ['check', '-k', '.', '--kustomize-binary', kustomize, ...clusterArgs(cluster, namespace), '--format', format],
      { cwd: repo },
    );
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(marker), format);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /inside a \.git folder/, format);
  }
});

test('held: lookup in a chart does not reach the cluster (helm template has no cluster access)', async (t) => {
  const cluster = requireCluster(t);
  const helm = requireTool(t, 'helm4');
  if (!cluster || !helm) return;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, 'hostile-lookup');
  const marker = `kch-lookup-${crypto.randomBytes(8).toString('hex')}`;
  objectOf(
    await apply(conn, 'other-team', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'looked-up', namespace },
      stringData: { token: marker },
    }),
    'the Secret',
  );
  const { proxy, kubeconfig } = await recordCluster(
    cluster,
    'admin',
    path.join(scratchDir('lookup-kubeconfig'), 'config'),
  );
  t.after(() => proxy.stop());
  const repo = scratchDir('hostile-lookup');
  writeFiles(repo, {
    'shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
    'shop/templates/configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: {{ (lookup "v1" "Secret" "${namespace}" "looked-up").data | toJson | quote }}\n`,
  });
  // helm is given the same kubeconfig as the check, by KUBECONFIG as well as by the check's flag.
  const run = await runCli(
    [
      'check',
      '--helm',
      'shop',
      '--helm-binary',
      helm,
      '--kubeconfig',
      kubeconfig,
      '-n',
      namespace,
      '--format',
      'sarif',
    ],
    { cwd: repo, env: { KUBECONFIG: kubeconfig } },
  );
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  assert.doesNotMatch(run.stdout + run.stderr, new RegExp(marker));
  assert.doesNotMatch(run.stdout + run.stderr, new RegExp(Buffer.from(marker).toString('base64')));
  // Positive signal: the check's own reads went through the recorder (the rendered ConfigMap looked up).
  const urls = proxy.exchanges().map((e) => e.url);
  assert.ok(
    urls.some((u) => u.includes('/configmaps')),
    urls.join('\n'),
  );
  assert.deepEqual(
    urls.filter((u) => u.includes('looked-up')),
    [],
  );
  // The one read of Secrets is the check's own: Helm's release records, in every namespace, as metadata only.
  for (const e of proxy.exchanges().filter((x) => x.url.includes('/secrets'))) {
    assert.match(e.url, /^\/api\/v1\/secrets\?(.*&)?labelSelector=owner%3Dhelm(&|$)/, e.url);
    assert.equal(e.accept, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', e.url);
  }
});

test("held: a remote base is fetched by nobody but the user's kustomize, within the render, and nothing of the fetch outlives it", async (t) => {
  const cluster = requireCluster(t);
  const kustomize = requireTool(t, 'kustomize');
  if (!cluster || !kustomize) return;
  const namespace = await liveProbe(cluster, 'hostile-remote');
  // Where the remote base points: a loopback server that records who asks and answers nothing useful.
  const asked: { url: string; agent: string }[] = [];
  const server = http.createServer((req, res) => {
    asked.push({ url: req.url ?? '', agent: String(req.headers['user-agent'] ?? '') });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const port = (server.address() as AddressInfo).port;
  const repo = scratchDir('hostile-remote');
  writeFiles(repo, {
    'overlay/kustomization.yaml': `resources:\n- http://127.0.0.1:${port}/owner/repo//base?ref=v1\n- configmap.yaml\n`,
    'overlay/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  leaked: rendered\n',
  });
  // The product's own reader of the overlay (the editor's and the command line's) reads its two files and fetches nothing.
  assert.deepEqual([...readKustomizationFiles(path.join(repo, 'overlay')).keys()].map((f) => path.basename(f)).sort(), [
    'configmap.yaml',
    'kustomization.yaml',
  ]);
  assert.equal(asked.length, 0, 'the product itself fetched');
  // The build: the user's kustomize asks (positive signal), and only it.
  const run = await runCli(
    [
      'check',
      '-k',
      'overlay',
      '--kustomize-binary',
      kustomize,
      ...clusterArgs(cluster, namespace),
      '--format',
      'sarif',
    ],
    { cwd: repo, env: { GIT_TERMINAL_PROMPT: '0' } },
  );
  assert.equal(run.status, 1, run.stderr);
  assert.ok(asked.length > 0, 'kustomize did not fetch the remote base');
  for (const a of asked) assert.match(a.agent, /^(git\/|Go-http-client)/, JSON.stringify(a));
  const results = (
    JSON.parse(run.stdout) as {
      runs: { results: { ruleId: string; locations: { physicalLocation: { region: { startLine: number } } }[] }[] }[];
    }
  ).runs[0]!.results;
  // The refusal, on the kustomization and on the entry kustomize could not read.
  assert.deepEqual(
    results.map((r) => [r.ruleId, r.locations[0]!.physicalLocation.region.startLine]),
    [
      ['render-failed', 1],
      ['render-failed', 2],
    ],
  );
  // Nothing of the fetch is left running (git, its remote helper).
  const left = fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return running(Number(p)) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`127.0.0.1:${port}`);
      } catch {
        return false;
      }
    });
  assert.deepEqual(left, []);
});

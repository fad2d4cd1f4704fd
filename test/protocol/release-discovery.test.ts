// Where a chart is installed, found rather than guessed: the user named no release and no namespace
// (the context's namespace is `default`), the chart is installed by the real Helm 4 as release `web`
// in a namespace of its own. The editor finds it there from the cluster's own word (the objects Helm
// sent and its release records, read as metadata only), so the autoscaler's conflict shows with no
// setting touched, and messages and hovers name the namespace. Installed a second time elsewhere,
// the chart's Chart.yaml says it is ambiguous and which release is judged, the editor is asked once
// to choose, and the choice (the folder's helmReleases) is followed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic, Hover } from 'vscode-languageserver-protocol';
import { lineOf, scratchDir } from '../cli/cli-process';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { connect, freshNamespace } from '../support/seed';
import { chartInstalledElsewhere, helmEnv } from '../support/charts';
import { requireTool } from '../tools/tools';
import { notifications, requests, sendRequest, type ReleasesResult } from '../../server/src/protocol';

const uriOf = (file: string) => pathToFileURL(file).href;
const conflicts = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'field-conflict');
const hoverText = (h: Hover | null) =>
  h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';

test(
  "a release in another namespace than the context's: found with no setting, its conflict shown, and every message and hover names the namespace; a second release is asked about, and the choice followed",
  { timeout: 240_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    if (!cluster || !helm) return;
    const { repo, chart, namespace, install } = await chartInstalledElsewhere(cluster, helm, 'release-found');
    // No namespace and no release named: the context's namespace is `default`, the chart's name would be the release.
    const server = await startTestServer({
      settings: { kubeconfig: cluster.kubeconfig, context: 'admin', helmPath: helm },
      workspaceFolders: [uriOf(repo)],
    });
    t.after(() => server.shutdown());
    const wire = { sendRequest: (method: string, ...params: unknown[]) => server.request(method, params[0]) };
    const template = path.join(chart, 'templates', 'deployment.yaml');
    const chartFile = path.join(chart, 'Chart.yaml');
    const templateLine = lineOf(fs.readFileSync(template, 'utf8'), /^\s*replicas:/) - 1;
    for (const f of [template, chartFile]) await server.open(uriOf(f), fs.readFileSync(f, 'utf8'));

    const onTemplate = await server.diagnosticsUntil(uriOf(template), (ds) => conflicts(ds).length > 0, 90_000);
    assert.deepEqual(
      conflicts(onTemplate).map((d) => d.range.start.line),
      [templateLine],
      JSON.stringify(onTemplate),
    );
    assert.match(
      conflicts(onTemplate)[0]!.message,
      new RegExp(`kube-controller-manager.*in release web in namespace ${namespace}`),
    );
    const character = fs.readFileSync(template, 'utf8').split('\n')[templateLine]!.indexOf('replicas') + 2;
    const hover = hoverText(await server.hover(uriOf(template), { line: templateLine, character }));
    assert.match(hover, new RegExp(`release web in namespace ${namespace}`), hover);
    // One release: nothing to say on Chart.yaml.
    assert.deepEqual(
      (await server.diagnostics(uriOf(chartFile))).filter((d) => String(d.code).startsWith('release-')),
      [],
    );
    const one = await sendRequest(wire, requests.releases, { uri: uriOf(chartFile) });
    assert.match(one.problem ?? '', new RegExp(`installed as one release: web in ${namespace}`));

    // Installed again, as `api` elsewhere; a save renders the chart again and finds both.
    const second = await install('api', 7);
    await server.save(uriOf(chartFile));
    const ambiguous = await server.diagnosticsUntil(
      uriOf(chartFile),
      (ds) => ds.some((d) => d.code === 'release-ambiguous'),
      90_000,
    );
    const said = ambiguous.find((d) => d.code === 'release-ambiguous')!;
    assert.equal(said.severity, 2, 'a warning: the other release is not judged');
    assert.match(said.message, /installed as 2 releases/);
    assert.match(said.message, new RegExp(`web in ${namespace}`));
    assert.match(said.message, new RegExp(`api in ${second}`));
    // Asked once, for this chart.
    const asked = (await server.waitForNotification(notifications.chooseRelease.method)) as { uri: string };
    assert.ok([uriOf(template), uriOf(chartFile)].includes(asked.uri), `an open document of the chart: ${asked.uri}`);
    const choices: ReleasesResult = await sendRequest(wire, requests.releases, { uri: uriOf(template) });
    assert.equal(choices.chart, path.basename(chart));
    assert.deepEqual(choices.releases.map((r) => r.value).sort(), [`${namespace}/web`, `${second}/api`].sort());
    assert.equal(choices.releases.filter((r) => r.judged).length, 1);

    // The user chooses `api`: its conflict (7 replicas) is judged, and Chart.yaml says no more.
    server.setSettings({
      kubeconfig: cluster.kubeconfig,
      context: 'admin',
      helmPath: helm,
      helmReleases: { [path.basename(chart)]: `${second}/api` },
    });
    const chosen = await server.diagnosticsUntil(
      uriOf(template),
      (ds) => conflicts(ds).some((d) => d.message.includes(`release api in namespace ${second}`)),
      90_000,
    );
    assert.match(conflicts(chosen)[0]!.message, /7/);
    assert.deepEqual(
      (
        await server.diagnosticsUntil(uriOf(chartFile), (ds) => !ds.some((d) => d.code === 'release-ambiguous'), 30_000)
      ).filter((d) => String(d.code).startsWith('release-')),
      [],
    );
  },
);

test(
  'a chart the cluster does not hold: judged as new under the guessed name and namespace, and Chart.yaml says so as a hint',
  { timeout: 180_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    if (!cluster || !helm) return;
    const repo = scratchDir('release-none');
    const name = `fresh${crypto.randomBytes(3).toString('hex')}`;
    const created = spawnSync(helm, ['create', name], {
      cwd: repo,
      encoding: 'utf8',
      env: helmEnv(path.join(repo, '.home'), cluster.kubeconfig),
    });
    assert.equal(created.status, 0, created.stderr);
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'release-none');
    const server = await startTestServer({
      settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace, helmPath: helm },
      workspaceFolders: [uriOf(repo)],
    });
    t.after(() => server.shutdown());
    const chartFile = path.join(repo, name, 'Chart.yaml');
    await server.open(uriOf(chartFile), fs.readFileSync(chartFile, 'utf8'));
    const ds = await server.diagnosticsUntil(
      uriOf(chartFile),
      (d) => d.some((x) => x.code === 'release-guessed'),
      90_000,
    );
    const guessed = ds.find((d) => d.code === 'release-guessed')!;
    assert.equal(guessed.severity, 4, 'a hint: news, not a problem');
    assert.match(
      guessed.message,
      new RegExp(
        `^Judged as a new release ${name} in namespace ${namespace}: no release of chart ${name} found in the cluster\\.$`,
      ),
    );
  },
);

// The editor and the command line judge charts and overlays alike, as editor-and-cli-agree.test.ts
// holds them to for plain manifests: every scenario of the rendered differential corpus
// (test/differential/rendered/*.yaml, its sources written and its history replayed on the real local
// kube-apiserver by the scenario's renderer family) is checked with `check --format json` and opened
// in the real language server, given the same target sent the same way (the overlay checked chosen
// alone, the release and namespace named, the same values files, tool and field manager), and both
// must say the same on every source file: each finding's code, line, field path and judged
// severity. One test per scenario, read from the corpus: a scenario written there is covered here.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic, Position } from 'vscode-languageserver-protocol';
import { findingCatalogue } from '../../server/src/core/findings/catalogue';
import { runCli } from '../cli/cli-process';
import { loadRenderedScenarios } from '../differential/rendered-scenario';
import { renderers } from '../differential/renderers';
import { requireCluster } from '../support/env';
import { startTestServer, type TestServer } from '../support/lsp-client';

/** What both tell the user at one place of one file. */
interface Said {
  code: string;
  severity: string;
  line: number;
  path: string;
}

interface JsonReport {
  findings: { file: string; code: string; severity: string; path?: string; range: { start: { line: number } } }[];
  objects: { file: string; object?: unknown; rendered?: unknown }[];
}

/**
 * What only the editor says, and why it is not a disagreement: the other overlays of a scenario's
 * tree are left out by the editor's choice of overlays (`kustomizeOverlays`, the `-k` of the command
 * line), which it says on their files.
 */
const editorOnly = new Set(['overlay-not-chosen']);

const severities = ['', 'error', 'warning', 'information', 'hint'];
const sorted = (list: Said[]) =>
  [...list].sort(
    (a, b) =>
      a.line - b.line ||
      a.code.localeCompare(b.code) ||
      a.path.localeCompare(b.path) ||
      a.severity.localeCompare(b.severity),
  );

/** The judged severity is the finding's, which the diagnostic carries; news (quiet codes) is shown as a hint, nothing else is. */
function fromDiagnostics(ds: Diagnostic[]): Said[] {
  return sorted(
    ds
      .filter((d) => !editorOnly.has(String(d.code)))
      .map((d) => {
        const finding = (d.data as { finding?: { severity?: string; path?: string } } | undefined)?.finding;
        const judged = finding?.severity ?? severities[d.severity ?? 1]!;
        const quiet = (findingCatalogue as Record<string, { quiet?: true }>)[String(d.code)]?.quiet === true;
        assert.equal(
          severities[d.severity ?? 1],
          quiet ? 'hint' : judged,
          `${d.code}: shown as ${quiet ? 'a hint' : 'judged'}`,
        );
        return { code: String(d.code), severity: judged, line: d.range.start.line, path: finding?.path ?? '' };
      }),
  );
}

const languageOf = (file: string) =>
  /\.(ya?ml|tpl)$/.test(file) ? 'yaml' : /\.json$/.test(file) ? 'json' : 'plaintext';

const scenarios = loadRenderedScenarios(renderers).filter((s) => !s.excluded);

describe(
  'the editor and the command line judge charts and overlays alike on the rendered corpus',
  { concurrency: 2 },
  () => {
    for (const [n, scenario] of scenarios.entries()) {
      test(`${scenario.file}: ${scenario.name}`, async (t) => {
        const cluster = requireCluster(t);
        const family = renderers[scenario.renderer]!;
        const tool = cluster && family.tool(t, scenario);
        if (!cluster || !tool) return;
        const sources = await family.prepare(scenario, tool, { kubeconfig: cluster.kubeconfig, prefix: `same-r${n}` });
        const inTree = (file: string) => path.resolve(sources.folder, file);

        const run = await runCli(
          ['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '--format', 'json', ...sources.cliArgs],
          { cwd: sources.folder },
        );
        assert.ok(run.status === 0 || run.status === 1, `check exited ${run.status}: ${run.stderr}`);
        const report = JSON.parse(run.stdout) as JsonReport;
        const expected = new Map<string, Said[]>(sources.files.map((f) => [f, []]));
        for (const f of report.findings) {
          const list = expected.get(inTree(f.file));
          assert.ok(
            list,
            `check reports ${f.code} on ${f.file}, which is no source file of the scenario (${sources.files.join(', ')})`,
          );
          list.push({ code: f.code, severity: f.severity, line: f.range.start.line, path: f.path ?? '' });
        }
        // The comparison is worth something only where the command line judged the rendered objects.
        const origins = [...new Set(report.objects.filter((o) => o.object && o.rendered).map((o) => inTree(o.file)))];
        assert.ok(origins.length > 0, `check judged no rendered object: ${run.stdout.slice(0, 2000)}`);
        if (scenario.server !== 'accepted')
          assert.ok(report.findings.length > 0, 'the server answers something, and check says nothing');

        const server = await startTestServer({
          settings: { kubeconfig: cluster.kubeconfig, context: 'admin', ...sources.settings },
          workspaceFolders: [pathToFileURL(sources.folder).href],
        });
        t.after(() => server.shutdown());
        for (const file of sources.files)
          await server.open(pathToFileURL(file).href, fs.readFileSync(file, 'utf8'), languageOf(file));
        // Before a render has ended the editor says nothing on a rendered source: wait until one of
        // its objects is shown on its origin file (a hover on its `kind:` line) before nothing counts.
        await renderedIn(server, origins);
        for (const file of sources.files) {
          const uri = pathToFileURL(file).href;
          const want = sorted(expected.get(file)!);
          // The editor reads the cluster in the background: wait until it says what the command line
          // said (the assertion shows the difference when it never does).
          const seen = await server
            .diagnosticsUntil(uri, (ds) => JSON.stringify(fromDiagnostics(ds)) === JSON.stringify(want), 120_000)
            .catch(() => server.diagnostics(uri));
          assert.deepEqual(
            fromDiagnostics(seen),
            want,
            `${path.relative(sources.folder, file)}: the editor's findings vs check's`,
          );
        }
      });
    }
  },
);

/**
 * Resolves once the editor shows a rendered object on one of the files `check` places objects on:
 * the hover on a top-level `kind:` line there names the rendered object. Asks again on each of the
 * server's refreshes (a render that ends asks the editor to pull again).
 */
async function renderedIn(server: TestServer, origins: readonly string[]): Promise<void> {
  const places: { uri: string; position: Position }[] = [];
  for (const file of origins) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    for (const [line, text] of lines.entries())
      if (/^kind:\s*\S/.test(text)) places.push({ uri: pathToFileURL(file).href, position: { line, character: 1 } });
  }
  assert.ok(places.length > 0, `no top-level kind: line in ${origins.join(', ')}`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const refreshed = server.waitForRefresh(Math.max(1, deadline - Date.now())).catch(() => undefined);
    for (const { uri, position } of places) if (await server.hover(uri, position)) return;
    if (Date.now() >= deadline) throw new Error(`the editor never showed a rendered object on ${origins.join(', ')}`);
    await refreshed;
  }
}

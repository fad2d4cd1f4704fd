// The editor and the command line judge alike: the differential corpus (histories written on the
// real local kube-apiserver, the manifests users hold) is opened in the real language server and
// checked with `check --format json`, and both must say the same — every finding (code, severity,
// line, message) and, after the editor's "Confirm with a dry-run apply" and `check --verify`, the
// same dry-run verdict per object with the same differences on the same lines.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { findingCatalogue } from '../../server/src/core/findings/catalogue';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { testCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { apply, connect, freshNamespace, objectOf, type KubeObject } from '../support/seed';
import { installWidgetCrd, waitForOpenApi } from '../support/seed-crd';
import { replayHistory } from '../differential/replay';
import { crdDir, historyIn, loadScenarios, withNamespace, type Scenario } from '../differential/scenario';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';

/** What both tell the user about one place of one file. */
interface Said {
  code: string;
  severity: string;
  line: number;
  message: string;
}

/** What the editor answers "Confirm with a dry-run apply" in the clientSide mode. */
const clientSideRefusal = 'A dry run confirms the serverSide and create modes; a dry-run update is not offered.';

const severities = ['', 'error', 'warning', 'information', 'hint'];
const sorted = (list: Said[]) =>
  [...list].sort((a, b) => a.line - b.line || a.code.localeCompare(b.code) || a.message.localeCompare(b.message));
/**
 * The severity judged is the finding's, which the diagnostic carries; the editor shows news (the
 * catalogue's quiet codes) as a hint, and nothing else.
 */
const fromDiagnostics = (ds: Diagnostic[]): Said[] =>
  sorted(
    ds.map((d) => {
      const judged =
        (d.data as { finding?: { severity?: string } } | undefined)?.finding?.severity ?? severities[d.severity ?? 1]!;
      const quiet = (findingCatalogue as Record<string, { quiet?: true }>)[String(d.code)]?.quiet === true;
      assert.equal(
        severities[d.severity ?? 1],
        quiet ? 'hint' : judged,
        `${d.code}: shown as ${quiet ? 'a hint' : 'judged'}`,
      );
      return { code: String(d.code), severity: judged, line: d.range.start.line, message: d.message };
    }),
  );

interface JsonReport {
  findings: { file: string; code: string; severity: string; message: string; range: { start: { line: number } } }[];
  objects: {
    file: string;
    verification?: { agrees: boolean; differences: { message: string; range: { start: { line: number } } }[] };
  }[];
}

// The whole corpus. A scenario that changes a CRD's schema is judged on the schema it ends with:
// every history is replayed (a CRD step returns once the server publishes the new OpenAPI) before
// the command line runs and the language server starts, so both connect after the change.
const corpus = loadScenarios().filter((s) => !s.excluded);
const groups = new Map<string, Scenario[]>();
for (const s of corpus) {
  const key = `${s.mode ?? 'serverSide'}\u0000${s.fieldManager ?? 'kubectl'}`;
  groups.set(key, [...(groups.get(key) ?? []), s]);
}

describe(
  'the editor and the command line judge alike on the differential corpus',
  { skip: !testCluster() && process.env.CI !== 'true' ? 'no local kube-apiserver' : false },
  () => {
    const dir = scratchDir('same-judgement');
    /** Per group of scenarios sent the same way: the files, as written on disk. */
    const files = new Map<string, { scenario: Scenario; file: string; text: string }[]>();

    before(async () => {
      const cluster = testCluster();
      if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
      const admin = connect('admin', cluster.kubeconfig);
      await installWidgetCrd(admin);
      for (const file of fs.readdirSync(crdDir).filter((f) => f.endsWith('.yaml'))) {
        objectOf(
          await apply(
            admin,
            'kch-test-setup',
            parseYaml(fs.readFileSync(path.join(crdDir, file), 'utf8')) as KubeObject,
            { force: true },
          ),
          `install ${file}`,
        );
      }
      await waitForOpenApi(admin, ['apis/kch.example.com/v1', ...crdVersions()]);
      let n = 0;
      for (const [key, scenarios] of groups) {
        const list: { scenario: Scenario; file: string; text: string }[] = [];
        const sub = `g${files.size}`;
        for (const scenario of scenarios) {
          // As the differential suite places it: a namespace that stays absent, a manifest that places its objects itself (the last is judged).
          const namespace =
            scenario.namespace === 'absent'
              ? `same${n++}-${Math.random().toString(36).slice(2, 8)}`
              : await freshNamespace(admin, `same${n++}`);
          const text = withNamespace(scenario.manifest, namespace);
          const resource = parseManifestText(text).resources.at(-1)!;
          await replayHistory(
            admin,
            historyIn(scenario.history, namespace),
            {
              apiVersion: resource.apiVersion,
              kind: resource.kind,
              metadata: { name: resource.name ?? '', namespace },
            },
            namespace,
          );
          const name = `${sub}/${scenario.name.replace(/[^a-z0-9]+/gi, '-')}.${/^\s*\{/.test(text) ? 'json' : 'yaml'}`;
          list.push({ scenario, file: path.join(dir, name), text });
        }
        writeFiles(dir, Object.fromEntries(list.map((f) => [path.relative(dir, f.file), f.text])));
        files.set(key, list);
      }
    });

    for (const [key, scenarios] of groups) {
      const [mode, fieldManager] = key.split('\u0000') as [string, string];
      test(`${mode} as "${fieldManager}": ${scenarios.length} scenarios, the same findings and the same dry-run verdicts`, async () => {
        const cluster = testCluster()!;
        const list = files.get(key)!;
        const folder = path.dirname(list[0]!.file);
        // A dry-run update is not offered for plain manifests (the command line refuses --verify with
        // --mode clientSide; the editor says so instead of verifying).
        const verifies = mode !== 'clientSide';
        const run = await runCli([
          'check',
          '--kubeconfig',
          cluster.kubeconfig,
          '--context',
          'admin',
          '--format',
          'json',
          ...(verifies ? ['--verify'] : []),
          '--mode',
          mode,
          '--field-manager',
          fieldManager,
          folder,
        ]);
        assert.ok(run.status === 0 || run.status === 1, `check exited ${run.status}: ${run.stderr}`);
        const report = JSON.parse(run.stdout) as JsonReport;
        // The comparison below is only worth something if the dry runs happened.
        if (verifies)
          assert.ok(
            report.objects.some((o) => o.verification),
            'the command line verified no object',
          );
        const here = (file: string) => (o: { file: string }) =>
          path.resolve(folder, o.file) === file || path.resolve(o.file) === file;

        const server = await startTestServer({
          settings: { kubeconfig: cluster.kubeconfig, context: 'admin', applyMode: mode as 'serverSide', fieldManager },
        });
        try {
          await Promise.all(
            list.map(async ({ scenario, file, text }) => {
              const uri = pathToFileURL(file).href;
              const objects = report.objects.filter(here(file));
              assert.ok(objects.length > 0, `${scenario.name}: the command line reported nothing on ${file}`);
              // A file a message names (where a CRD or a Namespace among the files is) is shown as
              // each front end shows files: the command line by its path, the editor by the document's name.
              const expected = sorted(
                report.findings.filter(here(file)).map((f) => ({
                  code: f.code,
                  severity: f.severity,
                  line: f.range.start.line,
                  message: f.message.replaceAll(file, path.basename(file)),
                })),
              );
              await server.open(uri, text, file.endsWith('.json') ? 'json' : 'yaml');
              // The editor reads the cluster in the background: wait until it says what the command line
              // said (the assertion below shows the difference when it never does).
              const seen = await server
                .diagnosticsUntil(uri, (ds) => JSON.stringify(fromDiagnostics(ds)) === JSON.stringify(expected), 30_000)
                .catch(() => server.diagnostics(uri));
              assert.deepEqual(fromDiagnostics(seen), expected, `${scenario.name}: the editor's findings`);

              const verified = (await server.request('kubeConflictHints/verify', { uri })) as {
                agreed: number;
                differences: string[];
                failed: string[];
              };
              const verdicts = objects.filter((o) => o.verification);
              assert.deepEqual(
                { agreed: verified.agreed, differing: verified.differences.length, failed: verified.failed },
                {
                  agreed: verdicts.filter((o) => o.verification!.agrees).length,
                  differing: verdicts.filter((o) => !o.verification!.agrees).length,
                  failed: verifies ? [] : [clientSideRefusal],
                },
                `${scenario.name}: the verdicts (editor: ${JSON.stringify(verified)}; command line: ${JSON.stringify(verdicts.map((o) => o.verification))})`,
              );
              const differences = (await server.diagnostics(uri))
                .filter((d) => d.code === 'dry-run-differs')
                .map((d) => ({ line: d.range.start.line, message: d.message }));
              const cliDifferences = verdicts.flatMap((o) =>
                o.verification!.differences.map((d) => ({ line: d.range.start.line, message: d.message })),
              );
              const order = (l: { line: number; message: string }[]) =>
                [...l].sort((a, b) => a.line - b.line || a.message.localeCompare(b.message));
              assert.deepEqual(
                order(differences),
                order(cliDifferences),
                `${scenario.name}: the differences from the server's answer`,
              );
            }),
          );
        } finally {
          await server.shutdown();
        }
      });
    }
  },
);

function crdVersions(): string[] {
  return fs
    .readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) => {
      const crd = parseYaml(fs.readFileSync(path.join(crdDir, file), 'utf8')) as {
        spec: { group: string; versions: { name: string; served: boolean }[] };
      };
      // A version that is not served publishes no OpenAPI.
      return crd.spec.versions.filter((v) => v.served).map((v) => `apis/${crd.spec.group}/${v.name}`);
    });
}

// The check's CI formats against the real kube-apiserver: `--format github` must be workflow
// commands the Actions runner reads back to exactly the findings of `--format json` (same file,
// lines, columns, message — through the runner's escaping), and `--format gitlab` must be a Code
// Quality report GitLab accepts (test/ci/fixtures/gitlab-code-quality.schema.json).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import Ajv from 'ajv';
import { escapeData, escapeProperty } from '../../server/src/cli/format-github';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { connect, freshNamespace } from '../support/seed';
import { editedAndAutoscaled } from '../support/seed-scenarios';

interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  message: string;
}

/**
 * Reads a line as the Actions runner does (ActionCommand.TryParseV2): `::name k=v,k=v::data`, the
 * properties ending at the first `::`, each split at its first `=`, values and data unescaped.
 */
function parseWorkflowCommand(line: string): WorkflowCommand | undefined {
  if (!line.startsWith('::')) return undefined;
  const end = line.indexOf('::', 2);
  if (end < 0) return undefined;
  const info = line.slice(2, end);
  const space = info.indexOf(' ');
  const command = space < 0 ? info : info.slice(0, space);
  const properties: Record<string, string> = {};
  if (space >= 0) {
    for (const pair of info.slice(space + 1).split(',')) {
      const eq = pair.indexOf('=');
      assert.ok(eq > 0, `a property without a value in ${JSON.stringify(line)}`);
      properties[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
    }
  }
  return { command, properties, message: unescapeData(line.slice(end + 2)) };
}

const unescapeData = (s: string) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
const unescapeProperty = (s: string) =>
  s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');

const awkward = [
  'plain',
  '50% done',
  'line one\nline two',
  'crlf\r\nend',
  'a:b,c',
  '%0A literally',
  'k8s/web,v1:final%.yaml',
  '::error::injected',
];

for (const value of awkward) {
  test(`workflow-command escaping round-trips ${JSON.stringify(value)} as message and as property`, () => {
    const line = `::warning file=${escapeProperty(value)},line=1::${escapeData(value)}`;
    assert.ok(!line.slice(2).includes('\n') && !line.includes('\r'), 'one line');
    const parsed = parseWorkflowCommand(line);
    assert.equal(parsed?.command, 'warning');
    assert.equal(parsed?.properties.file, value);
    assert.equal(parsed?.properties.line, '1');
    assert.equal(parsed?.message, value);
  });
}

interface JsonFinding {
  file: string;
  code: string;
  severity: 'error' | 'warning' | 'information';
  message: string;
  path?: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

let setup:
  | Promise<{
      cluster: TestClusterInfo;
      dir: string;
      file: string;
      json: { findings: JsonFinding[]; objects: { file: string; title: string }[] };
    }>
  | undefined;

function prepared(t: TestContext) {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  setup ??= (async () => {
    const conn = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(conn, 'ci-formats');
    const { manifest } = await editedAndAutoscaled(conn, namespace, 'web');
    const dir = scratchDir('ci-formats');
    // A file name the workflow-command properties must escape (`,` `:` `%`).
    const file = 'k8s/web,v1:final%.yaml';
    writeFiles(dir, { [file]: `${JSON.stringify(manifest, null, 2)}\n` });
    const run = await runCli(['check', '--format', 'json', '--kubeconfig', cluster.kubeconfig, 'k8s'], { cwd: dir });
    assert.equal(run.status, 1, run.stderr);
    return { cluster, dir, file, json: JSON.parse(run.stdout) };
  })();
  return setup;
}

test(
  '--format github: one workflow command per finding, read back by the runner as exactly the JSON findings',
  { timeout: 120_000 },
  async (t) => {
    const ready = await prepared(t);
    if (!ready) return;
    const { cluster, dir, file, json } = ready;
    const run = await runCli(['check', '--format', 'github', '--kubeconfig', cluster.kubeconfig, 'k8s'], { cwd: dir });
    assert.equal(run.status, 1, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    const commands = lines.map(parseWorkflowCommand);
    // Every line but the closing summary is a command; the summary is plain text in the log.
    assert.ok(commands.slice(0, -1).every(Boolean), run.stdout);
    assert.equal(commands.at(-1), undefined);
    assert.match(lines.at(-1)!, /^kube-conflict-hints: 2 error\(s\), 0 warning\(s\)/);

    assert.ok(json.findings.filter((f) => f.code === 'field-conflict').length === 2, 'replicas and image conflict');
    const title = json.objects.find((o) => o.file === file)!.title;
    const expected = json.findings.map((f) => ({
      command: { error: 'error', warning: 'warning', information: 'notice' }[f.severity],
      properties: {
        file,
        line: String(f.range.start.line + 1),
        col: String(f.range.start.character + 1),
        endLine: String(f.range.end.line + 1),
        endColumn: String(f.range.end.character + 1),
      },
      message: `${title}: ${f.message}`,
    }));
    const got = commands.slice(0, -1).map((c) => {
      const { title: shownTitle, ...properties } = c!.properties;
      assert.match(shownTitle ?? '', /\((field-conflict|exists|would-delete|controlled-by)\)$/);
      return { command: c!.command, properties, message: c!.message };
    });
    assert.deepEqual(got, expected);
    assert.ok(
      got.some(
        (c) => c.command === 'error' && /\.spec\.replicas is managed by "kube-controller-manager"/.test(c.message),
      ),
    );
  },
);

test(
  '--format gitlab: a Code Quality report GitLab accepts, one issue per finding, fingerprints unique',
  { timeout: 120_000 },
  async (t) => {
    const ready = await prepared(t);
    if (!ready) return;
    const { cluster, dir, file, json } = ready;
    const run = await runCli(['check', '--format', 'gitlab', '--kubeconfig', cluster.kubeconfig, 'k8s'], { cwd: dir });
    assert.equal(run.status, 1, run.stderr);
    const report = JSON.parse(run.stdout) as {
      check_name: string;
      fingerprint: string;
      severity: string;
      location: { path: string; positions: { begin: { line: number; column: number } } };
    }[];
    const schema = JSON.parse(
      fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'gitlab-code-quality.schema.json'), 'utf8'),
    );
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.ok(validate(report), JSON.stringify(validate.errors, null, 2));
    assert.equal(new Set(report.map((i) => i.fingerprint)).size, report.length);
    assert.deepEqual(
      report.map((i) => [
        i.check_name,
        i.severity,
        i.location.path,
        i.location.positions.begin.line,
        i.location.positions.begin.column,
      ]),
      json.findings.map((f) => [
        `kube-conflict-hints/${f.code}`,
        { error: 'critical', warning: 'major', information: 'info' }[f.severity],
        file,
        f.range.start.line + 1,
        f.range.start.character + 1,
      ]),
    );
  },
);

// Every form of input `kubectl apply -f` accepts, on the standard input (`check -`) and in a file:
// a YAML stream, a JSON object, a JSON List, JSON objects one after another (with or without
// whitespace between them, as `jq '.items[]'` and `jq -c` print them), and the mixes kubectl
// accepts. For each, the real kubectl on the same bytes (`kubectl create --dry-run=client -o name -f -`)
// says which objects there are; check must read exactly those. Where kubectl stops (a `---` after a
// JSON object, a comma between objects), check reads the objects before and reports an error where
// kubectl stopped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { requireCluster, type TestClusterInfo } from '../support/env';
import { runCli, scratchDir } from './cli-process';

const cmObject = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
const cmJson = (name: string) => JSON.stringify(cmObject(name));
const cmPretty = (name: string) => JSON.stringify(cmObject(name), null, 2);
const cmYaml = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`;
const deploymentYaml = (name: string) =>
  `# a comment before the object\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  selector: {matchLabels: {app: ${name}}}\n  template:\n    metadata: {labels: {app: ${name}}}\n    spec: {containers: [{name: app, image: 'nginx:1.25'}]}\n`;
const list = (...names: string[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: names.map(cmObject) });

interface Case {
  name: string;
  text: string;
  /** kubectl stops with an error: check must say so (exit 1, a yaml-syntax error on the input). */
  kubectlFails?: boolean;
  /** The file's name, where it matters; default input.json. */
  fileName?: string;
}

const cases: Case[] = [
  {
    name: 'a YAML stream',
    text: `---\n${cmYaml('yaml-a')}---\n# only a comment\n---\n${deploymentYaml('yaml-web')}---\n${cmYaml('yaml-b')}`,
  },
  { name: 'one JSON object', text: `${cmPretty('json-one')}\n` },
  { name: 'a JSON List', text: list('list-a', 'list-b') },
  { name: 'JSON objects with nothing between them', text: `${cmJson('cat-a')}${cmJson('cat-b')}${cmJson('cat-c')}` },
  { name: 'JSON objects one a line (jq -c)', text: `${cmJson('line-a')}\n${cmJson('line-b')}\n` },
  { name: "pretty JSON objects one after another (jq '.items[]')", text: `${cmPretty('jq-a')}\n${cmPretty('jq-b')}\n` },
  { name: 'a JSON List, then JSON objects', text: `${list('mix-list-a', 'mix-list-b')}\n${cmJson('mix-after-list')}` },
  { name: 'a byte order mark before JSON objects', text: `\uFEFF${cmJson('bom-a')}${cmJson('bom-b')}` },
  { name: 'JSON objects after leading blank lines', text: `\n\n   ${cmJson('blank-a')}\n${cmJson('blank-b')}` },
  {
    name: 'YAML, then a JSON document, then a JSON List',
    text: `${cmYaml('yj-a')}---\n${cmJson('yj-b')}\n---\n${list('yj-c', 'yj-d')}\n`,
  },
  { name: 'a YAML List', text: `apiVersion: v1\nkind: List\nitems:\n- ${cmJson('yl-a')}\n- ${cmJson('yl-b')}\n` },
  {
    name: 'a JSON object, then --- and YAML',
    text: `${cmJson('stop-a')}\n---\n${cmYaml('stop-b')}`,
    kubectlFails: true,
  },
  { name: 'JSON objects separated by commas', text: `${cmJson('comma-a')},${cmJson('comma-b')}`, kubectlFails: true },
  {
    name: 'JSON objects, then garbage',
    text: `${cmJson('junk-a')}\n${cmJson('junk-b')} junk\n${cmJson('junk-c')}`,
    kubectlFails: true,
  },
  {
    name: 'JSON objects, the last cut short',
    text: `${cmJson('cut-a')}\n{"apiVersion": "v1", "kind": "Conf`,
    kubectlFails: true,
  },
  { name: 'a JSON object, then a JSON list', text: `${cmJson('array-a')}\n[${cmJson('array-b')}]`, kubectlFails: true },
  // Flow-style YAML is YAML, but a text that starts with `{` is read as JSON: kubectl reads nothing
  // from it. A YAML file it is in must not be passed over as "not Kubernetes".
  {
    name: 'flow-style YAML objects starting with {, separated by ---',
    text: '{apiVersion: v1, kind: ConfigMap, metadata: {name: flow-a}}\n---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: flow-b}}\n',
    kubectlFails: true,
    fileName: 'input.yaml',
  },
  {
    name: 'YAML, then a flow-style object',
    text: `${cmYaml('flow-c')}---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: flow-d}}\n`,
    fileName: 'input.yaml',
  },
];

interface Read {
  status: number | null;
  /** As `kubectl -o name` prints them: configmap/a, deployment.apps/web. */
  names: string[];
  /** Offset (in the text) of where reading stopped with an error, when the reader says. */
  errorOffset?: number;
  output: string;
}

function kubectlReads(cluster: TestClusterInfo, text: string, cwd: string): Read {
  const r = spawnSync(
    'kubectl',
    ['--kubeconfig', cluster.kubeconfig, '--context', 'admin', 'create', '--dry-run=client', '-o', 'name', '-f', '-'],
    {
      cwd,
      input: text,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: cwd },
    },
  );
  // Go's offset counts the bytes read, the offending one included.
  const offset = /json: offset (\d+)/.exec(r.stderr);
  return {
    status: r.status,
    names: r.stdout.split('\n').filter(Boolean),
    ...(offset ? { errorOffset: Number(offset[1]) - 1 } : {}),
    output: r.stderr,
  };
}

interface JsonReport {
  findings: {
    file: string;
    code: string;
    severity: string;
    message: string;
    range: { start: { line: number; character: number } };
  }[];
  objects: { file: string; object?: { apiVersion: string; kind: string; name: string } }[];
}

async function checkReads(
  cluster: TestClusterInfo,
  text: string,
  target: 'stdin' | string,
  cwd: string,
): Promise<Read & { report?: JsonReport }> {
  const args = [
    'check',
    '--kubeconfig',
    cluster.kubeconfig,
    '--context',
    'admin',
    '--format',
    'json',
    target === 'stdin' ? '-' : target,
  ];
  const run = await runCli(args, { cwd, ...(target === 'stdin' ? { stdin: text } : {}) });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0 && run.status !== 1) return { status: run.status, names: [], output };
  const report = JSON.parse(run.stdout) as JsonReport;
  const names = report.objects.flatMap((o) => {
    if (!o.object) return [];
    const group = o.object.apiVersion.includes('/') ? `.${o.object.apiVersion.split('/')[0]}` : '';
    return [`${o.object.kind.toLowerCase()}${group}/${o.object.name}`];
  });
  const syntax = report.findings.find((f) => f.code === 'yaml-syntax');
  const errorOffset = syntax ? offsetOf(text, syntax.range.start.line, syntax.range.start.character) : undefined;
  return { status: run.status, names, ...(errorOffset !== undefined ? { errorOffset } : {}), output, report };
}

function offsetOf(text: string, line: number, character: number): number {
  let offset = 0;
  for (let l = 0; l < line; l++) offset = text.indexOf('\n', offset) + 1;
  return offset + character;
}

// One scratch folder for the file: each case writes its own input there.
const scratch = scratchDir('forms');

for (const [i, c] of cases.entries()) {
  test(`check - reads what kubectl -f - reads: ${c.name}`, async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const dir = path.join(scratch, String(i));
    fs.mkdirSync(dir);
    const theirs = kubectlReads(cluster, c.text, dir);
    // The case says what it is about: kubectl reads objects from it (or stops at once), and fails
    // only where it should.
    assert.ok(theirs.names.length > 0 || c.kubectlFails, `kubectl read no object: ${theirs.output}`);
    assert.equal(
      theirs.status !== 0,
      c.kubectlFails === true,
      `kubectl ${theirs.status === 0 ? 'accepted' : 'refused'} it: ${theirs.output}`,
    );

    const file = path.join(dir, c.fileName ?? 'input.json');
    fs.writeFileSync(file, c.text);
    for (const target of ['stdin', file] as const) {
      const ours = await checkReads(cluster, c.text, target, dir);
      const from = target === 'stdin' ? 'the standard input' : 'a file';
      assert.ok(ours.report, `check of ${from} failed: ${ours.output}`);
      assert.deepEqual(ours.names, theirs.names, `objects read from ${from}`);
      const shown = target === 'stdin' ? '<stdin>' : (c.fileName ?? 'input.json');
      assert.ok(
        ours.report.objects.every((o) => o.file === shown),
        `findings name ${shown}: ${JSON.stringify(ours.report.objects.map((o) => o.file))}`,
      );
      const errors = ours.report.findings.filter((f) => f.code === 'yaml-syntax');
      if (!c.kubectlFails) {
        assert.deepEqual(errors, [], `no syntax error from ${from}`);
        continue;
      }
      assert.equal(ours.status, 1, `exit 1 for ${from}`);
      assert.equal(errors.length, 1, `one syntax error, where kubectl stops: ${JSON.stringify(errors)}`);
      assert.equal(errors[0]!.file, shown);
      assert.match(errors[0]!.message, /kubectl reads it as JSON objects one after another, and stops reading here/);
      if (theirs.errorOffset !== undefined)
        assert.equal(ours.errorOffset, theirs.errorOffset, `error at kubectl's offset: ${theirs.output}`);
    }
  });
}

test('check - with nothing on the standard input checks nothing and says so', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const run = await runCli(['check', '--kubeconfig', cluster.kubeconfig, '--context', 'admin', '-'], { stdin: '' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /0 objects judged in 1 file/);
});

test('the standard input is named once, and read by check only', async () => {
  const twice = await runCli(['check', '-', '-'], { stdin: cmYaml('x') });
  assert.equal(twice.status, 2);
  assert.equal(twice.stderr, 'kube-conflict-hints: the standard input (-) can be named only once\n');
  const snapshot = await runCli(['snapshot', '--out', path.join(scratch, 'snapshot'), '-'], { stdin: cmYaml('x') });
  assert.equal(snapshot.status, 2);
  assert.equal(
    snapshot.stderr,
    'kube-conflict-hints: the standard input (-) is read by check only: save the manifests to a file\n',
  );
});

test('binary input on the standard input is refused with one line, as from a file', async () => {
  const run = await runCli(['check', '--snapshot', path.join(scratch, 'no-snapshot'), '-'], {
    stdin: `${cmYaml('bin')}\u0001\n`,
  });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^kube-conflict-hints: <stdin>:7:1: control character U\+0001: not a text manifest/);
  assert.equal(run.stderr.split('\n').filter(Boolean).length, 1);
});

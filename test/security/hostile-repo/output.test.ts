// A pull request is hostile input (issue 25): file names and object names come from the repository,
// and the command line prints them to CI logs and terminals. They are data, never markup: a line
// break must not start a line of its own (a CI runner reads any line of a step's output, stdout or
// stderr, that starts with `::` as a workflow command), and a terminal escape must not reach the
// terminal. Every format and both channels are read here as the runner and a terminal read them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { runCli, type CliRun } from '../../cli/cli-process';
import { knownSnapshot, type KnownSnapshot } from './known-snapshot';

/** The snapshot the hostile files are checked against. */
async function prepare(t: TestContext): Promise<KnownSnapshot | undefined> {
  return knownSnapshot(t, 'hostile-output');
}

/** What an attacker would like a runner to read: an annotation on a file of its choice. */
const injected = '::error file=README.md,line=1::all checks passed';
/** A line break, then the workflow command: in a file name. */
const hostileFileName = `app\n${injected}\n.yaml`;
/** Clear the screen and print a fake clean summary; then a line of its own; a C1 CSI; a right-to-left override. */
const hostileObjectName = '\u001b[2J\u001b[1;1H0 errors, 0 warnings\n' + injected + '\u009b31m\u202eevil';

// Every control character but the line feed that ends each line, and the ones terminals act on.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Each line a runner sees of a step's output: no line may be a workflow command the product did not write. */
function assertNoInjectedCommand(run: CliRun, channel: 'stdout' | 'stderr', own: (line: string) => boolean): void {
  for (const line of run[channel].split('\n')) {
    assert.ok(
      !line.startsWith('::') || own(line),
      `${channel} holds a workflow command the check did not write: ${JSON.stringify(line)}`,
    );
    assert.ok(
      !line.includes(injected) || !line.startsWith('::error file=README.md'),
      `${channel}: ${JSON.stringify(line)}`,
    );
  }
}

function assertNoControls(text: string, what: string): void {
  const found = CONTROL.exec(text);
  assert.ok(
    !found,
    `${what} holds the control character U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0')} raw near ${JSON.stringify(found ? text.slice(Math.max(0, found.index - 40), found.index + 40) : '')}`,
  );
}

/** A ConfigMap named by a double-quoted YAML string with escapes, so that any character can be in its name and none in the text. */
const namedConfigMap = (namespace: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${yamlQuoted(name)}\n  namespace: ${namespace}\n`;
const yamlQuoted = (text: string) =>
  `"${text.replace(/["\\]/g, (c) => `\\${c}`).replace(/[^\u0020-\u007e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;

test(
  'item 5: a file name with line breaks stays on its one line on stderr, never a workflow command',
  { timeout: 120_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const dir = path.join(s.dir, 'stderr');
    fs.mkdirSync(dir, { recursive: true });
    // A control character in the text: the check refuses the file with one line naming it, as kubectl does.
    fs.writeFileSync(path.join(dir, hostileFileName), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\u0001\n');
    for (const format of ['text', 'github', 'json'] as const) {
      const run = await runCli(['check', '--snapshot', s.snapshot, '--format', format, dir]);
      assert.equal(run.status, 2, run.stderr);
      const lines = run.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(run.stderr)}`);
      assert.match(
        lines[0]!,
        /^kube-conflict-hints: .*app\\n::error file=README\.md,line=1::all checks passed\\n\.yaml/,
      );
      assertNoInjectedCommand(run, 'stderr', () => false);
      assertNoControls(run.stderr.trimEnd(), 'stderr');
    }
  },
);

test(
  'item 5: --format github: hostile file and object names are escaped on every line the runner reads',
  { timeout: 120_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const dir = path.join(s.dir, 'github');
    fs.mkdirSync(dir, { recursive: true });
    // A duplicate key: a finding on the hostile file; the hostile object name: a notice with its title.
    fs.writeFileSync(
      path.join(dir, hostileFileName),
      `${namedConfigMap(s.namespace, hostileObjectName)}data:\n  a: "1"\n  a: "2"\n`,
    );
    const run = await runCli(['check', '--snapshot', s.snapshot, '--format', 'github', dir]);
    assert.equal(run.status, 1, run.stderr);
    const own = (line: string) =>
      /^::(error|warning|notice) file=[^\n]*::/.test(line) && !line.startsWith('::error file=README.md');
    assertNoInjectedCommand(run, 'stdout', own);
    assertNoInjectedCommand(run, 'stderr', () => false);
    assertNoControls(run.stdout.replace(/\n/g, ''), 'stdout');
    const commands = run.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.ok(
      commands.some(
        (l) =>
          l.startsWith('::warning file=') &&
          l.includes('/app%0A%3A%3Aerror file=README.md%2Cline=1%3A%3Aall checks passed%0A.yaml,'),
      ),
      run.stdout,
    );
    assert.ok(
      commands.some((l) =>
        l.includes(
          '\\x1b[2J\\x1b[1;1H0 errors, 0 warnings%0A::error file=README.md,line=1::all checks passed\\x9b31m\\u202eevil',
        ),
      ),
      run.stdout,
    );
  },
);

test(
  'item 5: text output shows control characters in file and object names as escapes',
  { timeout: 120_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const dir = path.join(s.dir, 'text');
    fs.mkdirSync(dir, { recursive: true });
    const fileName = 'web\u001b]0;owned\u0007.yaml';
    fs.writeFileSync(
      path.join(dir, fileName),
      `${namedConfigMap(s.namespace, hostileObjectName)}data:\n  a: "1"\n  a: "2"\n`,
    );
    const run = await runCli(['check', '--snapshot', s.snapshot, '--format', 'text', dir]);
    assert.equal(run.status, 1, run.stderr);
    assertNoControls(run.stdout.replace(/\n/g, ''), 'stdout');
    assertNoInjectedCommand(run, 'stdout', () => false);
    const lines = run.stdout.split('\n');
    // The object's block: its title on one line, the escapes visible.
    assert.ok(
      lines.includes(
        `configmaps/\\x1b[2J\\x1b[1;1H0 errors, 0 warnings\\n${injected}\\x9b31m\\u202eevil (namespace ${s.namespace})`,
      ),
      run.stdout,
    );
    assert.ok(
      lines.some((l) => l.includes('web\\x1b]0;owned\\x07.yaml:') && l.includes(' warning duplicate-key ')),
      run.stdout,
    );
    // The summary is the last line, and the only one that says how many errors there are.
    assert.equal(lines.filter((l) => /^\d+ errors?, /.test(l)).length, 1, run.stdout);
  },
);

test(
  'item 5: JSON, SARIF and GitLab output carry names exactly, with no raw control character',
  { timeout: 120_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const dir = path.join(s.dir, 'json');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, hostileFileName),
      `${namedConfigMap(s.namespace, hostileObjectName)}data:\n  a: "1"\n  a: "2"\n`,
    );
    for (const format of ['json', 'sarif', 'gitlab'] as const) {
      const run = await runCli(['check', '--snapshot', s.snapshot, '--format', format, dir]);
      assert.equal(run.status, 1, run.stderr);
      assertNoControls(run.stdout.replace(/\n/g, ''), `--format ${format}`);
      // Escaped, not altered: a JSON reader gets the names back exactly.
      const text = JSON.stringify(JSON.parse(run.stdout));
      assert.ok(text.includes(JSON.stringify(hostileFileName).slice(1, -1)), `${format}: the file name`);
      // SARIF and GitLab hold findings alone; the object without one is in the JSON report.
      if (format === 'json')
        assert.ok(text.includes(JSON.stringify(hostileObjectName).slice(1, -1)), 'the object name');
    }
  },
);

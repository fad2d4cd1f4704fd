// How the user's rendering tools are run: each way a run can end is an answer, never an exception.
// The "tool" here is node itself with a script, so every case is real process behaviour.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { test } from 'node:test';
import { runTool, type ToolResult } from '../../../server/src/render/run-tool';

const node = process.execPath;
const script = (code: string, extra: object = {}) =>
  runTool({ command: node, args: ['-e', code], cwd: os.tmpdir(), ...extra });

const cases: { name: string; run: () => Promise<ToolResult>; expect: (r: ToolResult) => void }[] = [
  {
    name: 'standard output is the answer; arguments reach the tool as given, never through a shell',
    run: () =>
      runTool({
        command: node,
        args: ['-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '$(touch x)', 'a b;c'],
        cwd: os.tmpdir(),
      }),
    expect: (r) => assert.deepEqual(r.ok && JSON.parse(r.stdout), ['$(touch x)', 'a b;c']),
  },
  {
    name: 'a missing program is "not installed"',
    run: () => runTool({ command: '/nonexistent/kustomize', args: ['build'], cwd: os.tmpdir() }),
    expect: (r) => assert.equal(!r.ok && r.problem.kind, 'not-installed'),
  },
  {
    name: 'a failure carries the exit code and the first lines of standard error',
    run: () => script('for (let i = 0; i < 20; i++) console.error("line " + i); process.exit(3)'),
    expect: (r) => {
      assert.ok(!r.ok && r.problem.kind === 'failed');
      assert.equal(r.problem.exitCode, 3);
      assert.equal(r.problem.message, ['line 0', 'line 1', 'line 2', 'line 3', 'line 4'].join('\n'));
    },
  },
  {
    name: 'a tool that does not finish is stopped at the time limit',
    run: () => script('setInterval(() => {}, 1000)', { timeoutMs: 300 }),
    expect: (r) => assert.equal(!r.ok && r.problem.kind, 'timeout'),
  },
  {
    name: 'output beyond the limit is not read',
    run: () =>
      script(
        'const b = "x".repeat(65536); function w() { while (process.stdout.write(b)); process.stdout.once("drain", w); } w()',
        { maxOutputBytes: 1024 * 1024 },
      ),
    expect: (r) => assert.equal(!r.ok && r.problem.kind, 'too-large'),
  },
  {
    name: 'nothing is read from standard input: a tool that waits for it sees its end at once',
    run: () =>
      script(
        'let n = 0; process.stdin.on("data", (c) => n += c.length).on("end", () => process.stdout.write(String(n)))',
      ),
    expect: (r) => assert.equal(r.ok && r.stdout, '0'),
  },
];

for (const c of cases) test(c.name, async () => c.expect(await c.run()));

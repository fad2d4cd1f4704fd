// A pull request is hostile input (issue 25): the repository may hold as many objects, documents
// and files as the documented limits allow (docs/cli-input.md), and nest them as deep as it likes.
// The work must grow in proportion to the input, and depth must meet a limit, never the stack.
//
// Work is measured as the CPU time of the command-line process (user and system, read as it exits),
// never the wall clock: on a busy machine the clock grows with the load, CPU time with the work.
// Each size is run twice and the quicker run counts; doubling the input must cost less than three
// times as much (a quadratic step costs four times, and more as the constant start-up shrinks).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { runCli, writeFiles, type CliRun } from '../../cli/cli-process';
import { startTestServer } from '../../support/lsp-client';
import { processCpuMs } from '../../fuzz/budget';
import { knownSnapshot, type KnownSnapshot } from './known-snapshot';

interface Setup extends KnownSnapshot {
  /** A script node preloads in the command-line process: it writes the process's CPU time when it exits. */
  cpuProbe: string;
}

async function prepare(t: TestContext): Promise<Setup | undefined> {
  const known = await knownSnapshot(t, 'hostile-scale');
  if (!known) return undefined;
  const cpuProbe = path.join(known.dir, 'cpu-at-exit.cjs');
  if (!fs.existsSync(cpuProbe)) {
    fs.writeFileSync(
      cpuProbe,
      "process.on('exit', () => { const u = process.cpuUsage(); require('node:fs').writeFileSync(process.env.KCH_CPU_OUT, String((u.user + u.system) / 1000)); });\n",
    );
  }
  return { ...known, cpuProbe };
}

/** Runs the command line and returns its result with the CPU milliseconds it used. */
async function measuredRun(s: Setup, args: readonly string[], timeoutMs?: number): Promise<CliRun & { cpuMs: number }> {
  const out = path.join(s.dir, `cpu-${process.hrtime.bigint()}`);
  const run = await runCli(args, {
    env: { NODE_OPTIONS: `--require ${s.cpuProbe}`, KCH_CPU_OUT: out },
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
  assert.ok(
    fs.existsSync(out),
    `the run ended without its CPU time (status ${run.status}): ${run.stderr.slice(0, 400)}`,
  );
  return { ...run, cpuMs: Number(fs.readFileSync(out, 'utf8')) };
}

/**
 * The CPU time of each size (the quicker of two runs of `measure`), and the assertion that doubling
 * the input costs less than three times as much. Each size is twice the one before.
 */
async function assertLinear(
  what: string,
  sizes: readonly number[],
  measure: (size: number) => Promise<number>,
): Promise<void> {
  const costs: number[] = [];
  // Each step judged as soon as it is measured: a quadratic step is not followed by a larger one.
  for (const [i, size] of sizes.entries()) {
    costs.push(Math.min(await measure(size), await measure(size)));
    if (i === 0) continue;
    const shown = costs.map((cost, j) => `${sizes[j]}: ${cost.toFixed(0)} ms`).join(', ');
    assert.equal(size, 2 * sizes[i - 1]!);
    assert.ok(
      costs[i]! < 3 * costs[i - 1]!,
      `${what}: doubling the input from ${sizes[i - 1]} to ${size} multiplied the CPU time by ${(costs[i]! / costs[i - 1]!).toFixed(1)} (${shown})`,
    );
  }
}

/** The command line's CPU time on `args`, once `check` has looked at its output. */
function cliCost(
  s: Setup,
  args: (size: number) => readonly string[],
  check: (run: CliRun, size: number) => void,
): (size: number) => Promise<number> {
  return async (size) => {
    const run = await measuredRun(s, args(size));
    check(run, size);
    return run.cpuMs;
  };
}

const jsonLine = (namespace: string, i: number) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-${i}","namespace":"${namespace}"},"data":{"a":"${i}"}}\n`;

function writeJsonLines(s: Setup, count: number): string {
  const file = path.join(s.dir, `lines-${count}.json`);
  if (!fs.existsSync(file))
    fs.writeFileSync(file, Array.from({ length: count }, (_, i) => jsonLine(s.namespace, i)).join(''));
  return file;
}

/** A YAML stream of ConfigMaps with a duplicate key in each: a warning each, as many findings as objects. */
function writeStream(s: Setup, count: number): string {
  const file = path.join(s.dir, `stream-${count}.yaml`);
  const doc = (i: number) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${s.namespace}\ndata:\n  a: "1"\n  a: "2"\n`;
  if (!fs.existsSync(file)) fs.writeFileSync(file, Array.from({ length: count }, (_, i) => doc(i)).join('---\n'));
  return file;
}

function summaryOf(run: CliRun): {
  objects: number;
  notJudged: number;
  files: number;
  errors: number;
  warnings: number;
} {
  const report = JSON.parse(run.stdout) as {
    summary: { objects: number; notJudged: number; files: number; errors: number; warnings: number };
  };
  return report.summary;
}

// The objects of these cases are not in the known snapshot, so none of them is judged: each is
// listed as not judged, with exit 1, and that list has to grow in proportion too.

test(
  'item 4: check grows linearly in objects — one file of JSON lines, 10k, 20k and 40k one-line ConfigMaps',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    await assertLinear(
      'check, JSON lines',
      [10_000, 20_000, 40_000],
      cliCost(
        s,
        (size) => ['check', '--snapshot', s.snapshot, '--format', 'json', writeJsonLines(s, size)],
        (run, size) => {
          assert.equal(run.status, 1, run.stderr);
          assert.deepEqual([summaryOf(run).objects, summaryOf(run).notJudged], [size, size]);
        },
      ),
    );
  },
);

test(
  'item 4: check grows linearly in objects — JSON values one after another on a single line, 4k, 8k and 16k',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const line = (count: number) => {
      const file = path.join(s.dir, `one-line-${count}.json`);
      if (!fs.existsSync(file))
        fs.writeFileSync(
          file,
          `${Array.from({ length: count }, (_, i) => jsonLine(s.namespace, i).trimEnd()).join(' ')}\n`,
        );
      return file;
    };
    await assertLinear(
      'check, JSON values on one line',
      [4_000, 8_000, 16_000],
      cliCost(
        s,
        (size) => ['check', '--snapshot', s.snapshot, '--format', 'json', line(size)],
        (run, size) => {
          assert.equal(run.status, 1, run.stderr);
          assert.deepEqual([summaryOf(run).objects, summaryOf(run).notJudged], [size, size]);
        },
      ),
    );
  },
);

test(
  'item 4: check grows linearly in documents and findings — a YAML stream, one finding per document, text and GitHub output',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    for (const format of ['text', 'github'] as const) {
      await assertLinear(
        `check, a YAML stream, --format ${format}`,
        [5_000, 10_000, 20_000],
        cliCost(
          s,
          (size) => ['check', '--snapshot', s.snapshot, '--format', format, writeStream(s, size)],
          (run, size) => {
            assert.equal(run.status, 1, run.stderr);
            assert.equal(
              run.stdout.split('\n').filter((line) => line.includes('duplicate-key')).length,
              size,
              `one finding per document in ${format}`,
            );
          },
        ),
      );
    }
  },
);

test(
  'item 4: check grows linearly in files — a folder of 2k, 4k and 8k one-object files',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const folder = (count: number) => {
      const dir = path.join(s.dir, `files-${count}`);
      if (!fs.existsSync(dir))
        for (let i = 0; i < count; i++)
          writeFiles(dir, {
            [`app-${i}.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${s.namespace}\n`,
          });
      return dir;
    };
    await assertLinear(
      'check, many files',
      [2_000, 4_000, 8_000],
      cliCost(
        s,
        (size) => ['check', '--snapshot', s.snapshot, '--format', 'json', folder(size)],
        (run, size) => {
          assert.equal(run.status, 1, run.stderr);
          assert.deepEqual(
            [summaryOf(run).objects, summaryOf(run).files, summaryOf(run).notJudged],
            [size, size, size],
          );
        },
      ),
    );
  },
);

test(
  'item 4: snapshot grows linearly in objects — 10k, 20k and 40k new ConfigMaps, each saved as absent',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    await assertLinear(
      'snapshot',
      [10_000, 20_000, 40_000],
      cliCost(
        s,
        (size) => {
          const out = path.join(s.dir, `snapshot-${size}-${process.hrtime.bigint()}`);
          return [
            'snapshot',
            '--kubeconfig',
            s.cluster.kubeconfig,
            '--context',
            'admin',
            '--out',
            out,
            writeJsonLines(s, size),
          ];
        },
        (run, size) => {
          assert.equal(run.status, 0, run.stderr);
          assert.match(run.stdout, new RegExp(`^saved 0 live objects, ${size} absent, 1 OpenAPI document to `));
        },
      ),
    );
  },
);

test(
  "item 4: the editor's first analysis grows linearly in documents — 2k, 4k and 8k ConfigMaps with a finding each",
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    await assertLinear("the editor's first analysis", [2_000, 4_000, 8_000], async (size) => {
      const text = fs.readFileSync(writeStream(s, size), 'utf8');
      // The bundled server in a process of its own, as VS Code runs it: its CPU time is the analysis's.
      const server = await startTestServer({
        process: true,
        settings: { kubeconfig: s.cluster.kubeconfig, context: 'admin' },
      });
      try {
        const pid = server.child!.pid!;
        const before = processCpuMs(pid)!;
        const uri = `file:///w/stream-${size}.yaml`;
        await server.open(uri, text);
        await server.diagnosticsUntil(uri, (d) => d.filter((x) => x.code === 'duplicate-key').length === size, 600_000);
        return processCpuMs(pid)! - before;
      } finally {
        await server.shutdown();
      }
    });
  },
);

test(
  'item 4: a 200k-object file within the documented limits is checked to the end',
  { timeout: 900_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    // About 21 MiB of JSON lines is over the 16 MiB a file may hold: these short lines keep it under.
    const file = path.join(s.dir, 'lines-200000.json');
    fs.writeFileSync(
      file,
      Array.from(
        { length: 200_000 },
        (_, i) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c${i}"}}\n`,
      ).join(''),
    );
    assert.ok(fs.statSync(file).size < 16 * 1024 * 1024, 'inside the documented limit of a file');
    // One run, no limit on its time but the test's own: what matters is that it ends, with every object.
    const run = await measuredRun(
      s,
      ['check', '--snapshot', s.snapshot, '-n', s.namespace, '--format', 'text', file],
      800_000,
    );
    // None of them is in the snapshot: every one is listed as not judged.
    assert.equal(run.status, 1, run.stderr.slice(0, 400));
    assert.match(
      run.stdout,
      /^0 errors, 0 warnings, 0 information — 0 objects judged in 1 file, .*; 200000 not judged:$/m,
    );
    assert.equal(
      run.stdout.split('\n').filter((line) => line.endsWith(': the live object is not known: not in the snapshot'))
        .length,
      200_000,
    );
  },
);

// ---------------------------------------------------------------------------------------------
// Item 9: depth

const deepJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const deepObject = (namespace: string, name: string, levels: number) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","namespace":"${namespace}"},"data":${deepJson(levels)}}`;

test(
  'item 9: JSON nested 9,000 levels is one too-large finding, in the check and in the editor, not a stack overflow',
  { timeout: 300_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const shallow = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shallow","namespace":"${s.namespace}"}}`;
    // A JSON stream (the file starts with `{`), the deep object first: the object after it is still checked.
    const texts = {
      'deep-object.json': `${deepObject(s.namespace, 'deep', 9_000)}\n${shallow}\n`,
      'deep-list.json': `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"${s.namespace}"},"data":${'['.repeat(9_000)}${']'.repeat(9_000)}}\n${shallow}\n`,
      'deep-flow.yaml': `# YAML holding JSON\n${deepObject(s.namespace, 'deep', 9_000)}\n---\n${shallow}\n`,
    };
    const dir = path.join(s.dir, 'deep');
    writeFiles(dir, texts);
    for (const name of Object.keys(texts)) {
      const run = await runCli(['check', '--snapshot', s.snapshot, '--format', 'json', path.join(dir, name)]);
      assert.doesNotMatch(run.stderr, /internal error|call stack/, name);
      assert.equal(run.status, 1, `${name}: ${run.stderr}`);
      const report = JSON.parse(run.stdout) as {
        findings: { code: string }[];
        objects: { object?: { name: string } }[];
      };
      assert.deepEqual(
        report.findings.map((f) => f.code),
        ['too-large'],
        `${name}: one too-large finding`,
      );
      assert.ok(
        report.objects.some((o) => o.object?.name === 'shallow'),
        `${name}: the object after the deep one is checked`,
      );
    }

    // The editor reads the same text through the same model: a diagnostic, not a failed request.
    const server = await startTestServer({ settings: { kubeconfig: s.cluster.kubeconfig, context: 'admin' } });
    try {
      for (const [name, text] of Object.entries(texts)) {
        const uri = `file:///w/${name}`;
        await server.open(uri, text, name.endsWith('.json') ? 'json' : 'yaml');
        const diagnostics: Diagnostic[] = await server.diagnosticsUntil(uri, (d) =>
          d.some((x) => x.code === 'too-large'),
        );
        assert.equal(
          diagnostics.filter((d) => d.code === 'too-large').length,
          1,
          `${name}: ${JSON.stringify(diagnostics.map((d) => d.code))}`,
        );
      }
    } finally {
      await server.shutdown();
    }
  },
);

test(
  'item 9: a snapshot whose object, OpenAPI document or snapshot.json nests 9,000 levels is a clear problem, not a stack overflow',
  { timeout: 300_000 },
  async (t) => {
    const s = await prepare(t);
    if (!s) return;
    const manifest = path.join(s.dir, 'known.yaml');
    const copy = (name: string) => {
      const target = path.join(s.dir, name);
      fs.cpSync(s.snapshot, target, { recursive: true });
      return target;
    };
    const index = (dir: string) =>
      JSON.parse(fs.readFileSync(path.join(dir, 'snapshot.json'), 'utf8')) as {
        objects: string[];
        openapi: Record<string, string>;
      };

    const deepLive = copy('deep-live');
    fs.writeFileSync(path.join(deepLive, index(deepLive).objects[0]!), deepObject(s.namespace, 'known', 9_000));
    const deepOpenApi = copy('deep-openapi');
    fs.writeFileSync(
      path.join(deepOpenApi, index(deepOpenApi).openapi.v1!),
      `{"openapi":"3.0.0","components":{"schemas":{"io.k8s.api.core.v1.ConfigMap":${'{"type":"object","properties":{"a":'.repeat(9_000)}{}${'}}'.repeat(9_000)}}}}`,
    );
    const deepIndex = copy('deep-index');
    const text = fs.readFileSync(path.join(deepIndex, 'snapshot.json'), 'utf8');
    fs.writeFileSync(
      path.join(deepIndex, 'snapshot.json'),
      text.replace(/"objects": \[/, `"objects": [${'['.repeat(9_000)}${']'.repeat(9_000)},`),
    );

    for (const [dir, says] of [
      [deepLive, /deep-live\/objects\/[^:]+\.json:1: This document nests deeper than 512 levels/],
      [deepOpenApi, /deep-openapi\/openapi\/[^ ]+\.json nests deeper than 512 levels: not read$/m],
      [deepIndex, /deep-index\/snapshot\.json nests deeper than 512 levels: not read$/m],
    ] as const) {
      const run = await runCli(['check', '--snapshot', dir, manifest]);
      assert.doesNotMatch(run.stderr, /internal error|call stack/, dir);
      assert.equal(run.status, 2, `${dir}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, says);
    }
  },
);

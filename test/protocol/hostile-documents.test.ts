// Documents that used to block the language server: one of 8 MB (seconds of parsing at over a
// gigabyte), and a file of blank lines (a quadratic search for `apiVersion:`). Over real JSON-RPC;
// no cluster is needed. Costs are CPU time (the server runs in this process), relative to a plain
// `yaml` parse measured in the same run: never the clock, which a busy machine stretches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedMs, collectGarbage, cpuMs, MiB, plainParse, timeMs } from '../fuzz/budget';
import { startTestServer } from '../support/lsp-client';

const small = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\ndata:\n  k: v\n';

test('an 8 MB document gets a too-large warning, is never parsed (no gigabyte, no seconds of CPU), and a hover elsewhere is answered', async () => {
  const server = await startTestServer({ initializationOptions: { clusterAccess: false } });
  try {
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: huge', 'data:'];
    let length = lines.join('\n').length;
    for (let i = 0; length < 8 * MiB; i++) {
      lines.push(`  key-${i}: ${'value '.repeat(8)}${i}`);
      length += lines.at(-1)!.length + 1;
    }
    const huge = `${lines.join('\n')}\n`;
    await server.open('file:///w/small.yaml', small);
    await server.diagnostics('file:///w/small.yaml');
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const cpuBefore = cpuMs();
    await server.open('file:///w/huge.yaml', huge);
    const [diagnostics, hover] = await Promise.all([
      server.diagnostics('file:///w/huge.yaml'),
      server.hover('file:///w/small.yaml', { line: 5, character: 3 }),
    ]);
    const cpu = cpuMs() - cpuBefore;
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.severity, d.range.start.line]),
      [['too-large', 2, 0]],
    );
    assert.match(
      diagnostics[0]!.message,
      /^This document is 8\.0 MiB: documents over 1\.5 MiB are not analysed/,
      diagnostics[0]!.message,
    );
    assert.ok(hover, 'the small document is hovered');
    // Sending 8 MB over JSON-RPC both ways costs tens of milliseconds; parsing it, seconds.
    const allowed = allowedMs(timeMs(() => plainParse(small), 3));
    assert.ok(
      cpu < allowed,
      `opening the huge document, its diagnostics and the hover cost ${cpu.toFixed(0)} ms of CPU (allowed ${allowed.toFixed(0)} ms)`,
    );
    const grown = process.memoryUsage().heapUsed - heapBefore;
    // The text itself is held by both ends of the connection; a parse tree would be 20 times that.
    assert.ok(grown < 8 * huge.length + 64 * MiB, `the heap grew by ${(grown / MiB).toFixed(0)} MiB`);
  } finally {
    await server.shutdown();
  }
});

test('a file of 80,000 blank lines is no manifest and is answered in time proportional to its size', async () => {
  const server = await startTestServer({ initializationOptions: { clusterAccess: false } });
  try {
    for (const [name, text] of [
      ['blank lines', `${'\n'.repeat(80_000)}x: 1\n`],
      ['lines of spaces', `${' \n'.repeat(80_000)}x: 1\n`],
    ] as const) {
      const uri = `file:///w/${name.replace(/ /g, '-')}.yaml`;
      await server.open(uri, text);
      const start = cpuMs();
      assert.deepEqual(await server.diagnostics(uri), [], name);
      const ms = cpuMs() - start;
      // A tighter factor than the fuzz campaign's: this is one request on one known text.
      const allowed = 10 * timeMs(() => plainParse(text), 3) + 400;
      assert.ok(ms < allowed, `${name}: ${ms.toFixed(0)} ms (allowed ${allowed.toFixed(0)} ms)`);
    }
  } finally {
    await server.shutdown();
  }
});

// Inputs that used to cost time out of proportion to their size, or run out of stack: many aliases,
// a ConfigMap with thousands of keys in the ownership view, documents of megabytes, objects nested
// thousands of levels deep. Timings are relative to a plain `yaml` parse measured in the same run
// (see test/fuzz/budget.ts), with a generous factor.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { analyzeResource, ruleFor, type ResourceFacts } from '../../../server/src/core/findings';
import { fieldHover } from '../../../server/src/core/findings/hover-text';
import type { JsonObject, JsonValue } from '../../../server/src/core/json';
import { createManifestCache, manifestLimits, parseManifestText } from '../../../server/src/core/manifest/manifest';
import { nodeAt } from '../../../server/src/core/findings/ownership';
import { deeperMarker, ownershipView } from '../../../server/src/core/findings/ownership-view';
import { schemaFromOpenApi } from '../../../server/src/core/ssa/schema';
import { plainParse, timeMs } from '../../fuzz/budget';

const fixtures = path.join(import.meta.dirname, '..', '..', 'fixtures');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
);
/** How much slower than a plain parse of the same text a linear pass may be, on a busy machine. */
const FACTOR = 20;

const configMapHead = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\n';

function aliasPairs(n: number): string {
  const lines = [configMapHead, 'data:'];
  for (let i = 0; i < n; i++) lines.push(`  k${i}: &a${i} v${i}`, `  j${i}: *a${i}`);
  return `${lines.join('\n')}\n`;
}

test('4,000 anchor/alias pairs parse in time proportional to the text, on open and after an edit', () => {
  const text = aliasPairs(4000);
  const plain = timeMs(() => plainParse(text), 3);
  const cache = createManifestCache();
  let parsed = parseManifestText(text, cache);
  const open = timeMs(() => (parsed = parseManifestText(text, createManifestCache())));
  assert.equal(parsed.resources.length, 1);
  assert.equal(
    (parsed.resources[0]!.object.data as JsonObject).j3999,
    'v3999',
    'the last alias resolves to its anchor',
  );
  const edited = text.replace('k10: &a10 v10', 'k10: &a10 v10x');
  const edit = timeMs(() => parseManifestText(edited, cache));
  assert.ok(open < FACTOR * plain + 200, `open: ${open.toFixed(0)} ms, plain parse ${plain.toFixed(0)} ms`);
  assert.ok(edit < FACTOR * plain + 200, `edit: ${edit.toFixed(0)} ms, plain parse ${plain.toFixed(0)} ms`);
});

test('an alias refers to the last anchor of its name before it, and an anchor redefined later does not change it', () => {
  const text = `${configMapHead}data:\n  a: &x one\n  b: *x\n  c: &x two\n  d: *x\n`;
  assert.deepEqual(parseManifestText(text).resources[0]!.object.data, { a: 'one', b: 'one', c: 'two', d: 'two' });
  const unknown = parseManifestText(`${configMapHead}data:\n  b: *nowhere\n  a: &nowhere x\n`);
  assert.equal(unknown.problems[0]?.code, 'yaml-decode');
  assert.match(unknown.problems[0]!.message, /unknown anchor 'nowhere'/);
});

test('aliases that multiply a small document get a too-large warning, not an expansion', () => {
  // Each level repeats the one before ten times: 30,000 values from 1.5 KiB. Written values are
  // over 1% of them, so kubectl accepts it (goyaml.v2 allows 99% aliasing up to 400,000 values):
  // not an error, but not analysed either.
  let text = `${configMapHead}pad: [${Array(400).fill('p').join(', ')}]\ndata:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n`;
  for (let i = 1; i < 4; i++)
    text += `  l${i}: &l${i} [${Array(10)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  text += '  copies: [*l3, *l3, *l3]\n';
  const parsed = parseManifestText(text);
  assert.deepEqual(parsed.resources, []);
  assert.deepEqual(
    parsed.problems.map((p) => [p.code, ruleFor(p.code).severity]),
    [['too-large', 'warning']],
    parsed.problems[0]?.message,
  );
  assert.match(parsed.problems[0]!.message, /Aliases expand this document from \d+ to \d+ values/);
  // Aliasing on the scale people use it (a shared block repeated a few times) is read as always.
  const shared = `${configMapHead}x-common: &common {a: 1, b: [1, 2, 3]}\ndata:\n${Array.from({ length: 50 }, (_, i) => `  c${i}: *common`).join('\n')}\n`;
  assert.equal(parseManifestText(shared).resources.length, 1);
});

test('a document over the size limit gets a too-large warning instead of a parse; the others are still read', () => {
  const big = `${configMapHead}data:\n${Array.from({ length: 200_000 }, (_, i) => `  key-${i}: value number ${i} with some text`).join('\n')}\n`;
  assert.ok(
    big.length > manifestLimits.documentLength && big.length < 2 * manifestLimits.documentLength + 9 * 1024 * 1024,
  );
  const text = `${configMapHead}---\n${big}`;
  const parsed = parseManifestText(text);
  assert.deepEqual(
    parsed.resources.map((r) => r.name),
    ['cfg'],
    'the small document is read',
  );
  assert.deepEqual(
    parsed.problems.map((p) => [p.code, ruleFor(p.code).severity, p.range.start.line]),
    [['too-large', 'warning', 6]],
  );
  assert.match(parsed.problems[0]!.message, /^This document is \d+\.\d MiB: documents over 1\.5 MiB are not analysed/);
});

test('a file over the size limit is not parsed at all', () => {
  const doc = `${configMapHead}data:\n  k: v\n`;
  const text = `${doc}---\n`.repeat(Math.ceil((manifestLimits.textLength + 1) / (doc.length + 4)));
  const parsed = parseManifestText(text);
  assert.deepEqual(parsed.resources, []);
  assert.deepEqual(
    parsed.problems.map((p) => p.code),
    ['too-large'],
  );
  assert.match(parsed.problems[0]!.message, /files over 16\.0 MiB are not analysed/);
});

test('nesting beyond the limit, in block or flow style, gets a too-large warning, not a stack overflow', () => {
  const block = (depth: number) => {
    let out = `${configMapHead}data:\n  deep:\n`;
    for (let i = 1; i <= depth; i++) out += `${' '.repeat(i + 2)}k${i}:\n`;
    return `${out}${' '.repeat(depth + 3)}leaf\n`;
  };
  for (const [name, text] of [
    ['block, 600 levels', block(600)],
    ['flow, 5,000 levels', `${configMapHead}data: {deep: ${'['.repeat(5000)}x${']'.repeat(5000)}}\n`],
    ['flow maps, 2,000 levels', `${configMapHead}data: {deep: ${'{a: '.repeat(2000)}x${'}'.repeat(2000)}}\n`],
  ]) {
    const parsed = parseManifestText(text!);
    assert.deepEqual(parsed.resources, [], name);
    assert.deepEqual(
      parsed.problems.map((p) => p.code),
      ['too-large'],
      `${name}: ${parsed.problems.map((p) => p.message).join('; ')}`,
    );
    assert.match(parsed.problems[0]!.message, /nests deeper than 512 levels/, name);
  }
  // Aliases add up: an anchor 300 levels deep used 300 levels down.
  let anchored = `${configMapHead}a: &deep ${'['.repeat(300)}x${']'.repeat(300)}\nb: ${'['.repeat(300)}*deep${']'.repeat(300)}\n`;
  assert.deepEqual(
    parseManifestText(anchored).problems.map((p) => p.code),
    ['too-large'],
  );
  anchored = `${configMapHead}a: &deep ${'['.repeat(100)}x${']'.repeat(100)}\nb: ${'['.repeat(100)}*deep${']'.repeat(100)}\n`;
  assert.equal(parseManifestText(anchored).resources.length, 1, 'within the limit it is read');
});

function nested(depth: number, leaf: JsonValue, prefix = ''): JsonValue {
  let v = leaf;
  for (let i = depth - 1; i >= 0; i--) v = { [`${prefix}k${i % 3}`]: v };
  return v;
}

function deepLive(depth: number): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: 'rev',
      namespace: 'default',
      resourceVersion: '7',
      managedFields: [
        {
          manager: 'operator',
          operation: 'Update',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': nested(depth, {}, 'f:') },
        },
      ],
    },
    revision: 1,
    data: nested(depth, 'theirs'),
  };
}

test('the ownership view of a live object nested 10,000 levels deep stops at a marker', () => {
  const view = ownershipView(deepLive(10_000), schema);
  const lines = view.split('\n');
  const marked = lines.filter((l) => l.includes(deeperMarker));
  assert.equal(marked.length, 1, 'one marker where the view stops');
  assert.match(marked[0]!, /^ +k\d: … nested deeper than 100 levels, not shown$/);
  assert.match(
    lines.find((l) => l.startsWith('data:'))!,
    /^data:$/,
  );
  assert.ok(lines.length < 200);
});

test('analysing a manifest against a live object nested deeper than the limit says so instead of failing', () => {
  const live = deepLive(10_000);
  const resource = parseManifestText(
    'apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: rev, namespace: default}\nrevision: 1\ndata: {k0: {k1: mine}}\n',
  ).resources[0]!;
  const facts: ResourceFacts = {
    kind: { state: 'served', group: 'apps', resource: 'controllerrevisions', namespaced: true },
    live: { state: 'exists', object: live },
    schema,
  };
  const findings = analyzeResource(resource, facts, { fieldManager: 'kubectl', applyMode: 'serverSide' });
  assert.deepEqual(
    findings.map((f) => f.code),
    ['exists', 'too-large'],
  );
  assert.match(findings[1]!.message, /live object nests deeper than 512 levels/);
  // A hover on the value: the live value there is 9,998 levels deep.
  const at = nodeAt(resource, { line: 4, character: 20 }, schema)!;
  assert.match(fieldHover(resource, facts, at.path, at.node, Date.now()), /Live value: nested deeper than 512 levels/);
});

test('the ownership view of a ConfigMap with 4,000 keys takes time proportional to its size', () => {
  const data: JsonObject = {};
  const owned: JsonObject = {};
  for (let i = 0; i < 4000; i++) {
    data[`key-${i}`] = `value ${i}`;
    owned[`f:key-${i}`] = {};
  }
  const entry = (manager: string, operation: string) => ({
    manager,
    operation,
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:data': owned },
  });
  const live: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'big',
      namespace: 'default',
      managedFields: [entry('kubectl', 'Apply'), entry('helm', 'Update')],
    },
    data,
  };
  const text = stringify(live);
  const plain = timeMs(() => plainParse(text), 3);
  let view = '';
  const ms = timeMs(() => (view = ownershipView(live, schema)));
  assert.match(view, /\n {2}key-3999: value 3999 +# kubectl \(Apply\), helm \(Update\)/);
  assert.ok(ms < FACTOR * plain + 200, `view: ${ms.toFixed(0)} ms, plain parse ${plain.toFixed(0)} ms`);
});

test('a hover on a key named like an object method (constructor, toString) is an ordinary hover', () => {
  const text =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\ndata:\n  constructor: x\n  toString: y\n';
  const resource = parseManifestText(text).resources[0]!;
  const live: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', namespace: 'default', managedFields: [] },
    data: {},
  };
  const facts: ResourceFacts = {
    kind: { state: 'served', group: '', resource: 'configmaps', namespaced: true },
    live: { state: 'exists', object: live },
    schema,
  };
  for (const line of [6, 7]) {
    const at = nodeAt(resource, { line, character: 4 }, schema)!;
    assert.match(fieldHover(resource, facts, at.path, at.node, Date.now()), /Not set on the live object/);
  }
});

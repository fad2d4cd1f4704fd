// Values first, positions when asked (core/manifest/fast-values.ts): a text read that way gives
// exactly what the full parse gives — the same resources with the same values, node trees and
// ranges, and the same problems — on every manifest fixture, every differential scenario's manifest
// and the fuzz campaign's generated documents (test/fuzz/core.test.ts asserts the same on each
// input). And the cheap way is really taken: a plain Deployment gets no node tree until one is
// asked for, while what only the full parse reads exactly (anchors, tags, duplicate keys) goes there.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  hasNodeTree,
  locateScalarInText,
  parseManifestText,
  type Range,
} from '../../../../server/src/core/manifest/manifest';
import { readByLines } from '../../../../server/src/core/manifest/fast-values';
import { assertParsesAgree } from '../../../support/parse-agreement';
import { fixtures } from '../../../fuzz/generate';

const assertAgree = (text: string, what: string) => void assertParsesAgree(text, what);

const scenarioDir = path.join(import.meta.dirname, '..', '..', '..', 'differential', 'scenarios');
const scenarioManifests = fs
  .readdirSync(scenarioDir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    (
      parse(fs.readFileSync(path.join(scenarioDir, f), 'utf8'), { merge: true, maxAliasCount: -1 }) as {
        name: string;
        manifest?: string;
      }[]
    ).map((s) => ({ name: `${f}: ${s.name}`, manifest: s.manifest ?? '' })),
  );

describe('values first agrees with the full parse', () => {
  test('on every text fixture', () => {
    const texts = fixtures();
    assert.ok(texts.length > 50, `fixtures found: ${texts.length}`);
    let throughItems = 0;
    for (const [i, text] of texts.entries())
      throughItems += assertParsesAgree(text, `fixture ${i}: ${JSON.stringify(text.slice(0, 60))}`).placedThroughItems;
    // The text placement is tried, and taken, into list items too (written-scalar.test.ts).
    assert.ok(throughItems > 100, `placed from the text through list items: ${throughItems}`);
  });

  test("on every differential scenario's manifest", () => {
    assert.ok(scenarioManifests.length > 250);
    for (const s of scenarioManifests) assertAgree(s.manifest, s.name);
  });

  const cases: { name: string; text: string }[] = [
    {
      name: 'kubectl scalars as values',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: yes\n  b: 0755\n  c: ~\n  d: 1e3\n  e: "on"\n  f: 1_000\n  g: 0x1F\n  h: 2001-12-14\n  i:\n  j: 1:20\n',
    },
    {
      name: 'kubectl scalars as keys',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  yes: a\n  0755: b\n  ~: c\n  1.0: d\n  3: e\n  true: f\n  null: g\n',
    },
    {
      name: 'a float that JSON cannot carry',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: .inf\n',
    },
    { name: 'duplicate keys', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n' },
    {
      name: 'block scalars and folded plain scalars',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: |\n    one\n    two\n\n  b: >-\n    folded\n    text\n  c: plain\n    continued\n  d: |+\n    kept\n\n',
    },
    {
      name: 'a List',
      text: 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n',
    },
    {
      name: 'flow collections and JSON',
      text: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "\\u00e9\\n", "b": "x"}}\n',
    },
    { name: 'syntax errors', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a\n' },
    {
      name: 'quoting and escapes',
      text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'it''s'\ndata:\n  a: \"tab\\there \\x41 \\u263A \\/\"\n  'b c': 'd'\n  e: 'multi\n    line'\n",
    },
    {
      name: 'comments everywhere',
      text: '# head\napiVersion: v1 # trailing\nkind: ConfigMap\n# between\nmetadata:\n  name: a # name\ndata: # data\n  a: "#not" # x\n',
    },
    {
      name: 'several documents and empty ones',
      text: '---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# nothing\n---\nplain scalar\n---\n- a list\n',
    },
    { name: 'an indentation error', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n labels: {}\n' },
    { name: 'unicode', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  日本: "😀"\n  e: é\n' },
  ];
  cases.push(
    {
      name: 'one-line scalars placed from the text',
      text: "---  # first\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:   # m\n    names: x\n    name:   'it''s'   # c\n    namespace: \"a\\\" b\" \n  data:\n    a#b: c#d   \n    e: f # g\n    h: i:j\n    k: -1\n    m: ''\n  list:\n  - a: b\n  - c\n  z: last",
    },
    {
      name: 'one-line scalars that only look so',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n    b\n  labels:\n    x: y\n\n    # between\n  annotations: {a: b}\ndata:\n  a: |\n    name: no\n  b: >\n    c: d\n  c:\n    e\n  d: [x]\n  f:\n  g: ~\n',
    },
    {
      name: 'a sequence at the root, and a map that ends early',
      text: '- apiVersion: v1\n  kind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n- name: a\n',
    },
  );
  cases.push(
    {
      name: 'what the line reader reads: folded plain scalars, block scalars, flow collections on a line',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: web, "tier": \'front\', m: [1, [2, {}]]}\ndata:\n  a: one\n    two  \n\n\n    three # c\n  b: |-\n    x\n\n      y\n  # between\n  c: >\n    p\n    q\n\n    r\n  d: |+\n    k\n\n  e: "q\\"\\\\\\n\\/" # c\n  f: -1\n  g: --flag\nlist:\n- a: b\n  c: |\n    d\n-\n  e: f\n- [a, b]\n- \'s\'\n-   g: h\n    i: j\nlast: |\n  at the end',
    },
    {
      name: 'what the line reader leaves to js-yaml',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: |2\n     x\n  b: >\n    p\n      more\n    q\n  c: "\\x41\\u263A"\n  d: [a, ]\n  e: {a}\n  f: |\n   \n    x\n  g:\n    plain on the next line\nlist:\n- - x\n',
    },
  );
  for (const c of cases) test(c.name, () => assertAgree(c.text, c.name));

  test('the line reader reads the first of those two itself, and leaves the second', () => {
    const text = (start: string) => cases.find((c) => c.name.startsWith(start))!.text;
    assert.notEqual(readByLines(text('what the line reader reads'), 512), undefined);
    assert.equal(readByLines(text('what the line reader leaves'), 512), undefined);
  });

  // The line reader (fast-values.ts readByLines) on generated block YAML: every document it reads,
  // it reads as the full parse does; it declines the others, which js-yaml or the full parse read.
  test('on generated block YAML, wherever the line reader reads it', () => {
    let seed = 20261202;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(a: readonly T[]): T => a[Math.floor(next() * a.length)]!;
    const scalars = [
      'a',
      'b c',
      'yes',
      'no',
      '1',
      '-1',
      '0x1F',
      '1.5',
      '~',
      'null',
      "'q'",
      '"d\\"q"',
      "'it''s'",
      '"\\u263A"',
      'x:y',
      'http://a/b',
      'a #c',
      'a#b',
      '-x',
      '--flag',
      '?x',
      ':x',
      '""',
      '[]',
      '{}',
      '[a, b]',
      '{a: b, c: d}',
      '[a, [b, c]]',
      '{a: [1, 2]}',
      'ŝ',
      'on',
      '0755',
      '1_000',
      '.5',
      '2001-12-14',
      '[a,b]',
      '[ a ]',
      'a: b',
      '- a',
      'True',
      '"a" #c',
      '[a, ]',
      '{a}',
      '@x',
      '|',
      '>',
      'a:',
      "'a' b",
    ];
    const keys = [
      'k',
      'key',
      'a b',
      'yes',
      '1',
      'true',
      '"q k"',
      "'s k'",
      'x:y',
      '-k',
      '?k',
      'null',
      'k2',
      'k#x',
      'k #x',
      'a.b/c',
    ];
    const block = (indent: number, depth: number, out: string[]) => {
      const entries = 1 + Math.floor(next() * 4);
      const sequence = depth > 0 && next() < 0.3;
      for (let i = 0; i < entries; i++) {
        const pad = ' '.repeat(indent);
        const head = pad + (sequence ? '-' : `${pick(keys)}:`);
        if (next() < 0.1) out.push(pick(['', '  ', `${' '.repeat(Math.floor(next() * 6))}# c`]));
        if (depth < 4 && next() < 0.3) {
          out.push(head + (next() < 0.2 ? ' # c' : ''));
          block(indent + pick([1, 2, 2, 4, sequence ? 2 : 0]), depth + 1, out);
        } else if (next() < 0.15) {
          out.push(`${head} ${pick(['|', '|-', '|+', '>', '>-', '>+', '| # c', '|2', '|x'])}`);
          const at = indent + pick([1, 2, 2, 4, 0]);
          for (let j = 1 + Math.floor(next() * 4); j > 0; j--) {
            if (next() < 0.2) out.push(pick(['', ' ', '  ']));
            out.push(' '.repeat(at + pick([0, 0, 0, 1, 2])) + pick(scalars));
          }
        } else {
          out.push(
            `${head}${next() < 0.95 ? ' ' : ''}${pick(scalars)}${next() < 0.15 ? ' # t' : ''}${next() < 0.1 ? '  ' : ''}`,
          );
          for (let j = next() < 0.25 ? 1 + Math.floor(next() * 3) : 0; j > 0; j--) {
            if (next() < 0.2) out.push('');
            out.push(' '.repeat(indent + pick([1, 2, 3, 0])) + pick(scalars));
          }
        }
      }
    };
    let read = 0;
    for (let n = 0; n < 6000; n++) {
      const lines = ['apiVersion: v1', 'kind: X', 'metadata:', '  name: a', 'data:'];
      block(pick([2, 1, 4, 0]), 1, lines);
      const text = lines.join('\n') + (next() < 0.5 ? '\n' : '');
      const value = readByLines(text, 512);
      if (value === undefined) continue;
      read++;
      const full = parseManifestText(text, undefined, { valuesFirst: false });
      assert.deepEqual(full.problems, [], text);
      assert.deepEqual(value, full.resources[0]?.object, text);
    }
    assert.ok(read > 500, `documents the line reader read: ${read}`);
  });
});

describe('the cheap read is the one taken where it can be', () => {
  const deployment = fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'manifest', 'deployment.yaml'),
    'utf8',
  );

  test('a plain Deployment: values at once, the node tree only when asked, once', () => {
    const [r] = parseManifestText(deployment).resources;
    assert.ok(r);
    assert.equal(hasNodeTree(r), false);
    assert.equal(r.kind, 'Deployment');
    const root = r.root;
    assert.equal(hasNodeTree(r), true);
    assert.equal(r.root, root, 'built once');
  });

  test('a plain Deployment: its name and replicas placed from the text, without the node tree', () => {
    const [r] = parseManifestText(deployment).resources;
    assert.ok(r);
    const name = locateScalarInText(r, [
      { kind: 'field', name: 'metadata' },
      { kind: 'field', name: 'name' },
    ]);
    const replicas = locateScalarInText(r, [
      { kind: 'field', name: 'spec' },
      { kind: 'field', name: 'replicas' },
    ]);
    assert.ok(name && replicas);
    assert.equal(hasNodeTree(r), false);
    const line = (range: Range) => deployment.split('\n')[range.start.line]!;
    assert.equal(line(name.valueRange).slice(name.valueRange.start.character, name.valueRange.end.character), r.name);
    assert.match(line(replicas.keyRange), /^ {2}replicas: \d+$/);
  });

  for (const [name, text] of [
    [
      'anchors and aliases',
      fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'manifest', 'anchors.yaml'), 'utf8'),
    ],
    ['a tag', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: !!str 1\n'],
    ['duplicate keys', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n'],
    ['carriage returns', 'apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n'],
  ] as const) {
    test(`${name}: the full parse`, () => {
      const resources = parseManifestText(text).resources;
      assert.ok(resources.length > 0);
      assert.ok(resources.every((r) => hasNodeTree(r)));
    });
  }
});

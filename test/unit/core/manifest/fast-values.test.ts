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
  for (const c of cases) test(c.name, () => assertAgree(c.text, c.name));
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

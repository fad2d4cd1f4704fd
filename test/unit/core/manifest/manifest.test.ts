// The manifest model's behaviour beyond ranges: which documents become resources, what is
// reported, what the cache reuses, and how paths walk the tree.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  createManifestCache,
  forEachNode,
  locate,
  locatePathString,
  parseManifestText,
  parseManifestTextInSlices,
  type ManifestResource,
} from '../../../../server/src/core/manifest/manifest';
import { field, formatPath, key } from '../../../../server/src/core/ssa/path';
import { ruleFor } from '../../../../server/src/core/findings';

const configMap = (name: string, extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v${name}\n${extra}`;

function only(text: string): ManifestResource {
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, JSON.stringify(parsed.problems));
  return parsed.resources[0]!;
}

test('a broken document is reported and the documents around it are still read', () => {
  const text = [configMap('a'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [b\n', configMap('c')].join('---\n');
  const parsed = parseManifestText(text);
  assert.deepEqual(
    parsed.resources.map((r) => r.name),
    ['a', 'c'],
  );
  assert.ok(
    parsed.problems.length > 0 &&
      parsed.problems.every((p) => p.code === 'yaml-syntax' && ruleFor(p.code).severity === 'error'),
  );
  assert.ok(
    parsed.problems.every((p) => p.range.start.line >= 7 && p.range.start.line <= 10),
    'the problem is placed in the broken document',
  );
});

test('documents without apiVersion or kind are ignored without a word', () => {
  const text = [
    '# just a comment\n',
    'foo: bar\n',
    'kind: ConfigMap\n',
    '- a list\n',
    'plain text\n',
    configMap('real'),
  ].join('---\n');
  const parsed = parseManifestText(text);
  assert.deepEqual(
    parsed.resources.map((r) => r.name),
    ['real'],
  );
  assert.deepEqual(parsed.problems, []);
  assert.equal(parsed.totalDocuments, 6);
});

test('name, generateName and namespace are read from metadata', () => {
  const r = only('apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: run-\n  namespace: jobs\n');
  assert.deepEqual(
    [r.apiVersion, r.kind, r.name, r.generateName, r.namespace],
    ['batch/v1', 'Job', undefined, 'run-', 'jobs'],
  );
});

test('every object with an items list is read as a List, whatever its kind, as kubectl flattens it', () => {
  const text =
    'apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: one}\n- kind: NoApiVersion\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: two}\n';
  const parsed = parseManifestText(text);
  assert.deepEqual(
    parsed.resources.map((r) => [r.name, r.itemIndex]),
    [
      ['one', 0],
      ['two', 2],
    ],
  );
  assert.deepEqual(parsed.resources[1]!.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' } });
});

test('after a one-character edit only the edited document is parsed again, even when lines above it moved', () => {
  const docs = Array.from({ length: 50 }, (_, i) => configMap(`cm-${i}`));
  const cache = createManifestCache();
  const first = parseManifestText(docs.join('---\n'), cache);
  assert.equal(first.parsedDocuments, 50);
  // Insert a line into document 10: every document after it moves down a line.
  const edited = docs.map((d, i) => (i === 10 ? d.replace('data:\n', 'data:\n  added: x\n') : d));
  const second = parseManifestText(edited.join('---\n'), cache);
  assert.equal(second.parsedDocuments, 1);
  const moved = second.resources[30]!;
  const at = locate(moved, [field('data'), field('k')])!;
  assert.equal(
    at.keyRange.start.line,
    first.resources[30]!.range.start.line + 1 + 5,
    'positions of reused documents follow the shift',
  );
  assert.equal(second.resources[30]!.root, first.resources[30]!.root, 'the reused document is the same parse');
});

test('the cache keeps only the documents of the latest text', () => {
  const cache = createManifestCache();
  parseManifestText([configMap('a'), configMap('b')].join('---\n'), cache);
  parseManifestText(configMap('c'), cache);
  assert.equal(cache.documents.size, 1);
});

test('a duplicate key is a warning on the second key, and the last value wins as in kubectl', () => {
  const parsed = parseManifestText('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n');
  assert.equal(parsed.resources[0]!.name, 'b');
  assert.deepEqual(
    parsed.problems.map((p) => [p.code, ruleFor(p.code).severity, p.range.start.line, p.range.start.character]),
    [['duplicate-key', 'warning', 4, 2]],
  );
});

test('keys that kubectl reads as booleans collide with true/false keys', () => {
  const parsed = parseManifestText(
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  on: 1\n  "true": 2\n',
  );
  assert.deepEqual(parsed.resources[0]!.object.data, { true: 2 });
  assert.equal(parsed.problems[0]?.code, 'duplicate-key');
  assert.equal(locatePathString(parsed.resources[0]!, '.data.true')!.keyRange.start.line, 5);
});

test('a merge key overrides keys written before it and yields to keys written after it (go-yaml v2)', () => {
  const r = only(
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nbase: &b {p: 1, q: 2}\nx: {q: 3, <<: *b, r: 4}\nw: {<<: [{q: 5}, *b], p: 9}\n',
  );
  assert.deepEqual(r.object.x, { q: 2, p: 1, r: 4 });
  assert.deepEqual(r.object.w, { q: 5, p: 9 });
});

test('map-list items are matched on all their key fields, a missing one taking the schema default', () => {
  const r = only(
    'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - {port: 53, protocol: UDP}\n  - {port: 53}\n',
  );
  const tcp = [field('spec'), field('ports'), key({ port: 53, protocol: 'TCP' })];
  assert.equal(locate(r, tcp), undefined, 'without the default the item has no protocol');
  const withDefault = { keyFieldDefault: (_: unknown, f: string) => (f === 'protocol' ? 'TCP' : undefined) };
  assert.equal(locate(r, tcp, withDefault)!.valueRange.start.line, 6);
  assert.equal(
    locate(r, [field('spec'), field('ports'), key({ port: 53, protocol: 'UDP' })], withDefault)!.valueRange.start.line,
    5,
  );
  assert.equal(
    locate(r, [field('spec'), field('ports'), key({ port: '53', protocol: 'UDP' })], withDefault),
    undefined,
    '"53" is not 53',
  );
});

test('forEachNode walks every entry and item with index paths, aliases at each place of use', () => {
  const r = only('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\na: &x [1, {b: 2}]\nc: *x\n');
  const seen: string[] = [];
  forEachNode(r, (v) => {
    seen.push(formatPath(v.path));
  });
  assert.deepEqual(seen, [
    '.apiVersion',
    '.kind',
    '.metadata',
    '.metadata.name',
    '.a',
    '.a[0]',
    '.a[1]',
    '.a[1].b',
    '.c',
    '.c[0]',
    '.c[1]',
    '.c[1].b',
  ]);
  const pruned: string[] = [];
  forEachNode(r, (v) => {
    pruned.push(formatPath(v.path));
    return v.path.length < 1;
  });
  assert.ok(!pruned.includes('.metadata.name') && pruned.includes('.metadata'));
});

test('what kubectl refuses to decode is an error and gives no resource', () => {
  for (const bad of ['x: .inf\n', '~: 1\n', 'x: {<<: 5}\n', 'x: !!int abc\n', '? [a]\n: 1\n']) {
    const parsed = parseManifestText(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\n${bad}`);
    assert.equal(parsed.resources.length, 0, bad);
    assert.equal(parsed.problems[0]?.code, 'yaml-decode', bad);
    assert.equal(parsed.problems[0]?.range.start.line, 3, bad);
  }
});

test('a billion-laughs document is refused rather than expanded', () => {
  let text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 9; i++)
    text += `a${i}: &a${i} [${Array(10)
      .fill(`*a${i - 1}`)
      .join(', ')}]\n`;
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 0);
  assert.match(parsed.problems[0]!.message, /excessive aliasing/);
});

test('a __proto__ key is an ordinary key of the object', () => {
  const r = only('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata:\n  __proto__: x\n');
  assert.deepEqual(Object.keys(r.object.data as object), ['__proto__']);
  assert.equal(Object.getPrototypeOf(r.object.data), Object.prototype);
});

test('a JSON manifest is read like YAML', () => {
  const r = only('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}, "data": {"n": "1"}}');
  assert.deepEqual(r.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'j' }, data: { n: '1' } });
});

test('a --- inside a block scalar line does not split, one at the start of a line does', () => {
  const text = `${configMap('a', 'script: |\n  ---\n  more\n')}---\n${configMap('b')}`;
  const parsed = parseManifestText(text);
  assert.deepEqual(
    parsed.resources.map((r) => r.name),
    ['a', 'b'],
  );
  assert.equal((parsed.resources[0]!.object as { script: string }).script, '---\nmore\n');
});

test('the sliced parse gives the same result and hands the event loop back between documents', async () => {
  const text = Array.from({ length: 30 }, (_, i) => configMap(`s-${i}`)).join('---\n');
  let yields = 0;
  const sliced = await parseManifestTextInSlices(text, undefined, {
    sliceMs: 0,
    yieldToEventLoop: async () => {
      yields++;
    },
  });
  assert.deepEqual(sliced, parseManifestText(text));
  assert.equal(yields, 30);
});

// The editor contacts the cluster for a file of manifests only, and as soon as the parse knows it is one.
const firstResourceCases: { name: string; text: string; cached?: boolean; found: number | undefined }[] = [
  {
    name: 'objects from the first document on',
    text: [configMap('a'), configMap('b'), configMap('c')].join('---\n'),
    found: 1,
  },
  {
    name: 'an object after YAML that is none',
    text: ['replicaCount: 2\n', 'name: ci\n', configMap('late'), configMap('later')].join('---\n'),
    found: 3,
  },
  {
    name: 'YAML with objects only below its top level',
    text: 'extraObjects:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: extra\n---\nname: ci\n',
    found: undefined,
  },
  {
    name: 'a parse of cached documents alone, at its end',
    text: [configMap('a'), configMap('b')].join('---\n'),
    cached: true,
    found: 2,
  },
];
for (const c of firstResourceCases) {
  test(`the sliced parse says when it finds the first object: ${c.name}`, async () => {
    const cache = createManifestCache();
    if (c.cached) parseManifestText(c.text, cache);
    const events: string[] = [];
    const firsts: (string | undefined)[] = [];
    const parsed = await parseManifestTextInSlices(c.text, cache, {
      sliceMs: 0,
      yieldToEventLoop: async () => {
        events.push('yield');
      },
      onFirstResource: (first) => {
        events.push('found');
        firsts.push(first.name);
      },
    });
    // It is handed the first object, so that the cluster can be asked for it at once.
    if (c.found !== undefined) assert.deepEqual(firsts, [parsed.resources[0]!.name]);
    const at = events.indexOf('found');
    assert.equal(events.filter((e) => e === 'found').length, c.found === undefined ? 0 : 1, events.join(' '));
    // The documents read before it, each followed by a yield: found right after the one that holds it.
    if (c.found !== undefined) assert.equal(events.slice(0, at).length, c.cached ? 0 : c.found - 1, events.join(' '));
  });
}

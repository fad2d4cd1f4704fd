// The editor's places for every object of a big file, read without building node trees: the code
// lens above each object (manifest-source.ts objectStart) and the object a hover or an ownership
// hint is about (workspace.ts resourceAt, documentLines). Each is held to what the node tree says,
// on every manifest fixture and on hand-written texts, and shown to build no tree it does not need.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  absoluteRange,
  hasNodeTree,
  parseManifestText,
  rangeContains,
  type ManifestResource,
} from '../../../server/src/core/manifest/manifest';
import type { AnalyzedResource } from '../../../server/src/lsp/document-analysis';
import { objectStart } from '../../../server/src/lsp/manifest-source';
import { documentLines, resourceAt } from '../../../server/src/lsp/workspace';
import { fixtures } from '../../fuzz/generate';

const analyzed = (resources: readonly ManifestResource[]): AnalyzedResource[] =>
  resources.map((resource) => ({ resource, facts: undefined, findings: [] }));

/** Where the node tree starts the object: its first key, else its root. */
const treeStart = (r: ManifestResource) => absoluteRange(r, r.root.entries[0]?.keyRange ?? r.root.range).start;

const handWritten = [
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
  '# a comment\n\n---\n# another\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---   # marker with a comment\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n',
  '"apiVersion": v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
  '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}} {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}\n',
  'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
  '---x: 1\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
];

describe("a code lens's place without the node tree", () => {
  test('is where the node tree starts the object, on every fixture and hand-written text', () => {
    const texts = [...fixtures(), ...handWritten];
    assert.ok(texts.length > 50);
    let fromText = 0;
    for (const [i, text] of texts.entries()) {
      const lazy = parseManifestText(text).resources;
      const full = parseManifestText(text, undefined, { valuesFirst: false }).resources;
      assert.equal(lazy.length, full.length);
      lazy.forEach((r, j) => {
        const read = !hasNodeTree(r);
        const start = objectStart(r);
        if (read && !hasNodeTree(r)) fromText++;
        assert.deepEqual(start, treeStart(full[j]!), `text ${i}, object ${j}: ${JSON.stringify(text.slice(0, 60))}`);
      });
    }
    assert.ok(fromText > 20, `placed from the text: ${fromText}`);
  });

  test("a plain Deployment's lens builds no node tree", () => {
    const text = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n';
    const [r] = parseManifestText(`---\n# web\n${text}---\n${text}`).resources;
    assert.ok(r);
    assert.deepEqual(objectStart(r), { line: 2, character: 0 });
    assert.equal(hasNodeTree(r), false);
  });
});

describe('the object at a position, looked for where its document is', () => {
  test('is the one whose range holds it, for every line and column of every hand-written text', () => {
    for (const text of handWritten) {
      const resources = analyzed(parseManifestText(text).resources);
      const lines = text.split('\n');
      lines.forEach((line, l) => {
        for (let c = 0; c <= line.length; c++) {
          const p = { line: l, character: c };
          assert.equal(
            resourceAt(resources, p),
            resources.find(({ resource }) => rangeContains(resource.range, p)),
            `${JSON.stringify(text.slice(0, 40))} at ${l}:${c}`,
          );
        }
      });
    }
  });

  test('a hover on the last of many documents builds one node tree', () => {
    const doc = (i: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c-${i}\ndata:\n  a: b\n`;
    const text = Array.from({ length: 200 }, (_, i) => doc(i)).join('---\n');
    const resources = analyzed(parseManifestText(text).resources);
    const last = text.split('\n').length - 3;
    const hit = resourceAt(resources, { line: last, character: 2 });
    assert.equal(hit?.resource.name, 'c-199');
    assert.deepEqual(
      resources.filter(({ resource }) => hasNodeTree(resource)).map(({ resource }) => resource.name),
      ['c-199'],
    );
  });

  test('documentLines never passes over a document whose range meets the lines', () => {
    for (const text of [...handWritten, ...fixtures().slice(0, 200)]) {
      const resources = analyzed(parseManifestText(text).resources);
      const mayHold = documentLines(resources);
      const count = text.split('\n').length;
      resources.forEach(({ resource }, i) => {
        for (let from = 0; from < count; from += 3)
          for (const to of [from, from + 2]) {
            const meets = resource.range.start.line <= to && resource.range.end.line >= from;
            if (meets)
              assert.ok(mayHold(i, from, to), `${JSON.stringify(text.slice(0, 40))}: object ${i}, ${from}-${to}`);
          }
      });
    }
  });
});

// Values first, positions when asked (core/manifest/fast-values.ts) must give what the full parse
// gives: the one comparison, for the unit test on the fixtures and for the fuzz campaign.
import assert from 'node:assert/strict';
import {
  hasNodeTree,
  locate,
  locateScalarInText,
  parseManifestText,
  type ManifestCache,
  type ManifestNode,
  type ManifestResource,
  type ParsedManifest,
} from '../../server/src/core/manifest/manifest';
import type { FieldPath } from '../../server/src/core/ssa/path';

/** Everything a caller can read of a parse, node trees included (reading them builds the lazy ones). */
function everything(parsed: ParsedManifest): unknown {
  return {
    // Where the `yaml` parser runs out of stack on a document nested too deeply depends on the
    // stack frames of the moment (V8 tiers its functions up), not on the text, and so does whether
    // it says so once or twice: compared as the set of such messages.
    problems: [
      ...parsed.problems.filter((p) => p.code !== 'too-large'),
      ...new Set(parsed.problems.filter((p) => p.code === 'too-large').map((p) => p.message)),
    ],
    resources: parsed.resources.map((r: ManifestResource) => ({
      apiVersion: r.apiVersion,
      kind: r.kind,
      name: r.name,
      generateName: r.generateName,
      namespace: r.namespace,
      object: r.object,
      root: r.root,
      range: r.range,
      documentIndex: r.documentIndex,
      itemIndex: r.itemIndex,
      lineOffset: r.lineOffset,
      documentText: r.documentText,
    })),
  };
}

/** Every chain of map keys the tree writes, and beside each one a key it does not write. */
function keyChains(node: ManifestNode, above: FieldPath = []): FieldPath[] {
  if (node.kind !== 'map') return [];
  return [
    [...above, { kind: 'field', name: 'notWritten' }],
    ...node.entries.flatMap((e) => {
      const path: FieldPath = [...above, { kind: 'field', name: e.key }];
      return [path, ...keyChains(e.value, path)];
    }),
  ];
}

/**
 * A field placed from the text, before any tree is built (core/manifest/written-scalar.ts), is
 * placed where the full parse's tree places it, and only a scalar is; a key that is not written is
 * not found.
 */
function assertTextPlacesAgree(fast: ParsedManifest, full: ParsedManifest, what: string): void {
  fast.resources.forEach((r, i) => {
    const tree = full.resources[i]!;
    if (hasNodeTree(r)) return;
    for (const path of keyChains(tree.root)) {
      const fromText = locateScalarInText(r, path);
      if (!fromText) continue;
      const fromTree = locate(tree, path);
      const where = `${what}: document ${r.documentIndex}, ${path.map((e) => (e.kind === 'field' ? e.name : '?')).join('.')}`;
      assert.equal(fromTree?.node.kind, 'scalar', `${where}: placed from the text, not a scalar in the tree`);
      assert.deepEqual(fromText, { keyRange: fromTree.keyRange, valueRange: fromTree.valueRange }, where);
    }
    assert.ok(!hasNodeTree(r), `${what}: placing from the text built a tree`);
  });
}

/** Parses `text` both ways (the first with `cache`, as the editor does) and asserts they agree. */
export function assertParsesAgree(text: string, what: string, cache?: ManifestCache): ParsedManifest {
  const fast = parseManifestText(text, cache);
  const full = parseManifestText(text, undefined, { valuesFirst: false });
  // Values are compared before any tree is built: they come from the cheap read.
  assert.deepEqual(
    fast.resources.map((r) => r.object),
    full.resources.map((r) => r.object),
    `${what}: values`,
  );
  assertTextPlacesAgree(fast, full, what);
  assert.deepEqual(everything(fast), everything(full), `${what}: resources, trees, ranges and problems`);
  return fast;
}

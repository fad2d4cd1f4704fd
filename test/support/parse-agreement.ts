// Values first, positions when asked (core/manifest/fast-values.ts) must give what the full parse
// gives: the one comparison, for the unit test on the fixtures and for the fuzz campaign.
import assert from 'node:assert/strict';
import {
  hasNodeTree,
  locate,
  locateScalarInText,
  parseManifestText,
  type LocateOptions,
  type ManifestCache,
  type ManifestNode,
  type ManifestResource,
  type ParsedManifest,
} from '../../server/src/core/manifest/manifest';
import { field, formatPath, index, key, setValue, type FieldPath } from '../../server/src/core/ssa/path';

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

/**
 * Every path the tree writes through map keys, and, at every block or flow list, into each of its
 * items: a scalar item by index and by value; a map item's entries by index, and its scalar
 * fields each by itself as the key (and with a `protocol` left to its default, as a port's);
 * beside each map a key it does not write. Below an item the paths go on one way only (by its
 * first scalar field, else by index), so their number stays linear in the document.
 */
function writtenPaths(node: ManifestNode, above: FieldPath = []): FieldPath[] {
  if (node.kind === 'map')
    return [
      [...above, field('notWritten')],
      ...node.entries.flatMap((e) => {
        const path = [...above, field(e.key)];
        return [path, ...writtenPaths(e.value, path)];
      }),
    ];
  if (node.kind !== 'list') return [];
  return node.items.flatMap((item, i): FieldPath[] => {
    const value = item.value;
    const byIndex = [...above, index(i)];
    if (value.kind === 'scalar') return [byIndex, [...above, setValue(value.value)]];
    if (value.kind !== 'map') return writtenPaths(value, byIndex);
    const defaulted = !value.entries.some((e) => e.key === 'protocol');
    const keyFields = value.entries.flatMap((e) => (e.value.kind === 'scalar' ? [{ [e.key]: e.value.value }] : []));
    const byKey = keyFields.flatMap((fields) => {
      const [name] = Object.keys(fields) as [string];
      return [
        [...above, key(fields), field(name)],
        ...(defaulted ? [[...above, key({ ...fields, protocol: DEFAULT_PROTOCOL }), field(name)]] : []),
      ];
    });
    if (!keyFields[0]) return [...byKey, ...writtenPaths(value, byIndex)];
    return [
      ...byKey,
      ...value.entries.map((e) => [...byIndex, field(e.key)]),
      ...writtenPaths(value, [...above, key(keyFields[0])]),
    ];
  });
}

/** The key-field default both placements are given: a port's protocol, as the schema says. */
const DEFAULT_PROTOCOL = 'TCP';
const locateOptions: LocateOptions = {
  keyFieldDefault: (_list, name) => (name === 'protocol' ? DEFAULT_PROTOCOL : undefined),
};

/**
 * A field placed from the text, before any tree is built (core/manifest/written-scalar.ts), is
 * placed where the full parse's tree places it, and only a scalar is; a key that is not written is
 * not found. Returns how many paths through a list item were placed from the text.
 */
function assertTextPlacesAgree(fast: ParsedManifest, full: ParsedManifest, what: string): number {
  let placed = 0;
  fast.resources.forEach((r, i) => {
    const tree = full.resources[i]!;
    if (hasNodeTree(r)) return;
    for (const path of writtenPaths(tree.root)) {
      const fromText = locateScalarInText(r, path, locateOptions);
      if (!fromText) continue;
      if (path.some((e) => e.kind !== 'field')) placed++;
      const fromTree = locate(tree, path, locateOptions);
      const where = `${what}: document ${r.documentIndex}, ${formatPath(path)}`;
      assert.equal(fromTree?.node.kind, 'scalar', `${where}: placed from the text, not a scalar in the tree`);
      assert.deepEqual(fromText, { keyRange: fromTree.keyRange, valueRange: fromTree.valueRange }, where);
    }
    assert.ok(!hasNodeTree(r), `${what}: placing from the text built a tree`);
  });
  return placed;
}

/**
 * Parses `text` both ways (the first with `cache`, as the editor does) and asserts they agree;
 * says how many paths through list items the text placed.
 */
export function assertParsesAgree(
  text: string,
  what: string,
  cache?: ManifestCache,
): ParsedManifest & { readonly placedThroughItems: number } {
  const fast = parseManifestText(text, cache);
  const full = parseManifestText(text, undefined, { valuesFirst: false });
  // Values are compared before any tree is built: they come from the cheap read.
  assert.deepEqual(
    fast.resources.map((r) => r.object),
    full.resources.map((r) => r.object),
    `${what}: values`,
  );
  const placedThroughItems = assertTextPlacesAgree(fast, full, what);
  assert.deepEqual(everything(fast), everything(full), `${what}: resources, trees, ranges and problems`);
  return Object.assign(fast, { placedThroughItems });
}

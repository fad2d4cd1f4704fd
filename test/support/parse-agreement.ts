// Values first, positions when asked (core/manifest/fast-values.ts) must give what the full parse
// gives: the one comparison, for the unit test on the fixtures and for the fuzz campaign.
import assert from 'node:assert/strict';
import {
  parseManifestText,
  type ManifestCache,
  type ManifestResource,
  type ParsedManifest,
} from '../../server/src/core/manifest/manifest';

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
  assert.deepEqual(everything(fast), everything(full), `${what}: resources, trees, ranges and problems`);
  return fast;
}

// A change local to one Kustomize overlay: a strategic-merge patch in the overlay's folder, listed
// under its kustomization's `patches:`. What a patch may hold and which files are the overlay's own
// patches are read here; which change is sound is decided by the caller (core/findings/rendered.ts).
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json';
import type { EditResult, TextEdit } from '../manifest/edits';
import { renderBlock } from '../manifest/edits-render';
import { lineContentEnd, lineOf, lineText, offsetAt, rangeAt, textLines } from '../manifest/edits-text';
import { parseManifestText, type ObjectTarget } from '../manifest/manifest';

/** The kustomization as plain data, or undefined when it does not read as one map. */
function kustomizationValue(text: string): JsonObject | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  const value = doc.toJS() as JsonValue;
  return value === null ? {} : isJsonObject(value) ? value : undefined;
}

/**
 * The strategic-merge patch files a kustomization names for the objects they name themselves
 * (`patches:` entries with a `path` and no `target`, `patchesStrategicMerge:`), as written
 * (relative to the kustomization's folder). A patch with a `target` applies to whatever it selects,
 * so adding a field to it could change other objects: it is left out.
 */
export function ownStrategicPatches(kustomizationText: string): string[] {
  const k = kustomizationValue(kustomizationText);
  if (!k) return [];
  const out: string[] = [];
  if (Array.isArray(k.patches)) {
    for (const p of k.patches)
      if (isJsonObject(p) && typeof p.path === 'string' && p.target === undefined && p.patch === undefined)
        out.push(p.path);
  }
  if (Array.isArray(k.patchesStrategicMerge))
    for (const p of k.patchesStrategicMerge) if (typeof p === 'string' && !p.includes('\n')) out.push(p);
  return out;
}

/**
 * Adds `- path: REF` at the end of the kustomization's `patches:` (a block list), or a `patches:`
 * list at its end when it has none. Refused for a `patches:` written another way (a flow list, an
 * alias), and checked: the edited text must read as the same kustomization with one more patch.
 */
export function addPatchEntryEdits(kustomizationText: string, ref: string): EditResult {
  const before = kustomizationValue(kustomizationText);
  if (!before) return { edits: undefined, reason: 'the kustomization does not read as a map of fields' };
  const lines = textLines(kustomizationText);
  const doc = parseDocument(kustomizationText);
  const entry = renderBlock([{ path: ref }], 0, { indentUnit: 2, indentlessSequences: true });
  let edit: TextEdit;
  const patches = isMap(doc.contents)
    ? doc.contents.items.find((p) => isScalar(p.key) && p.key.value === 'patches')
    : undefined;
  if (!patches) {
    if (before.patches !== undefined)
      return {
        edits: undefined,
        reason: "the kustomization's patches are not written as its own key; add the patch by hand",
      };
    // At the end, on a line of its own.
    const end = kustomizationText.length;
    const lead = end === 0 || kustomizationText.endsWith('\n') ? '' : lines.eol;
    edit = {
      range: rangeAt(lines, end, end),
      newText: `${lead}patches:${lines.eol}${entry.join(lines.eol)}${lines.eol}`,
    };
  } else {
    const seq = patches.value;
    if (!isSeq(seq) || seq.flow || seq.items.length === 0 || !seq.range)
      return { edits: undefined, reason: "the kustomization's patches are not a block list; add the patch by hand" };
    const first = seq.items[0] as { range?: [number, number, number] };
    if (!first.range)
      return { edits: undefined, reason: "the kustomization's patches cannot be read; add the patch by hand" };
    // The items' `-` sits where the first item's line starts its text.
    const firstLine = lineText(lines, lineOf(lines, first.range[0]));
    const column = firstLine.search(/\S/);
    if (column < 0 || firstLine[column] !== '-')
      return { edits: undefined, reason: "the kustomization's patches are not a block list; add the patch by hand" };
    const lastLine = lineOf(lines, Math.max(seq.range[1] - 1, seq.range[0]));
    const at = lineContentEnd(lines, lastLine);
    edit = {
      range: rangeAt(lines, at, at),
      newText: `${lines.eol}${entry.map((l) => ' '.repeat(column) + l).join(lines.eol)}`,
    };
  }
  const start = lines.text.slice(0, offsetAt(lines, edit.range.start));
  const after = kustomizationValue(`${start}${edit.newText}${lines.text.slice(start.length)}`);
  const wanted = { ...before, patches: [...((before.patches as JsonValue[] | undefined) ?? []), { path: ref }] };
  if (!after || !jsonEqual(after, wanted))
    return { edits: undefined, reason: 'adding the patch would change the kustomization otherwise; add it by hand' };
  return { edits: [edit] };
}

/**
 * The text of a new strategic-merge patch: the object's identity (as its resource file names it:
 * kustomize matches a patch by the object's original name too) and `value` at the path of map
 * keys `keys` (null deletes the field from what the overlay renders). Undefined when the text
 * would not read back as that patch.
 */
export function strategicPatchText(
  identity: ObjectTarget & { readonly name: string },
  keys: readonly string[],
  value: JsonValue,
): string | undefined {
  const patch: JsonObject = {
    apiVersion: identity.apiVersion,
    kind: identity.kind,
    metadata: { name: identity.name, ...(identity.namespace !== undefined ? { namespace: identity.namespace } : {}) },
  };
  if (keys.length === 0 || keys[0] === 'apiVersion' || keys[0] === 'kind') return undefined;
  let container = patch;
  for (const key of keys.slice(0, -1)) {
    const next = container[key];
    if (next !== undefined && !isJsonObject(next)) return undefined;
    const map: JsonObject = next ?? {};
    Object.defineProperty(container, key, { value: map, enumerable: true, writable: true, configurable: true });
    container = map;
  }
  const last = keys.at(-1)!;
  if (container === patch.metadata && (last === 'name' || last === 'namespace')) return undefined;
  Object.defineProperty(container, last, { value, enumerable: true, writable: true, configurable: true });
  const text = `${renderBlock(patch, 0, { indentUnit: 2, indentlessSequences: true }).join('\n')}\n`;
  const read = parseManifestText(text);
  return read.problems.length === 0 && read.resources.length === 1 && jsonEqual(read.resources[0]!.object, patch)
    ? text
    : undefined;
}

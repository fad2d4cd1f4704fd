// Every field of the manifest fixtures (test/fixtures/manifest) removed, and replaced by values of
// every shape, one at a time: on plain YAML each edit is offered, and the text it leaves parses
// without problems, still holds the same objects, and the edited object is the edit alone: the
// field gone (with the parents it emptied) or holding the new value, every other field as it was.
// Only what names the object is kept, and only anchors, aliases and merges may make an edit refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  applyTextEdits,
  removeFieldEdits,
  replaceValueEdits,
  type EditResult,
} from '../../../../server/src/core/manifest/edits';
import { jsonEqual, type JsonValue } from '../../../../server/src/core/json';
import {
  forEachNode,
  locate,
  nodeToJson,
  parseManifestText,
  type ParsedManifest,
} from '../../../../server/src/core/manifest/manifest';
import { formatPath, type FieldPath } from '../../../../server/src/core/ssa/path';

const dir = path.join(import.meta.dirname, '../../../fixtures/manifest');
const manifests = fs.readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f) && !f.endsWith('.expect.yaml'));

const values: JsonValue[] = [
  'yes',
  ['a', { b: 'on' }],
  { limits: { cpu: '500m' }, args: ['--x', '0755'] },
  'two\nlines',
];

const IDENTITY = /^\.(apiVersion|kind|metadata(\.name|\.namespace|\.generateName)?)$/;
const ALLOWED_REFUSAL = /names the object|anchor|alias|merge|still be there/;

/** What a user would notice is wrong with an offered edit, or undefined. */
function problemWith(
  text: string,
  before: ParsedManifest,
  index: number,
  result: EditResult,
  fieldPath: FieldPath,
  value?: JsonValue,
): string | undefined {
  if (!result.edits) return undefined;
  const resource = before.resources[index]!;
  const after = parseManifestText(applyTextEdits(text, result.edits));
  const known = new Set(before.problems.map((p) => p.message));
  const added = after.problems.filter((p) => !known.has(p.message));
  if (added.length > 0) return `leaves problems: ${added.map((p) => p.message).join('; ')}`;
  if (after.resources.length !== before.resources.length) return 'changes the number of objects';
  for (let i = 0; i < before.resources.length; i++) {
    if (i !== index && !jsonEqual(before.resources[i]!.object, after.resources[i]!.object))
      return `changes object ${i}`;
  }
  // The edited object as a whole: exactly the edit, every other field as it was. The expectation
  // is worked out on plain JSON here, not with the product's own tree.
  const got = after.resources[index]!.object;
  const expected =
    value !== undefined ? [withValue(resource.object, fieldPath, value)] : withoutField(resource.object, fieldPath);
  if (expected.some((e) => jsonEqual(e, got))) return undefined;
  const at = locate(after.resources[index]!, fieldPath);
  if (value !== undefined && !(at && jsonEqual(nodeToJson(at.node), value)))
    return `reads back ${at ? JSON.stringify(nodeToJson(at.node)) : 'nothing'}`;
  return `the object is not the edit alone: ${JSON.stringify(got)}, expected ${JSON.stringify(expected[0])}`;
}

type Json = JsonValue | undefined;

/** Copy of `v` with `f` applied to what `path` points at (undefined removes it). */
function update(v: Json, path: FieldPath, f: (old: Json) => Json): Json {
  if (path.length === 0) return f(v);
  const [head, ...rest] = path;
  if (head!.kind === 'field' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k !== head!.name) out[k] = x;
      else {
        const nx = update(x, rest, f);
        if (nx !== undefined) out[k] = nx;
      }
    }
    return out;
  }
  if (head!.kind === 'index' && Array.isArray(v)) {
    return v.flatMap((x, i) => {
      if (i !== head!.index) return [x];
      const nx = update(x, rest, f);
      return nx === undefined ? [] : [nx];
    });
  }
  throw new Error(`the path ${formatPath(path)} does not fit ${JSON.stringify(v)}`);
}

function withValue(object: JsonValue, path: FieldPath, value: JsonValue): JsonValue {
  return update(object, path, () => value) as JsonValue;
}

/**
 * The object without the field: as such, and with each number of the parents the removal left
 * empty removed too (a removal takes the maps and lists it empties with it, never the object).
 */
function withoutField(object: JsonValue, path: FieldPath): JsonValue[] {
  const out = [update(object, path, () => undefined) as JsonValue];
  for (let depth = path.length - 1; depth > 0; depth--) {
    const parent = path.slice(0, depth);
    const left = locateJson(out[out.length - 1]!, parent);
    const empty = Array.isArray(left)
      ? left.length === 0
      : left !== null && typeof left === 'object' && Object.keys(left).length === 0;
    if (!empty) break;
    out.push(update(out[out.length - 1]!, parent, () => undefined) as JsonValue);
  }
  return out;
}

function locateJson(v: Json, path: FieldPath): Json {
  let at = v;
  for (const e of path) {
    if (e.kind === 'field' && at !== null && typeof at === 'object' && !Array.isArray(at)) at = at[e.name];
    else if (e.kind === 'index' && Array.isArray(at)) at = at[e.index];
    else return undefined;
  }
  return at;
}

for (const file of manifests) {
  test(`${file}: every field can be removed and replaced, or is refused for a reason a user can act on`, () => {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const parsed = parseManifestText(text);
    const plain = !/[&*]\w/.test(text);
    const failures: string[] = [];
    let offered = 0;
    parsed.resources.forEach((resource, index) => {
      forEachNode(resource, ({ path: fieldPath }) => {
        const name = formatPath(fieldPath);
        const attempts: [string, EditResult, JsonValue | undefined][] = [
          ['remove', removeFieldEdits(text, resource, fieldPath), undefined],
          ...values.map((v): [string, EditResult, JsonValue] => [
            `replace by ${JSON.stringify(v)}`,
            replaceValueEdits(text, resource, fieldPath, v),
            v,
          ]),
        ];
        for (const [what, result, value] of attempts) {
          // apiVersion and kind replaced by odd values stop naming an object: that is refused.
          if (value !== undefined && /^\.(apiVersion|kind)$/.test(name)) continue;
          if (!result.edits) {
            const allowed = ALLOWED_REFUSAL.test(result.reason) && (!plain || IDENTITY.test(name));
            if (!allowed) failures.push(`${name} ${what}: refused: ${result.reason}`);
            continue;
          }
          offered++;
          const problem = problemWith(text, parsed, index, result, fieldPath, value);
          if (problem) failures.push(`${name} ${what}: ${problem}`);
        }
      });
    });
    assert.deepEqual(failures, []);
    assert.ok(offered > 20, `${offered} edits offered`);
  });
}

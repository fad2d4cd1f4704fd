// Every field of the manifest fixtures (test/fixtures/manifest) removed, and replaced by values of
// every shape, one at a time: on plain YAML each edit is offered, and the text it leaves parses
// without problems, still holds the same objects, and no longer holds the field as it was. Only
// what names the object is kept, and only anchors, aliases and merges may make an edit refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { applyTextEdits, removeFieldEdits, replaceValueEdits, type EditResult } from '../../server/src/core/edits';
import { jsonEqual, type JsonValue } from '../../server/src/core/json';
import { forEachNode, locate, nodeToJson, parseManifestText, type ParsedManifest } from '../../server/src/core/manifest';
import { formatPath, type FieldPath } from '../../server/src/core/path';

const dir = path.join(import.meta.dirname, '../fixtures/manifest');
const manifests = fs.readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f) && !f.endsWith('.expect.yaml'));

const values: JsonValue[] = ['yes', ['a', { b: 'on' }], { limits: { cpu: '500m' }, args: ['--x', '0755'] }, 'two\nlines'];

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
    if (i !== index && !jsonEqual(before.resources[i]!.object, after.resources[i]!.object)) return `changes object ${i}`;
  }
  const at = locate(after.resources[index]!, fieldPath);
  if (value !== undefined) return at && jsonEqual(nodeToJson(at.node), value) ? undefined : `reads back ${at ? JSON.stringify(nodeToJson(at.node)) : 'nothing'}`;
  if (!at) return undefined;
  // With list indexes in the path, the same path may now find the next item: the list must then
  // have one item less (or be gone with the parents it emptied).
  let lastIndex = -1;
  fieldPath.forEach((e, i) => {
    if (e.kind === 'index') lastIndex = i;
  });
  if (lastIndex < 0) return 'the field is still there';
  const listBefore = locate(resource, fieldPath.slice(0, lastIndex))?.node;
  const listAfter = locate(after.resources[index]!, fieldPath.slice(0, lastIndex))?.node;
  const shrank = !listAfter || (listAfter.kind === 'list' && listBefore?.kind === 'list' && listAfter.items.length === listBefore.items.length - 1);
  return shrank ? undefined : 'the field is still there';
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
          ...values.map((v): [string, EditResult, JsonValue] => [`replace by ${JSON.stringify(v)}`, replaceValueEdits(text, resource, fieldPath, v), v]),
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

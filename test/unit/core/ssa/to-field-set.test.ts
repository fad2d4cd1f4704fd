// The field set an apply records (ToFieldSet), checked against the FieldsV1 the server writes for
// the applier: test/fixtures/engine/fieldset.yaml.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../../server/src/core/json';
import {
  decodeFieldsV1,
  differenceSets,
  fieldSetFromPaths,
  setPaths,
  type FieldSet,
} from '../../../../server/src/core/ssa/field-set';
import {
  differenceWithNamedMembers,
  ensureNamedFieldsAreMembers,
  toFieldSet,
} from '../../../../server/src/core/ssa/to-field-set';
import { removeItems } from '../../../../server/src/core/ssa/merge';
import { formatServerPath } from '../../../../server/src/core/ssa/messages';
import { rootTypeFor, schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';

const fixtures = path.join(import.meta.dirname, '..', '..', '..', 'fixtures');
const { schema } = schemaFromOpenApi(
  ['api__v1.json', 'apis__apps__v1.json'].map(
    (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'openapi', f), 'utf8')) as JsonValue,
  ),
);
// stripmeta.go: never recorded for any manager.
const stripped = fieldSetFromPaths(
  [['apiVersion'], ['kind'], ['metadata'], ['metadata', 'name'], ['metadata', 'namespace']].map((p) =>
    p.map((name) => ({ kind: 'field' as const, name })),
  ),
);

interface Case {
  name: string;
  config: JsonObject;
  fieldsV1: JsonObject;
  /** Written by test/fixtures/capture.ts: the applier's managedFields entry as the server sent it (JSON text). */
  captured?: { server: string; managedFieldsEntry?: string };
}
const cases = parse(fs.readFileSync(path.join(fixtures, 'engine', 'fieldset.yaml'), 'utf8')) as Case[];

describe('toFieldSet', () => {
  for (const c of cases) {
    test(c.name, () => {
      const root = rootTypeFor(schema, String(c.config.apiVersion), String(c.config.kind));
      assert.ok(root, 'the kind is in the schema');
      const { set, problems } = toFieldSet(schema, root, c.config);
      assert.deepEqual(problems, []);
      // The server's own record is the judge: decoded here from the raw entry it sent.
      assert.ok(
        c.captured?.managedFieldsEntry,
        'captured from the real server (node --import tsx test/fixtures/capture.ts fieldsets)',
      );
      const entry = JSON.parse(c.captured.managedFieldsEntry) as JsonObject;
      assert.deepEqual([entry.manager, entry.operation, entry.fieldsType], ['kubectl', 'Apply', 'FieldsV1']);
      const members = (s: FieldSet) => setPaths(s).map(formatServerPath);
      assert.deepEqual(members(differenceSets(set, stripped)), members(decodeFieldsV1(entry.fieldsV1)));
      // The readable copy in the fixture says the same.
      assert.deepEqual(members(decodeFieldsV1(c.fieldsV1)), members(decodeFieldsV1(entry.fieldsV1)));
    });
  }

  test('with named fields as members: the set ensureNamedFieldsAreMembers makes of it, in one walk', () => {
    for (const c of cases) {
      const root = rootTypeFor(schema, String(c.config.apiVersion), String(c.config.kind));
      assert.ok(root);
      const members = (s: FieldSet) => setPaths(s).map(formatServerPath);
      const ensured = ensureNamedFieldsAreMembers(schema, root, toFieldSet(schema, root, c.config).set);
      assert.deepEqual(members(toFieldSet(schema, root, c.config, true).set), members(ensured), c.name);
    }
  });
});

// The prune's shortcuts (core/ssa/predict.ts prune), held to what they stand for on every case.
describe('the prune: sets made without walking everything again', () => {
  const members = (s: FieldSet) => setPaths(s).map(formatServerPath);
  const typed = cases.map((c) => {
    const root = rootTypeFor(schema, String(c.config.apiVersion), String(c.config.kind));
    assert.ok(root);
    return { c, root };
  });

  test('a value removeItems made of another: its set from the other set where the objects are the same', () => {
    let compared = 0;
    for (const { c, root } of typed) {
      const whole = toFieldSet(schema, root, c.config, true).set;
      // Each path taken away in turn, as the prune takes away what the applier owned.
      for (const p of setPaths(whole)) {
        const smaller = removeItems(schema, root, c.config, fieldSetFromPaths([p]));
        const from = toFieldSet(schema, root, smaller, true, { value: c.config, set: whole }).set;
        const walked = toFieldSet(schema, root, smaller, true).set;
        assert.deepEqual(members(from), members(walked), `${c.name}: without ${formatServerPath(p)}`);
        assert.deepEqual(members(differenceSets(whole, from)), members(differenceSets(whole, walked)));
        compared++;
      }
    }
    assert.ok(compared > 50, `${compared} values compared`);
  });

  const labelKeys = cases.flatMap(({ config }) =>
    isJsonObject(config.metadata) && isJsonObject(config.metadata.labels)
      ? Object.keys(config.metadata.labels).map((k) => `f:${k}`)
      : [],
  );

  test("a set minus another's named fields made members: the difference with ensureNamedFieldsAreMembers", () => {
    assert.ok(labelKeys.length > 0, 'a case has labels');
    for (const a of typed)
      for (const b of typed) {
        if (a.root.named !== b.root.named) continue;
        const left = toFieldSet(schema, a.root, a.c.config, true).set;
        const sets = [
          decodeFieldsV1(b.c.fieldsV1),
          toFieldSet(schema, b.root, b.c.config).set,
          // Something owned below every label (a set is data, read from any server): a label is not a named field.
          decodeFieldsV1({
            'f:metadata': { 'f:labels': Object.fromEntries(labelKeys.map((k) => [k, { 'f:x': {} }])) },
          }),
        ];
        for (const set of sets)
          assert.deepEqual(
            members(differenceWithNamedMembers(schema, a.root, left, set)),
            members(differenceSets(left, ensureNamedFieldsAreMembers(schema, a.root, set))),
            `${a.c.name} minus ${b.c.name}`,
          );
      }
  });
});

// FieldsV1 decoding and set algebra, driven by test/fixtures/engine/fieldsv1.yaml.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  decodeFieldsV1,
  differenceSets,
  FieldPathWalk,
  FieldSetBuilder,
  insertPath,
  newFieldSet,
  pathElementKey,
  type FieldSet,
  hasPath,
  intersectSets,
  leafSet,
  recursiveDifferenceSets,
  setPaths,
  unionSets,
} from '../../../../server/src/core/ssa/field-set';
import { formatServerPath } from '../../../../server/src/core/ssa/messages';
import type { PathElement } from '../../../../server/src/core/ssa/path';

interface Case {
  name: string;
  fieldsV1: string;
  members: string[];
}
const cases = parse(
  fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'engine', 'fieldsv1.yaml'), 'utf8'),
) as Case[];
const members = (json: string): string[] => setPaths(decodeFieldsV1(JSON.parse(json))).map(formatServerPath);

describe('FieldsV1', () => {
  for (const c of cases) {
    test(c.name, () => {
      const set = decodeFieldsV1(JSON.parse(c.fieldsV1));
      assert.deepEqual(setPaths(set).map(formatServerPath), c.members);
      for (const p of setPaths(set)) assert.ok(hasPath(set, p));
    });
  }

  test('a prefix is not a member: owning an item marker is not owning its image', () => {
    const set = decodeFieldsV1({ 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {} } } } });
    const item = setPaths(set)[0];
    assert.ok(item);
    assert.equal(hasPath(set, [...item, { kind: 'field', name: 'image' }]), false);
    assert.equal(hasPath(set, item.slice(0, 2)), false);
  });

  test('set algebra works on exact paths', () => {
    const a = decodeFieldsV1({
      'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': { '.': {}, 'f:x': {} } },
    });
    const b = decodeFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:x': {} } }, 'f:status': {} });
    assert.deepEqual(setPaths(intersectSets(a, b)).map(formatServerPath), ['.spec.replicas', '.spec.template.x']);
    assert.deepEqual(setPaths(differenceSets(a, b)).map(formatServerPath), ['.spec.selector', '.spec.template']);
    assert.deepEqual(setPaths(unionSets(a, b)).map(formatServerPath), [
      '.status',
      '.spec.replicas',
      '.spec.selector',
      '.spec.template',
      '.spec.template.x',
    ]);
    assert.deepEqual(setPaths(leafSet(a)).map(formatServerPath), [
      '.spec.replicas',
      '.spec.selector',
      '.spec.template.x',
    ]);
    // A member of the right side removes its whole subtree (how `status` is reset).
    const reset = decodeFieldsV1({ 'f:spec': { 'f:template': {} } });
    assert.deepEqual(setPaths(recursiveDifferenceSets(a, reset)).map(formatServerPath), [
      '.spec.replicas',
      '.spec.selector',
    ]);
    assert.deepEqual(members('{"f:a":{}}'), ['.a']);
  });
});

// FieldSetBuilder (the sets a depth-first walk builds: toFieldSet, compareValues) against the plain
// insertPath it replaces: for many random walks, every set the same, down to the order of its
// members and subtrees (which decides the order conflicts are listed in).
describe('FieldSetBuilder', () => {
  const elements: PathElement[] = [
    { kind: 'field', name: 'spec' },
    { kind: 'field', name: 'a.b' },
    { kind: 'key', fields: { name: 'web', port: 80 } },
    { kind: 'key', fields: { port: 80, name: 'web' } },
    { kind: 'value', value: 'x' },
    { kind: 'index', index: 2 },
  ];
  const shape = (s: FieldSet): unknown => ({
    members: [...s.members.keys()],
    children: [...s.children].map(([k, n]) => [k, pathElementKey(n.element), shape(n.set)]),
  });
  test('builds exactly the set insertPath builds, for 2,000 random walks', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 2000; round++) {
      const walk = new FieldPathWalk();
      const builders = [new FieldSetBuilder(walk), new FieldSetBuilder(walk)];
      const plain = [newFieldSet(), newFieldSet()];
      for (let step = 0; step < 40; step++) {
        const which = random(2);
        const action = random(5);
        if (action === 0 && walk.path.length < 6) walk.push(elements[random(elements.length)]!);
        else if (action === 1 && walk.path.length > 0) walk.pop();
        else if (action === 2) {
          builders[which]!.own();
          insertPath(plain[which]!, [...walk.path]);
        } else if (action === 3) {
          const pe = elements[random(elements.length)]!;
          builders[which]!.ownChild(pe);
          insertPath(plain[which]!, [...walk.path, pe]);
        }
      }
      for (let i = 0; i < 2; i++)
        assert.deepEqual(shape(builders[i]!.set), shape(plain[i]!), `walk ${round}, set ${i}`);
    }
  });
});

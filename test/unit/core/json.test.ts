// jsonDepthExceeds (core/json.ts), which every document read and every live object pass through:
// the nesting as a recursive definition counts it (a scalar is one level, a collection one more
// than its deepest child), for given cases and for random values at every limit around their depth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonAt, jsonDepthExceeds, type JsonValue } from '../../../server/src/core/json';

function depth(v: JsonValue): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depth));
  if (v !== null && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depth));
  return 1;
}

const cases: { value: JsonValue; depth: number }[] = [
  { value: 1, depth: 1 },
  { value: null, depth: 1 },
  { value: [], depth: 1 },
  { value: {}, depth: 1 },
  { value: { a: 1 }, depth: 2 },
  { value: [[[]]], depth: 3 },
  { value: { a: [1, { b: null }], c: 'x' }, depth: 4 },
];

test('jsonDepthExceeds: the depth of each case, exactly', () => {
  for (const c of cases) {
    assert.equal(depth(c.value), c.depth, JSON.stringify(c.value));
    assert.equal(jsonDepthExceeds(c.value, c.depth), false, `${JSON.stringify(c.value)} at ${c.depth}`);
    assert.equal(jsonDepthExceeds(c.value, c.depth - 1), true, `${JSON.stringify(c.value)} at ${c.depth - 1}`);
  }
  assert.equal(jsonDepthExceeds(undefined, 0), false);
});

test('jsonDepthExceeds: agrees with the recursive definition on 3,000 random values', () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const make = (level: number): JsonValue => {
    const r = random(level > 6 ? 3 : 6);
    if (r === 0) return random(10);
    if (r === 1) return null;
    if (r === 2) return 'x';
    const n = random(4);
    if (r === 3) return Array.from({ length: n }, () => make(level + 1));
    return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, make(level + 1)]));
  };
  for (let i = 0; i < 3000; i++) {
    const value = make(0);
    const d = depth(value);
    for (let limit = 0; limit <= d + 1; limit++)
      assert.equal(jsonDepthExceeds(value, limit), d > limit, `${JSON.stringify(value)} at ${limit}`);
  }
});

test('jsonAt: map keys and list indexes, undefined where the value does not have them', () => {
  const v: JsonValue = { a: [{ b: null }, 2], c: 'x' };
  assert.equal(jsonAt(v, ['a', 0, 'b']), null);
  assert.equal(jsonAt(v, ['a', 1]), 2);
  assert.deepEqual(jsonAt(v, []), v);
  assert.equal(jsonAt(v, ['a', '1']), undefined, 'a string is a key, never an index');
  assert.equal(jsonAt(v, ['c', 0]), undefined);
  assert.equal(jsonAt(undefined, ['a']), undefined);
});

// Resource quantities read exactly and written as the API server writes them in its messages
// (k8s.io/apimachinery pkg/api/resource CanonicalizeBytes). The canonical forms marked "server" were
// captured from the local kube-apiserver v1.34.4 by test/differential/refusals.test.ts
// (KCH_DIFF_VERBOSE=1: the 422 of a request above its limit prints both quantities); the others
// follow quantity.go's rules (exponent a multiple of three, the largest suffix without a fraction,
// a binary value under 1024 or with a fraction printed as decimal).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalQuantity, compareQuantities, parseQuantity } from '../../../../server/src/core/findings/quantity';

const canonical = (v: unknown) => {
  const q = parseQuantity(v);
  return q && canonicalQuantity(q);
};

test('canonical forms as the server prints them', () => {
  const cases: [unknown, string][] = [
    ['1', '1'], // server
    ['500m', '500m'], // server
    ['1500m', '1500m'], // server
    ['1.5Gi', '1536Mi'], // server
    ['1Gi', '1Gi'], // server
    ['2G', '2G'], // server
    ['1500M', '1500M'], // server
    [2, '2'], // server (a YAML number)
    ['1000m', '1'],
    ['0.5', '500m'],
    ['.5', '500m'],
    [0.25, '250m'],
    ['2000', '2k'],
    ['1500', '1500'],
    ['1024Mi', '1Gi'],
    ['512Ki', '512Ki'],
    ['0.5Ki', '512'],
    ['12e2', '1200'],
    ['1e3', '1e3'],
    ['0', '0'],
  ];
  for (const [input, want] of cases) assert.equal(canonical(input), want, JSON.stringify(input));
});

test('what the server would round or refuses is declined', () => {
  for (const v of ['1.0000000001', '-1', '+1', '1 Gi', 'abc', '', true, null])
    assert.equal(parseQuantity(v), undefined);
});

test('comparison is exact across suffixes', () => {
  const cmp = (a: string, b: string) => compareQuantities(parseQuantity(a)!, parseQuantity(b)!);
  assert.equal(cmp('1Gi', '1024Mi'), 0);
  assert.equal(cmp('1.5', '1500m'), 0);
  assert.equal(cmp('1', '500m'), 1);
  assert.equal(cmp('1G', '1Gi'), -1);
  assert.equal(cmp('100001m', '100'), 1);
});

// Label selectors written as text (core/sources/selector-text.ts), each case as apimachinery's
// labels.Parse and Matches answer it (k8s.io/apimachinery/pkg/labels selector.go: `!=` and `notin`
// hold for an absent key; a selector that does not parse selects nothing).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesSelectorText } from '../../../../server/src/core/sources/selector-text';

const labels = { app: 'web', tier: 'front' };

const cases: [selector: string, matches: boolean][] = [
  ['app=web', true],
  ['app==web', true],
  ['app = web', true],
  ['app=api', false],
  ['app!=api', true],
  ['team!=a', true],
  ['app in (web, api)', true],
  ['app in (api,db)', false],
  ['app notin (api,db)', true],
  ['team notin (a)', true],
  ['app,tier', true],
  ['team', false],
  ['!team', true],
  ['!app', false],
  ['app=web,tier in (front,back)', true],
  ['app=web,tier in (back)', false],
  ['app in (web', false],
  ['', true],
];

for (const [selector, matches] of cases)
  test(`${JSON.stringify(selector)} ${matches ? 'selects' : 'does not select'} app=web,tier=front`, () => {
    assert.equal(matchesSelectorText(selector, labels), matches);
  });

test('a map that is not a map has no labels', () => {
  assert.equal(matchesSelectorText('app', undefined), false);
  assert.equal(matchesSelectorText('!app', 'x'), true);
});

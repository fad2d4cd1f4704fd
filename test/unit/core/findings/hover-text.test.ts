// Hovers (core/findings/hover-text.ts): who owns a field of the live object, its live value when it
// differs, what each manager usually is; on the kind or name, whether the object exists and who
// manages it. Data-driven: hover.cases.yaml names a captured history (test/fixtures/findings/), a
// place in its manifest, and the lines the hover must show.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResourceFacts } from '../../../../server/src/core/findings';
import { fieldHover, objectHover, when } from '../../../../server/src/core/findings/hover-text';
import { nodeAt } from '../../../../server/src/core/findings/ownership';
import {
  capturedHistory,
  cases,
  factsOf,
  manifestResource,
  positionOf,
  type Place,
} from '../../../support/findings-fixtures';

interface HoverCase {
  name: string;
  history: string;
  /** `object`: the hover on the kind or name; `field`: on the field at `at`. */
  hover: 'object' | 'field';
  at?: Place;
  /** The cluster's answer: the captured object (default), no such object, or not asked at all. */
  live?: 'exists' | 'absent' | 'not-asked';
  /** Lines the hover holds, exactly. */
  lines?: string[];
  /** Lines the hover holds, as patterns (each must match some line). */
  matches?: string[];
  /** Patterns no line may match. */
  never?: string[];
}

// Hovers say how long ago; the cases read the time written beside it.
const now = Date.parse('2030-01-01T00:00:00Z');

describe('hovers on captured histories', () => {
  for (const kase of cases<HoverCase>('hover.cases.yaml')) {
    test(kase.name, () => {
      const h = capturedHistory(kase.history);
      const resource = manifestResource(h);
      const facts: ResourceFacts | undefined =
        kase.live === 'not-asked' ? undefined : factsOf(h, kase.live === 'absent' ? 'absent' : 'exists');
      let text: string;
      if (kase.hover === 'object') text = objectHover(resource, facts, now);
      else {
        const at = nodeAt(resource, positionOf(h.manifest, kase.at!), facts?.schema);
        assert.ok(at, 'a field is under the position');
        text = fieldHover(resource, facts, at.path, at.node, now);
      }
      const lines = text.split('\n');
      for (const l of kase.lines ?? []) assert.ok(lines.includes(l), `missing ${JSON.stringify(l)} in\n${text}`);
      for (const m of kase.matches ?? [])
        assert.ok(
          lines.some((l) => new RegExp(m).test(l)),
          `no line matches /${m}/ in\n${text}`,
        );
      for (const m of kase.never ?? [])
        assert.ok(!lines.some((l) => new RegExp(m).test(l)), `a line matches /${m}/ in\n${text}`);
    });
  }
});

describe('when', () => {
  const cases: [number, string][] = [
    [0, '0 s ago'],
    [59, '59 s ago'],
    [60, '1 min ago'],
    [3 * 3600, '3 h ago'],
    [2 * 86400, '2 days ago'],
  ];
  for (const [seconds, ago] of cases) {
    test(`${seconds} s before now reads "${ago}", with the time itself`, () => {
      const time = '2030-01-01T00:00:00Z';
      assert.equal(when(time, Date.parse(time) + seconds * 1000), `${ago} (${time})`);
    });
  }
  test('a time the server wrote oddly is shown as written', () => assert.equal(when('yesterday', now), 'yesterday'));
  test('a time in the future is not "ago" a negative amount', () =>
    assert.equal(when('2030-01-01T00:00:10Z', now), '0 s ago (2030-01-01T00:00:10Z)'));
});

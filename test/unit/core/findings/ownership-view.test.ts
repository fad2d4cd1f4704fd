// The "Show ownership of the live object" view (core/findings/ownership-view.ts): the live object as
// `kubectl get -o yaml` shows it, each line followed by its owners. Data-driven:
// ownership-view.cases.yaml names a captured history (test/fixtures/findings/) and, for lines of the
// view, the owners written after them (or none); the legend of managers at its top; and, filtered
// by a manager, only that manager's lines marked.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ownershipView } from '../../../../server/src/core/findings/ownership-view';
import { capturedHistory, cases, schema } from '../../../support/findings-fixtures';

interface ViewCase {
  name: string;
  history: string;
  /** Mark only this manager's lines. */
  manager?: string;
  /** Line (a pattern on the YAML before the comment) → its owners as written after `# `, or null for none. */
  owners: [string, string | null][];
  /** Patterns, each matched by a line of the legend (the comment lines before the YAML). */
  legend?: string[];
}

// The legend says how long ago; the cases read it.
const now = Date.parse('2026-12-04T01:05:21Z');

function splitComment(line: string): { yaml: string; owners: string | null } {
  const at = line.indexOf('# ');
  return at < 0 ? { yaml: line, owners: null } : { yaml: line.slice(0, at).trimEnd(), owners: line.slice(at + 2) };
}

describe('ownership view of captured live objects', () => {
  for (const kase of cases<ViewCase>('ownership-view.cases.yaml')) {
    test(kase.name, () => {
      const h = capturedHistory(kase.history);
      const view = ownershipView(h.live, schema, {
        now,
        ...(kase.manager !== undefined ? { manager: kase.manager } : {}),
      });
      const lines = view.split('\n').map(splitComment);
      const legend = view
        .split('\n')
        .filter((l, i, all) => l.startsWith('#') && all.slice(0, i).every((before) => before.startsWith('#')));
      for (const pattern of kase.legend ?? [])
        assert.ok(
          legend.some((l) => new RegExp(pattern).test(l)),
          `no legend line matches /${pattern}/ in\n${legend.join('\n')}`,
        );
      for (const [pattern, owners] of kase.owners) {
        const line = lines.find((l) => new RegExp(pattern).test(l.yaml));
        assert.ok(line, `no line matches /${pattern}/ in\n${view}`);
        assert.equal(line.owners, owners, `owners of ${JSON.stringify(line.yaml)}`);
      }
    });
  }

  test('the view is YAML: read back, the owners are comments and the live object without managedFields remains', () => {
    for (const name of ['web-edited-autoscaled', 'shop-config-helm', 'legacy-settings', 'web-cache-controlled']) {
      const h = capturedHistory(name);
      const { managedFields: _omitted, ...metadata } = h.live.metadata as Record<string, unknown>;
      assert.deepEqual(parse(ownershipView(h.live, schema)), { ...h.live, metadata }, name);
      assert.deepEqual(
        parse(ownershipView(h.live, schema, { now, manager: 'kubectl' })),
        { ...h.live, metadata },
        `${name}, filtered`,
      );
    }
  });
});

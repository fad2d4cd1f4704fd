// The "Show ownership of the live object" view (core/findings/ownership-view.ts): the live object as
// `kubectl get -o yaml` shows it, each line followed by its owners. Data-driven:
// ownership-view.cases.yaml names a captured history (test/fixtures/findings/) and, for lines of the
// view, the owners written after them (or none).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ownershipView } from '../../server/src/core/findings/ownership-view';
import { capturedHistory, cases, schema } from './findings-fixtures';

interface ViewCase {
  name: string;
  history: string;
  /** Line (a pattern on the YAML before the comment) → its owners as written after `# `, or null for none. */
  owners: [string, string | null][];
}

function splitComment(line: string): { yaml: string; owners: string | null } {
  const at = line.indexOf('# ');
  return at < 0 ? { yaml: line, owners: null } : { yaml: line.slice(0, at).trimEnd(), owners: line.slice(at + 2) };
}

describe('ownership view of captured live objects', () => {
  for (const kase of cases<ViewCase>('ownership-view.cases.yaml')) {
    test(kase.name, () => {
      const h = capturedHistory(kase.history);
      const view = ownershipView(h.live, schema);
      const lines = view.split('\n').map(splitComment);
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
    }
  });
});

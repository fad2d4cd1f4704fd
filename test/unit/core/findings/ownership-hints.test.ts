// Ownership hints (core/findings/ownership-hints.ts): at the end of each manifest line whose field
// another manager owns on the live object, that manager and how long ago. Data-driven:
// ownership-hints.cases.yaml names a captured history (test/fixtures/findings/), the user's field
// manager and mode, the time, and for lines of the manifest the label they get (or none); the lines
// given a label are the only ones hinted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ownershipHints, renderedOwnershipHints } from '../../../../server/src/core/findings/ownership-hints';
import type { SourceLocation, SourceMap } from '../../../../server/src/core/sources/source-map';
import { formatPath, type FieldPath } from '../../../../server/src/core/ssa/path';
import { capturedHistory, cases, manifestResource, schema } from '../../../support/findings-fixtures';

interface HintCase {
  name: string;
  history: string;
  fieldManager: string;
  applyMode: 'serverSide' | 'clientSide' | 'create';
  now: string;
  /** Line pattern → the hint's label, or null for none. */
  hints: [string, string | null][];
  /** Line pattern → patterns that lines of its tooltip match. */
  tooltips?: [string, string[]][];
}

function lineOf(text: string, pattern: string): number {
  const line = text.split('\n').findIndex((l) => new RegExp(pattern).test(l));
  assert.ok(line >= 0, `no line matches /${pattern}/ in\n${text}`);
  return line;
}

describe('ownership hints on captured histories', () => {
  for (const kase of cases<HintCase>('ownership-hints.cases.yaml')) {
    test(kase.name, () => {
      const h = capturedHistory(kase.history);
      const hints = ownershipHints(
        manifestResource(h),
        h.live,
        schema,
        { fieldManager: kase.fieldManager, applyMode: kase.applyMode },
        Date.parse(kase.now),
      );
      const text = h.manifest;
      const shown = hints.map((hint) => `${hint.line + 1}: ${text.split('\n')[hint.line]} → ${hint.label}`).join('\n');
      for (const [pattern, label] of kase.hints) {
        const hint = hints.find((x) => x.line === lineOf(text, pattern));
        assert.equal(hint?.label ?? null, label, `the hint on /${pattern}/; all hints:\n${shown}`);
      }
      const expected = kase.hints.filter(([, label]) => label !== null).map(([pattern]) => lineOf(text, pattern));
      assert.deepEqual(
        hints.map((x) => x.line).sort((a, b) => a - b),
        expected.sort((a, b) => a - b),
        `only the lines listed are hinted; all hints:\n${shown}`,
      );
      for (const [pattern, wanted] of kase.tooltips ?? []) {
        const tooltip = hints.find((x) => x.line === lineOf(text, pattern))?.tooltip ?? '';
        for (const w of wanted)
          assert.ok(
            tooltip.split('\n').some((l) => new RegExp(w).test(l)),
            `no line of the tooltip on /${pattern}/ matches /${w}/:\n${tooltip}`,
          );
      }
    });
  }

  test('only the lines asked about are looked at', () => {
    const h = capturedHistory('web-edited-autoscaled');
    const resource = manifestResource(h);
    const settings = { fieldManager: 'kubectl', applyMode: 'serverSide' as const };
    const now = Date.parse('2026-12-04T01:05:21Z');
    const all = ownershipHints(resource, h.live, schema, settings, now);
    const replicas = lineOf(h.manifest, '^  replicas:');
    assert.deepEqual(
      ownershipHints(resource, h.live, schema, settings, now, { start: replicas, end: replicas }),
      all.filter((x) => x.line === replicas),
    );
    assert.equal(all.length, 2, 'replicas and image');
  });
});

describe('ownership hints on a rendered source', () => {
  // A chart's render as a source map says it: the rendered Deployment's replicas comes from a
  // template line and the values line it reads; its image from a template line of another file.
  const template = '/chart/templates/deployment.yaml';
  const values = '/chart/values.yaml';
  const at = (file: string, line: number, role: SourceLocation['role']): SourceLocation => ({
    file,
    role,
    range: { start: { line, character: 2 }, end: { line, character: 10 } },
  });
  const places: Record<string, SourceLocation[]> = {
    '.spec.replicas': [at(template, 7, 'template'), at(values, 1, 'values')],
    '.spec.template.spec.containers[name="app"].image': [at(template, 20, 'template')],
  };
  const map: SourceMap = {
    target: { kind: 'helm', root: '/chart', label: 'release web' },
    objects: [{ index: 0, origin: at(template, 0, 'template') }],
    locate: (_index: number, path: FieldPath) => places[formatPath(path)] ?? [],
    writers: () => [],
  };
  const h = capturedHistory('web-edited-autoscaled');
  const resource = manifestResource(h);
  const now = Date.parse('2026-12-04T01:05:21Z');

  test('each hint lands on the lines of the file asked about that set the field', () => {
    const onTemplate = renderedOwnershipHints(
      resource,
      h.live,
      schema,
      { fieldManager: 'helm', applyMode: 'serverSide' },
      now,
      map,
      template,
    );
    assert.deepEqual(
      onTemplate.map((x) => [x.line, x.label]),
      [
        [7, 'kube-controller-manager (scale)'],
        [20, 'kubectl-edit · 3 days ago'],
      ],
    );
    const onValues = renderedOwnershipHints(
      resource,
      h.live,
      schema,
      { fieldManager: 'helm', applyMode: 'serverSide' },
      now,
      map,
      values,
    );
    assert.deepEqual(
      onValues.map((x) => [x.line, x.label]),
      [[1, 'kube-controller-manager (scale)']],
    );
  });
});

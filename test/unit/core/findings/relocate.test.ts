// Findings on a rendered object move to the source line the source map names for their field, or
// the nearest parent a source sets, or the object's origin; the message names the target.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Finding } from '../../../../server/src/core/findings';
import { relocateFindings } from '../../../../server/src/core/findings/relocate';
import { parseManifestText, type Range } from '../../../../server/src/core/manifest/manifest';
import type { SourceLocation, SourceMap } from '../../../../server/src/core/sources/source-map';
import { formatPath } from '../../../../server/src/core/ssa/path';

const rendered = parseManifestText(
  'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prod-web\n  labels:\n    app.kubernetes.io/name: web\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n',
).resources[0]!;
const line = (n: number): Range => ({ start: { line: n, character: 2 }, end: { line: n, character: 10 } });
const target = { kind: 'kustomize' as const, root: '/r/overlays/prod', label: 'overlay prod' };
const patch: SourceLocation = { file: '/r/overlays/prod/replicas.yaml', range: line(5), role: 'patch' };
const label: SourceLocation = { file: '/r/base/deployment.yaml', range: line(4), role: 'resource' };
const containers: SourceLocation = { file: '/r/base/deployment.yaml', range: line(10), role: 'resource' };
const origin: SourceLocation = { file: '/r/base/deployment.yaml', range: line(0), role: 'resource' };
const asked: string[] = [];
const map: SourceMap = {
  target,
  objects: [{ index: 0, origin }],
  locate(_index, path) {
    const p = formatPath(path);
    asked.push(p);
    if (p === '.spec.replicas') return [patch];
    if (p === '.metadata.labels.app.kubernetes.io/name') return [label];
    if (p === '.spec.template.spec.containers') return [containers];
    return [];
  },
  writers: () => [],
};
const finding = (extra: Partial<Finding>): Finding => ({
  code: 'field-conflict',
  severity: 'error',
  message: 'm',
  range: line(7),
  ...extra,
});

const cases: { name: string; finding: Finding; lands: SourceLocation }[] = [
  { name: 'a field a patch sets goes to the patch', finding: finding({ path: '.spec.replicas' }), lands: patch },
  {
    name: 'a dotted label key is one field',
    finding: finding({ path: '.metadata.labels.app.kubernetes.io/name' }),
    lands: label,
  },
  {
    name: 'a field no source writes goes to its nearest written parent',
    finding: finding({ code: 'would-delete', path: '.spec.template.spec.containers[name="sidecar"]' }),
    lands: containers,
  },
  {
    name: 'a finding on the object without a written field goes to its origin',
    finding: finding({ code: 'exists', severity: 'information' }),
    lands: origin,
  },
];

for (const c of cases) {
  test(c.name, () => {
    const [moved, ...rest] = relocateFindings([c.finding], rendered, 0, map);
    assert.equal(rest.length, 0);
    assert.equal(moved!.source, c.lands);
    assert.deepEqual(moved!.range, c.lands.range);
    assert.deepEqual(moved!.rendered, { target, index: 0, range: c.finding.range });
    assert.equal(moved!.message, 'm (in overlay prod)');
  });
}

test('a name finding asks for metadata.name first', () => {
  asked.length = 0;
  relocateFindings([finding({ code: 'exists', severity: 'information' })], rendered, 0, map);
  assert.deepEqual(asked, ['.metadata.name', '.metadata']);
});

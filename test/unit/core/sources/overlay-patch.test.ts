// A change local to one overlay, in its pieces: the `patches:` entry added to a kustomization as
// it is written (or refused where the list is written another way), the text of a new
// strategic-merge patch, and a field set in an existing patch whether or not it writes the field.
// The whole, built and applied with the real kustomize and API server, is in
// test/protocol/rendered-sources.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { applyTextEdits, setFieldEdits } from '../../../../server/src/core/manifest/edits';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import {
  addPatchEntryEdits,
  ownStrategicPatches,
  strategicPatchText,
} from '../../../../server/src/core/sources/overlay-patch';
import { parsePath } from '../../../../server/src/core/ssa/path';

const entryCases: { name: string; input: string; expect?: string; refused?: RegExp }[] = [
  {
    name: 'no patches yet: a list at the end',
    input: 'namespace: prod\nresources:\n- ../../base\n',
    expect: 'namespace: prod\nresources:\n- ../../base\npatches:\n- path: p.yaml\n',
  },
  {
    name: 'no line break at the end',
    input: 'resources:\n- ../../base',
    expect: 'resources:\n- ../../base\npatches:\n- path: p.yaml\n',
  },
  {
    name: "after the last entry, at the list's own indentation, before what follows",
    input:
      'patches:\n  - path: a.yaml\n    target:\n      kind: Deployment\n  - path: b.yaml # tuned\nnamespace: prod\n',
    expect:
      'patches:\n  - path: a.yaml\n    target:\n      kind: Deployment\n  - path: b.yaml # tuned\n  - path: p.yaml\nnamespace: prod\n',
  },
  {
    name: 'CRLF stays CRLF',
    input: 'patches:\r\n- path: a.yaml\r\n',
    expect: 'patches:\r\n- path: a.yaml\r\n- path: p.yaml\r\n',
  },
  { name: 'a flow list is left to the user', input: 'patches: [{path: a.yaml}]\n', refused: /not a block list/ },
  { name: 'an empty list is left to the user', input: 'patches: []\n', refused: /not a block list/ },
  { name: 'a kustomization that is not a map', input: '- a\n- b\n', refused: /map of fields/ },
];

for (const c of entryCases) {
  test(`the patches entry: ${c.name}`, () => {
    const result = addPatchEntryEdits(c.input, 'p.yaml');
    if (c.refused) {
      assert.equal(result.edits, undefined);
      assert.match(result.edits ? '' : result.reason, c.refused);
      return;
    }
    assert.ok(result.edits, result.edits ? '' : result.reason);
    const after = applyTextEdits(c.input, result.edits);
    assert.equal(after, c.expect);
    assert.deepEqual((parseYaml(after) as { patches: unknown[] }).patches.at(-1), { path: 'p.yaml' });
  });
}

test("the overlay's own strategic-merge patches: a patch with a target or inline text is not one", () => {
  const k =
    'patches:\n- path: own.yaml\n- path: targeted.yaml\n  target:\n    kind: Deployment\n- patch: |-\n    x\npatchesStrategicMerge:\n- old.yaml\npatchesJson6902:\n- path: ops.yaml\n';
  assert.deepEqual(ownStrategicPatches(k), ['own.yaml', 'old.yaml']);
  assert.deepEqual(ownStrategicPatches('{{ not yaml'), []);
});

test("a new patch: the object's identity and the field, null to remove it; a path through the identity is refused", () => {
  const web = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  assert.equal(
    strategicPatchText(web, ['spec', 'replicas'], 5),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n',
  );
  assert.equal(
    strategicPatchText({ ...web, namespace: 'shop' }, ['metadata', 'labels', 'tier'], null),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    tier: null\n',
  );
  // A string kubectl would read as something else is quoted.
  assert.equal(
    strategicPatchText(web, ['metadata', 'annotations', 'on'], 'yes'),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    "on": "yes"\n',
  );
  assert.equal(strategicPatchText(web, ['metadata', 'name'], 'other'), undefined);
  assert.equal(strategicPatchText(web, ['kind'], 'Service'), undefined);
});

test('a field set in an existing patch: replaced where it is written, else added under the deepest map the patch writes', () => {
  const cases: [string, string, unknown, string][] = [
    [
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\n  annotations:\n    team: shop\n',
      '.spec.replicas',
      null,
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\n  annotations:\n    team: shop\nspec:\n  replicas: null\n',
    ],
    [
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\nspec:\n    paused: true # held\n',
      '.spec.replicas',
      5,
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\nspec:\n    paused: true # held\n    replicas: 5\n',
    ],
    [
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
      '.spec.replicas',
      5,
      'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\nspec:\n  replicas: 5\n',
    ],
  ];
  for (const [text, path, value, expect] of cases) {
    const patch = parseManifestText(text).resources[0]!;
    const result = setFieldEdits(text, patch, parsePath(path)!, value as null | number);
    assert.ok(result.edits, result.edits ? '' : result.reason);
    assert.equal(applyTextEdits(text, result.edits), expect);
  }
  const text = 'kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: web\nspec: {paused: true}\n';
  const flow = setFieldEdits(text, parseManifestText(text).resources[0]!, parsePath('.spec.replicas')!, 5);
  assert.match(flow.edits ? '' : flow.reason, /not written as a block map/);
  const list = setFieldEdits(
    text,
    parseManifestText(text).resources[0]!,
    parsePath('.spec.template.spec.containers[name="app"].image')!,
    'x',
  );
  assert.match(list.edits ? '' : list.reason, /map keys alone/);
});

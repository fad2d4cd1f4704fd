// A field placed from the lines of the text (core/manifest/written-scalar.ts, through
// locateScalarInText) is placed exactly where the node tree places it, through map keys and block
// sequence items picked by index, by value or by key (with a key field left to its default), and
// into a one-line flow map; where the text leaves any doubt it is declined, and the full parse
// answers. Each case is also held to the full parse on every path test/support/parse-agreement.ts
// generates (fast-values.test.ts does so on every fixture and scenario manifest). And a Deployment's conflict on a container's image is placed with no node tree built.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { analyzeResource, type ResourceFacts } from '../../../../server/src/core/findings';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';
import {
  hasNodeTree,
  locate,
  locateScalarInText,
  parseManifestText,
  type LocateOptions,
} from '../../../../server/src/core/manifest/manifest';
import { parsePath } from '../../../../server/src/core/ssa/path';
import { schemaFromOpenApi } from '../../../../server/src/core/ssa/schema';
import { assertParsesAgree } from '../../../support/parse-agreement';

const protocolDefault: LocateOptions = {
  keyFieldDefault: (_list, name) => (name === 'protocol' ? 'TCP' : undefined),
};

/** Asserts each path is placed from the text where the tree places it, or declined. */
function assertPlacements(
  text: string,
  placed: readonly string[],
  declined: readonly string[],
  options: LocateOptions = protocolDefault,
): void {
  assertParsesAgree(text, 'the case');
  const tree = parseManifestText(text, undefined, { valuesFirst: false }).resources[0]!;
  for (const p of placed) {
    const r = parseManifestText(text).resources[0]!;
    assert.equal(hasNodeTree(r), false, 'the values-first read takes the case');
    const fieldPath = parsePath(p);
    assert.ok(fieldPath, p);
    const fromText = locateScalarInText(r, fieldPath, options);
    assert.ok(fromText, `${p}: placed from the text`);
    assert.equal(hasNodeTree(r), false, `${p}: without the node tree`);
    const fromTree = locate(tree, fieldPath, options);
    assert.equal(fromTree?.node.kind, 'scalar', p);
    assert.deepEqual(fromText, { keyRange: fromTree.keyRange, valueRange: fromTree.valueRange }, p);
  }
  for (const p of declined) {
    const r = parseManifestText(text).resources[0]!;
    assert.equal(locateScalarInText(r, parsePath(p)!, options), undefined, `${p}: declined`);
  }
}

const pod = (spec: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n${spec}`;

describe('list items placed from the text, as the node tree places them', () => {
  test('items with comments and blank lines between, and spaces after the dash', () =>
    assertPlacements(
      pod(
        '  containers:\n  # first\n  - name: a\n\n    image: a:1\n  # between\n\n  - name: app   # the app\n    # inside\n    image: "nginx:1.25"  # quoted\n    env:\n    - name: MODE\n      value: prod\n    -   name: LEVEL\n        value: \'3\'\n  restartPolicy: Never\n',
      ),
      [
        '.spec.containers[name="app"].image',
        '.spec.containers[name="a"].image',
        '.spec.containers[1].name',
        '.spec.containers[name="app"].env[name="LEVEL"].value',
        '.spec.containers[name="app"].env[name="MODE"].value',
        '.spec.containers[name="app"].env[1].name',
        '.spec.restartPolicy',
      ],
      [
        '.spec.containers[name="missing"].image',
        '.spec.containers[5].name',
        '.spec.containers[name="app"].env',
        '.spec.containers[name="app"].env[name="MODE"]',
        '.spec.containers[name="app"].command',
      ],
    ));

  test('a dash alone on its line, the item below it', () =>
    assertPlacements(
      pod('  containers:\n  -\n    name: app\n    image: x\n  - # a comment\n    name: b\n    image: w\n'),
      ['.spec.containers[name="app"].image', '.spec.containers[name="b"].name', '.spec.containers[1].image'],
      [],
    ));

  test('a sequence indented deeper than its key, and one in an item at the item map’s column', () =>
    assertPlacements(
      pod(
        '  containers:\n      - name: app\n        args:\n        - --port\n        - "8080"\n        ports:\n          - containerPort: 80\n          - containerPort: 80\n            protocol: UDP\n',
      ),
      [
        '.spec.containers[name="app"].args[1]',
        '.spec.containers[name="app"].args[="--port"]',
        '.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].containerPort',
        '.spec.containers[name="app"].ports[containerPort=80,protocol="UDP"].protocol',
        '.spec.containers[name="app"].ports[1].containerPort',
      ],
      ['.spec.containers[name="app"].args[="9090"]', '.spec.containers[name="app"].ports[containerPort=81]'],
    ));

  test('a key field left to its default is found only with the default', () => {
    const text = pod('  containers:\n  - name: app\n    ports:\n    - containerPort: 80\n');
    const port = '.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].containerPort';
    assertPlacements(text, [port], []);
    assertPlacements(text, [], [port], {});
  });

  test('names that look alike: a prefix, a quoted name, a name in a nested list', () =>
    assertPlacements(
      pod(
        '  containers:\n  - name: side\n    env:\n    - name: app\n      value: not-this\n  - name: app-2\n    image2: other\n    image: two\n  - name: "app"\n    image2: other\n    image: one\n',
      ),
      [
        '.spec.containers[name="app"].image',
        '.spec.containers[name="app-2"].image',
        '.spec.containers[name="side"].env[name="app"].value',
      ],
      [],
    ));

  test('sequences of scalars, quoted, and a sequence in a sequence', () =>
    assertPlacements(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  finalizers:\n  - \"example.com/a\"\n  - 'it''s'  # quoted\n  - plain # comment\ndata:\n  x: z\nlists:\n- - a\n  - b\n-   - c\n    -   d\n- e\n",
      [
        '.metadata.finalizers[="example.com/a"]',
        '.metadata.finalizers[="it\'s"]',
        '.metadata.finalizers[2]',
        '.lists[0][1]',
        '.lists[1][0]',
        '.lists[1][1]',
        '.lists[2]',
        '.data.x',
      ],
      ['.lists[3]', '.lists[0]'],
    ));

  test('what is declined: a value continued below, on the next line, a block scalar, a flow sequence', () =>
    assertPlacements(
      pod(
        '  containers:\n  - name: app\n    image: nginx\n      continued\n    args:\n    - a\n      b\n    -\n      on-next-line\n    - |\n      block\n    - [x, w]\n    - z\n    command: [sh, -c]\n',
      ),
      ['.spec.containers[name="app"].name', '.spec.containers[name="app"].args[4]'],
      [
        '.spec.containers[name="app"].image',
        '.spec.containers[name="app"].args[0]',
        '.spec.containers[name="app"].args[1]',
        '.spec.containers[name="app"].args[2]',
        '.spec.containers[name="app"].args[3][0]',
        '.spec.containers[name="app"].command[0]',
      ],
    ));
});

describe('keys of a flow map on one line', () => {
  test('plain and quoted values, in a map and in an item', () =>
    assertPlacements(
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {app: web,  tier: front , x: "a, b"}  # c\n  annotations: { a: [x], b: c }\nspec:\n  containers:\n  - {name: app, image: nginx}\n',
      [
        '.metadata.labels.tier',
        '.metadata.labels.app',
        '.metadata.labels.x',
        '.spec.containers[name="app"].image',
        '.spec.containers[0].name',
      ],
      ['.metadata.annotations.b', '.metadata.labels.missing'],
    ));

  test('values it does not read simply are declined', () =>
    assertPlacements(
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: http://x, b: c}\n  annotations: {a: b c, d: -1}\n',
      [],
      ['.metadata.labels.b', '.metadata.annotations.a'],
    ));
});

describe('a finding on a container placed without the node tree', () => {
  const openapi = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'openapi');
  const { schema } = schemaFromOpenApi(
    ['api__v1.json', 'apis__apps__v1.json'].map(
      (f) => JSON.parse(fs.readFileSync(path.join(openapi, f), 'utf8')) as JsonValue,
    ),
  );
  const deployment = (image: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: sidecar\n        image: busybox\n      - name: app\n        image: ${image}\n        ports:\n        - containerPort: 8080\n`;

  test('a conflict on containers[name="app"].image', () => {
    const text = deployment('nginx:1.27');
    const live = parseManifestText(deployment('nginx:1.25'), undefined, { valuesFirst: false }).resources[0]!
      .object as JsonObject;
    const metadata = live.metadata as JsonObject;
    metadata.uid = 'u1';
    metadata.resourceVersion = '7';
    metadata.managedFields = [
      {
        manager: 'argocd',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:template': {
              'f:spec': {
                'f:containers': {
                  'k:{"name":"app"}': { '.': {}, 'f:name': {}, 'f:image': {} },
                },
              },
            },
          },
        },
      },
    ];
    const [r] = parseManifestText(text).resources;
    assert.ok(r && !hasNodeTree(r));
    const facts: ResourceFacts = {
      kind: { state: 'served', group: 'apps', resource: 'deployments', namespaced: true },
      live: { state: 'exists', object: live },
      schema,
    };
    const findings = analyzeResource(r, facts, { fieldManager: 'kubectl', applyMode: 'serverSide' });
    const conflict = findings.find((f) => f.code === 'field-conflict');
    assert.ok(conflict, JSON.stringify(findings.map((f) => f.code)));
    assert.equal(conflict.path, '.spec.template.spec.containers[name="app"].image');
    const line = text.split('\n')[conflict.range.start.line]!;
    assert.equal(line.slice(conflict.range.start.character, conflict.range.end.character), 'nginx:1.27');
    assert.equal(hasNodeTree(r), false, 'placed without the node tree');
  });
});

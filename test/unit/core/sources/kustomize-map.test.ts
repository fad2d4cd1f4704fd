// Where each field of a `kustomize build` comes from (core/sources/kustomize-map.ts), on what the real
// kustomize printed for the fixture overlays (test/fixtures/kustomize/: captured with the tool built
// from test/tools/kustomize; capture.ts re-captures). Each row: a rendered object's field, and the
// source line that sets it, read by hand off the fixture files — the last patch that sets it, else the
// resource file, else the kustomization entry.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import {
  identityOf,
  kustomizeSourceMap,
  parseKustomizeOrigins,
} from '../../../../server/src/core/sources/kustomize-map';
import { parsePath } from '../../../../server/src/core/ssa/path';
import { readKustomizationFiles } from '../../../../server/src/render/kustomize';
import { capture, capturedFile, fixturesDir, kustomizeCases, wrapperDir } from '../../../fixtures/kustomize/capture';

const src = path.join(fixturesDir, 'shop', 'src');

/** [target, rendered object (Kind/name, `*` for a hash), field, `file:line` it is read from]. */
const rows: [string, string, string, string][] = [
  // production: namePrefix, namespace, a component, patches in files and inline, replicas:, images:, labels:
  ['overlays/production', 'Deployment/prod-web', '.spec.replicas', 'overlays/production/kustomization.yaml:22'],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="app"].image',
    'overlays/production/kustomization.yaml:25',
  ],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="sidecar"].image',
    'overlays/production/sidecar.yaml:3',
  ],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="sidecar"].args',
    'overlays/production/sidecar.yaml:6',
  ],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="app"].env[name="MODE"].value',
    'overlays/production/resources.yaml:12',
  ],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="app"].resources.limits.memory',
    'overlays/production/resources.yaml:15',
  ],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="app"].readinessProbe.httpGet.path',
    'components/team/probe.yaml:12',
  ],
  ['overlays/production', 'Deployment/prod-web', '.metadata.annotations.team', 'components/team/kustomization.yaml:4'],
  ['overlays/production', 'Deployment/prod-web', '.metadata.labels.tier', 'overlays/production/kustomization.yaml:28'],
  ['overlays/production', 'Deployment/prod-web', '.metadata.labels.app', 'base/deployment.yaml:6'],
  ['overlays/production', 'Deployment/prod-web', '.metadata.namespace', 'overlays/production/kustomization.yaml:2'],
  ['overlays/production', 'Deployment/prod-web', '.metadata.name', 'base/deployment.yaml:4'],
  [
    'overlays/production',
    'Deployment/prod-web',
    '.spec.template.spec.containers[name="sidecar"]',
    'base/deployment.yaml:25',
  ],
  ['overlays/production', 'Service/prod-web', '.spec.type', 'overlays/production/kustomization.yaml:19'],
  ['overlays/production', 'Service/prod-web', '.spec.ports[port=80,protocol="TCP"]', 'base/service.yaml:9'],
  ['overlays/production', 'Service/prod-web', '.spec.selector.app', 'base/service.yaml:7'],
  ['overlays/production', 'ConfigMap/prod-settings-*', '.data.timeout', 'overlays/production/kustomization.yaml:33'],
  ['overlays/production', 'ConfigMap/prod-settings-*', '.data.retries', 'base/kustomization.yaml:7'],
  // staging: the same base, commonLabels, an inline JSON 6902 patch
  ['overlays/staging', 'Deployment/web', '.spec.replicas', 'overlays/staging/kustomization.yaml:12'],
  ['overlays/staging', 'Deployment/web', '.metadata.labels.env', 'overlays/staging/kustomization.yaml:5'],
  ['overlays/staging', 'Deployment/web', '.spec.selector.matchLabels.env', 'overlays/staging/kustomization.yaml:5'],
  ['overlays/staging', 'Deployment/web', '.spec.template.metadata.labels.env', 'overlays/staging/kustomization.yaml:5'],
  ['overlays/staging', 'Deployment/web', '.spec.template.spec.containers[name="app"].image', 'base/deployment.yaml:19'],
  ['overlays/staging', 'ConfigMap/settings-*', '.data.retries', 'base/kustomization.yaml:7'],
];

/** [target, rendered object, `file:line` of its origin]. */
const origins: [string, string, string][] = [
  ['overlays/production', 'Deployment/prod-web', 'base/deployment.yaml:1'],
  ['overlays/production', 'Service/prod-web', 'base/service.yaml:1'],
  ['overlays/production', 'ConfigMap/prod-settings-*', 'base/kustomization.yaml:5'],
  ['overlays/staging', 'Deployment/web', 'base/deployment.yaml:1'],
];

function mapOf(target: string) {
  const build = fs.readFileSync(capturedFile('shop', target, 'build'), 'utf8');
  const annotated = fs.readFileSync(capturedFile('shop', target, 'origins'), 'utf8');
  const rendered = parseManifestText(build).resources;
  const found = parseKustomizeOrigins(annotated, toSlashes(wrapperDir('shop')));
  assert.deepEqual(
    found.map((f) => f.identity),
    rendered.map(identityOf),
    'the two builds list the same objects in the same order',
  );
  const root = toSlashes(path.join(src, target));
  const map = kustomizeSourceMap({
    target: { kind: 'kustomize', root, label: `overlay ${path.basename(target)}` },
    rendered,
    origins: found.map((f) => f.origin),
    files: readKustomizationFiles(root),
  });
  const indexOf = (name: string) => {
    const re = new RegExp(
      `^${name
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
        .join('.*')}$`,
    );
    const r = rendered.find((o) => re.test(`${o.kind}/${o.name}`));
    assert.ok(r, `${target} renders no ${name}`);
    return r.documentIndex;
  };
  return { map, indexOf };
}

const shown = (file: string, line: number) => `${path.relative(src, file).split(path.sep).join('/')}:${line + 1}`;

for (const [target, object, field, expected] of rows) {
  test(`${target}: ${object} ${field} is set on ${expected}`, () => {
    const { map, indexOf } = mapOf(target);
    const parsed = parsePath(field);
    assert.ok(parsed, field);
    // As the cluster's schema says: a port's protocol defaults to TCP (the source leaves it out).
    const options = { keyFieldDefault: (_list: unknown, name: string) => (name === 'protocol' ? 'TCP' : undefined) };
    const at = map.locate(indexOf(object), parsed, options).map((l) => shown(l.file, l.range.start.line));
    assert.deepEqual(at, [expected]);
  });
}

for (const [target, object, expected] of origins) {
  test(`${target}: ${object} comes from ${expected}`, () => {
    const { map, indexOf } = mapOf(target);
    const o = map.objects.find((x) => x.index === indexOf(object));
    assert.ok(o);
    assert.equal(shown(o.origin.file, o.origin.range.start.line), expected);
  });
}

test('the stored captures are what the built kustomize prints today', (t) => {
  const kustomize = process.env.KCH_KUSTOMIZE;
  if (!kustomize || !fs.existsSync(kustomize)) {
    // The mapping rows above hold without the tool; only this freshness check needs it.
    if (process.env.CI === 'true') assert.fail('KCH_KUSTOMIZE is not set: npm test builds kustomize (test/tools/)');
    t.skip('no KCH_KUSTOMIZE');
    return;
  }
  for (const c of kustomizeCases) {
    for (const target of c.targets) {
      const now = capture(kustomize, c.name, target);
      assert.equal(
        fs.readFileSync(capturedFile(c.name, target, 'build'), 'utf8'),
        now.build,
        `${c.name}/${target}: re-capture (test/fixtures/kustomize/README.md)`,
      );
      assert.equal(
        fs.readFileSync(capturedFile(c.name, target, 'origins'), 'utf8'),
        now.origins,
        `${c.name}/${target}: re-capture (test/fixtures/kustomize/README.md)`,
      );
    }
  }
});

function toSlashes(p: string): string {
  return p.split(path.sep).join('/');
}

// kustomize's namespace transformer renames a Namespace object the kustomization holds (its name
// field spec, where name prefixes never reach): the name the server knows it by is written on the
// `namespace:` entry, and `kubectl create -k` finding it there already is read on that line. The
// texts are what the kustomize built from test/tools/kustomize printed for this tree (the plain
// build, and the build through a wrapper with `buildMetadata: [originAnnotations]` in /wrap).
test('overlays/production: a Namespace object takes its name from the namespace entry', () => {
  const files = new Map([
    ['/src/base/kustomization.yaml', 'resources:\n- namespace.yaml\n- deployment.yaml\n'],
    ['/src/base/namespace.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: placeholder\n'],
    [
      '/src/base/deployment.yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
    ],
    ['/src/overlays/production/kustomization.yaml', 'namePrefix: prod-\nnamespace: shop\nresources:\n- ../../base\n'],
  ]);
  const build =
    'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prod-web\n  namespace: shop\nspec:\n  replicas: 2\n';
  const annotated =
    'apiVersion: v1\nkind: Namespace\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../src/base/namespace.yaml\n  name: shop\n---\n' +
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../src/base/deployment.yaml\n  name: prod-web\n  namespace: shop\nspec:\n  replicas: 2\n';
  const rendered = parseManifestText(build).resources;
  const found = parseKustomizeOrigins(annotated, '/wrap');
  const map = kustomizeSourceMap({
    target: { kind: 'kustomize', root: '/src/overlays/production', label: 'overlay production' },
    rendered,
    origins: found.map((f) => f.origin),
    files,
  });
  const at = (index: number, field: string) =>
    map.locate(index, parsePath(field)!).map((l) => `${l.file.replace('/src/', '')}:${l.range.start.line + 1}`);
  assert.deepEqual(
    at(0, '.metadata.name'),
    ['overlays/production/kustomization.yaml:2'],
    'the Namespace is named on the namespace entry',
  );
  assert.deepEqual(
    at(1, '.metadata.name'),
    ['base/deployment.yaml:4'],
    'another object keeps its name on its resource file',
  );
  assert.deepEqual(at(1, '.metadata.namespace'), ['overlays/production/kustomization.yaml:2']);
});

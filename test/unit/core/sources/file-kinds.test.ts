// What each YAML file of a repository is: a plain manifest, a kustomization, a file kustomizations
// use, a file of a Helm chart, or other YAML. One repository holding all of them; each row says what
// one file must be classified as.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyFiles, type FileKind } from '../../../../server/src/core/sources/file-kinds';

const deployment = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n';
const template =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include "shop.fullname" . }}\nspec:\n  {{- if not .Values.autoscaling.enabled }}\n  replicas: {{ .Values.replicaCount }}\n  {{- end }}\n';

const repository: Record<string, string> = {
  // Kustomize: a base used by two overlays, a component, patches of both kinds, generators.
  'deploy/base/kustomization.yaml':
    'resources:\n- deployment.yaml\n- service.yaml\nconfigMapGenerator:\n- name: settings\n  files:\n  - app.properties\n  - extra=conf/extra.yaml\n  envs:\n  - settings.env\n',
  'deploy/base/deployment.yaml': deployment,
  'deploy/base/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
  'deploy/base/conf/extra.yaml': 'greeting: hello\n',
  'deploy/base/unused.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: left-over\n',
  'deploy/overlays/staging/kustomization.yml':
    'resources:\n- ../../base\npatches:\n- path: replicas.yaml\n- path: image.json\n  target:\n    kind: Deployment\n',
  'deploy/overlays/staging/replicas.yaml':
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n',
  'deploy/overlays/staging/image.json':
    '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.26"}]',
  'deploy/overlays/production/Kustomization':
    'resources:\n- ../../base\n- https://github.com/example/remote//deploy?ref=v1\ncomponents:\n- ../../components/monitoring\npatchesStrategicMerge:\n- ./replicas.yaml\n',
  'deploy/overlays/production/replicas.yaml':
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n',
  'deploy/components/monitoring/component.yaml':
    'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- monitor.yaml\n',
  'deploy/components/monitoring/monitor.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: monitor\n',
  // Helm: a chart with a subchart and CRDs.
  'charts/shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
  'charts/shop/values.yaml': 'replicaCount: 1\n',
  'charts/shop/values-production.yaml': 'replicaCount: 3\n',
  'charts/shop/ci/lint-values.yaml': 'replicaCount: 2\n',
  'charts/shop/templates/deployment.yaml': template,
  'charts/shop/templates/_helpers.tpl': '{{- define "shop.fullname" -}}{{ .Release.Name }}{{- end }}\n',
  'charts/shop/templates/tests/test-connection.yaml': template,
  'charts/shop/crds/widgets.yaml':
    'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n',
  'charts/shop/charts/cache/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 0.1.0\n',
  'charts/shop/charts/cache/templates/statefulset.yaml': template,
  // Plain manifests, written by hand, in YAML and in JSON; and YAML that is not Kubernetes.
  'k8s/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n',
  // A byte order mark before the first key, as some Windows editors write it (kubectl reads it).
  'k8s/bom.yaml': '\uFEFFapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bom\n',
  // Blank lines before the object: still a manifest (and found without a search from every line).
  'k8s/blank-lines-first.yaml': `${'\n'.repeat(2000)}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n`,
  'k8s/list.json': '{"apiVersion": "v1", "kind": "List", "items": []}',
  'k8s/flux-kustomization.yaml':
    'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\nspec:\n  path: ./deploy\n',
  'k8s/broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\n',
  '.github/workflows/ci.yaml': 'on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n',
  'docker-compose.yml': 'services:\n  web:\n    image: nginx\n',
};

const expected: [string, FileKind][] = [
  ['deploy/base/kustomization.yaml', { kind: 'kustomization' }],
  ['deploy/overlays/staging/kustomization.yml', { kind: 'kustomization' }],
  ['deploy/overlays/production/Kustomization', { kind: 'kustomization' }],
  ['deploy/components/monitoring/component.yaml', { kind: 'kustomization' }],
  [
    'deploy/base/deployment.yaml',
    { kind: 'kustomization-input', role: 'resource', usedBy: ['deploy/base/kustomization.yaml'] },
  ],
  [
    'deploy/base/service.yaml',
    { kind: 'kustomization-input', role: 'resource', usedBy: ['deploy/base/kustomization.yaml'] },
  ],
  [
    'deploy/base/conf/extra.yaml',
    { kind: 'kustomization-input', role: 'generator-input', usedBy: ['deploy/base/kustomization.yaml'] },
  ],
  [
    'deploy/overlays/staging/replicas.yaml',
    { kind: 'kustomization-input', role: 'patch', usedBy: ['deploy/overlays/staging/kustomization.yml'] },
  ],
  [
    'deploy/overlays/staging/image.json',
    { kind: 'kustomization-input', role: 'patch', usedBy: ['deploy/overlays/staging/kustomization.yml'] },
  ],
  [
    'deploy/overlays/production/replicas.yaml',
    { kind: 'kustomization-input', role: 'patch', usedBy: ['deploy/overlays/production/Kustomization'] },
  ],
  [
    'deploy/components/monitoring/monitor.yaml',
    { kind: 'kustomization-input', role: 'resource', usedBy: ['deploy/components/monitoring/component.yaml'] },
  ],
  ['deploy/base/unused.yaml', { kind: 'manifest' }],
  ['charts/shop/Chart.yaml', { kind: 'helm-chart', role: 'chart', chart: 'charts/shop' }],
  ['charts/shop/values.yaml', { kind: 'helm-chart', role: 'values', chart: 'charts/shop' }],
  ['charts/shop/values-production.yaml', { kind: 'helm-chart', role: 'values', chart: 'charts/shop' }],
  ['charts/shop/ci/lint-values.yaml', { kind: 'helm-chart', role: 'values', chart: 'charts/shop' }],
  ['charts/shop/templates/deployment.yaml', { kind: 'helm-chart', role: 'template', chart: 'charts/shop' }],
  ['charts/shop/templates/_helpers.tpl', { kind: 'helm-chart', role: 'helpers', chart: 'charts/shop' }],
  ['charts/shop/templates/tests/test-connection.yaml', { kind: 'helm-chart', role: 'template', chart: 'charts/shop' }],
  ['charts/shop/crds/widgets.yaml', { kind: 'helm-chart', role: 'crd', chart: 'charts/shop' }],
  ['charts/shop/charts/cache/Chart.yaml', { kind: 'helm-chart', role: 'chart', chart: 'charts/shop/charts/cache' }],
  [
    'charts/shop/charts/cache/templates/statefulset.yaml',
    { kind: 'helm-chart', role: 'template', chart: 'charts/shop/charts/cache' },
  ],
  ['k8s/namespace.yaml', { kind: 'manifest' }],
  ['k8s/bom.yaml', { kind: 'manifest' }],
  ['k8s/blank-lines-first.yaml', { kind: 'manifest' }],
  ['k8s/list.json', { kind: 'manifest' }],
  // Flux's Kustomization is an object the cluster serves (a CRD), not kustomize's recipe.
  ['k8s/flux-kustomization.yaml', { kind: 'manifest' }],
  // A manifest that does not parse is still a manifest: its author wants the syntax error.
  ['k8s/broken.yaml', { kind: 'manifest' }],
  ['.github/workflows/ci.yaml', { kind: 'other' }],
  ['docker-compose.yml', { kind: 'other' }],
];

const kinds = classifyFiles(Object.entries(repository).map(([path, text]) => ({ path, text })));

test('every file of the repository gets a kind', () => {
  assert.deepEqual([...kinds.keys()].sort(), Object.keys(repository).sort());
  assert.deepEqual(expected.map(([p]) => p).sort(), Object.keys(repository).sort(), 'each file has a row below');
});

for (const [file, kind] of expected) {
  test(`${file} is ${kind.kind}${'role' in kind ? ` (${kind.role})` : ''}`, () => {
    assert.deepEqual(kinds.get(file), kind);
  });
}

test('a file two overlays use names both; absolute paths and ./ work as relative ones do', () => {
  const files = [
    { path: '/repo/a/kustomization.yaml', text: 'resources:\n- ../common/cm.yaml\n' },
    { path: '/repo/b/kustomization.yaml', text: 'resources:\n- ./../common/./cm.yaml\n' },
    { path: '/repo/common/cm.yaml', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' },
  ];
  assert.deepEqual(classifyFiles(files).get('/repo/common/cm.yaml'), {
    kind: 'kustomization-input',
    role: 'resource',
    usedBy: ['/repo/a/kustomization.yaml', '/repo/b/kustomization.yaml'],
  });
});

test('a kustomization that does not parse uses nothing, and is still a kustomization', () => {
  const files = [
    { path: 'x/kustomization.yaml', text: 'resources: [unclosed\n' },
    { path: 'x/deployment.yaml', text: deployment },
  ];
  const k = classifyFiles(files);
  assert.deepEqual(k.get('x/kustomization.yaml'), { kind: 'kustomization' });
  assert.deepEqual(k.get('x/deployment.yaml'), { kind: 'manifest' });
});

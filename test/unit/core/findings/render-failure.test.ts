// Where a failed render is shown: always on the source's own file (Chart.yaml, the kustomization),
// and on the place the tool's words name. The messages are what the tools print, captured from the
// pinned Helm 4, Helm 3 and kustomize that test/tools/ builds (`helm create shop`, then one break
// each: a deleted `{{- end }}`, an undefined function, a nil value in a template, a broken
// values.yaml, a broken `-f` file; `kustomize build` of a kustomization naming a missing file, and of
// one that is not YAML).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderFailurePlaces, type RenderFailureSource } from '../../../../server/src/core/findings/render-failure';

const chart: RenderFailureSource = { tool: 'helm', chart: '/w/a', valuesFiles: ['/w/env/bad.yaml'] };
const overlay = (text?: string): RenderFailureSource => ({
  tool: 'kustomize',
  kustomization: '/w/k/kustomization.yaml',
  ...(text !== undefined ? { kustomizationText: text } : {}),
});

const cases: { name: string; source: RenderFailureSource; message: string; places: [string, number, number][] }[] = [
  {
    name: 'helm 4 and 3: a template that ends too soon',
    source: chart,
    message:
      'Error: parse error at (shop/templates/deployment.yaml:79): unexpected EOF\n\nUse --debug flag to render out invalid YAML',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/templates/deployment.yaml', 78, 0],
    ],
  },
  {
    name: 'helm: an undefined function, on its line',
    source: chart,
    message: 'parse error at (shop/templates/service.yaml:5): function "labels" not defined',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/templates/service.yaml', 4, 0],
    ],
  },
  {
    name: 'helm 4: a nil value while executing, with its column',
    source: chart,
    message:
      'Error: shop/templates/deployment.yaml:9:22\n  executing "shop/templates/deployment.yaml" at <.Values.nope.deeper>:\n    nil pointer evaluating interface {}.deeper',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/templates/deployment.yaml', 8, 21],
    ],
  },
  {
    name: 'helm 3: the same, after `template:`',
    source: chart,
    message:
      'Error: template: shop/templates/deployment.yaml:9:22: executing "shop/templates/deployment.yaml" at <.Values.nope.deeper>: nil pointer evaluating interface {}.deeper',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/templates/deployment.yaml', 8, 21],
    ],
  },
  {
    name: "helm: a subchart's template",
    source: chart,
    message: 'Error: template: shop/charts/db/templates/statefulset.yaml:12:3: executing ...',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/charts/db/templates/statefulset.yaml', 11, 2],
    ],
  },
  {
    name: "helm: the chart's values.yaml",
    source: chart,
    message:
      'Error: cannot load values.yaml: cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 163: did not find expected node content',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/a/values.yaml', 162, 0],
    ],
  },
  {
    name: 'helm: a values file given with -f',
    source: chart,
    message:
      'Error: failed to parse /w/env/bad.yaml: error converting YAML to JSON: yaml: line 1: did not find expected node content',
    places: [
      ['/w/a/Chart.yaml', 0, 0],
      ['/w/env/bad.yaml', 0, 0],
    ],
  },
  {
    name: 'helm: a path that climbs out of the chart names no place',
    source: chart,
    message: 'Error: template: shop/templates/../../../etc/passwd:3:1: executing',
    places: [['/w/a/Chart.yaml', 0, 0]],
  },
  {
    name: 'helm: words that name no place',
    source: chart,
    message: 'Error: INSTALLATION FAILED: chart requires kubeVersion: >=1.40.0',
    places: [['/w/a/Chart.yaml', 0, 0]],
  },
  {
    name: 'kustomize: a resource that is not there, on the line that names it',
    source: overlay('resources:\n- deployment.yaml\n- missing.yaml\n'),
    message:
      "Error: accumulating resources: accumulation err='accumulating resources from 'missing.yaml': evalsymlink failure on '/w/k/missing.yaml' : lstat /w/k/missing.yaml: no such file or directory': must build at directory: not a valid directory",
    places: [
      ['/w/k/kustomization.yaml', 0, 0],
      ['/w/k/kustomization.yaml', 2, 2],
    ],
  },
  {
    name: 'kustomize: a kustomization that is not YAML',
    source: overlay('namespace: x\nresources: [\n'),
    message: 'Error: invalid Kustomization: yaml: line 2: did not find expected node content',
    places: [
      ['/w/k/kustomization.yaml', 0, 0],
      ['/w/k/kustomization.yaml', 1, 0],
    ],
  },
  {
    name: 'kustomize: its text unread, only the file',
    source: overlay(),
    message: "accumulating resources from 'missing.yaml': no such file",
    places: [['/w/k/kustomization.yaml', 0, 0]],
  },
];

for (const c of cases) {
  test(`a failed render is shown where it belongs: ${c.name}`, () => {
    const places = renderFailurePlaces(c.source, c.message).map((p): [string, number, number] => [
      p.file,
      p.range.start.line,
      p.range.start.character,
    ]);
    assert.deepEqual(places, c.places);
  });
}

// Which template line and which values line set a field of a rendered chart object, on the real
// output of `helm template`: the chart `helm create` scaffolds (what users start from, built by the
// Helm under test so it follows the scaffold's changes) and a chart with a subchart, a `range` over
// a list and a map, a template that repeats a whole document, and `--values` files. Each row names a
// rendered field and the lines that must be named for it, most specific first, by file and by the
// text at the position (`replicas:` must start where the range starts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { addressOf } from '../../../../server/src/core/manifest/edits-json';
import { parseManifestText, type ManifestResource } from '../../../../server/src/core/manifest/manifest';
import { helmSourceMap } from '../../../../server/src/core/sources/helm-map';
import type { SourceMap } from '../../../../server/src/core/sources/source-map';
import { parsePath, type FieldPath } from '../../../../server/src/core/ssa/path';
import { requireTool } from '../../../tools/tools';

interface Row {
  /** `Kind/name` of the rendered object. */
  object: string;
  /** The field, as the API server prints it. */
  path: string;
  /** `file: text` for each location: the file relative to the chart, and the text that starts at the position. */
  at: string[];
}

const scaffoldRows: Row[] = [
  {
    object: 'Deployment/web-mychart',
    path: '.spec.replicas',
    at: ['templates/deployment.yaml: replicas: {{ .Values.replicaCount }}', 'values.yaml: replicaCount: 1'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"].image',
    at: [
      'templates/deployment.yaml: image: "{{ .Values.image.repository }}',
      'values.yaml: repository: nginx',
      'values.yaml: tag: ""',
    ],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"].imagePullPolicy',
    at: ['templates/deployment.yaml: imagePullPolicy:', 'values.yaml: pullPolicy: IfNotPresent'],
  },
  // A field toYaml writes from a values block: the printing line, and the key in values.yaml.
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"].livenessProbe.httpGet.path',
    at: ['templates/deployment.yaml: {{- toYaml . | nindent 12 }}', 'values.yaml: path: /'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"].ports[containerPort=80,protocol="TCP"].containerPort',
    at: ['templates/deployment.yaml: containerPort: {{ .Values.service.port }}', 'values.yaml: port: 80'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"].ports[containerPort=80,protocol="TCP"].protocol',
    at: ['templates/deployment.yaml: protocol: TCP'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.containers[name="mychart"]',
    at: ['templates/deployment.yaml: - name: {{ .Chart.Name }}'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.spec.serviceAccountName',
    at: ['templates/deployment.yaml: serviceAccountName: {{ include'],
  },
  // Labels an include writes: the include line, not podLabels (empty in values.yaml).
  {
    object: 'Deployment/web-mychart',
    path: '.metadata.labels.helm.sh/chart',
    at: ['templates/deployment.yaml: {{- include "mychart.labels" . | nindent 4 }}'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.template.metadata.labels.app.kubernetes.io/name',
    at: ['templates/deployment.yaml: {{- include "mychart.labels" . | nindent 8 }}'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.spec.selector.matchLabels.app.kubernetes.io/instance',
    at: ['templates/deployment.yaml: {{- include "mychart.selectorLabels" . | nindent 6 }}'],
  },
  {
    object: 'Deployment/web-mychart',
    path: '.metadata.name',
    at: ['templates/deployment.yaml: name: {{ include "mychart.fullname" . }}'],
  },
  {
    object: 'Service/web-mychart',
    path: '.spec.type',
    at: ['templates/service.yaml: type: {{ .Values.service.type }}', 'values.yaml: type: ClusterIP'],
  },
  {
    object: 'Service/web-mychart',
    path: '.spec.ports[port=80,protocol="TCP"].targetPort',
    at: ['templates/service.yaml: targetPort: http'],
  },
  {
    object: 'ServiceAccount/web-mychart',
    path: '.automountServiceAccountToken',
    at: ['templates/serviceaccount.yaml: automountServiceAccountToken:', 'values.yaml: automount: true'],
  },
];

const shopRows: Row[] = [
  {
    object: 'Deployment/web-web',
    path: '.spec.replicas',
    at: ['templates/deployment.yaml: replicas: {{ .Values.replicaCount }}', 'values.yaml: replicaCount: 2'],
  },
  // A key written by `{{ $k }}:` in a range over a map: the line, and the map's key in values.yaml.
  {
    object: 'Deployment/web-web',
    path: '.metadata.annotations.tier',
    at: ['templates/deployment.yaml: {{ $k }}: {{ $v | quote }}', 'values.yaml: tier: web'],
  },
  // Items of a list: a literal one, then those a range writes (the range's element in values.yaml).
  {
    object: 'Deployment/web-web',
    path: '.spec.template.spec.containers[name="web"].env[name="STATIC"].value',
    at: ['templates/deployment.yaml: value: "1"'],
  },
  {
    object: 'Deployment/web-web',
    path: '.spec.template.spec.containers[name="web"].env[name="LEVEL"].value',
    at: ['templates/deployment.yaml: value: {{ .value | quote }}', 'values.yaml: value: info'],
  },
  {
    object: 'Deployment/web-web',
    path: '.spec.template.spec.containers[name="web"].env[name="MODE"]',
    at: ['templates/deployment.yaml: - name: {{ .name }}'],
  },
  {
    object: 'Deployment/web-web',
    path: '.spec.template.spec.containers[name="sidecar"].image',
    at: ['templates/deployment.yaml: image: busybox:1.36'],
  },
  // A document repeated by a range over a map (keys in sorted order), and a block scalar's inner lines that look like keys.
  {
    object: 'ConfigMap/web-farewell',
    path: '.data.text',
    at: ['templates/configmaps.yaml: text: {{ $text | quote }}', 'values.yaml: farewell: bye'],
  },
  {
    object: 'ConfigMap/web-greeting',
    path: '.data.text',
    at: ['templates/configmaps.yaml: text: {{ $text | quote }}', 'values.yaml: greeting: hello'],
  },
  { object: 'ConfigMap/web-greeting', path: '.data.fixed', at: ['templates/configmaps.yaml: fixed: "yes"'] },
  // The subchart: its template; its value set by the parent's values.yaml under `cache:` (which wins), or by its own.
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.replicas',
    at: [
      'charts/cache/templates/statefulset.yaml: replicas: {{ .Values.replicaCount }}',
      'values.yaml: replicaCount: 3',
    ],
  },
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.template.spec.containers[name="redis"].image',
    at: [
      'charts/cache/templates/statefulset.yaml: image: {{ .Values.image }}',
      'charts/cache/values.yaml: image: redis:7',
    ],
  },
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.template.spec.containers[name="redis"].resources.limits.memory',
    at: [
      'charts/cache/templates/statefulset.yaml: resources: {{- toYaml .Values.resources | nindent 12 }}',
      'values.yaml: memory: 64Mi',
    ],
  },
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.template.spec.containers[name="redis"].resources.limits.cpu',
    at: [
      'charts/cache/templates/statefulset.yaml: resources: {{- toYaml .Values.resources | nindent 12 }}',
      'charts/cache/values.yaml: cpu: 100m',
    ],
  },
];

// `--values values-production.yaml --values values-canary.yaml`: the last file that sets a key wins.
const valuesFileRows: Row[] = [
  {
    object: 'Deployment/web-web',
    path: '.spec.replicas',
    at: ['templates/deployment.yaml: replicas:', 'values-canary.yaml: replicaCount: 1'],
  },
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.template.spec.containers[name="redis"].resources.limits.cpu',
    at: ['charts/cache/templates/statefulset.yaml: resources:', 'values-production.yaml: cpu: 500m'],
  },
  {
    object: 'StatefulSet/web-cache',
    path: '.spec.replicas',
    at: ['charts/cache/templates/statefulset.yaml: replicas:', 'values.yaml: replicaCount: 3'],
  },
];

const shop = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'charts', 'shop');

test('helm source map: the chart helm create scaffolds', (t) => {
  const helm = requireTool(t, 'helm4');
  if (!helm) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-helm-map-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync(helm, ['create', 'mychart'], { cwd: dir });
  checkRows(t, helm, path.join(dir, 'mychart'), [], scaffoldRows);
});

test('helm source map: a chart with a subchart, ranges and a repeated document', (t) => {
  const helm = requireTool(t, 'helm4');
  if (!helm) return;
  checkRows(t, helm, shop, [], shopRows);
});

test('helm source map: --values files, the last that sets a key wins', (t) => {
  const helm = requireTool(t, 'helm4');
  if (!helm) return;
  checkRows(t, helm, shop, ['values-production.yaml', 'values-canary.yaml'], valuesFileRows);
});

test('helm source map: every rendered object has its template as origin', (t) => {
  const helm = requireTool(t, 'helm4');
  if (!helm) return;
  const { resources, map } = render(helm, shop, []);
  const origins = resources.map(
    (r, i) =>
      `${r.kind}/${r.name} ${path.relative(shop, map.objects[i]!.origin.file)}:${map.objects[i]!.origin.range.start.line + 1}`,
  );
  assert.deepEqual(origins.sort(), [
    'ConfigMap/web-farewell templates/configmaps.yaml:3',
    'ConfigMap/web-greeting templates/configmaps.yaml:3',
    'Deployment/web-web templates/deployment.yaml:1',
    'StatefulSet/web-cache charts/cache/templates/statefulset.yaml:1',
  ]);
});

function render(
  helm: string,
  chart: string,
  valuesFiles: string[],
): { resources: readonly ManifestResource[]; map: SourceMap } {
  const args = ['template', 'web', chart, ...valuesFiles.flatMap((f) => ['--values', path.join(chart, f)])];
  const rendered = execFileSync(helm, args, { encoding: 'utf8' });
  const files = new Map<string, string>();
  const read = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) read(p);
      else files.set(p, fs.readFileSync(p, 'utf8'));
    }
  };
  read(chart);
  const { resources } = parseManifestText(rendered);
  return {
    resources,
    map: helmSourceMap(resources, {
      root: chart,
      files,
      valuesFiles: valuesFiles.map((f) => path.join(chart, f)),
      release: 'web',
      namespace: 'default',
    }),
  };
}

function checkRows(t: TestContext, helm: string, chart: string, valuesFiles: string[], rows: Row[]): void {
  const { resources, map } = render(helm, chart, valuesFiles);
  assert.equal(map.target.label, 'release web in namespace default');
  for (const row of rows) {
    const index = resources.findIndex((r) => `${r.kind}/${r.name}` === row.object);
    assert.ok(index >= 0, `${row.object} is not rendered (${resources.map((r) => `${r.kind}/${r.name}`).join(', ')})`);
    const resource = resources[index]!;
    const fieldPath = fieldPathOf(resource, row.path);
    const got = map.locate(index, fieldPath).map((l) => {
      const line = fs.readFileSync(l.file, 'utf8').split('\n')[l.range.start.line] ?? '';
      return { file: path.relative(chart, l.file), text: line.slice(l.range.start.character), role: l.role };
    });
    const shown = got.map((g) => `${g.file}: ${g.text}`);
    assert.equal(got.length, row.at.length, `${row.object} ${row.path}: ${JSON.stringify(shown)}`);
    for (const [n, want] of row.at.entries()) {
      const [file, text] = [want.slice(0, want.indexOf(': ')), want.slice(want.indexOf(': ') + 2)];
      assert.equal(got[n]!.file, file, `${row.object} ${row.path} #${n}: ${JSON.stringify(shown)}`);
      assert.ok(got[n]!.text.startsWith(text), `${row.object} ${row.path} #${n}: ${JSON.stringify(shown)}`);
      assert.equal(got[n]!.role, file.includes('templates/') ? 'template' : 'values');
    }
  }
  t.diagnostic(`${rows.length} fields located`);
}

/** The server's path notation, with field names holding dots read against the object. */
function fieldPathOf(resource: ManifestResource, text: string): FieldPath {
  const p = parsePath(text, (parent) => {
    const address = addressOf(resource.object, parent);
    let v: unknown = resource.object;
    for (const k of address ?? []) v = (v as Record<string | number, unknown>)?.[k];
    return v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v) : undefined;
  });
  assert.ok(p, `bad path ${text}`);
  return p;
}

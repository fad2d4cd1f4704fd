// Taking a field out of what a target sends (removalFromSources, core/findings/rendered.ts): every
// source that writes it is edited at once, or nothing is and the reason says which writer stands in
// the way. Overlays are built by the real kustomize (KCH_KUSTOMIZE), whose origin annotations say
// which resource file each object comes from; charts are mapped from helm's `# Source:` comments.
// Each row: the sources, the field, and either every file's text after the edits or the refusal.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { removalFromSources } from '../../../../server/src/core/findings/rendered';
import { applyTextEdits } from '../../../../server/src/core/manifest/edits';
import { parseManifestText, type ManifestResource } from '../../../../server/src/core/manifest/manifest';
import { helmSourceMap } from '../../../../server/src/core/sources/helm-map';
import type { SourceMap } from '../../../../server/src/core/sources/source-map';
import { parsePath } from '../../../../server/src/core/ssa/path';
import { renderKustomization } from '../../../../server/src/render/kustomize';
import { scratchDir, writeFiles } from '../../../cli/cli-process';
import { requireTool } from '../../../tools/tools';

const deployment = (replicas: string, image = 'nginx:1.25') =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    'spec:',
    ...(replicas ? [`  replicas: ${replicas}`] : []),
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  template:',
    '    metadata:',
    '      labels:',
    '        app: web',
    '    spec:',
    '      containers:',
    '      - name: app',
    `        image: ${image}`,
    '',
  ].join('\n');
const smp = (body: string) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n${body}`;
const overlay = (extra = '') => `resources:\n- ../../base\n${extra}`;
const base = { 'base/kustomization.yaml': 'resources:\n- deployment.yaml\n', 'base/deployment.yaml': deployment('1') };

interface Row {
  name: string;
  files: Record<string, string>;
  field: string;
  /** Files (relative) the removal cannot read, as if outside the workspace. */
  unreadable?: string[];
  /** Every edited file's text after the edits, or the refusal. */
  want: { edited: Record<string, string> } | { refused: RegExp };
}

const kustomizeRows: Row[] = [
  {
    name: 'a patch and the base it patches both set replicas: both lose them',
    files: {
      ...base,
      'overlays/production/kustomization.yaml': overlay('patches:\n- path: replicas.yaml\n'),
      'overlays/production/replicas.yaml': smp('spec:\n  replicas: 3\n'),
    },
    field: '.spec.replicas',
    want: { edited: { 'base/deployment.yaml': deployment(''), 'overlays/production/replicas.yaml': smp('') } },
  },
  {
    name: 'only the base sets replicas: only the base is edited',
    files: { ...base, 'overlays/production/kustomization.yaml': overlay() },
    field: '.spec.replicas',
    want: { edited: { 'base/deployment.yaml': deployment('') } },
  },
  {
    name: 'a list item found by its key in the base and in two patches',
    files: {
      ...base,
      'overlays/production/kustomization.yaml': overlay('patches:\n- path: image.yaml\n- path: more.yaml\n'),
      'overlays/production/image.yaml': smp(
        'spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.26\n',
      ),
      'overlays/production/more.yaml': smp(
        'spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n',
      ),
    },
    field: '.spec.template.spec.containers[name="app"].image',
    // The base's container keeps its name (the list item stays); the patches lose what they only said of it.
    want: {
      edited: {
        'base/deployment.yaml': deployment('1').replace('        image: nginx:1.25\n', ''),
        'overlays/production/image.yaml': smp(
          'spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n',
        ),
        'overlays/production/more.yaml': smp('spec:\n  template:\n    spec:\n      containers:\n      - name: app\n'),
      },
    },
  },
  {
    name: "the overlay's replicas entry also sets them: refused, naming it",
    files: { ...base, 'overlays/production/kustomization.yaml': overlay('replicas:\n- name: web\n  count: 4\n') },
    field: '.spec.replicas',
    want: { refused: /an entry of kustomization\.yaml also sets \.spec\.replicas/ },
  },
  {
    name: 'a JSON 6902 patch file also sets them: refused',
    files: {
      ...base,
      'overlays/production/kustomization.yaml': overlay(
        'patches:\n- path: ops.yaml\n  target:\n    kind: Deployment\n',
      ),
      'overlays/production/ops.yaml': '- op: replace\n  path: /spec/replicas\n  value: 3\n',
    },
    field: '.spec.replicas',
    want: { refused: /ops\.yaml also sets \.spec\.replicas in a way no edit here can undo/ },
  },
  {
    name: 'an inline patch in the kustomization also sets them: refused',
    files: {
      ...base,
      'overlays/production/kustomization.yaml': overlay(
        'patches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      replicas: 3\n',
      ),
    },
    field: '.spec.replicas',
    want: { refused: /kustomization\.yaml also sets \.spec\.replicas in a way no edit here can undo/ },
  },
  {
    name: 'the base cannot be edited (outside the workspace): refused, not half done',
    files: {
      ...base,
      'overlays/production/kustomization.yaml': overlay('patches:\n- path: replicas.yaml\n'),
      'overlays/production/replicas.yaml': smp('spec:\n  replicas: 3\n'),
    },
    field: '.spec.replicas',
    unreadable: ['base/deployment.yaml'],
    want: { refused: /deployment\.yaml also sets \.spec\.replicas, and it cannot be edited here/ },
  },
];

function check(row: Row, root: string, map: SourceMap, resource: ManifestResource): void {
  const at = parsePath(row.field);
  assert.ok(at, row.field);
  const unreadable = new Set((row.unreadable ?? []).map((f) => path.join(root, f)));
  const textOf = (f: string) => (unreadable.has(f) || !fs.existsSync(f) ? undefined : fs.readFileSync(f, 'utf8'));
  const got = removalFromSources(map, resource, at, {}, textOf);
  if ('refused' in row.want) {
    assert.equal(got.files, undefined, JSON.stringify(got));
    assert.match('reason' in got ? got.reason : '', row.want.refused);
    return;
  }
  assert.ok(got.files, JSON.stringify(got));
  const edited = Object.fromEntries(
    got.files.map((f) => [
      path.relative(root, f.file).split(path.sep).join('/'),
      applyTextEdits(textOf(f.file)!, f.edits),
    ]),
  );
  assert.deepEqual(edited, row.want.edited);
}

for (const row of kustomizeRows) {
  test(`kustomize: ${row.name}`, async (t) => {
    const kustomize = requireTool(t, 'kustomize');
    if (!kustomize) return;
    const root = scratchDir('source-removal');
    writeFiles(root, row.files);
    const target = {
      kind: 'kustomize' as const,
      root: path.join(root, 'overlays/production').split(path.sep).join('/'),
      label: 'overlay production',
    };
    const out = await renderKustomization(target, { kustomize });
    assert.ok(out.ok, JSON.stringify(out));
    const resource = parseManifestText(out.text).resources.find((r) => r.kind === 'Deployment');
    assert.ok(resource);
    check(row, root, out.sourceMap, resource);
  });
}

// A chart's template, rendered as helm prints it; values.yaml gives the template lines their values.
const template = (replicas: string) =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: {{ .Release.Name }}-web',
    'spec:',
    '  {{- if not .Values.autoscaling.enabled }}',
    `  replicas: ${replicas}`,
    '  {{- end }}',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  template:',
    '    metadata:',
    '      labels:',
    '        app: web',
    '    spec:',
    '      containers:',
    '      - name: app',
    '        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"',
    '        resources:',
    '          {{- toYaml .Values.resources | nindent 10 }}',
    '',
  ].join('\n');
const values =
  'replicaCount: 1\nautoscaling:\n  enabled: false\nimage:\n  repository: nginx\n  tag: "1.25"\nresources:\n  limits:\n    cpu: 100m\n';
const helmRendered = (replicas: string) =>
  `---\n# Source: shop/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-web\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: app\n        image: "nginx:1.25"\n        resources:\n          limits:\n            cpu: 100m\n`;

const helmRows: (Row & { replicas: string })[] = [
  {
    name: 'replicas from .Values: the template line goes, values.yaml stays',
    replicas: '{{ .Values.replicaCount }}',
    files: {},
    field: '.spec.replicas',
    want: {
      edited: {
        'templates/deployment.yaml': template('{{ .Values.replicaCount }}').replace(
          '  replicas: {{ .Values.replicaCount }}\n',
          '',
        ),
      },
    },
  },
  {
    name: 'a literal replicas line goes',
    replicas: '2',
    files: {},
    field: '.spec.replicas',
    want: { edited: { 'templates/deployment.yaml': template('2').replace('  replicas: 2\n', '') } },
  },
  {
    name: 'an image made of two values: refused',
    replicas: '2',
    files: {},
    field: '.spec.template.spec.containers[name="app"].image',
    want: { refused: /template action/ },
  },
  {
    name: 'a field that toYaml prints: refused',
    replicas: '2',
    files: {},
    field: '.spec.template.spec.containers[name="app"].resources.limits.cpu',
    want: { refused: /deployment\.yaml line 21/ },
  },
];

for (const row of helmRows) {
  test(`helm: ${row.name}`, () => {
    const root = '/chart';
    const files = new Map([
      [`${root}/Chart.yaml`, 'apiVersion: v2\nname: shop\nversion: 0.1.0\n'],
      [`${root}/values.yaml`, values],
      [`${root}/templates/deployment.yaml`, template(row.replicas)],
    ]);
    const resources = parseManifestText(helmRendered(row.replicas.startsWith('{{') ? '1' : row.replicas)).resources;
    const map = helmSourceMap(resources, { root, files, valuesFiles: [], release: 'web', namespace: 'default' });
    const at = parsePath(row.field)!;
    const got = removalFromSources(map, resources[0]!, at, {}, (f) => files.get(f));
    if ('refused' in row.want) {
      assert.equal(got.files, undefined, JSON.stringify(got));
      assert.match('reason' in got ? got.reason : '', row.want.refused);
      return;
    }
    assert.ok(got.files, JSON.stringify(got));
    assert.deepEqual(
      Object.fromEntries(
        got.files.map((f) => [f.file.slice(root.length + 1), applyTextEdits(files.get(f.file)!, f.edits)]),
      ),
      row.want.edited,
    );
  });
}

// Which overlays count (kubeConflictHints.kustomizeOverlays): every entry is checked before it means
// anything, globs choose among the overlays found in the folder, and choosing for one file keeps
// what the setting says about the others. Also the template-line removal a literal value offers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyTextEdits } from '../../../../server/src/core/manifest/edits';
import { removeTemplateLineEdits } from '../../../../server/src/core/sources/helm-map';
import {
  countedOverlays,
  entriesToKeep,
  parseOverlayEntries,
  unmatchedEntries,
} from '../../../../server/src/core/sources/overlay-choice';

const folder = '/w/repo';
const roots = ['/w/repo/overlays/staging', '/w/repo/overlays/production', '/w/repo/clusters/eu/production', '/w/repo'];

const cases: { entries: string[]; counted: string[]; invalid?: string[] }[] = [
  { entries: [], counted: roots },
  { entries: ['overlays/staging'], counted: ['/w/repo/overlays/staging'] },
  { entries: ['./overlays/staging/'], counted: ['/w/repo/overlays/staging'] },
  { entries: ['overlays\\staging'], counted: ['/w/repo/overlays/staging'] },
  { entries: ['/w/repo/overlays/production'], counted: ['/w/repo/overlays/production'] },
  { entries: ['overlays/*'], counted: ['/w/repo/overlays/staging', '/w/repo/overlays/production'] },
  { entries: ['**/production'], counted: ['/w/repo/overlays/production', '/w/repo/clusters/eu/production'] },
  { entries: ['overlays/stag?ng'], counted: ['/w/repo/overlays/staging'] },
  { entries: ['.'], counted: ['/w/repo'] },
  { entries: ['overlays/../overlays/staging'], counted: ['/w/repo/overlays/staging'] },
  // Refused, with the valid entries still counting; all refused: the default (every overlay).
  {
    entries: ['../repo/overlays/staging', 'overlays/production'],
    counted: ['/w/repo/overlays/production'],
    invalid: ['../repo/overlays/staging'],
  },
  {
    entries: ['/etc', '/w/repository/x', '~/overlays', 'overlays/../../x', 'a\u0000b'],
    counted: roots,
    invalid: ['/etc', '/w/repository/x', '~/overlays', 'overlays/../../x', 'a\u0000b'],
  },
  { entries: ['/w/repo/../other/overlays/staging'], counted: roots, invalid: ['/w/repo/../other/overlays/staging'] },
];

for (const c of cases) {
  test(`kustomizeOverlays ${JSON.stringify(c.entries)}`, () => {
    const parsed = parseOverlayEntries(folder, c.entries);
    assert.deepEqual(
      parsed.invalid.map((i) => i.entry),
      c.invalid ?? [],
    );
    for (const i of parsed.invalid) assert.match(i.reason, /outside the workspace folder|control character/);
    assert.deepEqual(countedOverlays(folder, roots, parsed), c.counted);
  });
}

test('an entry that names no overlay of the folder is found out (a typo counts nothing)', () => {
  assert.deepEqual(
    unmatchedEntries(folder, roots, parseOverlayEntries(folder, ['overlays/stagin', 'overlays/*', '../x'])),
    ['overlays/stagin'],
  );
});

test('choosing for one file keeps what the setting says about the other overlays', () => {
  const offered = ['/w/repo/overlays/staging', '/w/repo/overlays/production'];
  // Every overlay counted (empty setting): the others are kept by name, so they still count.
  assert.deepEqual(entriesToKeep(folder, roots, offered, []), ['clusters/eu/production', '.']);
  // A glob that names an offered overlay is replaced by the others it names.
  assert.deepEqual(entriesToKeep(folder, roots, offered, ['**/production', 'overlays/staging']), [
    'clusters/eu/production',
  ]);
  // Entries about other overlays and invalid ones stay as written.
  assert.deepEqual(entriesToKeep(folder, roots, offered, ['clusters/*/production', '../x']), [
    'clusters/*/production',
    '../x',
  ]);
});

const template = [
  'apiVersion: apps/v1',
  'kind: Deployment',
  'metadata:',
  '  name: {{ include "shop.fullname" . }}',
  'spec:',
  '  replicas: 3',
  '  revisionHistoryLimit: {{ .Values.history }}',
  '  strategy:',
  '    type: Recreate',
  '  template:',
  '    spec:',
  '      containers:',
  '      - name: app',
  '        image: nginx',
  '        args: |',
  '          --x',
  '',
].join('\n');
const lineOf = (prefix: string) => template.split('\n').findIndex((l) => l.trimStart().startsWith(prefix));

test('a literal template line can be removed; nothing is offered where removing the line would do more or less', () => {
  const removed = removeTemplateLineEdits(template, lineOf('replicas:'));
  assert.ok(removed.edits, JSON.stringify(removed));
  assert.equal(applyTextEdits(template, removed.edits), template.replace('  replicas: 3\n', ''));
  assert.ok(removeTemplateLineEdits(template, lineOf('image:')).edits, 'a key of a list item after its first');
  // A value printed by one action is the line's own too: without the line the key is not rendered.
  const printed = removeTemplateLineEdits(template, lineOf('revisionHistoryLimit:'), 'revisionHistoryLimit');
  assert.ok(printed.edits, JSON.stringify(printed));
  assert.equal(
    applyTextEdits(template, printed.edits),
    template.replace('  revisionHistoryLimit: {{ .Values.history }}\n', ''),
  );
  assert.match(
    (removeTemplateLineEdits(template, lineOf('revisionHistoryLimit:'), 'replicas') as { reason: string }).reason,
    /writes revisionHistoryLimit, not replicas/,
  );
  for (const [prefix, reason] of [
    ['name: {{', /only key of its parent/],
    ['type: Recreate', /only key of its parent/],
    ['- name: app', /list item/],
    ['args:', /literal value/],
    ['spec:', /literal value/],
  ] as const) {
    const result = removeTemplateLineEdits(template, lineOf(prefix));
    assert.equal(result.edits, undefined, prefix);
    assert.match((result as { reason: string }).reason, reason, prefix);
  }
  // Lines whose value is more than one printed scalar: two actions, a printed block, a control action.
  for (const line of [
    '  image: "{{ .Values.repo }}:{{ .Values.tag }}"',
    '  resources: {{- toYaml .Values.resources | nindent 4 }}',
    '  paused: {{ if .Values.paused }}true{{ end }}',
    '  replicas: {{ .Values.replicas -}}',
  ]) {
    const text = `apiVersion: v1\nkind: X\nspec:\n  other: 1\n${line}\n`;
    const result = removeTemplateLineEdits(text, 4);
    assert.equal(result.edits, undefined, line);
    assert.match((result as { reason: string }).reason, /template action/, line);
  }
});

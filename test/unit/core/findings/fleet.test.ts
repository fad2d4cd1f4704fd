// Several contexts side by side (core/findings/fleet.ts): a finding shared by contexts is told
// once, naming them in the order given; findings that differ in any word stay apart; a table cell
// says what stops the apply first, else whether the object exists.
// Drift is judged on Deployments captured from the real server (test/fixtures/engine/predict-deployment.yaml).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import {
  contextsNamed,
  driftFindings,
  fieldStates,
  fleetCell,
  fleetFindings,
  mergeAcrossContexts,
  objectIdentity,
  type Finding,
  type FleetEntry,
} from '../../../../server/src/core/findings';
import type { JsonObject } from '../../../../server/src/core/json';
import { hasNodeTree, parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { schema } from '../../../support/findings-fixtures';

interface EngineCase {
  name: string;
  capture: string;
  manifest: JsonObject;
  live: JsonObject;
}
const captured = (
  parse(
    fs.readFileSync(
      path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'engine', 'predict-deployment.yaml'),
      'utf8',
    ),
  ) as EngineCase[]
).filter((c) => c.capture === 'done');
const caseNamed = (name: string) => captured.find((c) => c.name === name)!;

const at = (line: number, character = 2) => ({
  start: { line, character },
  end: { line, character: character + 8 },
});

const conflict = (manager: string, live: string, line = 8): Finding => ({
  code: 'field-conflict',
  severity: 'error',
  message: `.spec.replicas is managed by "${manager}": live ${live}, manifest 3`,
  range: at(line),
  path: '.spec.replicas',
  manager: { manager, operation: 'Update' },
});
const exists: Finding = { code: 'exists', severity: 'information', message: 'exists', range: at(3) };

test('a finding the same in several contexts is one entry naming them, in the order given', () => {
  const merged = mergeAcrossContexts([
    { context: 'staging', findings: [conflict('kubectl-edit', '4'), exists] },
    { context: 'prod-eu', findings: [exists, conflict('kube-controller-manager', '5')] },
    { context: 'prod-us', findings: [conflict('kube-controller-manager', '5'), exists] },
  ]);
  assert.deepEqual(
    merged.map((m) => [m.finding.manager?.manager ?? m.finding.code, m.contexts]),
    [
      ['kubectl-edit', ['staging']],
      ['exists', ['staging', 'prod-eu', 'prod-us']],
      ['kube-controller-manager', ['prod-eu', 'prod-us']],
    ],
  );
});

test('findings that differ in their words, place or manager are kept apart', () => {
  const cases: [string, Finding, Finding][] = [
    ['another live value', conflict('hpa', '5'), conflict('hpa', '6')],
    ['another line', conflict('hpa', '5', 8), conflict('hpa', '5', 9)],
    [
      'another manager, same words',
      conflict('hpa', '5'),
      { ...conflict('hpa', '5'), manager: { manager: 'vpa', operation: 'Update' } },
    ],
  ];
  for (const [why, a, b] of cases) {
    const merged = mergeAcrossContexts([
      { context: 'a', findings: [a] },
      { context: 'b', findings: [b] },
    ]);
    assert.equal(merged.length, 2, why);
  }
});

test('a table cell says what stops the apply first, else whether the object exists', () => {
  const cases: [FleetEntry | 'absent', string, Parameters<typeof fleetCell>[1]?][] = [
    [
      { findings: [conflict('kubectl-edit', '4'), conflict('hpa', '5'), exists], live: 'exists' },
      'conflict with kubectl-edit, hpa',
    ],
    [{ findings: [{ ...exists, code: 'already-exists', severity: 'error' }], live: 'exists' }, 'already-exists'],
    [{ findings: [{ ...exists, code: 'would-delete', severity: 'warning' }], live: 'exists' }, 'would-delete'],
    [{ findings: [exists], live: 'exists' }, 'exists'],
    [{ findings: [], live: 'absent' }, 'missing'],
    [{ findings: [], notJudged: true }, 'not judged'],
    [{ findings: [{ ...exists, code: 'kind-not-served', severity: 'error' }] }, 'not judged'],
    ['absent', '-'],
    [{ findings: [exists], live: 'exists' }, 'unreachable', 'unreachable'],
    ['absent', 'timed out', 'timed out'],
  ];
  for (const [entry, expected, trouble] of cases) assert.equal(fleetCell(entry, trouble), expected, expected);
});

test("the editor's findings: each shared one once, its message naming its contexts; what the text alone says, as it is", () => {
  const refused: Finding = {
    code: 'generate-name-apply',
    severity: 'error',
    message: 'cannot use generate name with apply',
    range: at(3),
  };
  const shown = fleetFindings([
    { context: 'staging', findings: [conflict('kubectl-edit', '4'), refused] },
    { context: 'prod-eu', findings: [conflict('kube-controller-manager', '5'), refused] },
    { context: 'prod-us', findings: [conflict('kube-controller-manager', '5'), refused] },
  ]);
  assert.deepEqual(
    shown.map((f) => [f.message, f.contexts]),
    [
      ['[staging] .spec.replicas is managed by "kubectl-edit": live 4, manifest 3', ['staging']],
      ['cannot use generate name with apply', ['staging', 'prod-eu', 'prod-us']],
      [
        '[prod-eu, prod-us] .spec.replicas is managed by "kube-controller-manager": live 5, manifest 3',
        ['prod-eu', 'prod-us'],
      ],
    ],
  );
  // Held in some contexts only, even what the text says names them.
  const some = fleetFindings([
    { context: 'a', findings: [refused] },
    { context: 'b', findings: [] },
  ]);
  assert.equal(some[0]!.message, '[a] cannot use generate name with apply');
});

test('the contexts setting: names as given, globs over the kubeconfig in its order, each context once, and what matches nothing', () => {
  const known = ['staging', 'prod-eu', 'prod-us', 'prod-[x]', 'dev'];
  assert.deepEqual(contextsNamed(known, ['prod-us', 'prod-*', 'staging', 'nope-*', 'prod-[x]']), {
    contexts: ['prod-us', 'prod-eu', 'prod-[x]', 'staging'],
    unmatched: ['nope-*'],
  });
  assert.deepEqual(contextsNamed(known, ['{dev,staging}']).contexts, ['staging', 'dev']);
  assert.deepEqual(contextsNamed([], ['*']), { contexts: [], unmatched: ['*'] });
});

test('a field whose live value or owners differ between the clusters holding the object is said once, on its line', () => {
  const autoscaled = caseNamed('autoscaler owns replicas through the scale subresource');
  const clientSide = caseNamed('another field manager gets no forgiveness');
  const text = stringify(autoscaled.manifest);
  const resource = parseManifestText(text).resources[0]!;
  const statesOf = (live: JsonObject) => fieldStates(resource, live, schema);
  const drift = driftFindings(objectIdentity(resource), [
    { context: 'staging', fields: statesOf(clientSide.live) },
    { context: 'prod', fields: statesOf(autoscaled.live) },
    { context: 'dr', fields: 'missing' },
  ]);
  const replicas = drift.find((f) => f.path === '.spec.replicas');
  assert.ok(replicas, JSON.stringify(drift.map((f) => f.message)));
  assert.equal(
    replicas.message,
    '.spec.replicas differs between contexts: staging 1 (kubectl-client-side-apply); prod 5 (kube-controller-manager (scale))',
  );
  assert.equal(replicas.severity, 'information');
  assert.equal(text.split('\n')[replicas.range.start.line].trim(), 'replicas: 3');
  // The same value set by another manager is drift too: who would take it back differs.
  const created = caseNamed('atomic selector differs, one conflict at .spec.selector');
  const owners = driftFindings(objectIdentity(resource), [
    { context: 'staging', fields: statesOf(autoscaled.live) },
    { context: 'prod', fields: statesOf(created.live) },
  ]).find((f) => f.path === '.spec.replicas');
  assert.equal(
    owners?.message,
    '.spec.replicas differs between contexts: staging 5 (kube-controller-manager (scale)); prod 5 (kubectl-create)',
  );
  // The same history in two clusters is no drift; one cluster alone has nothing to differ from.
  const same = [
    { context: 'a', fields: statesOf(autoscaled.live) },
    { context: 'b', fields: statesOf(autoscaled.live) },
  ];
  assert.deepEqual(driftFindings(objectIdentity(resource), same), []);
  assert.deepEqual(driftFindings(objectIdentity(resource), [same[0], { context: 'c', fields: 'missing' }]), []);
});

test("the manifest's leaves are found once per object and schema: every context with that schema compares the same leaves", () => {
  const autoscaled = caseNamed('autoscaler owns replicas through the scale subresource');
  const clientSide = caseNamed('another field manager gets no forgiveness');
  const resource = parseManifestText(stringify(autoscaled.manifest)).resources[0]!;
  const staging = fieldStates(resource, clientSide.live, schema);
  const prod = fieldStates(resource, autoscaled.live, schema);
  // The same leaves (the very same placed ranges), each with its own cluster's value and owners.
  assert.ok(staging.length > 3);
  assert.deepEqual(
    prod.map((f) => f.path),
    staging.map((f) => f.path),
  );
  staging.forEach((f, i) => assert.equal(prod[i]!.range, f.range, f.path));
  const replicas = (states: typeof staging) => states.find((f) => f.path === '.spec.replicas');
  assert.deepEqual([replicas(staging)?.live, replicas(prod)?.live], [1, 5]);
  // Another schema is another reading of the same text (list items named by their keys or not): found anew.
  const bare = fieldStates(resource, autoscaled.live, undefined);
  assert.ok(bare.some((f) => f.path.includes('[0]')) && !prod.some((f) => f.path.includes('[0]')));
});

test('comparing fields across contexts parses no node tree; a field that differs is placed from its line, or from the tree where the text cannot say', () => {
  const text = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: settings',
    'data:',
    '  mode: fast',
    '  script: |',
    '    echo one',
    '    echo two',
    '',
  ].join('\n');
  const resource = parseManifestText(text).resources[0]!;
  const live = (mode: string, script: string): JsonObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', managedFields: [] },
    data: { mode, script },
  });
  const same = 'echo one\necho two\n';
  const states = (l: JsonObject) => fieldStates(resource, l, schema);
  const one = driftFindings(objectIdentity(resource), [
    { context: 'a', fields: states(live('fast', same)) },
    { context: 'b', fields: states(live('safe', same)) },
  ]);
  assert.deepEqual(
    one.map((f) => [f.path, f.range.start.line]),
    [['.data.mode', 5]],
  );
  assert.ok(!hasNodeTree(resource), 'the one-line field is placed from its text');
  const two = driftFindings(objectIdentity(resource), [
    { context: 'a', fields: states(live('fast', same)) },
    { context: 'b', fields: states(live('fast', 'echo three\n')) },
  ]);
  assert.deepEqual(
    two.map((f) => [f.path, f.range.start.line]),
    [['.data.script', 6]],
  );
});

// The quick-fix edits, from the fixtures in test/fixtures/edits: each case gives a manifest, what
// to remove or which value to take, and the whole text expected afterwards (or a refusal). Beyond
// the exact text, every case checks what a user relies on: the edits do not overlap, the edited
// text still parses without problems, the field is gone or holds the new value when read back as
// kubectl reads it — by the manifest model, and by the real kubectl binary where it is installed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { addressOf } from '../../../../server/src/core/manifest/edits-json';
import {
  applyTextEdits,
  removeFieldEdits,
  removeFieldsEdits,
  removeFieldsInFileEdits,
  replaceValueEdits,
  type EditResult,
  type TextEdit,
} from '../../../../server/src/core/manifest/edits';
import { jsonEqual, type JsonValue } from '../../../../server/src/core/json';
import {
  locatePathString,
  nodeToJson,
  parseManifestText,
  type LocateOptions,
  type ManifestResource,
  type Position,
} from '../../../../server/src/core/manifest/manifest';
import { parsePath, type FieldPath } from '../../../../server/src/core/ssa/path';
import { assertExpected, withBlockString, type Golden } from '../../../support/expected';

const dir = path.join(import.meta.dirname, '../../../fixtures/edits');

interface EditCase {
  readonly name: string;
  readonly input: string;
  /** One path (removeFieldEdits) or several (removeFieldsEdits). */
  readonly remove?: string | string[];
  readonly replace?: string;
  /** Several resources at once (removeFieldsInFileEdits): which resource, which paths. */
  readonly removeInFile?: { resource: number; paths: string[] }[];
  /** The paths a file-wide removal reports as not removable. */
  readonly skipped?: string[];
  /** The new value for `replace`, as JSON text (so the fixture's own YAML reading cannot bend it). */
  readonly value?: string;
  /** Index of the target among the text's resources (List items flattened); 0 by default. */
  readonly resource?: number;
  /** Run the case with \r\n line breaks in input and expectation. */
  readonly crlf?: boolean;
  readonly expect?: string;
  /** How many edits the result must hold (0: nothing to do). */
  readonly editCount?: number;
  /** A word the reason of the expected refusal contains. */
  readonly refused?: string;
}

/** A Container's or Service port's protocol defaults to TCP: what the schema will say. */
const options: LocateOptions = {
  keyFieldDefault: (_list, fieldName) => (fieldName === 'protocol' ? 'TCP' : undefined),
};

const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const allCases: { file: string; c: EditCase }[] = [];
for (const file of files) {
  const cases = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as EditCase[];
  for (const c of cases) allCases.push({ file, c });
}

const withEol = (c: EditCase, s: string) => (c.crlf ? s.replace(/\n/g, '\r\n') : s);

/** A case's `expect`, the golden text of its edit (UPDATE_EXPECT=1 rewrites it). */
function expectOf(file: string, c: EditCase): Golden<string> {
  const index = (text: string) => (parseYaml(text) as EditCase[]).findIndex((other) => other.name === c.name);
  return {
    file: path.join(dir, file),
    read: (text) => withEol(c, (parseYaml(text) as EditCase[])[index(text)]!.expect!),
    write: (actual, text) => withBlockString(text, [index(text), 'expect'], actual.replace(/\r\n/g, '\n')),
  };
}

function run(c: EditCase, text: string, resource: ManifestResource): EditResult {
  if (c.removeInFile) {
    const resources = parseManifestText(text).resources;
    const requests = c.removeInFile.map((r) => ({ resource: resources[r.resource]!, paths: r.paths }));
    const result = removeFieldsInFileEdits(text, requests, options);
    assert.deepEqual(
      result.skipped.map((s) => s.path),
      c.skipped ?? [],
      'the paths reported as not removable',
    );
    return { edits: result.edits };
  }
  if (c.replace !== undefined)
    return replaceValueEdits(text, resource, c.replace, JSON.parse(c.value!) as JsonValue, options);
  if (Array.isArray(c.remove)) return removeFieldsEdits(text, resource, c.remove, options);
  return removeFieldEdits(text, resource, c.remove!, options);
}

const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character <= b.character);

function assertOrderedAndDisjoint(edits: readonly TextEdit[]): void {
  for (let i = 0; i < edits.length; i++) {
    assert.ok(before(edits[i]!.range.start, edits[i]!.range.end), `edit ${i} has a backwards range`);
    if (i > 0) assert.ok(before(edits[i - 1]!.range.end, edits[i]!.range.start), `edits ${i - 1} and ${i} overlap`);
  }
}

/** The paths a case changes in each resource it changes (by index). */
function changes(c: EditCase): [number, string[]][] {
  if (c.removeInFile) return c.removeInFile.map((r) => [r.resource, r.paths.filter((p) => !c.skipped?.includes(p))]);
  return [[c.resource ?? 0, c.replace !== undefined ? [c.replace] : Array.isArray(c.remove) ? c.remove : [c.remove!]]];
}

function fieldPath(resource: ManifestResource | undefined, text: string): FieldPath {
  const p = parsePath(text, (parent) => {
    if (!resource) return undefined;
    let node: JsonValue = resource.object;
    for (const e of parent) {
      if (e.kind !== 'field' || node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
      node = node[e.name]!;
    }
    return node !== null && typeof node === 'object' && !Array.isArray(node) ? Object.keys(node) : undefined;
  });
  assert.ok(p, `fixture: ${text} is not a path`);
  return p;
}

for (const { file, c } of allCases) {
  test(`${file}: ${c.name}`, () => {
    const text = withEol(c, c.input);
    const parsed = parseManifestText(text);
    if (c.refused === undefined) assert.deepEqual(parsed.problems, [], 'fixture: the input parses without problems');
    const resource = parsed.resources[c.resource ?? 0];
    assert.ok(resource, 'fixture: the resource exists');
    const result = run(c, text, resource);

    if (c.refused !== undefined) {
      assert.equal(result.edits, undefined, 'the edit is refused');
      assert.ok(
        !result.edits && result.reason.includes(c.refused),
        `the reason mentions "${c.refused}": ${!result.edits && result.reason}`,
      );
      return;
    }
    assert.ok(result.edits, `refused: ${!result.edits && result.reason}`);
    assertOrderedAndDisjoint(result.edits);
    if (c.editCount !== undefined) assert.equal(result.edits.length, c.editCount);
    const output = applyTextEdits(text, result.edits);
    assertExpected(output, expectOf(file, c), 'the edited text');

    // Read back as kubectl reads it: valid, and the field gone or holding the new value.
    const reread = parseManifestText(output);
    assert.deepEqual(reread.problems, [], 'the edited text parses without problems');
    for (const [index, paths] of changes(c)) {
      const after = reread.resources[index];
      assert.ok(after, 'the resource is still there');
      for (const p of paths) {
        const at = locatePathString(after, p, options);
        if (c.replace !== undefined) {
          assert.ok(at, `${p} is still written`);
          assert.ok(
            jsonEqual(nodeToJson(at.node), JSON.parse(c.value!)),
            `${p} reads back as ${c.value}: ${JSON.stringify(nodeToJson(at.node))}`,
          );
        } else {
          assert.equal(at, undefined, `${p} is gone`);
        }
      }
    }
    if (c.crlf) assert.ok(!/[^\r]\n/.test(output), 'every line break is still \\r\\n');
  });
}

test('the fixtures hold at least 30 cases across every shape of edit', () => {
  assert.ok(allCases.length >= 30, `${allCases.length} cases`);
  for (const shape of ['remove-block', 'remove-flow', 'remove-several', 'crlf', 'refuse', 'replace']) {
    assert.ok(
      files.some((f) => f.startsWith(shape)),
      `a fixture file for ${shape}`,
    );
  }
  assert.ok(allCases.filter(({ c }) => c.refused).length >= 5, 'refusals are covered');
  assert.ok(allCases.filter(({ c }) => c.replace).length >= 10, 'replacements are covered');
});

function kubectlAvailable(): boolean {
  return spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
}

/** The objects kubectl reads from a text (`kubectl label --local` decodes as `kubectl apply` does). */
function kubectlObjects(text: string): JsonValue[] | string {
  const run = spawnSync('kubectl', ['label', '--local', '-f', '-', 'checked=yes', '-o', 'json'], {
    input: text,
    encoding: 'utf8',
    // --local never contacts a cluster and must not read the user's config.
    env: { ...process.env, KUBECONFIG: '/dev/null' },
  });
  if (run.status !== 0) return run.stderr;
  // Several objects are printed one after another; only top-level braces start a line.
  return JSON.parse(`[${run.stdout.trim().replace(/\n}\n{/g, '\n},\n{')}]`) as JsonValue[];
}

test('the real kubectl reads every edited text, with the field gone or holding the new value', (t) => {
  if (!kubectlAvailable()) {
    if (process.env.CI === 'true') throw new Error('kubectl is not installed');
    t.skip('kubectl is not installed');
    return;
  }
  const edited: { file: string; c: EditCase; before: ManifestResource[]; output: string; count: number }[] = [];
  for (const { file, c } of allCases) {
    if (c.refused !== undefined) continue;
    const text = withEol(c, c.input);
    const before = [...parseManifestText(text).resources];
    const result = run(c, text, before[c.resource ?? 0]!);
    if (!result.edits) continue; // reported by the case's own test
    const output = applyTextEdits(text, result.edits);
    edited.push({ file, c, before, output, count: parseManifestText(output).resources.length });
  }
  // One kubectl run for all cases (each run costs about a second): the texts as documents of one
  // stream, and kubectl's objects handed back by each text's count of objects.
  const stream = edited.map((e) => (e.output.endsWith('\n') ? e.output : `${e.output}\n`)).join('---\n');
  const objects = kubectlObjects(stream);
  if (typeof objects === 'string') {
    const refused = edited
      .filter((e) => typeof kubectlObjects(e.output) === 'string')
      .map((e) => `${e.file}: ${e.c.name}`);
    assert.fail(`kubectl refuses edited texts: ${refused.join(', ') || objects}`);
  }
  assert.equal(
    objects.length,
    edited.reduce((n, e) => n + e.count, 0),
    'kubectl reads as many objects as the manifest model',
  );
  const mismatches: string[] = [];
  let next = 0;
  for (const { file, c, before, count } of edited) {
    const own = objects.slice(next, next + count);
    next += count;
    for (const [index, paths] of changes(c)) {
      const object = own[index]!;
      for (const p of paths) {
        const address = addressOf(object, fieldPath(before[index], p), options);
        let value: JsonValue | undefined = object;
        for (const step of address ?? []) value = (value as Record<string | number, JsonValue>)[step];
        const ok =
          c.replace !== undefined
            ? address !== undefined && jsonEqual(value, JSON.parse(c.value!))
            : address === undefined;
        if (!ok)
          mismatches.push(`${file}: ${c.name}: kubectl reads ${p} as ${address ? JSON.stringify(value) : 'absent'}`);
      }
    }
  }
  assert.deepEqual(mismatches, []);
});

test('a resource read from an older text is refused rather than edited at the wrong place', () => {
  const older = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n  level: high\n';
  const newer = older.replace('data:\n', 'data:\n  added: now\n');
  const resource = parseManifestText(older).resources[0]!;
  for (const result of [
    removeFieldEdits(newer, resource, '.data.level'),
    replaceValueEdits(newer, resource, '.data.level', 'low'),
  ]) {
    assert.equal(result.edits, undefined);
    assert.match(result.edits === undefined ? result.reason : '', /changed/);
  }
});

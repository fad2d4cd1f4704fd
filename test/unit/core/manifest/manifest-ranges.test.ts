// Field paths to exact source ranges, from the fixtures in test/fixtures/manifest: every
// `NAME.expect.yaml` describes the resources, problems and located paths of the manifest `NAME.*`.
// The expected texts are cut from the fixture here, independently of the parser's own line
// counting, so a wrong expected range cannot agree with a wrong parser by accident.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { locatePathString, parseManifestText, type Range } from '../../../../server/src/core/manifest/manifest';

const dir = path.join(import.meta.dirname, '../../../fixtures/manifest');

interface Expectation {
  resources: [string, string][];
  problems: [string, string][];
  cases: string[][];
}

/** A Container port's or Service port's protocol defaults to TCP: what the schema will say. */
const options = { keyFieldDefault: (_list: unknown, fieldName: string) => (fieldName === 'protocol' ? 'TCP' : undefined) };

const fmt = (r: Range) => `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;

/** The text an LSP range covers: lines end at \n or \r\n, characters are UTF-16 code units. */
function textAt(lines: string[], r: Range): string {
  if (r.start.line === r.end.line) return lines[r.start.line]!.slice(r.start.character, r.end.character);
  return [
    lines[r.start.line]!.slice(r.start.character),
    ...lines.slice(r.start.line + 1, r.end.line),
    lines[r.end.line]!.slice(0, r.end.character),
  ].join('\n');
}

function parseRange(s: string): Range {
  const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(s);
  assert.ok(m, `bad range ${s}`);
  return { start: { line: +m[1]!, character: +m[2]! }, end: { line: +m[3]!, character: +m[4]! } };
}

function textMatches(actual: string, expected: string): boolean {
  return expected.endsWith('…') ? actual.split('\n')[0] === expected.slice(0, -1) && actual.includes('\n') : actual === expected;
}

const fixtures = fs.readdirSync(dir).filter((f) => f.endsWith('.expect.yaml'));
let caseCount = 0;

for (const expectFile of fixtures) {
  const base = expectFile.slice(0, -'.expect.yaml'.length);
  const manifestFile = fs.readdirSync(dir).find((f) => f.startsWith(`${base}.`) && f !== expectFile)!;
  const text = fs.readFileSync(path.join(dir, manifestFile), 'utf8');
  const lines = text.split(/\r?\n/);
  const expected = parseYaml(fs.readFileSync(path.join(dir, expectFile), 'utf8')) as Expectation;
  const parsed = parseManifestText(text);
  const byId = new Map(parsed.resources.map((r) => [`${r.kind}/${r.name ?? ''}`, r]));

  test(`${manifestFile}: resources and their ranges`, () => {
    assert.deepEqual(
      parsed.resources.map((r) => [`${r.kind}/${r.name ?? ''}`, fmt(r.range)]),
      expected.resources,
    );
  });

  test(`${manifestFile}: problems`, () => {
    assert.deepEqual(
      parsed.problems.map((p) => [p.code, fmt(p.range)]),
      expected.problems,
    );
  });

  for (const [id, pathText, keyRange, keyText, valueRange, valueText, through] of expected.cases) {
    caseCount++;
    test(`${manifestFile}: ${id} ${pathText}`, () => {
      // The fixture itself must say what it claims, or the expectation is the thing that is wrong.
      assert.ok(textMatches(textAt(lines, parseRange(keyRange!)), keyText!), `fixture: the text at ${keyRange} is not ${keyText}`);
      assert.ok(textMatches(textAt(lines, parseRange(valueRange!)), valueText!), `fixture: the text at ${valueRange} is not ${valueText}`);
      const resource = byId.get(id!);
      assert.ok(resource, `no resource ${id}`);
      const at = locatePathString(resource, pathText!, options);
      assert.ok(at, `${pathText} not found`);
      assert.deepEqual(
        { key: fmt(at.keyRange), value: fmt(at.valueRange), through: at.through && fmt(at.through) },
        { key: keyRange, value: valueRange, through },
      );
    });
  }
}

test('the fixtures hold at least 40 located paths across all the shapes', () => {
  assert.ok(caseCount >= 40, `${caseCount} cases`);
  const names = fixtures.join(' ');
  for (const shape of ['deployment', 'multi-document', 'list', 'anchors', 'crlf', 'unicode', 'flow', 'manifest']) {
    assert.ok(names.includes(shape), `a fixture for ${shape}`);
  }
});

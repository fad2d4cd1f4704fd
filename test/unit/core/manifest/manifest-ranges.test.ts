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
import { assertExpected, type Golden } from '../../../support/expected';

const dir = path.join(import.meta.dirname, '../../../fixtures/manifest');

interface Expectation {
  resources: string[][];
  problems: string[][];
  cases: string[][];
}

/** A Container port's or Service port's protocol defaults to TCP: what the schema will say. */
const options = {
  keyFieldDefault: (_list: unknown, fieldName: string) => (fieldName === 'protocol' ? 'TCP' : undefined),
};

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
  return expected.endsWith('…')
    ? actual.split('\n')[0] === expected.slice(0, -1) && actual.includes('\n')
    : actual === expected;
}

/** Cut from the fixture as the expectation files write it: a text of several lines as its first line and `…`. */
function cut(lines: string[], range: string): string {
  const text = textAt(lines, parseRange(range));
  return text.includes('\n') ? `${text.split('\n')[0]}…` : text;
}

/** An expectation file's text: its opening comment as it was, then the expectation, one row a line. */
function writeExpectation(e: Expectation, previous: string): string {
  const previousLines = previous.split('\n');
  const comment = previousLines
    .slice(
      0,
      previousLines.findIndex((l) => !l.startsWith('#')),
    )
    .join('\n');
  const rows = (name: string, list: string[][], row: (r: string[]) => string) =>
    list.length ? `${name}:\n${list.map((r) => `  - ${row(r)}\n`).join('')}` : `${name}: []\n`;
  const spaced = (r: string[]) => `[${r.map((v) => JSON.stringify(v)).join(', ')}]`;
  return `${comment}\n${rows('resources', e.resources, (r) => JSON.stringify(r))}${rows('problems', e.problems, (r) => JSON.stringify(r))}${rows('cases', e.cases, spaced)}`;
}

const fixtures = fs.readdirSync(dir).filter((f) => f.endsWith('.expect.yaml'));
let caseCount = 0;

for (const expectFile of fixtures) {
  const base = expectFile.slice(0, -'.expect.yaml'.length);
  const manifestFile = fs.readdirSync(dir).find((f) => f.startsWith(`${base}.`) && f !== expectFile)!;
  const text = fs.readFileSync(path.join(dir, manifestFile), 'utf8');
  const lines = text.split(/\r?\n/);
  const file = path.join(dir, expectFile);
  const expected = parseYaml(fs.readFileSync(file, 'utf8')) as Expectation;
  const parsed = parseManifestText(text);
  const byId = new Map(parsed.resources.map((r) => [`${r.kind}/${r.name ?? ''}`, r]));
  /** One part of the expectation file, as golden (UPDATE_EXPECT=1 rewrites that part). */
  const part = <T>(read: (e: Expectation) => T, write: (e: Expectation, actual: T) => Expectation): Golden<T> => ({
    file,
    read: (t) => read(parseYaml(t) as Expectation),
    write: (actual, t) => writeExpectation(write(parseYaml(t) as Expectation, actual), t),
  });

  test(`${manifestFile}: resources and their ranges`, () => {
    assertExpected(
      parsed.resources.map((r) => [`${r.kind}/${r.name ?? ''}`, fmt(r.range)]),
      part(
        (e) => e.resources,
        (e, resources) => ({ ...e, resources }),
      ),
      'the resources and their ranges',
    );
  });

  test(`${manifestFile}: problems`, () => {
    assertExpected(
      parsed.problems.map((p) => [p.code, fmt(p.range)]),
      part(
        (e) => e.problems,
        (e, problems) => ({ ...e, problems }),
      ),
      'the problems',
    );
  });

  expected.cases.forEach(([id, pathText], index) => {
    caseCount++;
    test(`${manifestFile}: ${id} ${pathText}`, () => {
      const resource = byId.get(id!);
      assert.ok(resource, `no resource ${id}`);
      const at = locatePathString(resource, pathText!, options);
      assert.ok(at, `${pathText} not found`);
      const located = { key: fmt(at.keyRange), value: fmt(at.valueRange), through: at.through && fmt(at.through) };
      const row = (e: Expectation) => e.cases[index]!;
      assertExpected(
        located,
        part<{ key: string | undefined; value: string | undefined; through: string | undefined }>(
          (e) => ({ key: row(e)[2], value: row(e)[4], through: row(e)[6] }),
          (e, l) => ({
            ...e,
            cases: e.cases.map((r, i) =>
              i === index
                ? [
                    id!,
                    pathText!,
                    l.key!,
                    cut(lines, l.key!),
                    l.value!,
                    cut(lines, l.value!),
                    ...(l.through ? [l.through] : []),
                  ]
                : r,
            ),
          }),
        ),
        `the ranges of ${pathText}`,
      );
      // The fixture itself must say what it claims, or the expectation is the thing that is wrong.
      const [, , keyRange, keyText, valueRange, valueText] = row(
        parseYaml(fs.readFileSync(file, 'utf8')) as Expectation,
      );
      assert.ok(
        textMatches(textAt(lines, parseRange(keyRange!)), keyText!),
        `fixture: the text at ${keyRange} is not ${keyText}`,
      );
      assert.ok(
        textMatches(textAt(lines, parseRange(valueRange!)), valueText!),
        `fixture: the text at ${valueRange} is not ${valueText}`,
      );
    });
  });
}

test('the fixtures hold at least 40 located paths across all the shapes', () => {
  assert.ok(caseCount >= 40, `${caseCount} cases`);
  const names = fixtures.join(' ');
  for (const shape of ['deployment', 'multi-document', 'list', 'anchors', 'crlf', 'unicode', 'flow', 'manifest']) {
    assert.ok(names.includes(shape), `a fixture for ${shape}`);
  }
});

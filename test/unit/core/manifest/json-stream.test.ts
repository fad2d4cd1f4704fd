// A text that starts with `{` is read as kubectl reads it: JSON values one after another. Each
// object keeps its own positions in the whole text — a finding on the second object of a line lands
// on that object's key, not on the first one's — and where kubectl stops, the error is there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isJsonStream, splitJsonStream } from '../../../../server/src/core/manifest/json-stream';
import { locate, parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { field } from '../../../../server/src/core/ssa/path';

const cm = (name: string) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"k":"${name}"}}`;

const guesses: [string, string, boolean][] = [
  ['an object', '{"a": 1}', true],
  ['white space, then an object', ' \n\t {"a": 1}', true],
  ['a byte order mark, then an object', '\uFEFF{"a": 1}', true],
  ['a vertical tab, then an object (Go calls it space)', '\v{"a": 1}', true],
  ['YAML', 'apiVersion: v1\n', false],
  ['a comment, then an object', '# c\n{"a": 1}', false],
  ['`---`, then an object', '---\n{"a": 1}', false],
  ['a JSON list', '[{"a": 1}]', false],
  ['an object after 4,096 characters of white space', `${' '.repeat(4096)}{"a": 1}`, false],
];
for (const [name, text, json] of guesses) {
  test(`kubectl reads ${name} as ${json ? 'JSON' : 'YAML'}`, () => assert.equal(isJsonStream(text), json));
}

const splits: { name: string; text: string; values: [number, number, string][]; error?: [number, number, RegExp] }[] = [
  {
    name: 'nothing between',
    text: `${cm('a')}${cm('b')}`,
    values: [
      [0, 0, cm('a')],
      [0, cm('a').length, cm('b')],
    ],
  },
  {
    name: 'lines and blanks',
    text: `\n  ${cm('a')}\n\n${cm('b')}\n`,
    values: [
      [1, 2, cm('a')],
      [3, 0, cm('b')],
    ],
  },
  {
    name: 'nested strings with braces and escapes',
    text: '{"a":"}{\\"\\\\","b":[{},[]]} {"c":-1.5e3}',
    values: [
      [0, 0, '{"a":"}{\\"\\\\","b":[{},[]]}'],
      [0, 27, '{"c":-1.5e3}'],
    ],
  },
  {
    name: '--- after an object',
    text: `${cm('a')}\n---\n`,
    values: [[0, 0, cm('a')]],
    error: [1, 1, /^invalid character '-' in numeric literal: /],
  },
  {
    name: 'a comma between objects',
    text: `${cm('a')},${cm('b')}`,
    values: [[0, 0, cm('a')]],
    error: [0, cm('a').length, /^invalid character ',' looking for beginning of value/],
  },
  {
    name: 'an unquoted key',
    text: '{apiVersion: v1}',
    values: [],
    error: [0, 1, /^invalid character 'a' looking for beginning of object key string/],
  },
  {
    name: 'a control character in a string',
    text: '{"a":"x\u0001"}',
    values: [],
    error: [0, 7, /^invalid character '\\x01' in string literal/],
  },
  {
    name: 'cut short',
    text: `${cm('a')}{"a":`,
    values: [[0, 0, cm('a')]],
    error: [0, cm('a').length + 5, /^unexpected end of JSON input/],
  },
  {
    name: 'a list after an object',
    text: `${cm('a')} [1]`,
    values: [[0, 0, cm('a')]],
    error: [0, cm('a').length + 1, /^a JSON list, not an object/],
  },
];
for (const s of splits) {
  test(`a JSON stream, ${s.name}: values and error where kubectl sees them`, () => {
    const stream = splitJsonStream(s.text);
    assert.deepEqual(
      stream.values.map((v) => [v.start.line, v.start.character, v.text]),
      s.values,
    );
    if (!s.error) return assert.equal(stream.error, undefined);
    assert.ok(stream.error, 'an error');
    assert.deepEqual([stream.error.at.line, stream.error.at.character], s.error.slice(0, 2));
    assert.match(stream.error.message, s.error[2]);
    assert.match(stream.error.message, /kubectl reads it as JSON objects one after another, and stops reading here$/);
  });
}

test('the second object of a line is located at its own columns', () => {
  const text = `${cm('a')}${cm('b')}\n${cm('c')}`;
  const parsed = parseManifestText(text);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(
    parsed.resources.map((r) => r.name),
    ['a', 'b', 'c'],
  );
  for (const r of parsed.resources) {
    const at = locate(r, [field('data'), field('k')])!;
    const line = text.split('\n')[at.valueRange.start.line]!;
    assert.equal(line.slice(at.valueRange.start.character, at.valueRange.end.character), `"${r.name}"`);
  }
});

// The settings VS Code shows (package.json's `contributes.configuration`) and the ones the server
// falls back to (`defaultSettings` in server/src/protocol.ts) are written in two places; this ties
// them: a default changed on one side only, a setting added to `Settings` but never contributed,
// or a contributed one the server never reads, fails here.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  applierSettings,
  applyModes,
  defaultSettings,
  sanitizeSettings,
  settingsSection,
  syntaxErrorsModes,
} from '../../server/src/protocol';

const root = path.resolve(import.meta.dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown; enum?: unknown[] }> } };
};
const contributed = new Map(
  Object.entries(manifest.contributes.configuration.properties)
    .filter(([id]) => id.startsWith(`${settingsSection}.`))
    .map(([id, property]) => [id.slice(settingsSection.length + 1), property]),
);
/** Settings of the editor's side alone: vscode-languageclient reads `<section>.trace.server` itself. */
const clientOnly = new Set(['trace.server']);

test('every setting the server reads is contributed in package.json', () => {
  assert.deepEqual(
    Object.keys(defaultSettings).filter((key) => !contributed.has(key)),
    [],
  );
});

test("every contributed setting is one the server reads (or the language client's own)", () => {
  assert.deepEqual(
    [...contributed.keys()].filter((key) => !(key in defaultSettings) && !clientOnly.has(key)),
    [],
  );
});

test('each contributed setting has the default the server falls back to', () => {
  for (const [key, value] of Object.entries(defaultSettings)) {
    assert.deepEqual(
      contributed.get(key)?.default,
      value,
      `${settingsSection}.${key}: package.json's default and defaultSettings in server/src/protocol.ts differ`,
    );
  }
});

test('the choices VS Code offers are the ones the server accepts', () => {
  assert.deepEqual(contributed.get('applyMode')?.enum, [...applyModes]);
  assert.deepEqual(contributed.get('syntaxErrors')?.enum, [...syntaxErrorsModes]);
  assert.deepEqual(contributed.get('applier')?.enum, [...applierSettings]);
});

test('the applier setting: a name the server knows is kept, anything else is auto', () => {
  for (const applier of applierSettings) assert.equal(sanitizeSettings({ applier }).applier, applier);
  for (const applier of ['Flux', 'argo', 3, null, ' flux'])
    assert.equal(sanitizeSettings({ applier }).applier, 'auto', JSON.stringify(applier));
});

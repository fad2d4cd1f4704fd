// The boundary rules of ARCHITECTURE.md, checked on every import of the server's sources: a rule
// that only lives in a document is broken by the first hurried change.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const serverSrc = path.resolve(__dirname, '../../server/src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm), ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
}

/** Which layer a file belongs to: core, cluster, lsp, cli, or the top (protocol.ts, main.ts). */
function layerOf(file: string): string {
  return path.relative(serverSrc, file).split(path.sep)[0]!.replace(/\.ts$/, '');
}

function resolvedLayer(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return layerOf(path.resolve(path.dirname(from), spec));
}

const rules: { name: string; applies: (layer: string) => boolean; forbidden: (spec: string, target: string | undefined) => boolean }[] = [
  {
    name: 'core/ is pure: no LSP, no Kubernetes client, no I/O, nothing from the layers above it',
    applies: (l) => l === 'core',
    forbidden: (spec, target) =>
      /^(vscode-languageserver|vscode-jsonrpc|@kubernetes\/client-node|node:(fs|net|http|https|child_process|tls|dgram)|fs|net|http|https|child_process)(\/|$)/.test(spec) ||
      (target !== undefined && target !== 'core'),
  },
  {
    name: 'only cluster/ imports @kubernetes/client-node',
    applies: (l) => l !== 'cluster',
    forbidden: (spec) => spec.startsWith('@kubernetes/client-node'),
  },
  {
    name: 'only lsp/ imports vscode-languageserver',
    applies: (l) => l !== 'lsp',
    forbidden: (spec) => spec.startsWith('vscode-languageserver') && spec !== 'vscode-languageserver-textdocument',
  },
  {
    name: 'cluster/ knows nothing of the editor or the command line',
    applies: (l) => l === 'cluster',
    forbidden: (_spec, target) => target === 'lsp' || target === 'cli',
  },
  {
    name: 'render/ (running the user\'s kustomize and helm) knows only core/: no cluster, editor or command line',
    applies: (l) => l === 'render',
    forbidden: (spec, target) => spec.startsWith('vscode-languageserver') || (target !== undefined && target !== 'core' && target !== 'render'),
  },
  {
    name: 'launch/ (the entry files that start a bundle) uses only Node\'s own modules: it runs before any bundle is loaded',
    applies: (l) => l === 'launch',
    forbidden: (spec, target) => (spec.startsWith('.') ? target !== 'launch' : !spec.startsWith('node:')),
  },
  {
    name: 'the command line does not depend on the language server',
    applies: (l) => l === 'cli',
    forbidden: (_spec, target) => target === 'lsp',
  },
];

for (const rule of rules) {
  test(rule.name, () => {
    const files = sourceFiles(serverSrc).filter((f) => rule.applies(layerOf(f)));
    assert.ok(files.length > 0, 'the rule applies to some files');
    const broken = files.flatMap((f) =>
      importsOf(f)
        .filter((spec) => rule.forbidden(spec, resolvedLayer(f, spec)))
        .map((spec) => `${path.relative(serverSrc, f)} imports ${spec}`),
    );
    assert.deepEqual(broken, []);
  });
}

// Inside core/, rooms with one-way doors: ssa/ (the structured-merge-diff port: paths, FieldsV1,
// schema, merge, prediction) knows nothing of YAML text; cel/ (CRD validation rules and their CEL
// evaluation) may use ssa/'s paths; manifest/ (text model, scalars, edits) may use ssa/; sources/
// (what a file is, and where a rendered field comes from) may use both; findings/ (what the user is
// told) may use them all. json.ts is the shared floor.
const coreDir = path.join(serverSrc, 'core');
const roomOf = (file: string): string => {
  const rel = path.relative(coreDir, file).split(path.sep);
  return rel.length > 1 ? rel[0]! : 'floor';
};
const mayImport: Record<string, string[]> = {
  floor: ['floor'],
  ssa: ['floor', 'ssa'],
  cel: ['floor', 'ssa', 'cel'],
  manifest: ['floor', 'ssa', 'manifest'],
  sources: ['floor', 'ssa', 'manifest', 'sources'],
  findings: ['floor', 'ssa', 'cel', 'manifest', 'sources', 'findings'],
};

test('core/ has its rooms, and nothing else at its top but the shared floor', () => {
  const entries = fs.readdirSync(coreDir, { withFileTypes: true });
  assert.deepEqual(entries.filter((e) => e.isDirectory()).map((e) => e.name).sort(), Object.keys(mayImport).filter((r) => r !== 'floor').sort());
  assert.deepEqual(entries.filter((e) => e.isFile()).map((e) => e.name).sort(), ['json.ts']);
});

test('core/ rooms import one way: floor <- ssa <- (cel, manifest <- sources) <- findings', () => {
  const files = sourceFiles(coreDir);
  assert.ok(files.length > 20, 'the rule sees the core sources');
  const broken = files.flatMap((f) =>
    importsOf(f)
      .filter((spec) => spec.startsWith('.'))
      .filter((spec) => !mayImport[roomOf(f)]!.includes(roomOf(path.resolve(path.dirname(f), spec))))
      .map((spec) => `${path.relative(serverSrc, f)} imports ${spec}`),
  );
  assert.deepEqual(broken, []);
});

test('only core/cel/ imports the CEL library: one home for evaluating CRD validation rules', () => {
  const files = sourceFiles(serverSrc);
  const users = files.filter((f) => importsOf(f).some((spec) => spec.startsWith('@marcbachmann/cel-js'))).map((f) => path.relative(serverSrc, f));
  assert.ok(users.length > 0, 'the rule sees the CEL library in use');
  assert.deepEqual(users.filter((f) => !f.startsWith(path.join('core', 'cel') + path.sep)), []);
});

test('the client imports nothing of the server but the plain-data protocol', () => {
  const clientSrc = path.resolve(__dirname, '../../client/src');
  const broken = sourceFiles(clientSrc).flatMap((f) =>
    importsOf(f)
      .filter((spec) => spec.includes('server/src') && !spec.endsWith('server/src/protocol'))
      .map((spec) => `${path.relative(clientSrc, f)} imports ${spec}`),
  );
  assert.deepEqual(broken, []);
});

test('lsp/ keeps its state per connection: nothing mutable at module level', () => {
  // Two connections in one process (the protocol tests run many) must not share a status, a trust
  // decision or a document's dry-run answers.
  const files = sourceFiles(path.join(serverSrc, 'lsp'));
  assert.ok(files.length > 10, 'the rule sees the lsp sources');
  const broken = files.flatMap((f) =>
    [...fs.readFileSync(f, 'utf8').matchAll(/^(?:export\s+)?(?:let|var)\s+(\w+)/gm)].map((m) => `${path.relative(serverSrc, f)}: ${m[1]}`),
  );
  assert.deepEqual(broken, []);
});

test('the lsp handlers ask the document service, never a document source: a new kind of input is one new source', () => {
  // A source is a class of lsp/ that implements DocumentSource (lsp/document-service.ts).
  const lspDir = path.join(serverSrc, 'lsp');
  const sources = sourceFiles(lspDir).filter((f) => /\bimplements\s+DocumentSource\b/.test(fs.readFileSync(f, 'utf8')));
  assert.ok(sources.length >= 2, 'the rule sees the document sources');
  const handlers = sourceFiles(path.join(lspDir, 'handlers'));
  assert.ok(handlers.length > 5, 'the rule sees the handlers');
  const imported = handlers.flatMap((f) =>
    importsOf(f)
      .filter((spec) => spec.startsWith('.') && sources.includes(`${path.resolve(path.dirname(f), spec)}.ts`))
      .map((spec) => `${path.relative(serverSrc, f)} imports ${spec}`),
  );
  assert.deepEqual(imported, []);
  // Nor do the document features ask what the file is, or for a manifest's analysis: that is the sources' choice.
  const features = ['diagnostics.ts', 'hover.ts', 'code-actions.ts', 'code-lens.ts', 'inlay-hints.ts'].map((f) => path.join(lspDir, 'handlers', f));
  const asked = features.flatMap((f) =>
    [...fs.readFileSync(f, 'utf8').matchAll(/\b(classify|isRenderedSource|analysisOf|sourceFiles)\b/g)].map((m) => `${path.relative(serverSrc, f)}: ${m[1]}`),
  );
  assert.deepEqual(asked, []);
});

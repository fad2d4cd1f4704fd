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
  return [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** Which layer a file belongs to: core, cluster, lsp, cli, or the top (protocol.ts, main.ts). */
function layerOf(file: string): string {
  return path.relative(serverSrc, file).split(path.sep)[0]!.replace(/\.ts$/, '');
}

function resolvedLayer(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return layerOf(path.resolve(path.dirname(from), spec));
}

const rules: {
  name: string;
  applies: (layer: string) => boolean;
  forbidden: (spec: string, target: string | undefined) => boolean;
}[] = [
  {
    name: 'core/ is pure: no LSP, no Kubernetes client, no I/O, nothing from the layers above it',
    applies: (l) => l === 'core',
    forbidden: (spec, target) =>
      /^(vscode-languageserver|vscode-jsonrpc|@kubernetes\/client-node|node:(fs|net|http|https|child_process|tls|dgram)|fs|net|http|https|child_process)(\/|$)/.test(
        spec,
      ) ||
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
    name: "render/ (running the user's kustomize and helm) knows only core/: no cluster, editor or command line",
    applies: (l) => l === 'render',
    forbidden: (spec, target) =>
      spec.startsWith('vscode-languageserver') || (target !== undefined && target !== 'core' && target !== 'render'),
  },
  {
    name: "launch/ (the entry files that start a bundle) uses only Node's own modules: it runs before any bundle is loaded",
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
// told) may use them all. gitops/ (who applies an object, the controllers' policies, and the
// request a GitOps controller sends) may use ssa/, manifest/ and sources/, and findings/ may use it. json.ts is
// the shared floor.
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
  gitops: ['floor', 'ssa', 'manifest', 'sources', 'gitops'],
  findings: ['floor', 'ssa', 'cel', 'manifest', 'sources', 'gitops', 'findings'],
};

test('core/ has its rooms, and nothing else at its top but the shared floor', () => {
  const entries = fs.readdirSync(coreDir, { withFileTypes: true });
  assert.deepEqual(
    entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort(),
    Object.keys(mayImport)
      .filter((r) => r !== 'floor')
      .sort(),
  );
  assert.deepEqual(
    entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort(),
    ['json.ts'],
  );
});

test('core/ rooms import one way: floor <- ssa <- (cel, manifest <- sources <- gitops) <- findings', () => {
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
  const users = files
    .filter((f) => importsOf(f).some((spec) => spec.startsWith('@marcbachmann/cel-js')))
    .map((f) => path.relative(serverSrc, f));
  assert.ok(users.length > 0, 'the rule sees the CEL library in use');
  assert.deepEqual(
    users.filter((f) => !f.startsWith(path.join('core', 'cel') + path.sep)),
    [],
  );
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
    [...fs.readFileSync(f, 'utf8').matchAll(/^(?:export\s+)?(?:let|var)\s+(\w+)/gm)].map(
      (m) => `${path.relative(serverSrc, f)}: ${m[1]}`,
    ),
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
  const features = ['diagnostics.ts', 'hover.ts', 'code-actions.ts', 'code-lens.ts', 'inlay-hints.ts'].map((f) =>
    path.join(lspDir, 'handlers', f),
  );
  const asked = features.flatMap((f) =>
    [...fs.readFileSync(f, 'utf8').matchAll(/\b(classify|isRenderedSource|analysisOf|sourceFiles)\b/g)].map(
      (m) => `${path.relative(serverSrc, f)}: ${m[1]}`,
    ),
  );
  assert.deepEqual(asked, []);
});

// Rules over the whole import graph and the texts of server/src, each a function over a set of
// sources (path relative to server/src → text), so that each is also shown to fail on a small planted
// example: a rule that cannot fail proves nothing.
type Sources = ReadonlyMap<string, string>;

function serverSources(): Sources {
  return new Map(
    sourceFiles(serverSrc).map((f) => [
      path.relative(serverSrc, f).split(path.sep).join('/'),
      fs.readFileSync(f, 'utf8'),
    ]),
  );
}

/** Every relative import of a source (type-only ones too: a type cycle is a cycle of contracts), resolved to a source of the set. */
function resolvedImports(sources: Sources, file: string): { spec: string; target: string }[] {
  const specs = [
    ...sources.get(file)!.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]*)['"]/gm),
    ...sources.get(file)!.matchAll(/\bimport\(\s*['"](\.[^'"]*)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specs.flatMap((spec) => {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const target = [`${base}.ts`, `${base}/index.ts`].find((t) => sources.has(t));
    return target ? [{ spec, target }] : [];
  });
}

/** The import cycles, each once, as the files on it. */
function importCycles(sources: Sources): string[][] {
  const graph = new Map(
    [...sources.keys()].map((f) => [f, [...new Set(resolvedImports(sources, f).map((i) => i.target))]]),
  );
  // Tarjan's strongly connected components: a component of more than one file, or a file that imports itself, is a cycle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort());
  };
  for (const f of [...graph.keys()].sort()) if (!index.has(f)) visit(f);
  return cycles;
}

/**
 * Where a finding's or a problem's severity is written as a literal outside the rule catalogue:
 * a `severity` set or typed to a word, or the severities spelled again as a union or a list. What
 * only reads one (`f.severity === 'error'`) or maps it to another vocabulary (the editor's
 * DiagnosticSeverity, SARIF's `note`, GitHub's `notice`) is not a severity written.
 */
const catalogueFile = 'core/findings/catalogue.ts';
function severityLiterals(sources: Sources): string[] {
  const words = new Set(['error', 'warning', 'information', 'hint']);
  const severitySpelled = (members: string[]) =>
    members.filter((m) => words.has(m)).length >= 2 && members.every((m) => words.has(m) || m === 'off');
  const found: string[] = [];
  for (const [file, text] of sources) {
    if (file === catalogueFile) continue;
    const at = (i: number) => `${file}:${text.slice(0, i).split('\n').length}`;
    for (const m of text.matchAll(/\bseverity\??\s*[:=]\s*(?:readonly\s+)?'(error|warning|information|hint)'/gi))
      found.push(`${at(m.index)}: ${m[0]}`);
    for (const m of text.matchAll(/'[a-z-]+'(?:\s*\|\s*'[a-z-]+')+/g)) {
      if (severitySpelled(m[0].split('|').map((w) => w.trim().slice(1, -1)))) found.push(`${at(m.index)}: ${m[0]}`);
    }
    for (const m of text.matchAll(/\[\s*'[a-z-]+'(?:\s*,\s*'[a-z-]+')+\s*,?\s*\]/g)) {
      if (severitySpelled([...m[0].matchAll(/'([a-z-]+)'/g)].map((w) => w[1]!))) found.push(`${at(m.index)}: ${m[0]}`);
    }
  }
  return found;
}

/** Imports into core/findings from outside it that pass its published entry points (core/findings/index.ts). */
const findingsDir = 'core/findings/';
function deepFindingsImports(sources: Sources): string[] {
  return [...sources.keys()]
    .filter((f) => !f.startsWith(findingsDir))
    .flatMap((f) =>
      resolvedImports(sources, f)
        .filter((i) => i.target.startsWith(findingsDir) && i.target !== `${findingsDir}index.ts`)
        .map((i) => `${f} imports ${i.spec}`),
    );
}

test('server/src has no import cycle', () => {
  const sources = serverSources();
  assert.ok(sources.size > 100, 'the rule sees the server sources');
  assert.deepEqual(importCycles(sources), []);
});

test('the cycle rule finds a planted cycle, through an index and type-only imports alike', () => {
  const planted = new Map([
    ['a/one.ts', "import type { Two } from './two';\nexport type One = { two: Two };\n"],
    ['a/two.ts', "import { three } from '../b';\nexport type Two = string;\n"],
    ['b/index.ts', "export { three } from './three';\n"],
    ['b/three.ts', "import type { One } from '../a/one';\nimport { seven } from './seven';\nexport const three = 3;\n"],
    ['b/seven.ts', 'export const seven = 7;\n'],
    ['c/self.ts', "export * from './self';\n"],
  ]);
  assert.deepEqual(importCycles(planted), [['a/one.ts', 'a/two.ts', 'b/index.ts', 'b/three.ts'], ['c/self.ts']]);
  // And in the real tree: the floor of core/ made to lean on a room above it.
  const sources = new Map(serverSources());
  sources.set('core/json.ts', `import type { Finding } from './findings';\n${sources.get('core/json.ts')!}`);
  assert.ok(
    importCycles(sources).some((c) => c.includes('core/json.ts') && c.includes('core/findings/index.ts')),
    'a cycle planted in the tree is found',
  );
});

test('a severity is written only in the rule catalogue', () => {
  const sources = serverSources();
  assert.ok(
    [...sources.values()].some((t) => /severity/.test(t)) && sources.has(catalogueFile),
    'the rule sees the severities and the catalogue',
  );
  assert.deepEqual(severityLiterals(sources), []);
  assert.ok(
    severityLiterals(new Map([[catalogueFile, sources.get(catalogueFile)!]])).length === 0 &&
      /severity: 'error'/.test(sources.get(catalogueFile)!),
    'the catalogue writes them',
  );
});

test('the severity rule finds a planted literal severity, a second Severity type and a list of severities', () => {
  const planted = new Map([
    ['core/manifest/problem.ts', "export const p = { code: 'yaml-syntax', severity: 'error', message: '' };\n"],
    ['core/findings/other.ts', "export const f = { code: 'x', severity: 'warning' as const };\n"],
    ['core/findings/types.ts', "export interface P { readonly severity: 'error' | 'warning' }\n"],
    [
      'protocol.ts',
      "export type Level = 'error' | 'warning' | 'information' | 'off';\nconst levels = ['error', 'warning', 'information'];\n",
    ],
    // Reading a severity, or mapping it to another vocabulary, is not writing one.
    ['lsp/reads.ts', "const errors = findings.filter((f) => f.severity === 'error').length;\n"],
    [
      'cli/format.ts',
      "const levels: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note' };\n",
    ],
  ]);
  assert.deepEqual(severityLiterals(planted), [
    "core/manifest/problem.ts:1: severity: 'error'",
    "core/findings/other.ts:1: severity: 'warning'",
    "core/findings/types.ts:1: severity: 'error'",
    "core/findings/types.ts:1: 'error' | 'warning'",
    "protocol.ts:1: 'error' | 'warning' | 'information' | 'off'",
    "protocol.ts:2: ['error', 'warning', 'information']",
  ]);
  const sources = new Map(serverSources());
  sources.set(
    'core/manifest/manifest.ts',
    `${sources.get('core/manifest/manifest.ts')!}\nexport const planted = { code: 'too-large', severity: 'warning' };\n`,
  );
  assert.deepEqual(
    severityLiterals(sources).map((f) => f.replace(/:\d+:/, ':')),
    ["core/manifest/manifest.ts: severity: 'warning'"],
    'a literal planted in the tree is found',
  );
});

test('outside core/findings only its published entry points are imported', () => {
  const sources = serverSources();
  assert.ok(
    [...sources.keys()].some(
      (f) =>
        !f.startsWith(findingsDir) && resolvedImports(sources, f).some((i) => i.target === `${findingsDir}index.ts`),
    ),
    'the rule sees imports of core/findings',
  );
  assert.deepEqual(deepFindingsImports(sources), []);
});

test('the entry-point rule finds a planted deep import', () => {
  const planted = new Map([
    ['core/findings/index.ts', "export { analyzeResource } from './analysis';\n"],
    ['core/findings/analysis.ts', "import { rangeFor } from './locate';\nexport const analyzeResource = rangeFor;\n"],
    ['core/findings/locate.ts', 'export const rangeFor = 1;\n'],
    ['lsp/fine.ts', "import { analyzeResource } from '../core/findings';\n"],
    [
      'cli/deep.ts',
      "import { rangeFor } from '../core/findings/locate';\nconst later = import('../core/findings/analysis');\n",
    ],
  ]);
  assert.deepEqual(deepFindingsImports(planted), [
    'cli/deep.ts imports ../core/findings/locate',
    'cli/deep.ts imports ../core/findings/analysis',
  ]);
  const sources = new Map(serverSources());
  sources.set('lsp/planted.ts', "import { rangeFor } from '../core/findings/locate';\n");
  assert.deepEqual(
    deepFindingsImports(sources),
    ['lsp/planted.ts imports ../core/findings/locate'],
    'a deep import planted in the tree is found',
  );
});

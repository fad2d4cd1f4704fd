// The documentation against what it describes, as a tidy check: the README stays a first page (at
// most 150 lines), its reference lives in docs/, each page of which the README links to, and every
// relative link of either leads somewhere; the findings table of docs/findings.md names each code of
// the rule catalogue once and no other; ARCHITECTURE.md names every folder of server/src, and no
// folder there that does not exist. A code added without a word to the user, a folder made or
// renamed without a line in the map, a page moved without its links: each fails here. Each check is
// a function of text, also run on planted faults.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { findingCodes } from '../../server/src/core/findings/catalogue';

const root = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const readmeMaxLines = 150;

/** The codes the findings table names: the backquoted codes each row's first cell starts with. */
function tableCodes(markdown: string): { codes: string[]; problems: string[] } {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) => line.startsWith('| diagnostic (`code`) |'));
  if (header < 0) return { codes: [], problems: ['no findings table (its header is "| diagnostic (`code`) | ...")'] };
  const codes: string[] = [];
  const problems: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const lead = /^\| (`[a-z][a-z-]*`(?:,\s*`[a-z][a-z-]*`)*)/.exec(line);
    if (!lead) problems.push(`a row that names no code: ${line.slice(0, 80)}`);
    else codes.push(...[...lead[1]!.matchAll(/`([a-z][a-z-]*)`/g)].map((m) => m[1]!));
  }
  return { codes, problems };
}

/** What is wrong with a findings table against the catalogue's codes. */
function tableProblems(markdown: string, catalogue: readonly string[]): string[] {
  const { codes, problems } = tableCodes(markdown);
  const listed = new Set(codes);
  const known = new Set(catalogue);
  return [
    ...problems,
    ...catalogue.filter((code) => !listed.has(code)).map((code) => `${code}: in the catalogue, not in the table`),
    ...codes.filter((code) => !known.has(code)).map((code) => `${code}: in the table, not in the catalogue`),
    ...codes.filter((code, i) => codes.indexOf(code) !== i).map((code) => `${code}: twice in the table`),
  ];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutCodeBlocks(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The lines of a Markdown text outside fenced code blocks. */
function withoutCodeBlocks(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** The relative links (and images) of a page that lead nowhere: a missing file, or a missing heading. */
function brokenLinks(page: string, markdown: string, readPage: (file: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const line of withoutCodeBlocks(markdown)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:: not this repository's
      const [file, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved =
        file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(file)));
      const text = readPage(resolved);
      if (text === undefined) {
        broken.push(`${page}: ${target} (no ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchors(text).has(anchor))
        broken.push(`${page}: ${target} (no heading #${anchor} in ${resolved})`);
    }
  }
  return broken;
}

function readIfExists(file: string): string | undefined {
  const full = path.join(root, file);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isFile() ? fs.readFileSync(full, 'utf8') : '';
}

/** The folders of server/src, relative to it (`core`, `core/ssa`, `lsp/handlers`, ...). */
function sourceFolders(dir = path.join(root, 'server', 'src'), prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${prefix}${e.name}`, ...sourceFolders(path.join(dir, e.name), `${prefix}${e.name}/`)]);
}

/**
 * The folders of server/src a text names, relative to server/src: every `server/src/…` path, every
 * backquoted path that starts with one of server/src's top-level folders (`core/findings/analysis.ts`
 * names core and core/findings), and the map's indented entries under a `server/src/X/` line.
 */
function namedFolders(markdown: string, topLevel: readonly string[]): Set<string> {
  const named = new Set<string>();
  const addPath = (p: string) => {
    const segments = p.replace(/\/+$/, '').split('/');
    const folders = p.endsWith('/') || !segments.at(-1)!.includes('.') ? segments : segments.slice(0, -1);
    for (let i = 1; i <= folders.length; i++) named.add(folders.slice(0, i).join('/'));
  };
  for (const m of markdown.matchAll(/server\/src\/((?:[\w.-]+\/)*[\w.-]*)/g)) if (m[1]) addPath(m[1]);
  for (const m of markdown.matchAll(/`([\w.-]+(?:\/[\w.-]+)*\/?)`/g)) {
    if (m[1]!.includes('/') && topLevel.includes(m[1]!.split('/')[0]!)) addPath(m[1]!);
  }
  let parent: string | undefined;
  for (const line of markdown.split('\n')) {
    const top = /^server\/src\/((?:[\w.-]+\/)+)\s/.exec(line);
    if (top) parent = top[1];
    else if (/^\S/.test(line)) parent = undefined;
    const nested = /^ {2}([\w.-]+)\/\s/.exec(line);
    if (nested && parent) addPath(`${parent}${nested[1]}/`);
  }
  return named;
}

function architectureProblems(markdown: string, folders: readonly string[]): string[] {
  const topLevel = folders.filter((f) => !f.includes('/'));
  const named = namedFolders(markdown, topLevel);
  const existing = new Set(folders);
  return [
    ...folders.filter((f) => !named.has(f)).map((f) => `server/src/${f}/ is not in ARCHITECTURE.md`),
    ...[...named]
      .filter((f) => !existing.has(f))
      .map((f) => `ARCHITECTURE.md names server/src/${f}/, which does not exist`),
  ];
}

test(`the README is a first page: at most ${readmeMaxLines} lines`, () => {
  const lines = read('README.md').split('\n').length - 1;
  assert.ok(lines <= readmeMaxLines, `README.md has ${lines} lines; the reference belongs in docs/`);
});

test('docs/findings.md has a row for every finding code of the catalogue, once, and none other', () => {
  assert.deepEqual(tableProblems(read('docs/findings.md'), findingCodes), []);
});

test('every relative link and image of the README and docs/ leads to a file (and heading) that exists', () => {
  assert.ok(pages.length > 2, 'README.md and docs/*.md are read');
  assert.deepEqual(
    pages.flatMap((page) => brokenLinks(page, read(page), readIfExists)),
    [],
  );
});

test('every page of docs/ is reachable from the README by a link', () => {
  const linked = new Set(
    [
      ...withoutCodeBlocks(read('README.md'))
        .join('\n')
        .matchAll(/\]\((docs\/[\w.-]+\.md)(?:#[^)]*)?\)/g),
    ].map((m) => m[1]!),
  );
  assert.deepEqual(
    pages.filter((page) => page.startsWith('docs/') && !linked.has(page)),
    [],
  );
});

test('ARCHITECTURE.md names every folder of server/src, and no folder there that does not exist', () => {
  const folders = sourceFolders();
  assert.ok(folders.includes('core/findings') && folders.includes('lsp'), 'the folders of server/src are found');
  assert.deepEqual(architectureProblems(read('ARCHITECTURE.md'), folders), []);
});

test('each check fails on a planted fault', () => {
  const table =
    '| diagnostic (`code`) | severity | where |\n|---|---|---|\n| `exists`: x | hint | y |\n| `exists`, `ghost`: x | error | y |\n| no code | error | y |\n';
  assert.deepEqual(tableProblems(table, ['exists', 'field-conflict']), [
    'a row that names no code: | no code | error | y |',
    'field-conflict: in the catalogue, not in the table',
    'ghost: in the table, not in the catalogue',
    'exists: twice in the table',
  ]);

  const planted: Record<string, string> = { 'docs/a.md': '# A page\n\n## Its part (two)\n', 'docs/b.png': '' };
  const page =
    'See [a](a.md#its-part-two), [b](a.md#gone), ![c](b.png), [d](missing.md), [e](#here), [f](https://example.com/x.md).\n\n```\n[g](inside-code.md)\n```\n\n## Here\n';
  assert.deepEqual(
    brokenLinks('docs/index.md', page, (file) => planted[file] ?? (file === 'docs/index.md' ? page : undefined)),
    ['docs/index.md: a.md#gone (no heading #gone in docs/a.md)', 'docs/index.md: missing.md (no docs/missing.md)'],
  );

  const map =
    '```\nserver/src/core/             pure\n  ssa/                       the port\nserver/src/gone/             moved away\ntest/                        tests\n  unit/                      not a source folder\n```\nThe handlers (`lsp/handlers/diagnostics.ts`) answer.\n';
  assert.deepEqual(architectureProblems(map, ['core', 'core/ssa', 'core/cel', 'lsp', 'lsp/handlers']), [
    'server/src/core/cel/ is not in ARCHITECTURE.md',
    'ARCHITECTURE.md names server/src/gone/, which does not exist',
  ]);
});

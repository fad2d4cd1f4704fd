// The fuzz campaign's inputs: Kubernetes manifests generated from a seed, and mutations of them and
// of the project's own fixtures. Every input is a pure function of (seed, index), so a failure is
// replayed with KCH_FUZZ_SEED and KCH_FUZZ_ONLY (see README.md).
//
// The shapes are the ones a language server meets in the wild or from a hostile workspace: valid
// YAML and JSON, several documents, anchors, aliases and merge keys, flow style, CRLF, deep nesting,
// huge scalars, control characters, broken syntax, and random byte mutations of real fixtures. A
// few inputs per thousand are large stress shapes (thousands of aliases, billion laughs, thousands
// of keys or documents, thousands of levels): the shapes behind quadratic paths and stack overflows.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';

export interface FuzzInput {
  readonly index: number;
  /** Which generator made it, for the failure message and the statistics. */
  readonly shape: string;
  readonly text: string;
  readonly languageId: 'yaml' | 'json';
}

/** A small, fast, seedable PRNG (mulberry32). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** The seed of input `index` of a run: inputs are independent, so any one can be replayed alone. */
export function inputRng(seed: number, index: number): Rng {
  return new Rng((Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35)) >>> 0);
}

const fixturesDir = path.join(import.meta.dirname, '..', 'fixtures');

/** Every text fixture small enough to mutate (the OpenAPI documents are sliced instead). */
function loadFixtureTexts(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(ya?ml|json|txt)$/.test(entry.name)) {
        const text = fs.readFileSync(p, 'utf8');
        if (text.length <= 64 * 1024) out.push(text);
        else for (let i = 0; i < 4; i++) out.push(text.slice((i * text.length) / 4, (i * text.length) / 4 + 16 * 1024));
      }
    }
  };
  walk(fixturesDir);
  return out;
}

let fixtureTexts: string[] | undefined;
export function fixtures(): string[] {
  fixtureTexts ??= loadFixtureTexts();
  return fixtureTexts;
}

/** The engine fixtures' manifests (the objects whose captured live objects the analysis is given). */
let engineManifests: Record<string, unknown>[] | undefined;
function manifests(): Record<string, unknown>[] {
  if (!engineManifests) {
    engineManifests = [];
    for (const file of fs.readdirSync(path.join(fixturesDir, 'engine')).filter((f) => /^predict-.*\.yaml$/.test(f))) {
      const cases = parse(fs.readFileSync(path.join(fixturesDir, 'engine', file), 'utf8'), {
        merge: true,
        maxAliasCount: -1,
      }) as { manifest: Record<string, unknown> }[];
      for (const c of cases) engineManifests.push(c.manifest);
    }
  }
  return engineManifests;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

const WORDS = [
  'app',
  'web',
  'db',
  'on',
  'yes',
  'no',
  'null',
  '~',
  '0755',
  '0x1F',
  '1e3',
  '.inf',
  '1_000',
  '2001-12-14',
  'true',
  '<<',
  '__proto__',
  'constructor',
  'a b',
  'a: b',
  '#x',
  '-',
  '?',
  '*x',
  '&y',
  '!!int',
  '"',
  "'",
  '日本',
  '😀',
  '',
];
const CONTROL = [
  '\0',
  '\x01',
  '\x07',
  '\b',
  '\t',
  '\x0b',
  '\f',
  '\r',
  '\x1b',
  '\x7f',
  '\x85',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ud800',
  '\udfff',
  '\u200b',
];
const SYNTAX = [
  '{',
  '}',
  '[',
  ']',
  ':',
  ': ',
  ',',
  '- ',
  '? ',
  '#',
  '&a ',
  '*a',
  '<<: *a',
  '!!str ',
  '!!int ',
  '!!binary ',
  '|',
  '>-',
  '"',
  "'",
  '\\',
  '%YAML 1.1\n',
  '---\n',
  '...\n',
  '\t',
  '\n',
  '\r\n',
  '  ',
  '@',
  '`',
];

function word(rng: Rng): string {
  return rng.chance(0.7) ? `${rng.pick(['app', 'web', 'item', 'key', 'x'])}${rng.int(50)}` : rng.pick(WORDS);
}

function scalar(rng: Rng): unknown {
  switch (rng.int(7)) {
    case 0:
      return rng.int(1000);
    case 1:
      return rng.chance(0.5);
    case 2:
      return null;
    case 3:
      return rng.next() * 100;
    case 4:
      return rng.pick(WORDS);
    default:
      return word(rng);
  }
}

/** A random JSON value, `depth` levels at most. */
function value(rng: Rng, depth: number): unknown {
  if (depth <= 0 || rng.chance(0.45)) return scalar(rng);
  if (rng.chance(0.5)) return Array.from({ length: rng.int(4) }, () => value(rng, depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = rng.int(5); i > 0; i--) out[word(rng)] = value(rng, depth - 1);
  return out;
}

/** A manifest object: a fixture's (so the analysis has a captured live object for it) or a made-up one. */
function manifestObject(rng: Rng): Record<string, unknown> {
  if (rng.chance(0.6)) {
    const base = structuredClone(rng.pick(manifests()));
    // Change a few fields to new values, add a few new ones.
    for (let i = rng.int(4); i > 0; i--) mutateObject(rng, base);
    return base;
  }
  const kind = rng.pick(['ConfigMap', 'Secret', 'Service', 'Deployment', 'Job', 'ControllerRevision', 'Widget', 'Pod']);
  const apiVersion =
    { Deployment: 'apps/v1', ControllerRevision: 'apps/v1', Job: 'batch/v1', Widget: 'example.com/v1' }[kind] ?? 'v1';
  const obj: Record<string, unknown> = {
    apiVersion,
    kind,
    metadata: { name: rng.pick(['web', 'app', 'db', 'cfg', 'x']), ...(rng.chance(0.5) && { namespace: 'default' }) },
  };
  for (let i = rng.int(4); i > 0; i--)
    obj[rng.pick(['data', 'spec', 'stringData', 'status', 'items', word(rng)])] = value(rng, rng.int(5));
  return obj;
}

function mutateObject(rng: Rng, obj: unknown): void {
  // Walk to a random container and change, add or delete one entry.
  let cur = obj;
  for (let steps = rng.int(6); steps > 0; steps--) {
    const children = Array.isArray(cur) ? cur : cur && typeof cur === 'object' ? Object.values(cur) : [];
    const containers = children.filter((c) => c && typeof c === 'object');
    if (containers.length === 0) break;
    cur = rng.pick(containers);
  }
  if (Array.isArray(cur)) {
    if (rng.chance(0.5) || cur.length === 0) cur.push(value(rng, 2));
    else cur.splice(rng.int(cur.length), 1);
  } else if (cur && typeof cur === 'object') {
    const keys = Object.keys(cur);
    const record = cur as Record<string, unknown>;
    if (keys.length > 0 && rng.chance(0.3)) delete record[rng.pick(keys)];
    else record[keys.length > 0 && rng.chance(0.5) ? rng.pick(keys) : word(rng)] = value(rng, 2);
  }
}

/** The object as text, in one of the styles people and tools write. */
function render(rng: Rng, obj: unknown): { text: string; languageId: 'yaml' | 'json' } {
  switch (rng.int(6)) {
    case 0:
      return { text: JSON.stringify(obj, null, rng.pick([0, 2, 4, '\t'])), languageId: 'json' };
    case 1:
      return { text: stringify(obj, { collectionStyle: 'flow', lineWidth: 0 }), languageId: 'yaml' };
    case 2:
      return {
        text: stringify(obj, {
          indent: rng.pick([1, 2, 3, 4]),
          indentSeq: rng.chance(0.5),
          lineWidth: rng.pick([0, 20, 80]),
        }),
        languageId: 'yaml',
      };
    default:
      return { text: stringify(obj, { indentSeq: false, lineWidth: 0 }), languageId: 'yaml' };
  }
}

// ---------------------------------------------------------------------------------------------
// Text-level transformations

function insertAt(text: string, at: number, s: string): string {
  return text.slice(0, at) + s + text.slice(at);
}

function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

/** Anchors on some values and aliases or merge keys to them further down, as people write them. */
function addAnchors(rng: Rng, text: string): string {
  const lines = text.split('\n');
  const anchors: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*(?:- )?[\w.-]+:)( .*)?$/.exec(lines[i]!);
    if (!m) continue;
    if (rng.chance(0.15)) {
      const name = `a${anchors.length}`;
      anchors.push(name);
      lines[i] = `${m[1]} &${name}${m[2] ?? ''}`;
      // eslint-disable-next-line no-dupe-else-if -- each rng.chance draws a new number
    } else if (anchors.length > 0 && rng.chance(0.15)) {
      const indent = /^\s*/.exec(lines[i]!)![0];
      lines[i] = rng.chance(0.5) ? `${m[1]} *${rng.pick(anchors)}` : `${indent}<<: *${rng.pick(anchors)}`;
    }
  }
  return lines.join('\n');
}

function nestedText(rng: Rng, depth: number): string {
  if (rng.chance(0.5)) return `${'['.repeat(depth)}x${']'.repeat(depth)}`;
  if (rng.chance(0.5)) return `${'{a: '.repeat(depth)}x${'}'.repeat(depth)}`;
  // Block style, one space per level (the text grows with the square of the depth).
  let out = '\n';
  for (let i = 1; i <= Math.min(depth, 1500); i++) out += `${' '.repeat(i)}k${i % 7}:\n`;
  return `${out}${' '.repeat(Math.min(depth, 1500) + 1)}leaf`;
}

function hugeScalar(rng: Rng, length: number): string {
  const unit = rng.pick(['a', 'ab ', 'x\\n', 'ä', '😀', '0123456789']);
  const body = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  switch (rng.int(4)) {
    case 0:
      return JSON.stringify(body);
    case 1:
      return `|\n  ${body.replace(/\\n/g, '\n  ')}`;
    case 2:
      return `'${body.replace(/'/g, "''")}'`;
    default:
      return body.replace(/[:#\\]/g, '.');
  }
}

/** A stretch of whole lines of a fixture, mostly a few KiB: the campaign's time goes to parsing. */
function window(rng: Rng, text: string): string {
  if (text.length <= 6000 || rng.chance(0.05)) return text;
  const starts = lineStarts(text);
  const from = rng.int(starts.length);
  const length = rng.range(500, 6000);
  const to = starts.find((s) => s >= starts[from]! + length) ?? text.length;
  return text.slice(starts[from], to);
}

/** Random edits of the bytes: insert, delete, replace, duplicate, move or splice. */
function mutateBytes(rng: Rng, text: string): string {
  let out = text;
  for (let n = rng.range(1, 8); n > 0; n--) {
    const at = rng.int(out.length + 1);
    switch (rng.int(9)) {
      case 0:
        out = insertAt(out, at, rng.pick(SYNTAX));
        break;
      case 1:
        out = insertAt(out, at, rng.pick(CONTROL));
        break;
      case 2:
        out = out.slice(0, at) + out.slice(at + rng.range(1, 16));
        break;
      case 3:
        out = out.slice(0, at) + String.fromCharCode(rng.int(0x80)) + out.slice(at + 1);
        break;
      case 4: {
        const len = rng.range(1, 200);
        out = insertAt(out, rng.int(out.length + 1), out.slice(at, at + len));
        break;
      }
      case 5: {
        const starts = lineStarts(out);
        const line = rng.pick(starts);
        out = insertAt(out, line, rng.pick(['  ', '\t', '- ', '---\n', '# c\n', '...\n']));
        break;
      }
      case 6:
        out = out.slice(0, at);
        break;
      case 7:
        out = insertAt(out, at, rng.pick(WORDS));
        break;
      default: {
        const other = rng.pick(fixtures());
        const from = rng.int(other.length);
        out = insertAt(out, at, other.slice(from, from + rng.range(1, 300)));
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stress shapes: rare, and large enough to show anything worse than linear

function stress(rng: Rng): { shape: string; text: string } {
  const head = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\n';
  switch (rng.int(8)) {
    case 0: {
      const n = rng.range(1000, 3000);
      const lines = [head, 'data:'];
      for (let i = 0; i < n; i++) lines.push(`  k${i}: &a${i} v${i}`, `  j${i}: *a${i}`);
      return { shape: `stress: ${n} anchor/alias pairs`, text: lines.join('\n') };
    }
    case 1: {
      let text = `${head}data:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n`;
      for (let i = 1; i < rng.range(3, 9); i++)
        text += `  a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]\n`;
      return { shape: 'stress: billion laughs', text };
    }
    case 2: {
      const n = rng.range(2000, 4000);
      const lines = [head, 'data:'];
      for (let i = 0; i < n; i++) lines.push(`  key-${i}: value ${i}`);
      return { shape: `stress: ${n} keys`, text: lines.join('\n') };
    }
    case 3: {
      const n = rng.range(200, 500);
      return {
        shape: `stress: ${n} documents`,
        text: Array.from({ length: n }, (_, i) => head.replace('name: cfg', `name: cfg-${i}`)).join('---\n'),
      };
    }
    case 4: {
      const depth = rng.range(600, 5000);
      return { shape: `stress: nesting ${depth}`, text: `${head}data:\n  deep: ${nestedText(rng, depth)}\n` };
    }
    case 5: {
      const length = rng.range(50_000, 200_000);
      return { shape: `stress: ${length}-character scalar`, text: `${head}data:\n  big: ${hugeScalar(rng, length)}\n` };
    }
    case 6: {
      // Merge keys: each map merges every earlier one.
      const n = rng.range(50, 200);
      const lines = [head, 'data:'];
      for (let i = 0; i < n; i++)
        lines.push(
          `  m${i}: &m${i}`,
          `    k${i}: v`,
          ...(i > 0
            ? [`    <<: [${Array.from({ length: Math.min(i, 20) }, (_, j) => `*m${i - 1 - j}`).join(', ')}]`]
            : []),
        );
      return { shape: `stress: ${n} merge keys`, text: lines.join('\n') };
    }
    default: {
      const n = rng.range(500, 2000);
      const items = Array.from(
        { length: n },
        (_, i) => `- {name: c${i}, image: "nginx:${i}", ports: [{containerPort: ${i}}]}`,
      ).join('\n');
      return {
        shape: `stress: ${n} list items`,
        text: `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  template:\n    spec:\n      containers:\n${items.replace(/^/gm, '      ')}\n`,
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------

/** Input `index` of the run with `seed`. */
export function fuzzInput(seed: number, index: number, options: { stress?: number } = {}): FuzzInput {
  const rng = inputRng(seed, index);
  if (rng.chance(options.stress ?? 0.002)) {
    const s = stress(rng);
    return {
      index,
      shape: s.shape,
      text: rng.chance(0.2) ? s.text.replace(/\n/g, '\r\n') : s.text,
      languageId: 'yaml',
    };
  }
  const kind = rng.int(10);
  if (kind <= 1) {
    // A real fixture, its bytes mutated.
    return {
      index,
      shape: 'fixture mutation',
      text: mutateBytes(rng, window(rng, rng.pick(fixtures()))),
      languageId: 'yaml',
    };
  }
  const documents = rng.chance(0.3) ? rng.range(2, 5) : 1;
  const parts: string[] = [];
  let languageId: 'yaml' | 'json' = 'yaml';
  const shapes = new Set<string>();
  for (let d = 0; d < documents; d++) {
    const obj = rng.chance(0.1)
      ? { apiVersion: 'v1', kind: 'List', items: Array.from({ length: rng.range(1, 4) }, () => manifestObject(rng)) }
      : manifestObject(rng);
    const rendered = render(rng, obj);
    let text = rendered.text;
    if (documents === 1) languageId = rendered.languageId;
    if (rendered.languageId === 'yaml' && rng.chance(0.25)) {
      text = addAnchors(rng, text);
      shapes.add('anchors');
    }
    if (rng.chance(0.05)) {
      const starts = lineStarts(text);
      text = insertAt(text, rng.pick(starts), `deep${d}: ${nestedText(rng, rng.range(10, 300))}\n`);
      shapes.add('nesting');
    }
    if (rng.chance(0.03)) {
      text = insertAt(text, rng.pick(lineStarts(text)), `big${d}: ${hugeScalar(rng, rng.range(1000, 40_000))}\n`);
      shapes.add('huge scalar');
    }
    parts.push(text);
  }
  let text = parts.join(rng.pick(['---\n', '\n---\n', '--- # next\n', '...\n---\n']));
  if (rng.chance(0.1)) {
    text = `---\n${text}`;
  }
  if (rng.chance(0.15)) {
    text = text.replace(/\n/g, '\r\n');
    shapes.add('CRLF');
  }
  if (rng.chance(0.1)) {
    for (let n = rng.range(1, 3); n > 0; n--) text = insertAt(text, rng.int(text.length + 1), rng.pick(CONTROL));
    shapes.add('control characters');
  }
  if (rng.chance(0.25)) {
    text = mutateBytes(rng, text);
    shapes.add('mutated');
  }
  return { index, shape: ['generated', ...shapes].join(', '), text, languageId };
}

/** Runs settings from the environment: a fixed seed unless one is given (CI uses the default). */
export function campaignSettings(
  defaultIterations: number,
  env = process.env,
): { seed: number; iterations: number; only: number | undefined } {
  const seed = env.KCH_FUZZ_SEED !== undefined ? Number(env.KCH_FUZZ_SEED) >>> 0 : 0x4b434821;
  const iterations =
    env.KCH_FUZZ_ITERATIONS !== undefined
      ? Math.max(1, Math.round(Number(env.KCH_FUZZ_ITERATIONS) * (defaultIterations / 20000)))
      : defaultIterations;
  const only = env.KCH_FUZZ_ONLY !== undefined ? Number(env.KCH_FUZZ_ONLY) : undefined;
  return { seed, iterations, only };
}

// Where a field of a Helm chart's rendered object comes from. `helm template` prints each object
// after a `# Source: CHART/templates/x.yaml` comment (subcharts: `CHART/charts/SUB/templates/...`),
// which names the template; inside it, the field is set by the template line that writes its key.
// Templates are Go text/template, not YAML, so they are read as lines: a line's indentation, the
// key it writes (if any), and its `{{ ... }}` actions. Control actions (`if`, `with`, `range`,
// `end`) write nothing; an action alone on a line that prints (`include`, `toYaml`, a value) writes
// a block whose indentation is its `nindent`/`indent` argument. The rendered object's path is then
// walked down this skeleton by key and indentation; where a key is not written literally, the
// printing action under the parent writes it. Where the line takes its value from `.Values.x.y`
// (directly, through `with`/`range`, or as `toYaml`), the values file's `x.y` is named too: the
// last values file that sets it, as Helm merges them (the chart's values.yaml, a parent chart's
// values under the subchart's name, then the user's `--values` files in order).
//
// Pure: the renderer gives the rendered objects and the texts of the chart's files.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { addressOf, type JsonAddress } from '../manifest/edits-json';
import type { EditResult } from '../manifest/edits';
import type { ManifestResource, Range } from '../manifest/manifest';
import type { FieldPath } from '../ssa/path';
import type { RenderedObject, SourceLocation, SourceMap } from './source-map';
import { releaseLabel } from './helm-release';

export interface HelmChartSources {
  /** Absolute, `/`-separated path of the chart folder (the one holding Chart.yaml). */
  readonly root: string;
  /**
   * Texts by absolute path: the templates, `Chart.yaml` and `values.yaml` of the chart and of its
   * unpacked subcharts (`charts/NAME/`), and the user's values files.
   */
  readonly files: ReadonlyMap<string, string>;
  /** The user's `--values` files, absolute, in the order given (the last wins). */
  readonly valuesFiles: readonly string[];
  /** Named in messages: `release NAME in namespace NS`. */
  readonly release: string;
  readonly namespace: string;
}

/**
 * The source map of `helm template` output: `resources` are the rendered stream's objects as the
 * manifest parser read them (RenderedObject.index is the index in that list).
 */
export function helmSourceMap(resources: readonly ManifestResource[], chart: HelmChartSources): SourceMap {
  const root = trimSlash(chart.root);
  const templates = new Map<string, Template>();
  const templateOf = (file: string): Template | undefined => {
    if (!templates.has(file)) {
      const text = chart.files.get(file);
      if (text !== undefined) templates.set(file, readTemplate(text));
    }
    return templates.get(file);
  };
  const values = new ValuesFiles(chart);
  const chartFile = `${root}/Chart.yaml`;
  const sameSourceSeen = new Map<string, number>();

  const objects: RenderedObject[] = [];
  const located: { file: string; ordinal: number; resource: ManifestResource }[] = [];
  for (const [i, resource] of resources.entries()) {
    const source = sourceComment(resource.documentText);
    // `CHART/templates/x.yaml`: the first segment is the top chart's name, whatever its folder is called.
    const file =
      source !== undefined && source.includes('/') ? `${root}/${source.slice(source.indexOf('/') + 1)}` : chartFile;
    const ordinal = sameSourceSeen.get(file) ?? 0;
    sameSourceSeen.set(file, ordinal + 1);
    located.push({ file, ordinal, resource });
    const template = templateOf(file);
    const first = template?.documents[Math.min(ordinal, template.documents.length - 1)]?.firstLine ?? 0;
    const range = template ? (template.keyRange(first) ?? lineRange(first, 0)) : lineRange(0, 0);
    objects.push({ index: i, origin: { file: template ? file : chartFile, range, role: 'template' } });
  }

  return {
    target: { kind: 'helm', root, label: releaseLabel(chart) },
    objects,
    locate(index: number, path: FieldPath): SourceLocation[] {
      const at = located[index];
      if (!at) return [];
      const template = templateOf(at.file);
      const address = addressOf(at.resource.object, path);
      if (!template || !address) return [];
      const doc = template.documentFor(at.resource.kind, at.ordinal);
      if (!doc) return [];
      const chain = subchartChain(root, at.file, chart.files);
      const found = walk(
        doc,
        at.ordinal,
        address,
        at.resource.object,
        (ref) => values.locate(chain, ref) !== undefined,
      );
      if (!found) return [];
      const out: SourceLocation[] = [{ file: at.file, range: found.range, role: 'template' }];
      for (const ref of found.values) {
        const place = values.locate(chain, ref);
        if (place && !out.some((o) => o.file === place.file && o.range.start.line === place.range.start.line))
          out.push(place);
      }
      return out;
    },
    writers(index: number, path: FieldPath): SourceLocation[] {
      return this.locate(index, path).filter((l) => l.role === 'template');
    },
  };
}

/**
 * Removing the template line `line` that writes a value of its own: a literal (`replicas: 3`) or one
 * action that prints a scalar (`replicas: {{ .Values.replicaCount }}`). The line's bytes go, nothing
 * else, so the key is gone from what Helm renders (the values file keeps its key: other lines may
 * read it, and without the template line it writes nothing). `key`, when given, is the key the line
 * must write. Refused where removing the line would not just drop that field from what Helm renders:
 * a templated key, a control action or a printed block (`toYaml`, `nindent`) on the line, a value
 * that spans lines (a block scalar, a nested block), the first key of a list item (its `- ` would go
 * too), or the only key of its parent (which would be left empty, and render as null).
 */
export function removeTemplateLineEdits(text: string, line: number, key?: string): EditResult {
  const refuse = (reason: string): EditResult => ({ edits: undefined, reason });
  const raw = (text.split('\n')[line] ?? '').replace(/\r$/, '');
  let hit: { node: TNode; parent: TNode } | undefined;
  const visit = (parent: TNode) => {
    for (const child of parent.children) {
      if (child.kind === 'key' && child.line === line) hit = { node: child, parent };
      if (!hit) visit(child);
    }
  };
  for (const doc of readTemplate(text).documents) if (!hit) visit(doc.root);
  if (!hit)
    return refuse(
      raw.includes('{{')
        ? 'the line holds a template action: its value is not written here'
        : 'the line writes no key of the rendered object',
    );
  const { node, parent } = hit;
  if (node.key === undefined)
    return refuse('the key is templated: which field the line writes is known only when rendered');
  if (key !== undefined && node.key !== key) return refuse(`the line writes ${node.key}, not ${key}`);
  const indent = raw.length - raw.trimStart().length;
  const after = raw.slice(node.range.end.character).replace(/^\s*:/, '').trim();
  if (raw.includes('{{')) {
    // One action, the whole value (quoted or not), printing a scalar: the line is the key's only writer.
    const actions = findActions(raw);
    const single =
      actions.length === 1 && /^("?)\{\{[^]*\}\}\1$/.test(after) && raw.indexOf('{{') >= node.range.end.character;
    const body = actions[0]?.body ?? '';
    if (!single || CONTROL.test(body) || /\b(toYaml|toJson|nindent|indent|tpl)\b/.test(body) || /-\s*\}\}/.test(after))
      return refuse('the line holds a template action: its value is not written here');
  } else if (node.literal === undefined) return refuse('the line does not write a literal value of its own');
  if (!node.inlineValue || node.children.length > 0 || /^[|>]/.test(after))
    return refuse('the line does not write a literal value of its own');
  if (node.range.start.character !== indent)
    return refuse('the key starts a list item: removing the line would remove the item');
  if (parent.kind !== 'root' && parent.children.length < 2)
    return refuse('it is the only key of its parent, which would be left empty');
  const lines = text.split('\n');
  for (let l = line + 1; l < lines.length; l++) {
    const next = lines[l]!.replace(/\r$/, '');
    if (next.trim() === '') continue;
    if (next.length - next.trimStart().length > indent && !next.trim().startsWith('#'))
      return refuse('the value goes on below the line');
    break;
  }
  const last = line + 1 >= lines.length;
  const range: Range = last
    ? {
        start: { line: Math.max(0, line - 1), character: line > 0 ? lines[line - 1]!.length : 0 },
        end: { line, character: lines[line]!.length },
      }
    : { start: { line, character: 0 }, end: { line: line + 1, character: 0 } };
  return { edits: [{ range, newText: '' }] };
}

/** The `# Source:` comment Helm puts at the top of each rendered document. */
function sourceComment(documentText: string): string | undefined {
  for (const line of documentText.split('\n')) {
    const t = line.trim();
    if (t === '' || t === '---') continue;
    const m = /^#\s*Source:\s*(.+?)\s*$/.exec(t);
    if (m) return m[1];
    if (!t.startsWith('#')) return undefined;
  }
  return undefined;
}

/** The subcharts a template sits in, outermost first: `ROOT/charts/a/charts/b/templates/x` → [a, b] (by their Chart.yaml names). */
function subchartChain(root: string, file: string, files: ReadonlyMap<string, string>): string[] {
  const rel = file.slice(root.length + 1).split('/');
  const chain: string[] = [];
  let dir = root;
  for (let i = 0; i + 1 < rel.length && rel[i] === 'charts'; i += 2) {
    dir = `${dir}/charts/${rel[i + 1]}`;
    const name = /^name:[ \t]*["']?([^"'\s#]+)/m.exec(files.get(`${dir}/Chart.yaml`) ?? '')?.[1];
    chain.push(name ?? rel[i + 1]!);
  }
  return chain;
}

// ------------------------------------------------------------------------------------------------
// The template, read as lines.

/** A values path: keys, list indexes, and the element a `range` is at (bound while walking). */
type ValuesStep = string | number | { readonly range: number };
type ValuesRef = readonly ValuesStep[];

interface Action {
  readonly start: number;
  readonly end: number;
  /** The text between the delimiters, trim markers removed. */
  readonly body: string;
}

interface TNode {
  readonly kind: 'root' | 'key' | 'item' | 'print';
  /** Column of the key, of the item's `-`, or the indentation a printing action writes at. */
  readonly col: number;
  readonly line: number;
  /** The key (undefined when templated: `{{ $k }}: ...` stands for any key). */
  readonly key?: string;
  readonly range: Range;
  readonly children: TNode[];
  /** Values the line reads for its own value (`replicas: {{ .Values.replicaCount }}`). */
  readonly refs: ValuesRef[];
  /** A printing action's source when it prints values as YAML (`toYaml .Values.x`, `toYaml .` in `with`). */
  readonly yamlOf?: ValuesRef;
  /** The key line's value is written on the line (or is a block scalar): nothing below it is structure. */
  readonly inlineValue: boolean;
  /** Literal scalar on the line (`protocol: TCP`), to tell list items apart. */
  readonly literal?: string;
  /** The `range` this node is the repeated unit of (innermost), if any. */
  readonly unitOf?: number;
}

interface TemplateDocument {
  readonly firstLine: number;
  /** The `range` that repeats the whole document, if any: the n-th rendered object is its n-th element. */
  readonly unitOf?: number;
  readonly kind?: string;
  readonly root: TNode;
}

interface Template {
  readonly documents: readonly TemplateDocument[];
  documentFor(kind: string, ordinal: number): TemplateDocument | undefined;
  keyRange(line: number): Range | undefined;
}

interface Frame {
  readonly kind: 'if' | 'with' | 'range' | 'define' | 'other';
  readonly dot: ValuesRef | undefined;
  readonly vars: ReadonlyMap<string, ValuesRef>;
  readonly rangeId?: number;
}

const CONTROL = /^(if|else|end|with|range|define|block|break|continue)\b/;

function findActions(text: string): Action[] {
  const out: Action[] = [];
  let i = 0;
  for (;;) {
    const open = text.indexOf('{{', i);
    if (open < 0) return out;
    let j = open + 2;
    // Skip over string literals, which may hold `}}`.
    let close = -1;
    while (j < text.length) {
      const c = text[j];
      if (c === '"' || c === '`') {
        const q = c;
        j++;
        while (j < text.length && text[j] !== q) j += text[j] === '\\' && q === '"' ? 2 : 1;
        j++;
        continue;
      }
      if (c === '}' && text[j + 1] === '}') {
        close = j;
        break;
      }
      j++;
    }
    if (close < 0) return out;
    let body = text.slice(open + 2, close);
    body = body.replace(/^-\s/, '').replace(/\s-$/, '').trim();
    out.push({ start: open, end: close + 2, body });
    i = close + 2;
  }
}

/** Values paths an action reads, resolved in its scope (`.x` is relative to the dot). */
function refsIn(body: string, frame: Frame): ValuesRef[] {
  const code = body.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
  const out: ValuesRef[] = [];
  for (const m of code.matchAll(
    /(\$[A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(?<![\w)\]])((?:\.[A-Za-z_][A-Za-z0-9_]*)+|\.(?![\w.]))/g,
  )) {
    const ref = resolve(m[1], m[2] ?? m[3] ?? '', frame);
    if (ref) out.push(ref);
  }
  return out;
}

function resolve(variable: string | undefined, chain: string, frame: Frame): ValuesRef | undefined {
  const fields = chain === '.' || chain === '' ? [] : chain.slice(1).split('.');
  let base: ValuesRef | undefined;
  if (variable === '$') base = [];
  else if (variable !== undefined) base = frame.vars.get(variable);
  else base = frame.dot;
  if (base === undefined) return undefined;
  const full = [...base, ...fields];
  // Only what comes from .Values is in a values file.
  if (full[0] !== 'Values') return undefined;
  return full;
}

/** Where a printing action writes: its `nindent N`/`indent N`, else where it stands. */
function printColumn(body: string, col: number): number {
  const m = /\b(?:nindent|indent)\s+(\d+)/.exec(body);
  return m ? Number(m[1]) : col;
}

function readTemplate(text: string): Template {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineOfOffset = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const actions = findActions(text);

  // Mask the actions (keeping the columns) so that each line shows only its literal YAML; a masked
  // character is \u0001, so that a templated key is told from a literal one.
  const chars = text.split('');
  for (const a of actions) for (let k = a.start; k < a.end; k++) if (chars[k] !== '\n') chars[k] = '\u0001';
  const masked = chars.join('').split('\n');
  const rawLines = text.split('\n');

  // Scope of each action, the actions of each line, and the `range`s open after each action.
  let rangeIds = 0;
  const stack: Frame[] = [{ kind: 'other', dot: [], vars: new Map([['$', []]]) }];
  const lineActions = new Map<number, { action: Action; frame: Frame; ranges: number[] }[]>();
  const after: { end: number; ranges: number[] }[] = [];
  const activeRanges = (): number[] => stack.filter((f) => f.rangeId !== undefined).map((f) => f.rangeId!);
  for (const a of actions) {
    const top = stack.at(-1)!;
    const word = CONTROL.exec(a.body)?.[1];
    const line = lineOfOffset(a.start);
    if (!lineActions.has(line)) lineActions.set(line, []);
    lineActions.get(line)!.push({ action: a, frame: top, ranges: activeRanges() });
    if (a.body.startsWith('/*')) continue;
    if (word === 'end') {
      if (stack.length > 1) stack.pop();
    } else if (word === 'if') {
      stack.push({ kind: 'if', dot: top.dot, vars: top.vars });
    } else if (word === 'with') {
      const expr = a.body.slice(4).trim();
      const assign = /^(\$\w+)\s*:?=\s*(.*)$/.exec(expr);
      const ref = firstRef(assign ? assign[2]! : expr, top);
      const vars = new Map(top.vars);
      if (assign && ref) vars.set(assign[1]!, ref);
      stack.push({ kind: 'with', dot: ref, vars });
    } else if (word === 'range') {
      const id = rangeIds++;
      const expr = a.body.slice(5).trim();
      const assign = /^(\$\w+)(?:\s*,\s*(\$\w+))?\s*:?=\s*(.*)$/.exec(expr);
      const coll = firstRef(assign ? assign[3]! : expr, top);
      const element = coll ? [...coll, { range: id }] : undefined;
      const vars = new Map(top.vars);
      if (assign && element) vars.set(assign[2] ?? assign[1]!, element);
      stack.push({ kind: 'range', dot: element, vars, rangeId: id });
    } else if (word === 'define' || word === 'block') {
      stack.push({ kind: 'define', dot: undefined, vars: new Map() });
    } else if (word === undefined) {
      const assign = /^(\$\w+)\s*:?=\s*(.*)$/.exec(a.body);
      if (assign) {
        const ref = firstRef(assign[2]!, top);
        if (ref) (top.vars as Map<string, ValuesRef>).set(assign[1]!, ref);
      }
    }
    after.push({ end: a.end, ranges: activeRanges() });
  }
  /** The `range`s open where a line starts. */
  const rangesAt = (offset: number): number[] => {
    let open: number[] = [];
    for (const a of after) {
      if (a.end > offset) break;
      open = a.ranges;
    }
    return open;
  };
  const inDefine = (offset: number): boolean => {
    // A `define` in a template writes nothing where it stands.
    let depth = 0;
    let defining = false;
    for (const a of actions) {
      if (a.start >= offset) break;
      const word = CONTROL.exec(a.body)?.[1];
      if (word === 'define') {
        if (!defining) depth = 0;
        defining = true;
        depth++;
      } else if (defining && (word === 'if' || word === 'with' || word === 'range' || word === 'block')) depth++;
      else if (defining && word === 'end' && --depth === 0) defining = false;
    }
    return defining;
  };

  const documents: {
    root: TNode;
    firstLine: number;
    kind?: string;
    unitOf?: number;
    stack: { node: TNode; ranges: number[] }[];
  }[] = [];
  let current: (typeof documents)[number] | undefined;
  const open = (line: number): (typeof documents)[number] => {
    if (current) return current;
    const root: TNode = {
      kind: 'root',
      col: -1,
      line,
      range: lineRange(line, 0),
      children: [],
      refs: [],
      inlineValue: false,
    };
    const ranges = rangesAt(lineStarts[line]!);
    current = {
      root,
      firstLine: line,
      stack: [{ node: root, ranges }],
      ...(ranges.length > 0 ? { unitOf: ranges.at(-1)! } : {}),
    };
    documents.push(current);
    return current;
  };
  const keyRanges = new Map<number, Range>();
  let blockScalarIndent: number | undefined;
  const hasDefine = actions.some((a) => /^define\b/.test(a.body));

  for (let ln = 0; ln < masked.length; ln++) {
    const m = masked[ln]!.replace(/\r$/, '');
    const lineStart = lineStarts[ln]!;
    const trimmed = m.replace(/\u0001/g, ' ').trim();
    if (m.trim() === '---') {
      current = undefined;
      blockScalarIndent = undefined;
      continue;
    }
    const indentCol = m.length - m.trimStart().length;
    if (blockScalarIndent !== undefined) {
      if (trimmed === '' || indentCol > blockScalarIndent) continue;
      blockScalarIndent = undefined;
    }
    if (hasDefine && inDefine(lineStart + indentCol)) continue;
    const acts = (lineActions.get(ln) ?? []).filter((a) => a.action.start >= lineStart);
    if (trimmed === '' || trimmed.startsWith('#')) {
      // An action alone on its line: it prints (a block of YAML) unless it is control or a comment.
      const printing = acts.filter(
        (a) => !CONTROL.test(a.action.body) && !a.action.body.startsWith('/*') && !/^\$\w+\s*:?=/.test(a.action.body),
      );
      if (printing.length === 0 || trimmed.startsWith('#')) continue;
      const p = printing[0]!;
      const startCol = p.action.start - lineStart;
      const col = printColumn(p.action.body, startCol);
      const yamlOf = /\btoYaml\b/.test(p.action.body)
        ? firstRef(p.action.body.replace(/^.*?\btoYaml\b/s, ''), p.frame)
        : undefined;
      const endCol = Math.min(rawLines[ln]!.replace(/\r$/, '').length, startCol + (p.action.end - p.action.start));
      const node: TNode = {
        kind: 'print',
        col,
        line: ln,
        range: { start: { line: ln, character: startCol }, end: { line: ln, character: endCol } },
        children: [],
        refs: [],
        inlineValue: true,
        ...(yamlOf ? { yamlOf } : {}),
      };
      place(open(ln), node, p.ranges);
      continue;
    }
    const doc = open(ln);
    const lineRanges = rangesAt(lineStart);
    // `- - key: v`: one item per dash, then the key.
    let col = indentCol;
    let rest = m.slice(col);
    let parentItem: TNode | undefined;
    while (/^-(\s|$)/.test(rest)) {
      const item: TNode = {
        kind: 'item',
        col,
        line: ln,
        range: { start: { line: ln, character: col }, end: { line: ln, character: col + 1 } },
        children: [],
        refs: [],
        inlineValue: false,
      };
      if (parentItem) {
        parentItem.children.push(item);
        doc.stack.push({ node: item, ranges: lineRanges });
      } else place(doc, item, lineRanges);
      parentItem = doc.stack.at(-1)!.node;
      const skip = rest.length - rest.slice(1).trimStart().length;
      col += skip;
      rest = rest.slice(skip);
      if (rest === '') break;
    }
    const keyMatch = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#?:,[\]{}][^#]*?)[ \t]*:(?=\s|$)/.exec(rest);
    const valueActions = acts.filter((a) => a.action.start - lineStart >= col + (keyMatch?.[0].length ?? 0));
    const valueRefs = valueActions.flatMap((a) => refsIn(a.action.body, a.frame));
    if (!keyMatch) {
      // A scalar item (`- {{ .Values.x }}`, `- literal`) or a continuation: the item reads its values.
      if (parentItem) (parentItem.refs as ValuesRef[]).push(...acts.flatMap((a) => refsIn(a.action.body, a.frame)));
      continue;
    }
    const keyText = keyMatch[1]!.trimEnd();
    const templated = keyText.includes('\u0001');
    const valueText = rest.slice(keyMatch[0].length).trim();
    const value = valueText.replace(/\u0001/g, 'x');
    if (/^[|>][0-9+-]*\s*(#.*)?$/.test(value)) blockScalarIndent = col;
    const range: Range = { start: { line: ln, character: col }, end: { line: ln, character: col + keyText.length } };
    if (!keyRanges.has(ln)) keyRanges.set(ln, range);
    const toYaml = valueActions.find((a) => /\btoYaml\b/.test(a.action.body));
    const yamlOf = toYaml ? firstRef(toYaml.action.body.replace(/^.*?\btoYaml\b/s, ''), toYaml.frame) : undefined;
    const literal =
      value !== '' && !valueText.includes('\u0001') && !value.startsWith('#')
        ? unquote(valueText.replace(/\s+#.*$/, ''))
        : undefined;
    const node: TNode = {
      kind: 'key',
      col,
      line: ln,
      range,
      children: [],
      refs: yamlOf ? [] : valueRefs,
      // `key: {{ toYaml ... | nindent N }}` writes the block below itself: still a parent.
      inlineValue: value !== '' && !value.startsWith('#') && !toYaml,
      ...(templated ? {} : { key: unquote(keyText) }),
      ...(literal !== undefined ? { literal } : {}),
      ...(yamlOf ? { yamlOf } : {}),
    };
    if (parentItem) {
      parentItem.children.push(node);
      doc.stack.push({ node, ranges: lineRanges });
    } else place(doc, node, lineRanges);
    if (doc.kind === undefined && node.key === 'kind' && col === 0 && literal) doc.kind = literal;
  }

  const docs: TemplateDocument[] = documents;
  return {
    documents: docs,
    documentFor(kind: string, ordinal: number) {
      const byKind = docs.filter((d) => d.kind === kind);
      if (byKind.length > 0) return byKind[Math.min(ordinal, byKind.length - 1)];
      return docs[Math.min(ordinal, docs.length - 1)];
    },
    keyRange(line: number) {
      for (let l = line; l < masked.length; l++) {
        const r = keyRanges.get(l);
        if (r) return r;
      }
      return undefined;
    },
  };
}

/** Puts a node under the nearest open node that can hold it, as YAML's indentation decides. */
function place(doc: { stack: { node: TNode; ranges: number[] }[] }, node: TNode, ranges: number[]): void {
  const holds = (open: TNode): boolean => {
    if (open.kind === 'root') return true;
    if (open.kind === 'print') return false;
    if (open.kind === 'item') return node.col > open.col;
    // A key holds what is indented more, and a sequence's items at its own column.
    if (open.inlineValue) return false;
    return node.col > open.col || (node.kind === 'item' && node.col === open.col);
  };
  while (doc.stack.length > 1 && !holds(doc.stack.at(-1)!.node)) doc.stack.pop();
  const parent = doc.stack.at(-1)!;
  const fresh = ranges.filter((r) => !parent.ranges.includes(r));
  const unit = fresh.length > 0 ? fresh.at(-1) : undefined;
  const placed = unit !== undefined ? ({ ...node, unitOf: unit } as TNode) : node;
  parent.node.children.push(placed);
  doc.stack.push({ node: placed, ranges });
}

function firstRef(expr: string, frame: Frame): ValuesRef | undefined {
  // The first term of the pipeline (`.Values.x | default ...`), or of a call (`default .Values.a .Values.b` → any).
  return refsIn(expr.split('|')[0]!, frame)[0];
}

function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) {
    try {
      return JSON.parse(t) as string;
    } catch {
      return t.slice(1, -1);
    }
  }
  if (t.length >= 2 && t.startsWith("'") && t.endsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
  return t;
}

function lineRange(line: number, character: number): Range {
  return { start: { line, character }, end: { line, character } };
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

// ------------------------------------------------------------------------------------------------
// Walking a rendered path down the template.

interface Found {
  readonly range: Range;
  readonly values: ValuesRef[];
}

/** `inValues`: whether a values file sets the path (`.Values.x.y`), to tell which printing action wrote a key. */
function walk(
  doc: TemplateDocument,
  ordinal: number,
  address: JsonAddress,
  object: JsonObject,
  inValues: (ref: ValuesRef) => boolean,
): Found | undefined {
  let node: TNode = doc.root;
  let value: JsonValue = object;
  const bound = new Map<number, string | number>();
  if (doc.unitOf !== undefined) bound.set(doc.unitOf, ordinal);
  let best: TNode | undefined;
  for (let i = 0; i < address.length; i++) {
    const step = address[i]!;
    const next: JsonValue | undefined =
      typeof step === 'number'
        ? Array.isArray(value)
          ? value[step]
          : undefined
        : isJsonObject(value)
          ? value[step]
          : undefined;
    let child: TNode | undefined;
    if (typeof step === 'string') {
      child =
        node.children.find((c) => c.kind === 'key' && c.key === step) ??
        node.children.find((c) => c.kind === 'key' && c.key === undefined);
      if (child && child.key === undefined && child.unitOf !== undefined) bound.set(child.unitOf, step);
    } else {
      child = pickItem(node, step, next);
      if (child && child.unitOf !== undefined) {
        const before = node.children.filter(
          (c) => c.kind === 'item' && c.unitOf === undefined && c.line < child!.line,
        ).length;
        bound.set(child.unitOf, step - before);
      }
    }
    if (!child) {
      // Not written literally: the action under this node that prints a block writes it.
      const printers = node.children.filter((c) => c.kind === 'print');
      const rest = address.slice(i);
      if (node.yamlOf) return { range: node.range, values: [concrete([...node.yamlOf, ...rest], bound)].filter(isRef) };
      if (printers.length === 0) return best ? { range: best.range, values: [] } : undefined;
      // `labels:` holds `include "x.labels"` and `toYaml .Values.podLabels`: the values file tells
      // which wrote the key; otherwise the one that does not print values.
      const fromValues = printers.find(
        (p) =>
          p.yamlOf !== undefined &&
          isRef(concrete([...p.yamlOf, ...rest], bound)) &&
          inValues(concrete([...p.yamlOf, ...rest], bound)!),
      );
      const printer = fromValues ?? printers.find((p) => p.yamlOf === undefined) ?? printers[0]!;
      return {
        range: printer.range,
        values: printer.yamlOf ? [concrete([...printer.yamlOf, ...rest], bound)].filter(isRef) : [],
      };
    }
    node = child;
    if (node.kind !== 'item') best = node;
    if (next === undefined) break;
    value = next;
    if (node.yamlOf && i + 1 < address.length) {
      return { range: node.range, values: [concrete([...node.yamlOf, ...address.slice(i + 1)], bound)].filter(isRef) };
    }
  }
  if (node.kind === 'root') return undefined;
  const refs = node.yamlOf ? [node.yamlOf] : node.refs;
  return { range: node.range, values: refs.map((r) => concrete(r, bound)).filter(isRef) };
}

/** The list item of the template that writes the rendered item `index` (whose value is `item`). */
function pickItem(node: TNode, index: number, item: JsonValue | undefined): TNode | undefined {
  const items = node.children.filter((c) => c.kind === 'item');
  if (items.length === 0) return undefined;
  const literals = (it: TNode): TNode[] =>
    it.children.filter((c) => c.kind === 'key' && c.key !== undefined && c.literal !== undefined);
  const agrees = (it: TNode): number => {
    if (!isJsonObject(item)) return 0;
    let score = 0;
    for (const k of literals(it)) {
      const have = item[k.key!];
      if (have === undefined) continue;
      if (String(have) === k.literal) score++;
      else return -1;
    }
    return score;
  };
  const scored = items.map((it, n) => ({ it, n, score: agrees(it) })).filter((s) => s.score >= 0);
  if (scored.length === 0) return items.at(-1);
  const top = Math.max(...scored.map((s) => s.score));
  const best = scored.filter((s) => s.score === top);
  // Among equals, the item at the same position; a `range` writes every item after the literal ones.
  return (best.find((s) => s.n === index) ?? best.find((s) => s.it.unitOf !== undefined) ?? best.at(-1)!).it;
}

function concrete(ref: ValuesRef, bound: ReadonlyMap<number, string | number>): ValuesRef | undefined {
  const out: ValuesStep[] = [];
  for (const s of ref) {
    if (typeof s === 'object') {
      const b = bound.get(s.range);
      if (b === undefined) return undefined;
      out.push(typeof b === 'number' ? { range: b } : b);
    } else out.push(s);
  }
  return out;
}

function isRef(r: ValuesRef | undefined): r is ValuesRef {
  return r !== undefined;
}

// ------------------------------------------------------------------------------------------------
// Values files.

interface ParsedValues {
  readonly root: YamlNode | null | undefined;
  readonly lines: LineCounter;
}

class ValuesFiles {
  private readonly parsed = new Map<string, ParsedValues | null>();
  constructor(private readonly chart: HelmChartSources) {}

  /** The line of the values file whose value wins for `.Values.<ref>` in a template of the subchart chain. */
  locate(chain: readonly string[], ref: ValuesRef): SourceLocation | undefined {
    if (ref[0] !== 'Values') return undefined;
    const path = ref.slice(1);
    if (path.length === 0) return undefined;
    const root = trimSlash(this.chart.root);
    // Lowest precedence first: the innermost chart's values.yaml, then each parent's under the
    // subchart's name, then the user's files (which address the top chart).
    const candidates: { file: string; path: ValuesRef }[] = [];
    for (let depth = chain.length; depth >= 0; depth--) {
      const dir = [
        root,
        ...chain.slice(0, depth).map((c, k) => `charts/${this.folderOf(root, chain.slice(0, k), c)}`),
      ].join('/');
      candidates.push({ file: `${dir}/values.yaml`, path: [...chain.slice(depth), ...path] });
    }
    for (const f of this.chart.valuesFiles) candidates.push({ file: f, path: [...chain, ...path] });
    let winner: SourceLocation | undefined;
    for (const c of candidates) {
      const range = this.rangeOf(c.file, c.path);
      if (range) winner = { file: c.file, range, role: 'values' };
    }
    return winner;
  }

  /** The folder under charts/ of a subchart named `name` (its Chart.yaml name, usually the folder's). */
  private folderOf(root: string, parents: readonly string[], name: string): string {
    const base = [root, ...parents.map((p) => `charts/${p}`)].join('/');
    for (const file of this.chart.files.keys()) {
      const m = new RegExp(`^${escapeRegExp(base)}/charts/([^/]+)/Chart\\.yaml$`).exec(file);
      if (m && new RegExp(`^name:[ \\t]*["']?${escapeRegExp(name)}["']?\\s*$`, 'm').test(this.chart.files.get(file)!))
        return m[1]!;
    }
    return name;
  }

  private rangeOf(file: string, path: ValuesRef): Range | undefined {
    const values = this.read(file);
    if (!values) return undefined;
    let node = values.root;
    let keyNode: YamlNode | undefined;
    for (const step of path) {
      if (isMap(node)) {
        const name = typeof step === 'object' ? sortedKeys(node)[step.range] : String(step);
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === name);
        if (!pair || !isScalar(pair.key)) return undefined;
        keyNode = pair.key;
        node = pair.value as YamlNode | null;
      } else if (isSeq(node)) {
        const at = typeof step === 'object' ? step.range : typeof step === 'number' ? step : NaN;
        const item = node.items[at] as YamlNode | undefined;
        if (!item) return undefined;
        keyNode = item;
        node = item;
      } else return undefined;
    }
    if (!keyNode?.range) return undefined;
    const start = values.lines.linePos(keyNode.range[0]);
    const end = values.lines.linePos(isScalar(keyNode) ? keyNode.range[1] : keyNode.range[0]);
    // A list item's range starts at its value; the key of a pair ends where it ends.
    return {
      start: { line: start.line - 1, character: start.col - 1 },
      end: { line: end.line - 1, character: end.col - 1 },
    };
  }

  private read(file: string): ParsedValues | undefined {
    if (!this.parsed.has(file)) {
      const text = this.chart.files.get(file);
      if (text === undefined) this.parsed.set(file, null);
      else {
        const lines = new LineCounter();
        try {
          const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
          this.parsed.set(file, { root: doc.contents as YamlNode | null, lines });
        } catch {
          this.parsed.set(file, null);
        }
      }
    }
    return this.parsed.get(file) ?? undefined;
  }
}

function sortedKeys(node: { items: unknown[] }): string[] {
  // Go templates range over a map in sorted key order.
  return node.items.flatMap((p) => (isPair(p) && isScalar(p.key) ? [String(p.key.value)] : [])).sort();
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Where each field of a `kustomize build` comes from. kustomize applies, for every kustomization from
// the one that lists an object's resource file up to the overlay being built: its components, then
// its own transformers in its fixed order (strategic-merge patches, `patches` in order, namespace,
// name prefix and suffix, labels, annotations, JSON 6902 patches, replicas, images). The line that
// sets a field is the last of those writers that sets it; before them all, the resource file (or the
// generator) that produced the object.
//
// Which resource file an object comes from is kustomize's own answer: the renderer builds the overlay
// a second time through a wrapper kustomization with `buildMetadata: [originAnnotations]`, and the
// `config.kubernetes.io/origin` annotations of that build name the file or the generator. Matching
// objects back to files by identity would have to redo every name prefix, suffix and generator hash;
// kustomize already knows. The prediction itself runs on the plain build's text, without annotations.
//
// Pure: the renderer reads the files and runs the tool; this module reads texts.
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, parseDocument, type Document, type Node } from 'yaml';
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import {
  firstCharacter,
  locate,
  parseManifestText,
  type LocateOptions,
  type ManifestResource,
  type Range,
} from '../manifest/manifest';
import { formatPath, listItemIndex, valueAtFieldPath, type FieldPath } from '../ssa/path';
import { basename, dirname, joinPath, kustomizationFileNames } from './file-kinds';
import type { RenderedObject, RenderTarget, SourceLocation, SourceMap } from './source-map';
import { matchesSelectorText } from './selector-text';

export interface KustomizeOrigin {
  /** The resource file (absolute) the object was read from. */
  readonly path?: string;
  /** The kustomization file (absolute) whose generator made the object. */
  readonly configuredIn?: string;
  /** `ConfigMapGenerator`, `SecretGenerator`, or another generator's kind. */
  readonly generator?: string;
}

export interface KustomizeMapInput {
  readonly target: RenderTarget;
  /** The objects of the plain build, in the order of the stream. */
  readonly rendered: readonly ManifestResource[];
  /** The origins of the same objects (same position), from the annotated build. */
  readonly origins: readonly (KustomizeOrigin | undefined)[];
  /** Every file the build read that is needed here: absolute path → text. */
  readonly files: ReadonlyMap<string, string>;
}

export const ORIGIN_ANNOTATION = 'config.kubernetes.io/origin';
/** Fields kustomize's namespace transformer sets besides metadata.namespace: [kind, field]. */
const namespaceFieldSpecs: readonly (readonly [string, string])[] = [
  ['Namespace', '.metadata.name'],
  ['APIService', '.spec.service.namespace'],
  ['CustomResourceDefinition', '.spec.conversion.webhook.clientConfig.service.namespace'],
];

/** The kustomization file of a folder, among the files read. */
export function kustomizationFileIn(
  dir: string,
  files: ReadonlyMap<string, string> | ReadonlySet<string>,
): string | undefined {
  return kustomizationFileNames.map((n) => joinPath(dir, n)).find((f) => files.has(f));
}

/**
 * The origins of the annotated build's objects, in stream order, with their identities so the caller
 * can pair them with the plain build's objects. Paths in the annotations are relative to the folder
 * of the kustomization that was built (`wrapperDir`).
 */
export function parseKustomizeOrigins(
  annotatedText: string,
  wrapperDir: string,
): { identity: string; origin?: KustomizeOrigin }[] {
  return parseManifestText(annotatedText).resources.map((r) => {
    const metadata = isJsonObject(r.object.metadata) ? r.object.metadata : {};
    const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : {};
    const text = annotations[ORIGIN_ANNOTATION];
    let origin: KustomizeOrigin | undefined;
    if (typeof text === 'string') {
      const o = safeYaml(text);
      if (isJsonObject(o)) {
        const by = isJsonObject(o.configuredBy) ? o.configuredBy : {};
        origin = {
          ...(typeof o.path === 'string' && typeof o.repo !== 'string' ? { path: joinPath(wrapperDir, o.path) } : {}),
          ...(typeof o.configuredIn === 'string' ? { configuredIn: joinPath(wrapperDir, o.configuredIn) } : {}),
          ...(typeof by.kind === 'string' ? { generator: by.kind } : {}),
        };
      }
    }
    return { identity: identityOf(r), ...(origin ? { origin } : {}) };
  });
}

export function identityOf(r: ManifestResource): string {
  return `${r.apiVersion}/${r.kind}/${r.namespace ?? ''}/${r.name ?? ''}`;
}

// --- the kustomizations, as read ---

interface Level {
  readonly file: string;
  readonly dir: string;
  readonly k: JsonObject;
  readonly yaml: YamlText;
}

interface ChainStep {
  readonly level: Level;
  /** The component of this level that leads on down the chain (its transformers count once). */
  readonly via?: string;
}

export function kustomizeSourceMap(input: KustomizeMapInput): SourceMap {
  const levels = new Map<string, Level | undefined>();
  const levelAt = (dir: string): Level | undefined => {
    if (levels.has(dir)) return levels.get(dir);
    const file = kustomizationFileIn(dir, input.files);
    const yaml = file !== undefined ? yamlText(input.files.get(file)!) : undefined;
    const k = yaml?.json;
    const level = file !== undefined && yaml && isJsonObject(k) ? { file, dir, k, yaml } : undefined;
    levels.set(dir, level);
    return level;
  };
  const parsedFiles = new Map<string, ManifestResource[]>();
  const docsOf = (file: string): ManifestResource[] => {
    let docs = parsedFiles.get(file);
    if (!docs) {
      const text = input.files.get(file);
      docs = text !== undefined ? [...parseManifestText(text).resources] : [];
      parsedFiles.set(file, docs);
    }
    return docs;
  };

  const objects: (RenderedObject & {
    chain: ChainStep[];
    doc?: ManifestResource;
    generator?: GeneratorRef;
    names: Set<string>[];
  })[] = [];
  const notes: string[] = [];
  input.rendered.forEach((r, i) => {
    const origin = input.origins[i];
    const root = levelAt(input.target.root);
    if (!root) return;
    let chain: ChainStep[] | undefined;
    let originLocation: SourceLocation | undefined;
    let doc: ManifestResource | undefined;
    let origName = r.name ?? '';
    let generator: GeneratorRef | undefined;
    if (origin?.path !== undefined) {
      chain = chainTo(root, (level) => refsOf(level, ['resources', 'bases', 'crds']).includes(origin.path!), levelAt);
      const candidates = docsOf(origin.path).filter((d) => d.kind === r.kind);
      doc =
        candidates.length === 1
          ? candidates[0]
          : candidates.find((d) => d.name !== undefined && (r.name ?? '').includes(d.name));
      if (doc) {
        origName = doc.name ?? origName;
        originLocation = { file: origin.path, range: firstCharacter(doc.range), role: 'resource' };
      } else {
        originLocation = { file: origin.path, range: firstLineOfFile(), role: 'resource' };
      }
    } else if (origin?.configuredIn !== undefined) {
      chain = chainTo(root, (level) => level.file === origin.configuredIn, levelAt);
      const generated = chain?.at(-1) && generatorEntry(chain.at(-1)!.level, r, origin.generator);
      if (generated) {
        origName = generated.name;
        originLocation = { file: origin.configuredIn, range: generated.range, role: 'kustomization' };
        generator = { level: chain!.at(-1)!.level, field: generated.field, index: generated.index };
      }
    }
    if (!chain || !originLocation) {
      notes.push(
        `${r.kind} ${r.name ?? ''}: kustomize did not say which file it comes from; its findings stay on the kustomization`,
      );
      chain = chain ?? [{ level: root }];
      originLocation = originLocation ?? { file: root.file, range: firstLineOfFile(), role: 'kustomization' };
    }
    // The names an object has been known by, level by level (inner first): patches may name any.
    const names: Set<string>[] = [];
    let current = origName;
    const seen = new Set([origName]);
    for (let c = chain.length - 1; c >= 0; c--) {
      const level = chain[c]!.level;
      names[c] = new Set([...seen, r.name ?? '']);
      current = `${str(level.k.namePrefix)}${current}${str(level.k.nameSuffix)}`;
      seen.add(current);
    }
    objects.push({
      index: r.documentIndex,
      origin: originLocation,
      chain,
      ...(doc ? { doc } : {}),
      ...(generator ? { generator } : {}),
      names,
    });
  });

  const byIndex = new Map(objects.map((o) => [o.index, o]));
  const renderedByIndex = new Map(input.rendered.map((r) => [r.documentIndex, r]));

  return {
    target: input.target,
    objects: objects.map(({ index, origin }) => ({ index, origin })),
    locate(index: number, path: FieldPath, options: LocateOptions = {}): SourceLocation[] {
      const best = trace(index, path, options);
      return best ? [best] : [];
    },
    writers(index: number, path: FieldPath, options: LocateOptions = {}): SourceLocation[] {
      const all: SourceLocation[] = [];
      trace(index, path, options, all);
      return all;
    },
  };

  /** The last writer of `path` of object `index`; each writer, in kustomize's order, pushed to `writers`. */
  function trace(
    index: number,
    path: FieldPath,
    options: LocateOptions,
    writers?: SourceLocation[],
  ): SourceLocation | undefined {
    const o = byIndex.get(index);
    const r = renderedByIndex.get(index);
    if (!o || !r) return undefined;
    let best: SourceLocation | undefined;
    if (o.doc) {
      const at = locate(o.doc, path, options);
      if (at)
        best = {
          file: o.origin.file,
          range: at.node.kind === 'scalar' ? at.valueRange : at.keyRange,
          role: 'resource',
        };
    } else if (o.origin.role === 'kustomization') {
      best = (o.generator && generatedKey(o.generator, path)) ?? o.origin;
      // An overlay's generator entry of the same name with `behavior: merge` (or `replace`) writes
      // its keys over the base's: the outermost that sets the key counts.
      if (o.generator) {
        const { field, level: home } = o.generator;
        const name = (home.k[field] as JsonValue[])[o.generator.index];
        for (let c = o.chain.length - 2; c >= 0; c--) {
          const level = o.chain[c]!.level;
          each(level.k[field], (entry, i) => {
            if (
              !isJsonObject(entry) ||
              !isJsonObject(name) ||
              entry.name !== name.name ||
              (entry.behavior !== 'merge' && entry.behavior !== 'replace')
            )
              return;
            best =
              generatedKey({ level, field, index: i }, path) ??
              (entry.behavior === 'replace'
                ? { file: level.file, range: level.yaml.rangeAt([field, i], 'key')!, role: 'kustomization' }
                : best);
          });
        }
      }
    }
    // The object's own writer (its resource file or generator) comes first.
    if (best) writers?.push(best);
    // Name prefixes and suffixes are not writers of .metadata.name: they decorate the name the
    // resource gives, and a finding on the name (exists, already exists) reads best there.
    for (let c = o.chain.length - 1; c >= 0; c--) {
      const step = o.chain[c]!;
      const names = o.names[c]!;
      for (const dir of refsOf(step.level, ['components'])) {
        if (dir === step.via) continue;
        const comp = levelAt(dir);
        if (comp) best = transformers(comp, r, names, path, options, input.files, docsOf, writers) ?? best;
      }
      best = transformers(step.level, r, names, path, options, input.files, docsOf, writers) ?? best;
    }
    return best;
  }
}

/** The levels from the root down to the kustomization `lists` accepts (resources first, then components). */
function chainTo(
  root: Level,
  lists: (level: Level) => boolean,
  levelAt: (dir: string) => Level | undefined,
  depth = 0,
  visited = new Set<string>(),
): ChainStep[] | undefined {
  if (lists(root)) return [{ level: root }];
  if (depth > 64 || visited.has(root.dir)) return undefined;
  visited.add(root.dir);
  for (const dir of refsOf(root, ['resources', 'bases'])) {
    const below = levelAt(dir);
    const rest = below && chainTo(below, lists, levelAt, depth + 1, visited);
    if (rest) return [{ level: root }, ...rest];
  }
  for (const dir of refsOf(root, ['components'])) {
    const below = levelAt(dir);
    const rest = below && chainTo(below, lists, levelAt, depth + 1, visited);
    if (rest) return [{ level: root, via: dir }, ...rest];
  }
  return undefined;
}

function refsOf(level: Level, fields: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of fields) {
    const v = level.k[f];
    if (Array.isArray(v)) for (const item of v) if (typeof item === 'string') out.push(joinPath(level.dir, item));
  }
  return out;
}

/** The last of one kustomization's own transformers that sets `path` of `r`, in kustomize's order (each of them, in that order, pushed to `writers`). */
function transformers(
  level: Level,
  r: ManifestResource,
  names: ReadonlySet<string>,
  path: FieldPath,
  options: LocateOptions,
  files: ReadonlyMap<string, string>,
  docsOf: (file: string) => ManifestResource[],
  writers?: SourceLocation[],
): SourceLocation | undefined {
  // Every writer, in the order kustomize applies them; the last one is the answer.
  const found: SourceLocation[] = [];
  const wrote = (...hits: (SourceLocation | undefined)[]) => {
    for (const hit of hits) if (hit) found.push(hit);
  };
  const k = level.k;
  const at = (segments: (string | number)[], prefer: 'key' | 'value' = 'key'): SourceLocation | undefined => {
    const range = level.yaml.rangeAt(segments, prefer);
    return range ? { file: level.file, range, role: 'kustomization' } : undefined;
  };
  const p = formatPath(path);

  // Strategic-merge patches (the deprecated list of files or inline texts).
  each(k.patchesStrategicMerge, (entry, i) => {
    if (typeof entry !== 'string') return;
    const file = joinPath(level.dir, entry);
    if (files.has(file)) wrote(...smp(docsOf(file), file, r, names, path, options, undefined));
    else wrote(smpInline(entry, r, names, path, options, () => at(['patchesStrategicMerge', i])));
  });
  // `patches`: each a file or an inline text, a strategic-merge patch or JSON 6902 operations.
  each(k.patches, (entry, i) => {
    if (!isJsonObject(entry)) return;
    const target = isJsonObject(entry.target) ? entry.target : undefined;
    if (target && !selects(target, r, names)) return;
    if (typeof entry.path === 'string') {
      const file = joinPath(level.dir, entry.path);
      const text = files.get(file);
      if (text === undefined) return;
      const ops = jsonPatchOps(text);
      if (ops) wrote(target ? json6902(yamlText(text), file, 'patch', [], r, path) : undefined);
      else wrote(...smp(docsOf(file), file, r, names, path, options, target));
    } else if (typeof entry.patch === 'string') {
      const ops = jsonPatchOps(entry.patch);
      if (ops) {
        if (target && ops.some((op) => opSets(op, r, path))) {
          // Inside a `patch: |` block, on the operation's own line; else on the `patch:` key.
          const inside = json6902(yamlText(entry.patch), level.file, 'patch', [], r, path);
          wrote((inside && inBlock(level, ['patches', i, 'patch'], inside)) ?? at(['patches', i, 'patch']));
        }
      } else {
        wrote(
          smpInline(
            entry.patch,
            r,
            names,
            path,
            options,
            () => at(['patches', i, 'patch']),
            target,
            (hit) => inBlock(level, ['patches', i, 'patch'], hit),
          ),
        );
      }
    }
  });
  // `namespace:` writes more than metadata.namespace (kustomize's namespace field specs): the name of
  // a Namespace object the kustomization holds (so `kubectl create -k` finds it already there on this
  // line, not on the placeholder name of the resource file), and the service namespace of an
  // APIService and of a CRD's conversion webhook.
  if (
    typeof k.namespace === 'string' &&
    (p === '.metadata.namespace' || namespaceFieldSpecs.some(([kind, field]) => r.kind === kind && p === field))
  )
    wrote(at(['namespace'], 'value'));
  // Labels: commonLabels everywhere kustomize puts them; `labels` on metadata, and on templates and
  // selectors when asked to.
  const last = path.at(-1);
  const parent = path.length >= 2 ? path[path.length - 2] : undefined;
  if (last?.kind === 'field' && parent?.kind === 'field') {
    const onMetadata = path.length === 3 && p.startsWith('.metadata.labels.');
    const onTemplate = /\.template\.metadata\.labels\./.test(p) && parent.name === 'labels';
    const onSelector = parent.name === 'matchLabels' || (parent.name === 'selector' && path.length === 3);
    if ((parent.name === 'labels' || onSelector) && isJsonObject(k.commonLabels) && last.name in k.commonLabels)
      wrote(at(['commonLabels', last.name]));
    each(k.labels, (entry, i) => {
      if (!isJsonObject(entry) || !isJsonObject(entry.pairs) || !(last.name in entry.pairs)) return;
      if (
        onMetadata ||
        (onTemplate && entry.includeTemplates === true) ||
        (onSelector && entry.includeSelectors === true) ||
        (onTemplate && entry.includeSelectors === true)
      ) {
        wrote(at(['labels', i, 'pairs', last.name]));
      }
    });
    if (parent.name === 'annotations' && isJsonObject(k.commonAnnotations) && last.name in k.commonAnnotations)
      wrote(at(['commonAnnotations', last.name]));
  }
  // JSON 6902 patches (the deprecated field).
  each(k.patchesJson6902, (entry) => {
    if (!isJsonObject(entry) || !isJsonObject(entry.target) || !selects(entry.target, r, names)) return;
    if (typeof entry.path === 'string') {
      const file = joinPath(level.dir, entry.path);
      const text = files.get(file);
      if (text !== undefined) wrote(json6902(yamlText(text), file, 'patch', [], r, path));
    }
  });
  if (p === '.spec.replicas') {
    each(k.replicas, (entry, i) => {
      if (isJsonObject(entry) && typeof entry.name === 'string' && names.has(entry.name))
        wrote(at(['replicas', i, 'count'], 'value'));
    });
  }
  if (last?.kind === 'field' && last.name === 'image') {
    const image = valueAtFieldPath(r.object, path, { unsetKeysMatch: true });
    if (typeof image === 'string') {
      const repo = imageRepo(image);
      each(k.images, (entry, i) => {
        if (!isJsonObject(entry)) return;
        if (entry.name !== repo && entry.newName !== repo) return;
        const key = ['digest', 'newTag', 'newName'].find((f) => f in entry);
        wrote(key ? at(['images', i, key], 'value') : at(['images', i]));
      });
    }
  }
  writers?.push(...found);
  return found.at(-1);
}

/** A strategic-merge patch file: each of its documents that patches `r` and sets `path`, in order (the last wins). */
function smp(
  docs: readonly ManifestResource[],
  file: string,
  r: ManifestResource,
  names: ReadonlySet<string>,
  path: FieldPath,
  options: LocateOptions,
  target: JsonObject | undefined,
): SourceLocation[] {
  const out: SourceLocation[] = [];
  for (const d of docs) {
    if (!target && (d.kind !== r.kind || !names.has(d.name ?? ''))) continue;
    // The identity of the object is not a field the patch sets: kustomize keeps the object's own.
    if (path.length <= 2 && /^\.(apiVersion|kind|metadata\.name|metadata)$/.test(formatPath(path))) continue;
    const at = locate(d, path, options);
    if (at) out.push({ file, range: at.node.kind === 'scalar' ? at.valueRange : at.keyRange, role: 'patch' });
  }
  return out;
}

function smpInline(
  text: string,
  r: ManifestResource,
  names: ReadonlySet<string>,
  path: FieldPath,
  options: LocateOptions,
  where: () => SourceLocation | undefined,
  target?: JsonObject,
  inside?: (hit: SourceLocation) => SourceLocation | undefined,
): SourceLocation | undefined {
  const hit = smp(parseManifestText(text).resources, '', r, names, path, options, target).at(-1);
  if (!hit) return undefined;
  const at = inside?.(hit) ?? where();
  return at && { ...at, role: 'patch' };
}

/**
 * A range found in the text of an inline patch, moved to the kustomization file's own lines: a
 * literal block scalar (`patch: |`) keeps every line of its text, shifted down below the key and
 * right by the block's indentation. Other scalars (folded, quoted) do not: undefined.
 */
function inBlock(level: Level, segments: (string | number)[], hit: SourceLocation): SourceLocation | undefined {
  const block = level.yaml.literalBlockAt(segments);
  if (!block) return undefined;
  const move = (p: { line: number; character: number }) => ({
    line: p.line + block.firstLine,
    character: p.character + block.indent,
  });
  return { file: level.file, range: { start: move(hit.range.start), end: move(hit.range.end) }, role: 'patch' };
}

/** The JSON 6902 operation in a patch file that last sets `path` (or a parent of it): on its value. */
function json6902(
  yaml: YamlText,
  file: string,
  role: 'patch',
  prefix: (string | number)[],
  r: ManifestResource,
  path: FieldPath,
): SourceLocation | undefined {
  const ops = Array.isArray(yaml.json) ? yaml.json : [];
  const pointer = pointerOf(r.object, path);
  if (!pointer) return undefined;
  let best: SourceLocation | undefined;
  ops.forEach((op, i) => {
    if (!isJsonObject(op) || !opSets(op, r, path)) return;
    const opPath = splitPointer(String(op.path));
    const rest = pointer.slice(opPath.length);
    // Inside the operation's value when it writes a whole subtree (an added container).
    const range =
      'value' in op
        ? (yaml.rangeAt([...prefix, i, 'value', ...rest.map((s) => (/^\d+$/.test(s) ? Number(s) : s))], 'value') ??
          yaml.rangeAt([...prefix, i, 'value'], 'key'))
        : yaml.rangeAt([...prefix, i, 'path'], 'value');
    if (range) best = { file, range, role };
  });
  return best;
}

function opSets(op: JsonValue, r: ManifestResource, path: FieldPath): boolean {
  if (!isJsonObject(op) || typeof op.path !== 'string' || !['add', 'replace', 'copy', 'move'].includes(String(op.op)))
    return false;
  const pointer = pointerOf(r.object, path);
  if (!pointer) return false;
  const opPath = splitPointer(op.path);
  if (opPath.length > pointer.length) return false;
  return opPath.every(
    (seg, i) =>
      seg === pointer[i] ||
      (seg === '-' && i === opPath.length - 1 && isLastIndex(r.object, pointer.slice(0, i), pointer[i]!)),
  );
}

function isLastIndex(object: JsonValue, parent: string[], seg: string): boolean {
  const list = valueAtPointer(object, parent);
  return Array.isArray(list) && String(list.length - 1) === seg;
}

export function jsonPatchOps(text: string): JsonValue[] | undefined {
  const v = safeYaml(text);
  return Array.isArray(v) && v.every((op) => isJsonObject(op) && 'op' in op) ? v : undefined;
}

/** A `patches[].target` selector (kind, name as a regular expression, namespace, label selector). */
function selects(target: JsonObject, r: ManifestResource, names: ReadonlySet<string>): boolean {
  if (typeof target.kind === 'string' && target.kind !== r.kind) return false;
  const [group, version] = r.apiVersion.includes('/') ? r.apiVersion.split('/') : ['', r.apiVersion];
  if (typeof target.group === 'string' && target.group !== group) return false;
  if (typeof target.version === 'string' && target.version !== version) return false;
  if (typeof target.name === 'string') {
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${target.name})$`);
    } catch {
      return false;
    }
    if (![...names].some((n) => re.test(n))) return false;
  }
  if (typeof target.namespace === 'string' && r.namespace !== undefined && target.namespace !== r.namespace) {
    try {
      if (!new RegExp(`^(?:${target.namespace})$`).test(r.namespace)) return false;
    } catch {
      return false;
    }
  }
  const metadata = isJsonObject(r.object.metadata) ? r.object.metadata : {};
  if (typeof target.labelSelector === 'string' && !matchesSelectorText(target.labelSelector, metadata.labels))
    return false;
  if (
    typeof target.annotationSelector === 'string' &&
    !matchesSelectorText(target.annotationSelector, metadata.annotations)
  )
    return false;
  return true;
}

/** The generator entry (`configMapGenerator[i]`) that made `r`: by its name and the object's kind. */
function generatorEntry(
  level: Level,
  r: ManifestResource,
  generator: string | undefined,
): { name: string; range: Range; field: string; index: number } | undefined {
  const field = generator === 'SecretGenerator' || r.kind === 'Secret' ? 'secretGenerator' : 'configMapGenerator';
  const list = level.k[field];
  if (!Array.isArray(list)) return undefined;
  const prefix = str(level.k.namePrefix);
  const suffix = str(level.k.nameSuffix);
  let found: { name: string; range: Range; field: string; index: number } | undefined;
  list.forEach((g, i) => {
    if (found || !isJsonObject(g) || typeof g.name !== 'string') return;
    const rendered = r.name ?? '';
    // Generated names carry a hash suffix (unless disabled) after the kustomization's own suffix.
    const base = `${prefix}${g.name}${suffix}`;
    if (
      rendered === g.name ||
      rendered.includes(base) ||
      rendered.startsWith(`${g.name}-`) ||
      rendered.includes(g.name)
    ) {
      const range = level.yaml.rangeAt([field, i], 'key');
      if (range) found = { name: g.name, range, field, index: i };
    }
  });
  return found;
}

interface GeneratorRef {
  readonly level: Level;
  /** `configMapGenerator` or `secretGenerator`. */
  readonly field: string;
  readonly index: number;
}

/**
 * The entry of a generator that writes key `.data.KEY` (or `.binaryData.KEY`, `.stringData.KEY`):
 * the literal `KEY=value`, or the file `KEY=path` / `path` named KEY. A key from an env file stays
 * on the generator's entry: the file is not read here.
 */
function generatedKey(g: GeneratorRef, path: FieldPath): SourceLocation | undefined {
  if (
    path.length !== 2 ||
    path[0]!.kind !== 'field' ||
    path[1]!.kind !== 'field' ||
    !['data', 'binaryData', 'stringData'].includes(path[0]!.name)
  )
    return undefined;
  const key = path[1]!.name;
  const entry = (g.level.k[g.field] as JsonValue[] | undefined)?.[g.index];
  if (!isJsonObject(entry)) return undefined;
  const at = (list: string, i: number): SourceLocation | undefined => {
    const range = g.level.yaml.rangeAt([g.field, g.index, list, i], 'value');
    return range ? { file: g.level.file, range, role: 'kustomization' } : undefined;
  };
  let found: SourceLocation | undefined;
  each(entry.literals, (item, i) => {
    if (typeof item === 'string' && item.slice(0, item.indexOf('=')).trim() === key) found = at('literals', i) ?? found;
  });
  each(entry.files, (item, i) => {
    if (typeof item !== 'string') return;
    const eq = item.indexOf('=');
    if ((eq >= 0 ? item.slice(0, eq).trim() : basename(item)) === key) found = at('files', i) ?? found;
  });
  return found;
}

function pointerOf(object: JsonValue, path: FieldPath): string[] | undefined {
  const out: string[] = [];
  let v: JsonValue | undefined = object;
  for (const el of path) {
    if (el.kind === 'field') {
      out.push(el.name);
      v = isJsonObject(v) ? v[el.name] : undefined;
      continue;
    }
    if (!Array.isArray(v)) return undefined;
    const list: JsonValue[] = v;
    const i = listItemIndex(list, el, { unsetKeysMatch: true });
    if (i < 0) return undefined;
    out.push(String(i));
    v = list[i];
  }
  return out;
}

function splitPointer(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAtPointer(object: JsonValue, segs: string[]): JsonValue | undefined {
  let v: JsonValue | undefined = object;
  for (const s of segs) {
    if (Array.isArray(v)) v = v[Number(s)];
    else if (isJsonObject(v)) v = v[s];
    else return undefined;
  }
  return v;
}

/** `nginx:1.25`, `registry:5000/app@sha256:…` → the name without tag or digest. */
function imageRepo(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

function each(v: JsonValue | undefined, fn: (item: JsonValue, i: number) => void): void {
  if (Array.isArray(v)) v.forEach(fn);
}

function str(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : '';
}

function firstLineOfFile(): Range {
  return { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
}

function safeYaml(text: string): JsonValue | undefined {
  try {
    const docs = parseAllDocuments(text);
    if (!Array.isArray(docs) || docs.length === 0 || docs[0]!.errors.length > 0) return undefined;
    return docs[0]!.toJS() as JsonValue;
  } catch {
    return undefined;
  }
}

// --- ranges in YAML that is not a Kubernetes object (kustomization files, JSON 6902 patches) ---

export interface YamlText {
  readonly json: JsonValue | undefined;
  /** The key (or list item) at `segments`, or its value; undefined when not written. */
  rangeAt(segments: readonly (string | number)[], prefer: 'key' | 'value'): Range | undefined;
  /** For a literal block scalar (`|`, `|-`) at `segments`: the line its text starts on, and its indentation. */
  literalBlockAt(segments: readonly (string | number)[]): { firstLine: number; indent: number } | undefined;
}

export function yamlText(text: string): YamlText {
  const lineCounter = new LineCounter();
  let doc: Document | undefined;
  try {
    doc = parseDocument(text, { lineCounter, uniqueKeys: false });
  } catch {
    doc = undefined;
  }
  const toRange = (start: number, end: number): Range => {
    const a = lineCounter.linePos(start);
    const b = lineCounter.linePos(end);
    return { start: { line: a.line - 1, character: a.col - 1 }, end: { line: b.line - 1, character: b.col - 1 } };
  };
  let json: JsonValue | undefined;
  try {
    json = doc && doc.errors.length === 0 ? (doc.toJS() as JsonValue) : undefined;
  } catch {
    json = undefined;
  }
  const lines = text.split(/\r?\n/);
  const nodeAt = (segments: readonly (string | number)[]): Node | null | undefined => {
    let node = doc?.contents as Node | null | undefined;
    for (const seg of segments) {
      if (isMap(node))
        node = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg))?.value as
          Node | null | undefined;
      else if (isSeq(node) && typeof seg === 'number') node = node.items[seg] as Node | undefined;
      else return undefined;
    }
    return node;
  };
  return {
    json,
    literalBlockAt(segments) {
      const node = nodeAt(segments);
      if (!isScalar(node) || node.type !== 'BLOCK_LITERAL' || !node.range) return undefined;
      // The text starts on the line after the header (`|-`), indented as its first non-empty line.
      const header = lineCounter.linePos(node.range[0]).line - 1;
      const firstLine = header + 1;
      const first = lines.slice(firstLine).find((l) => l.trim() !== '');
      if (first === undefined) return undefined;
      return { firstLine, indent: first.length - first.trimStart().length };
    },
    rangeAt(segments, prefer) {
      let node = doc?.contents as Node | null | undefined;
      let keyRange: [number, number] | undefined;
      for (const seg of segments) {
        if (isMap(node)) {
          const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
          if (!pair) return undefined;
          const key = pair.key as Node;
          keyRange = key.range ? [key.range[0], key.range[1]] : undefined;
          node = pair.value as Node | null;
        } else if (isSeq(node) && typeof seg === 'number') {
          const item = node.items[seg] as Node | undefined;
          if (!item) return undefined;
          keyRange = item.range ? [item.range[0], item.range[0] + 1] : undefined;
          node = item;
        } else return undefined;
      }
      // A map or list as the value reads best on its key: its first item is only one of many.
      if (prefer === 'value' && node?.range && !(keyRange && (isMap(node) || isSeq(node))))
        return toRange(node.range[0], node.range[1]);
      return keyRange ? toRange(keyRange[0], keyRange[1]) : undefined;
    },
  };
}

/** The folder name a user calls a kustomization by (`production` for `…/overlays/production`). */
export function kustomizationLabel(root: string): string {
  return basename(root) || dirname(root);
}

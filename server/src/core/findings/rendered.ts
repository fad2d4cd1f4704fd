// The judgement on a rendered object, one home for the command line and the editor: the object as it
// would be sent (Helm adds its release's ownership metadata), the analysis in the way it would be
// sent (an overlay as the user applies; a chart as the user's Helm does), Helm's own ownership
// check, and every finding moved to the source line that sets its field. Pure: the caller renders
// and brings the facts (the command line waits for them, the editor peeks at its caches).
import { analyzeResource } from './analysis';
import type { AnalysisSettings, ResourceFacts } from './facts';
import { objectIdentity, type Finding } from './finding';
import { locateOptions } from './locate';
import { helmAppliedObject, releaseOwnershipFinding } from './helm-release';
import { lineHover, type WrittenField } from './hover-text';
import { isOwnManager } from './ownership-hints';
import { decodeOwnership, ownersIn, serverPath } from './ownership';
import { findingPath, relocateFindings, type RelocatedFinding } from './relocate';
import type { JsonValue } from '../json';
import { removeFieldEdits, setFieldEdits, type TextEdit } from '../manifest/edits';
import {
  forEachNode,
  locate,
  parseManifestText,
  type LocateOptions,
  type ManifestResource,
} from '../manifest/manifest';
import { joinPath, kustomizationRefs } from '../sources/file-kinds';
import { removeTemplateLineEdits } from '../sources/helm-map';
import { addPatchEntryEdits, ownStrategicPatches, strategicPatchText } from '../sources/overlay-patch';
import type { SourceLocation, SourceMap } from '../sources/source-map';
import { formatElement, formatPath, type FieldPath } from '../ssa/path';

/** How a target's objects are sent. */
export interface RenderedApply {
  /** The user's settings for an overlay; `helm` and Helm's mode for a chart. */
  readonly settings: AnalysisSettings;
  /** For a chart: the release the objects belong to, and which Helm sends them. */
  readonly helm?: { readonly release: string; readonly namespace: string; readonly major: 3 | 4 };
}

/**
 * How Helm `major` sends a release's objects (docs/helm.md): as the field manager `helm`; Helm 4 a
 * server-side apply, Helm 3 a create, then client-side updates. The one place that says it.
 */
export function helmSends(major: 3 | 4): {
  readonly fieldManager: 'helm';
  readonly applyMode: 'serverSide' | 'clientSide';
} {
  return { fieldManager: 'helm', applyMode: major === 4 ? 'serverSide' : 'clientSide' };
}

/** The analysis settings for a chart rendered by Helm `major`: the field manager `helm`, in Helm's mode. */
export function helmApply(
  helm: { release: string; namespace: string; major: 3 | 4 },
  severity?: AnalysisSettings['severity'],
): RenderedApply {
  return { settings: { ...helmSends(helm.major), ...(severity ? { severity } : {}) }, helm };
}

/** What would be sent for a rendered object: for a chart, in the release's namespace with Helm's ownership metadata. */
export function sentResource(rendered: ManifestResource, apply: RenderedApply): ManifestResource {
  if (!apply.helm) return rendered;
  return {
    ...rendered,
    namespace: rendered.namespace ?? apply.helm.namespace,
    object: helmAppliedObject(rendered.object, apply.helm.release, apply.helm.namespace),
  };
}

/**
 * The findings of one sent object (`resource`, from sentResource; document `resource.documentIndex`
 * of the rendered stream), each on the source lines that set its field.
 */
export function renderedObjectFindings(
  resource: ManifestResource,
  facts: ResourceFacts,
  apply: RenderedApply,
  map: SourceMap,
): RelocatedFinding[] {
  return relocateFindings(
    renderedObjectAnalysis(resource, facts, apply),
    resource,
    resource.documentIndex,
    map,
    locateOptions(resource, facts.schema),
  );
}

/**
 * The findings of one sent object on the rendered object itself, before they move to the sources:
 * what a dry run of the object is compared with.
 */
export function renderedObjectAnalysis(
  resource: ManifestResource,
  facts: ResourceFacts,
  apply: RenderedApply,
): Finding[] {
  const found = analyzeResource(resource, facts, apply.settings);
  if (apply.helm) {
    const { release, namespace, major } = apply.helm;
    // The analysis speaks of kubectl; here the request is Helm's.
    for (const [i, f] of found.entries()) {
      found[i] = {
        ...f,
        message: f.message.replace(
          'kubectl apply --server-side would fail',
          `helm install and upgrade would fail (Helm ${major} applies server-side)`,
        ),
      };
    }
    const live = facts.live.state === 'exists' ? facts.live.object : undefined;
    const nameRange =
      locate(resource, [
        { kind: 'field', name: 'metadata' },
        { kind: 'field', name: 'name' },
      ])?.valueRange ?? resource.range;
    const owned = releaseOwnershipFinding(live, release, namespace, objectIdentity(resource), nameRange);
    if (owned) found.push(owned);
  }
  return found;
}

/**
 * The hover on line `line` of source file `file` for one sent object (lineHover): the object's
 * fields written there, led by those the line's findings are about — the same findings the
 * diagnostics show, so a hover on an `include` of labels speaks first of the label in conflict —
 * else by those another manager owns, as the line's ownership hint names them. Undefined when the
 * object writes nothing on that line; `diagnosed` says whether a finding is there.
 */
export function renderedLineHover(
  resource: ManifestResource,
  facts: ResourceFacts,
  apply: RenderedApply,
  map: SourceMap,
  file: string,
  line: number,
  now: number,
): { readonly text: string; readonly diagnosed: boolean } | undefined {
  const options = locateOptions(resource, facts.schema);
  const fields: WrittenField[] = [];
  forEachNode(resource, (visit) => {
    const path = serverPath(resource, visit.path, facts.schema);
    if (map.locate(resource.documentIndex, path, options).some((l) => l.file === file && l.range.start.line === line))
      fields.push({ path, node: visit.node });
  });
  if (fields.length === 0) return undefined;
  const diagnosed = new Set<number>();
  for (const f of renderedObjectFindings(resource, facts, apply, map)) {
    if (f.source.file !== file || f.source.range.start.line !== line) continue;
    const about = findingPath(f, resource.object);
    // The deepest field written here that holds the finding's field (a finding moved up to a parent lands on the parent's line).
    let best: number | undefined;
    for (const [i, w] of fields.entries())
      if (about && isPrefix(w.path, about) && (best === undefined || w.path.length > fields[best]!.path.length))
        best = i;
    if (best !== undefined) diagnosed.add(best);
  }
  if (diagnosed.size > 0)
    return { text: lineHover(resource, facts, fields, { fields: diagnosed, diagnosed: true }, now), diagnosed: true };
  const contested = new Set<number>();
  if (facts.live.state === 'exists') {
    const ownership = decodeOwnership(facts.live.object);
    for (const [i, w] of fields.entries())
      if (ownersIn(ownership, w.path).some((o) => o.exact && !isOwnManager(o, apply.settings))) contested.add(i);
  }
  return { text: lineHover(resource, facts, fields, { fields: contested, diagnosed: false }, now), diagnosed: false };
}

function isPrefix(prefix: FieldPath, path: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((e, i) => formatElement(e) === formatElement(path[i]!));
}

/** `overlay production`; the folder as `shown` says it when two overlays share a name. */
export function overlayLabels(
  roots: readonly string[],
  name: (root: string) => string,
  shown: (root: string) => string,
): Map<string, string> {
  const names = roots.map(name);
  return new Map(
    roots.map((r, i) => [r, `overlay ${names.filter((n) => n === names[i]).length > 1 ? shown(r) : names[i]}`]),
  );
}

/** The edits of one source file. */
export interface SourceFileEdits {
  readonly file: string;
  readonly edits: readonly TextEdit[];
}

/**
 * Taking a field out of what a target sends: every source file that writes it, edited (in the
 * order the tool applies them, the object's own file first), or why that cannot be done — then
 * nothing is edited, since removing the field from some writers only hands it to the next one.
 */
export type SourceRemoval =
  { readonly files: readonly SourceFileEdits[] } | { readonly files?: undefined; readonly reason: string };

/**
 * Removes `path` from rendered object `resource` (document `resource.documentIndex` of `map`'s
 * render) by editing each source that writes it (SourceMap.writers): its key in a resource file and
 * in each strategic-merge patch file (with the maps it leaves empty), a template line that writes a
 * value of its own (`replicas: 3`, `replicas: {{ .Values.replicaCount }}`; a values file is not
 * edited: it only gives the line its value). Refused, whole, when a writer cannot be edited safely:
 * a kustomization entry (`replicas:`, `images:`, labels), a JSON 6902 or inline patch, a template
 * line that does more than write the value, or a file `textOf` does not give (outside the
 * workspace, unreadable). `textOf` gives a source file's current text (the editor's, else the disk's).
 */
export function removalFromSources(
  map: SourceMap,
  resource: ManifestResource,
  path: FieldPath,
  options: LocateOptions,
  textOf: (file: string) => string | undefined,
): SourceRemoval {
  const shown = formatPath(path);
  const writers = map.writers(resource.documentIndex, path, options);
  if (writers.length === 0) return { reason: `no source line writes ${shown} itself` };
  const byFile = new Map<string, SourceLocation[]>();
  for (const w of writers) byFile.set(w.file, [...(byFile.get(w.file) ?? []), w]);
  const out: SourceFileEdits[] = [];
  for (const [file, places] of byFile) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const text = textOf(file);
    if (text === undefined)
      return {
        reason: `${name} also sets ${shown}, and it cannot be edited here (outside the workspace, or unreadable)`,
      };
    const edits: TextEdit[] = [];
    if (places.some((p) => p.role === 'kustomization'))
      return { reason: `an entry of ${name} also sets ${shown}: remove it there by hand` };
    if (places.some((p) => p.role === 'template')) {
      // One line per key: a template writes the key once where it renders this object.
      const last = path.at(-1);
      for (const line of new Set(places.map((p) => p.range.start.line))) {
        const removal = removeTemplateLineEdits(text, line, last?.kind === 'field' ? last.name : undefined);
        if (!removal.edits) return { reason: `${name} line ${line + 1}: ${removal.reason}` };
        edits.push(...removal.edits);
      }
    } else {
      // A resource file or a strategic-merge patch: the documents (of this object's kind) that hold the lines.
      const docs = parseManifestText(text).resources;
      const holding = new Set<ManifestResource>();
      for (const p of places) {
        const doc = docs.find(
          (d) =>
            d.kind === resource.kind &&
            d.range.start.line <= p.range.start.line &&
            p.range.start.line <= d.range.end.line,
        );
        if (!doc)
          return {
            reason: `${name} also sets ${shown} in a way no edit here can undo (a JSON 6902 or inline patch): remove it there by hand`,
          };
        holding.add(doc);
      }
      for (const doc of holding) {
        const removal = removeFieldEdits(text, doc, path, options);
        if (!removal.edits) return { reason: `${name}: ${removal.reason}` };
        edits.push(...removal.edits);
      }
    }
    out.push({
      file,
      edits: edits.sort(
        (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
      ),
    });
  }
  return { files: out };
}

/** A change local to one overlay: the files it edits, and the patch file it creates (then also listed in the overlay's kustomization). */
export type LocalChange =
  | { readonly files: readonly SourceFileEdits[]; readonly created?: { readonly file: string; readonly text: string } }
  | { readonly files?: undefined; readonly reason: string };

/**
 * Setting the field at `path` of rendered object `resource` to `value` (null: taking it out of what
 * is sent) in the overlay `map` renders alone, by a strategic-merge patch in the overlay's folder:
 * the overlay's own patch of the object when it has one (its kustomization's `patches:`), else a new
 * patch file beside `kustomization` and its `patches:` entry. Every other overlay renders as before.
 * `lastWriter` is the file the finding sits on, the last to write the field.
 *
 * Sound because the change goes after the field's last writer (where the finding sits): a writer
 * outside the overlay's own kustomization comes before all of its patches, and a strategic-merge
 * patch of the overlay's own that writes it is changed itself; any other writer the overlay names
 * (a JSON 6902 patch, a patch with a target) is refused. Offered only for a path of map keys and a scalar or null, what a
 * strategic-merge patch sets exactly (kustomize merges a map or a list into what is there, and a
 * list item is matched by merge keys only kustomize's own schema knows). `textOf` gives a file's
 * text (undefined: not there or not readable), `exists` whether a path is taken.
 */
export function overlayLocalChange(
  map: SourceMap,
  resource: ManifestResource,
  path: FieldPath,
  value: JsonValue,
  lastWriter: string,
  kustomization: string,
  textOf: (file: string) => string | undefined,
  exists: (file: string) => boolean,
): LocalChange {
  const shown = formatPath(path);
  if (map.target.kind !== 'kustomize') return { reason: 'only a Kustomize overlay takes a patch of its own' };
  const keys = path.map((e) => (e.kind === 'field' ? e.name : undefined));
  if (keys.length === 0 || keys.some((k) => k === undefined))
    return {
      reason: `${shown} is an item of a list: a patch of the overlay would merge the list by keys only kustomize knows`,
    };
  if (value !== null && typeof value === 'object')
    return {
      reason: `the value of ${shown} is a map or a list, which a strategic-merge patch merges rather than sets`,
    };
  const origin = map.objects.find((o) => o.index === resource.documentIndex)?.origin;
  const originText = origin?.role === 'resource' ? textOf(origin.file) : undefined;
  const doc =
    origin && originText !== undefined
      ? parseManifestText(originText).resources.find(
          (d) =>
            d.kind === resource.kind &&
            d.range.start.line <= origin.range.start.line &&
            origin.range.start.line <= d.range.end.line,
        )
      : undefined;
  if (!doc?.name)
    return {
      reason: `the ${resource.kind} does not come from a resource file that names it, so a patch cannot name it`,
    };
  const root = map.target.root;
  const kustomizationText = textOf(kustomization);
  if (kustomizationText === undefined)
    return { reason: `${kustomization.slice(kustomization.lastIndexOf('/') + 1)} cannot be read` };
  const own = ownStrategicPatches(kustomizationText)
    .map((ref) => joinPath(root, ref))
    .filter((f) => f.startsWith(`${root}/`));
  // The overlay names the field's last writer itself: a patch added here might come before it and
  // lose. Only when that writer is a strategic-merge patch of the overlay's own is the change made,
  // in it: nothing of the overlay writes the field after it.
  const namedByOverlay = kustomizationRefs(kustomizationText).some((r) => joinPath(root, r.path) === lastWriter);
  if (namedByOverlay && !own.includes(lastWriter))
    return {
      reason: `${shown} is set by a file the overlay's kustomization names itself (a JSON 6902 patch, a patch with a target): edit it there`,
    };
  // The overlay's own patch of the object, if it has one.
  for (const file of namedByOverlay ? [lastWriter] : own) {
    const text = textOf(file);
    const patch =
      text === undefined
        ? undefined
        : parseManifestText(text).resources.find(
            (d) =>
              d.kind === doc.kind &&
              d.name === doc.name &&
              d.apiVersion === doc.apiVersion &&
              (d.namespace ?? doc.namespace) === (doc.namespace ?? d.namespace),
          );
    if (text === undefined || !patch) continue;
    const edit = setFieldEdits(text, patch, path, value);
    if (edit.edits) return { files: [{ file, edits: edit.edits }] };
    if (namedByOverlay) return { reason: edit.reason };
  }
  if (namedByOverlay)
    return {
      reason: `${lastWriter.slice(lastWriter.lastIndexOf('/') + 1)} sets ${shown} in a way no edit here can change: edit it there`,
    };
  const text = strategicPatchText(
    {
      apiVersion: doc.apiVersion,
      kind: doc.kind,
      name: doc.name,
      ...(doc.namespace !== undefined ? { namespace: doc.namespace } : {}),
    },
    keys as string[],
    value,
  );
  if (text === undefined) return { reason: `${shown} cannot be written as a patch` };
  const stem = `${doc.kind}-${doc.name}-patch`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
  const name = [`${stem}.yaml`, ...Array.from({ length: 8 }, (_, i) => `${stem}-${i + 2}.yaml`)].find(
    (n) => !exists(`${root}/${n}`),
  );
  if (!name)
    return { reason: `every name tried for the patch file is taken in ${root.slice(root.lastIndexOf('/') + 1)}` };
  const entry = addPatchEntryEdits(kustomizationText, name);
  if (!entry.edits) return { reason: entry.reason };
  return { files: [{ file: kustomization, edits: entry.edits }], created: { file: `${root}/${name}`, text } };
}

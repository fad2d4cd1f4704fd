// Findings on a rendered object, moved to the source lines that set the fields: the prediction runs
// on what would be sent (the rendered stream), the user reads and fixes the source (a patch, a
// resource file, a kustomization entry, a template, a values file). Pure: the source map says where.
import { isJsonObject, type JsonValue } from '../json';
import type { LocateOptions, ManifestResource, Range } from '../manifest/manifest';
import type { RenderTarget, SourceLocation, SourceMap } from '../sources/source-map';
import { field, parsePath, valueAtFieldPath, type FieldPath } from '../ssa/path';
import type { Finding } from './finding';

/** A finding as the user reads it on a source file, with the rendered object it was found on. */
export interface RelocatedFinding extends Finding {
  /** Where it now lands: `range` (the finding's own) is the range in `source.file`. */
  readonly source: SourceLocation;
  /** The rendered object the prediction ran on, and the finding's range in the rendered text. */
  readonly rendered: { readonly target: RenderTarget; readonly index: number; readonly range: Range };
}

/**
 * Each finding of rendered object `resource` (document `index` of the rendered stream) on the source
 * lines that set its field: the most specific writer the map names (one finding per location it
 * gives), else the nearest parent of the field that a source sets, else the object's origin. The
 * message names the target (`in overlay production`), since one source file may be rendered by
 * several targets that are judged separately.
 */
export function relocateFindings(
  findings: readonly Finding[],
  resource: ManifestResource,
  index: number,
  map: SourceMap,
  options: LocateOptions = {},
): RelocatedFinding[] {
  const origin = map.objects.find((o) => o.index === index)?.origin;
  const out: RelocatedFinding[] = [];
  for (const f of findings) {
    const path = findingPath(f, resource.object);
    let locations: SourceLocation[] = [];
    if (path) {
      for (let n = path.length; n > 0 && locations.length === 0; n--)
        locations = map.locate(index, path.slice(0, n), options);
    }
    if (locations.length === 0 && origin) locations = [origin];
    const rendered = { target: map.target, index, range: f.range };
    const message = `${f.message} (in ${map.target.label})`;
    for (const source of locations) out.push({ ...f, message, range: source.range, source, rendered });
  }
  return out;
}

/** The field a finding is about, in the rendered object; a finding on the object itself is about its name. */
export function findingPath(f: Finding, object: JsonValue): FieldPath | undefined {
  if (f.path !== undefined) {
    // Field names with dots (`app.kubernetes.io/name`) are resolved against the object's own keys.
    return parsePath(f.path, (parent) => {
      const at = valueAtFieldPath(object, parent);
      return isJsonObject(at) ? Object.keys(at) : undefined;
    });
  }
  switch (f.code) {
    case 'kind-not-served':
    case 'kind-from-new-crd':
      return [field('kind')];
    case 'already-exists':
    case 'exists':
    case 'controlled-by':
    case 'generate-name-apply':
    // Only without a path: the namespace came from the default, not from any source line.
    case 'namespace-not-found':
    case 'namespace-from-files':
      return [field('metadata'), field('name')];
    default:
      return undefined;
  }
}

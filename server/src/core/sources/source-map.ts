// Rendered sources: what a Helm chart or a Kustomize overlay would send is not the text the user edits.
// The prediction runs on the rendered objects (parsed like any manifest); a source map then says,
// for each rendered object and each of its fields, which lines of which source files set it, so
// every finding, hover and quick fix lands where the user can change it.
//
// Plain data only: the renderers (server/src/render/) fill it from the tools' output and the source
// files they read; the findings layer moves findings along it. Paths are absolute, `/`-separated.
import type { FieldPath } from '../ssa/path';
import type { LocateOptions, Range } from '../manifest/manifest';

/** How a source line takes part in the rendering. */
export type SourceRole =
  /** A resource file of a kustomization (the object as written before the transformers). */
  | 'resource'
  /** A strategic-merge or JSON 6902 patch (later patches win; the last that sets a path counts). */
  | 'patch'
  /** An entry of kustomization.yaml itself: `replicas:`, `images:`, `namespace:`, `labels:`, generators. */
  | 'kustomization'
  /** A line of a Helm template. */
  | 'template'
  /** A line of a values file that a template line takes its value from. */
  | 'values';

export interface SourceLocation {
  /** Absolute path of the source file. */
  readonly file: string;
  /** The key (or list item) in that file that sets the field; for a whole object, its first line. */
  readonly range: Range;
  readonly role: SourceRole;
}

/** Who the rendered objects belong to, as the user calls it: an overlay, a release. */
export interface RenderTarget {
  readonly kind: 'kustomize' | 'helm';
  /** Absolute path of the kustomization folder or the chart folder. */
  readonly root: string;
  /** Named in messages: `overlay production`, `release web`. */
  readonly label: string;
}

export interface RenderedObject {
  /** Index of the object's document in the rendered stream. */
  readonly index: number;
  /** Where the object as a whole comes from (its resource file or its template). */
  readonly origin: SourceLocation;
}

export interface SourceMap {
  readonly target: RenderTarget;
  readonly objects: readonly RenderedObject[];
  /**
   * The source lines that set `path` of rendered object `index`, the most specific first (a patch
   * before the resource it patches; a template line before the values line it reads). Empty when no
   * source line can be named: the caller then tries the path's parents, and last the object's origin.
   * `options` (optional) lets a list item match on key fields the source leaves to their default (a
   * port's protocol), as the rendered object's schema says.
   */
  locate(index: number, path: FieldPath, options?: LocateOptions): SourceLocation[];
  /**
   * Every source line that writes `path` itself into rendered object `index`, in the order the tool
   * applies them (a resource file, then each patch or kustomization entry that sets it again; a
   * template line). A values line is not among them: it gives a template line its value, and only
   * the template line puts the key in the object. Removing the field from what is sent means editing
   * every one of them; `locate` names only the one that wins.
   */
  writers(index: number, path: FieldPath, options?: LocateOptions): SourceLocation[];
}

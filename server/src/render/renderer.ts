// The renderer contract: what the editor and the command line ask of any way of rendering (kustomize
// build, helm template), and what they get back. A render gives the exact text the user's tool
// prints — the stream that would be applied, predicted on by the same code as a plain manifest — and
// a source map that moves each finding back to the line of the source file that sets the field.
//
// Plain data: a problem (the tool is missing, it refused the input, it took too long) is an answer,
// never an exception. Whether a tool may run at all (a trusted workspace, a binary the user chose) is
// decided by the caller before it asks.
import type { RenderTarget, SourceMap } from '../core/sources/source-map';
import type { ToolProblem } from './run-tool';

/** Which binaries to run and how. Machine- or user-level choices only: never a workspace's. */
export interface RenderSettings {
  /** The `kustomize` binary; when empty, `kustomize` on PATH, then `kubectl kustomize`. */
  readonly kustomize?: string;
  /** The `kubectl` binary for `kubectl kustomize` (default `kubectl` on PATH). */
  readonly kubectl?: string;
  /** The `helm` binary (default `helm` on PATH). */
  readonly helm?: string;
  readonly timeoutMs?: number;
  /** The environment the tool runs in (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The folder being checked (the editor's workspace folder, the command line's search root): a
   * tool is never taken from it by its name, and an overlay reads nothing outside it.
   */
  readonly workspace?: string;
}

export type RenderProblem =
  | ToolProblem
  /** The target is not something this renderer can render (no kustomization in the folder, no Chart.yaml). */
  | { readonly kind: 'invalid-target'; readonly command: string; readonly message: string }
  /** The target would make the tool read outside it (a link out of the chart, a file outside the overlay): not rendered. */
  | { readonly kind: 'refused'; readonly command: string; readonly message: string };

export type RenderResult =
  | {
      readonly ok: true;
      /** The rendered stream, exactly as the tool printed it: what would be applied. */
      readonly text: string;
      /** Rendered object `index` (its document in `text`) → its source lines. */
      readonly sourceMap: SourceMap;
      /** Things the user should know that are not findings (e.g. objects whose source is unknown). */
      readonly notes: readonly string[];
      /** The command that rendered, as the user would type it: `kustomize build overlays/prod`. */
      readonly command: string;
    }
  | { readonly ok: false; readonly problem: RenderProblem };

export interface Renderer {
  render(target: RenderTarget, settings: RenderSettings): Promise<RenderResult>;
}

/** One line for a problem, as the command line prints it and the editor's status bar shows it. */
export function describeRenderProblem(target: RenderTarget, problem: RenderProblem): string {
  const first = problem.message.split('\n')[0]!.trim();
  switch (problem.kind) {
    case 'not-installed':
      return `cannot render ${target.label}: ${first} (install it, or name the binary in the settings)`;
    case 'failed':
      return `cannot render ${target.label}: ${problem.message.replace(/\s*\n\s*/g, ' ').trim()}`;
    default:
      return `cannot render ${target.label}: ${first}`;
  }
}

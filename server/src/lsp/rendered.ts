// Rendered sources in the editor: for an open file that overlays use (a base, a patch, a
// kustomization) the overlays are built with the user's kustomize, each judged on its own; for a
// chart's file (a template, a values file) the chart is rendered with the user's helm, as the
// release the settings name. The rendered objects are predicted on by the command line's own code
// (core/findings/rendered.ts) and each finding shown where it lands on this file; hovers and quick
// fixes on those lines work from the rendered object too.
//
// A render runs a program, so: only in a trusted workspace, only with binaries from the user's own
// settings (helmPath, kustomizePath: machine scope, never a workspace's), only for targets inside
// the workspace folders. It never runs on a keystroke: once when a file of a target is first asked
// about, then after a save of one of its files (debounced). It never blocks: the previous answer
// stays until the new one arrives, and the facts are peeked from the session's caches on each pull,
// so a change on the cluster shows without rendering again. Without the tool: one information
// message, never a diagnostic.
import * as path from 'node:path';
import { CodeActionKind, MessageType, ShowMessageNotification, type CodeAction, type CodeActionParams, type Connection, type Hover, type Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { locateOptions, showValue, type Finding } from '../core/findings/analysis';
import { fieldHover } from '../core/findings/hover-text';
import { serverPath } from '../core/findings/ownership';
import { definedKinds, withDefinedKinds } from '../core/findings/kind-served';
import { helmApply, overlayLabels, renderedObjectFindings, sentResource, type RenderedApply } from '../core/findings/rendered';
import type { RelocatedFinding } from '../core/findings/relocate';
import { removeFieldEdits, replaceValueEdits, type EditResult } from '../core/manifest/edits';
import { replacePlainYamlValueEdits } from '../core/manifest/edits-yaml';
import { forEachNode, parseManifestText, type ManifestResource } from '../core/manifest/manifest';
import { kustomizationLabel } from '../core/sources/kustomize-map';
import type { RenderTarget, SourceMap } from '../core/sources/source-map';
import { describeManager } from '../core/ssa/messages';
import type { Settings } from '../protocol';
import { helmTarget, renderHelm } from '../render/helm';
import { readKustomizationFiles, renderKustomization } from '../render/kustomize';
import { describeRenderProblem, type RenderSettings } from '../render/renderer';
import { findingOf } from './diagnostics';
import type { DocumentSource } from './handlers/diagnostics';
import type { RefreshScheduler } from './refresh';
import type { Session } from './session';
import { filePath, type ClassifiedFile } from './source-files';
import { isRenderedSource, type Workspace } from './workspace';
import { isRegularFile } from '../render/paths';

/** Saves that come together (save all, a formatter) make one render. */
const RENDER_DEBOUNCE_MS = 300;

interface Rendered {
  /** The objects as they would be sent, by their index in the rendered stream. */
  readonly resources: readonly ManifestResource[];
  readonly sourceMap: SourceMap;
  /** For a chart: which Helm sends it, as which release. */
  readonly helm?: { readonly release: string; readonly namespace: string; readonly major: 3 | 4 };
  /** Whether a save of this file asks for a new render. */
  readonly covers: (file: string) => boolean;
}

type Outcome = { ok: true; rendered: Rendered } | { ok: false; message: string; notInstalled?: string };

interface TargetSpec {
  readonly key: string;
  readonly target: RenderTarget;
  readonly run: () => Promise<Outcome>;
  /** Before the first render: which saved files concern it. */
  readonly covers: (file: string) => boolean;
}

interface Rendering {
  spec: TargetSpec;
  result?: Rendered;
  running?: Promise<void>;
  /** A save arrived while rendering: render again when done. */
  again: boolean;
  timer?: NodeJS.Timeout;
  /** The failure already told to the user (told once, until a render succeeds). */
  told?: string;
}

interface FileContext {
  readonly path: string;
  readonly session: Session;
  readonly settings: Settings;
  readonly renderings: readonly Rendering[];
}

export class RenderedSources implements DocumentSource {
  private readonly renderings = new Map<string, Rendering>();
  /** Tools said to be missing, each said once per connection. */
  private readonly missingTold = new Set<string>();
  private disposed = false;

  constructor(
    private readonly connection: Connection,
    private readonly workspace: Workspace,
    private readonly refresh: RefreshScheduler,
  ) {}

  async findings(document: TextDocument): Promise<readonly Finding[]> {
    const context = await this.contextOf(document.uri);
    if (!context) return [];
    const out: Finding[] = [];
    for (const { rendering, resource, facts } of this.objects(context)) {
      for (const f of renderedObjectFindings(resource, facts, this.applyOf(rendering.result!, context.settings), rendering.result!.sourceMap)) {
        if (f.source.file === context.path) out.push(f);
      }
    }
    return out;
  }

  /** The hover on a line of a rendered source; undefined when the document is none (the plain hover answers). */
  async hover(uri: string, position: Position): Promise<Hover | null | undefined> {
    const file = await this.workspace.classify(uri);
    if (!file || !isRenderedSource(file)) return undefined;
    const context = await this.contextOf(uri);
    if (!context) return null;
    let best: { text: string; label: string } | undefined;
    for (const { rendering, resource, facts } of this.objects(context)) {
      const map = rendering.result!.sourceMap;
      const options = locateOptions(resource, facts.schema);
      forEachNode(resource, (visit) => {
        const server = serverPath(resource, visit.path, facts.schema);
        const here = map.locate(resource.documentIndex, server, options).some((l) => l.file === context.path && l.range.start.line === position.line);
        // The deepest field written on this line: a template's `replicas:` line, a values key.
        if (here) best = { text: fieldHover(resource, facts, server, visit.node, Date.now()), label: `${resource.kind} ${resource.name ?? ''} in ${map.target.label}` };
      });
      if (best) break;
    }
    if (!best) return null;
    return { contents: { kind: 'markdown', value: `_${best.label}_\n\n${best.text}` } };
  }

  /** Quick fixes that edit the source line a finding landed on; undefined when the document is not a rendered source. */
  async codeActions(params: CodeActionParams, document: TextDocument): Promise<CodeAction[] | undefined> {
    const file = await this.workspace.classify(document.uri);
    if (!file || !isRenderedSource(file)) return undefined;
    const actions: CodeAction[] = [];
    const text = document.getText();
    for (const diagnostic of params.context.diagnostics) {
      const finding = findingOf(diagnostic) as RelocatedFinding | undefined;
      if (!finding || finding.code !== 'field-conflict' || !finding.path || !finding.source) continue;
      const who = finding.manager ? describeManager(finding.manager) : 'its owner';
      const offer = (title: string, result: EditResult, preferred = false) => {
        if (result.edits) actions.push({ title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic], isPreferred: preferred, edit: { changes: { [document.uri]: [...result.edits] } } });
        else actions.push({ title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic], disabled: { reason: result.reason } });
      };
      const line = finding.source.range.start.line;
      switch (finding.source.role) {
        case 'values': {
          // The value the template prints: taking the live one makes the rendered field agree.
          if (finding.liveValue === undefined) break;
          const key = text.split('\n')[line]?.trim().split(':')[0] ?? 'this value';
          offer(`Use the live value ${showValue(finding.liveValue)} for ${key} (share ownership with ${who})`, replacePlainYamlValueEdits(text, line, finding.liveValue), true);
          break;
        }
        case 'patch':
        case 'resource': {
          // A strategic-merge patch and a resource file write the object's own paths.
          const owner = parseManifestText(text).resources.find((r) => r.range.start.line <= line && line <= r.range.end.line);
          if (!owner) break;
          offer(`Remove ${finding.path} here (leave it to ${who})`, removeFieldEdits(text, owner, finding.path), finding.path === '.spec.replicas' && finding.manager?.subresource === 'scale');
          if (finding.liveValue !== undefined) offer(`Use the live value ${showValue(finding.liveValue)} for ${finding.path} (share ownership with ${who})`, replaceValueEdits(text, owner, finding.path, finding.liveValue));
          break;
        }
        default:
          // A template line or a kustomization entry: no edit is known to be right.
          break;
      }
    }
    return actions;
  }

  /** A file was saved: the targets it belongs to render again, after a short pause. */
  saved(uri: string): void {
    const p = filePath(uri);
    if (!p || !this.workspace.clusterAccess) return;
    for (const rendering of this.renderings.values()) {
      if (!(rendering.result?.covers ?? rendering.spec.covers)(p)) continue;
      clearTimeout(rendering.timer);
      rendering.timer = setTimeout(() => this.start(rendering), RENDER_DEBOUNCE_MS);
      rendering.timer.unref?.();
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const r of this.renderings.values()) clearTimeout(r.timer);
  }

  private applyOf(rendered: Rendered, settings: Settings): RenderedApply {
    const apply = rendered.helm ? helmApply(rendered.helm, settings.severity) : { settings: { fieldManager: settings.fieldManager, applyMode: settings.applyMode, severity: settings.severity } };
    // A CRD rendered with its resources is applied with them, as on the command line.
    return { ...apply, settings: withDefinedKinds(apply.settings, definedKinds(rendered.resources, rendered.sourceMap.target.label)) };
  }

  /** Every rendered object of the file's targets that has been rendered, with its facts as the caches have them. */
  private *objects(context: FileContext) {
    for (const rendering of context.renderings) {
      if (!rendering.result) continue;
      for (const resource of rendering.result.resources) {
        const facts = resource.name
          ? context.session.facts.peek({ apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name, ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}) })
          : { kind: { state: 'pending' as const }, live: { state: 'pending' as const }, schema: undefined };
        yield { rendering, resource, facts };
      }
    }
  }

  /** The file's targets (rendering the ones never rendered), or undefined when nothing may or can be rendered for it. */
  private async contextOf(uri: string): Promise<FileContext | undefined> {
    const file = await this.workspace.classify(uri);
    if (!file || !file.path || !file.folder || !isRenderedSource(file)) return undefined;
    // A render runs a program: never in an untrusted workspace (nor without a cluster to predict against).
    if (!this.workspace.clusterAccess || this.disposed) return undefined;
    const settings = await this.workspace.settingsFor(uri);
    const session = await this.workspace.sessionFor(settings);
    if (!session) return undefined;
    const renderings = this.targetsOf(file, settings, session).map((spec) => this.ensure(spec));
    return { path: file.path, session, settings, renderings };
  }

  private ensure(spec: TargetSpec): Rendering {
    let rendering = this.renderings.get(spec.key);
    if (!rendering) {
      rendering = { spec, again: false };
      this.renderings.set(spec.key, rendering);
      this.start(rendering);
    }
    return rendering;
  }

  private start(rendering: Rendering): void {
    if (this.disposed) return;
    if (rendering.running) {
      rendering.again = true;
      return;
    }
    rendering.again = false;
    rendering.running = rendering.spec.run().then(
      (outcome) => this.finished(rendering, outcome),
      (error: unknown) => this.finished(rendering, { ok: false, message: `cannot render ${rendering.spec.target.label}: ${error instanceof Error ? error.message : String(error)}` }),
    );
  }

  private finished(rendering: Rendering, outcome: Outcome): void {
    rendering.running = undefined;
    if (outcome.ok) {
      rendering.result = outcome.rendered;
      rendering.told = undefined;
    } else if (outcome.notInstalled !== undefined) {
      // Said once, however many files and targets need the tool.
      if (!this.missingTold.has(outcome.notInstalled)) {
        this.missingTold.add(outcome.notInstalled);
        this.tell(outcome.message);
      }
    } else {
      // A template that does not render (while being written, say): said once until it renders
      // again; the last good answer stays meanwhile.
      this.connection.console.warn(outcome.message);
      if (rendering.told === undefined) {
        rendering.told = outcome.message;
        this.tell(outcome.message);
      }
    }
    if (rendering.again) this.start(rendering);
    this.refresh.schedule();
  }

  /** An information message the user need not answer (a notification: nothing waits for a click). */
  private tell(message: string): void {
    void this.connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Info, message: `Kube Conflict Hints: ${message}` });
  }

  private targetsOf(file: ClassifiedFile, settings: Settings, session: Session): TargetSpec[] {
    const tools: RenderSettings = { ...(settings.helmPath ? { helm: settings.helmPath } : {}), ...(settings.kustomizePath ? { kustomize: settings.kustomizePath } : {}) };
    const folder = file.folder!;
    if (file.kind.kind === 'helm-chart') {
      const chart = this.topChart(file.kind.chart);
      const namespace = session.connection.defaultNamespace || 'default';
      // Values files named in the settings, inside the chart's workspace folder and regular files only.
      const valuesFiles = settings.helmValuesFiles
        .map((f) => path.resolve(chart, f).split(path.sep).join('/'))
        .filter((f) => this.workspace.sourceFiles.folderOf(f) === folder && isRegularFile(f));
      const release = settings.helmRelease || undefined;
      const target = helmTarget(chart, release);
      const covers = (p: string) => p.startsWith(`${chart}/`) || valuesFiles.includes(p);
      return [
        {
          key: JSON.stringify(['helm', chart, release, namespace, valuesFiles, tools.helm ?? '']),
          target,
          covers,
          run: async () => {
            const out = await renderHelm({ chart, namespace, valuesFiles, ...(release !== undefined ? { release } : {}) }, tools);
            if (!out.ok) return { ok: false, message: describeRenderProblem(target, out.problem), ...(out.problem.kind === 'not-installed' ? { notInstalled: out.problem.command } : {}) };
            const helm = { release: out.release, namespace: out.namespace, major: out.helm.major };
            const apply = helmApply(helm);
            // Hooks are created by Helm at hook time, not with the release: not predicted (as on the command line).
            const resources = out.resources.filter((r) => !out.hooks.has(r.documentIndex)).map((r) => sentResource(r, apply));
            return { ok: true, rendered: { resources, sourceMap: out.sourceMap, helm, covers } };
          },
        },
      ];
    }
    const roots = file.overlays.filter((r) => this.workspace.sourceFiles.folderOf(r) === folder);
    const labels = overlayLabels(roots, kustomizationLabel, (r) => path.posix.relative(folder, r) || '.');
    return roots.map((root) => {
      const target: RenderTarget = { kind: 'kustomize', root, label: labels.get(root)! };
      const initial = (p: string) => p.startsWith(`${root}/`);
      return {
        key: JSON.stringify(['kustomize', root, target.label, tools.kustomize ?? '']),
        target,
        covers: initial,
        run: async (): Promise<Outcome> => {
          const out = await renderKustomization(target, tools);
          if (!out.ok) return { ok: false, message: describeRenderProblem(target, out.problem), ...(out.problem.kind === 'not-installed' ? { notInstalled: out.problem.command } : {}) };
          const parsed = parseManifestText(out.text);
          if (parsed.problems.length > 0) return { ok: false, message: `${out.command} printed text that is not YAML: ${parsed.problems[0]!.message}` };
          // The files the overlay reads: a save of any of them renders it again.
          const files = new Set(readKustomizationFiles(root).keys());
          return { ok: true, rendered: { resources: parsed.resources, sourceMap: out.sourceMap, covers: (p) => files.has(p) || initial(p) } };
        },
      };
    });
  }

  /** A subchart's files are rendered with the chart that holds it (`parent/charts/NAME/`), inside the workspace. */
  private topChart(chart: string): string {
    let top = chart;
    for (let i = 0; i < 8; i++) {
      const charts = path.posix.dirname(top);
      const parent = path.posix.dirname(charts);
      if (path.posix.basename(charts) !== 'charts' || !this.workspace.sourceFiles.inside(parent) || !isRegularFile(`${parent}/Chart.yaml`)) break;
      top = parent;
    }
    return top;
  }
}


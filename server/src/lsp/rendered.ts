// Rendered sources in the editor: for an open file that overlays use (a base, a patch, a
// kustomization) the overlays are built with the user's kustomize, each judged on its own; for a
// chart's file (a template, a values file) the chart is rendered with the user's helm, as the
// release the cluster holds it as (render/helm.ts renderInstalledChart). Which chart, release and overlay, and what each target
// sends, are the command line's own (render/targets.ts). The rendered objects are predicted on by the command line's own code
// (core/findings/rendered.ts) and each finding shown where it lands on this file; hovers and quick
// fixes on those lines work from the rendered object too.
//
// A render runs a program, so: only in a trusted workspace, only with binaries from the user's own
// settings (helmPath, kustomizePath: machine scope, never a workspace's), only for targets inside
// the workspace folders. It never runs on a keystroke: once when a file of a target is first asked
// about, then after a save of one of its files (debounced). It never blocks: the previous answer
// stays until the new one arrives, and the facts are peeked from the session's caches on each pull,
// so a change on the cluster shows without rendering again. Without the tool, or when the tool
// refuses: a finding on the source's files (tool-missing, render-failed) for as long as it lasts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CodeActionKind,
  CreateFile,
  MessageType,
  ShowMessageNotification,
  TextDocumentEdit,
  type ClientCapabilities,
  type CodeAction,
  type CodeActionParams,
  type CodeLens,
  type Connection,
  type Diagnostic,
  type Hover,
  type Position,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  definedKinds,
  findingCatalogue,
  findingPath,
  helmApply,
  locateOptions,
  overlayLabels,
  overlayLocalChange,
  releaseOriginFinding,
  removalFromSources,
  renderedLineHover,
  renderedObjectFindings,
  renderedOwnershipHints,
  renderFailureFindings,
  renderFailurePlaces,
  showValue,
  withDefinedKinds,
  type FailurePlace,
  type Finding,
  type LineSpan,
  type LocalChange,
  type OwnershipHint,
  type RelocatedFinding,
  type RenderedApply,
  type RenderFailureSource,
  type SourceRemoval,
} from '../core/findings';
import { jsonEqual, type JsonValue } from '../core/json';
import { replaceValueEdits, type EditResult, type TextEdit } from '../core/manifest/edits';
import { plainYamlValueAt, replacePlainYamlValueEdits } from '../core/manifest/edits-yaml';
import {
  countedOverlays,
  entriesToKeep,
  overlayEntryOf,
  parseOverlayEntries,
  unmatchedEntries,
} from '../core/sources/overlay-choice';
import { namedObject, parseManifestText, type ManifestResource } from '../core/manifest/manifest';
import { isKustomizationFileName } from '../core/sources/file-kinds';
import { kustomizationLabel } from '../core/sources/kustomize-map';
import type { RenderTarget, SourceLocation, SourceMap } from '../core/sources/source-map';
import { describeManager } from '../core/ssa/messages';
import {
  notifications,
  requests,
  sendNotification,
  type DocumentParams,
  type OverlaysResult,
  type ReleasesResult,
  type Settings,
} from '../protocol';
import { helmTarget, renderInstalledChart } from '../render/helm';
import {
  chartRelease,
  overlayFailureSource,
  overlayKustomization,
  renderOverlay,
  sentByHelm,
  topChart,
} from '../render/targets';
import { describeCandidate, placeKey, type ReleaseOrigin, type ReleasePlace } from '../core/sources/helm-release';
import { readSmallText } from '../render/small-file';
import { describeRenderProblem, type RenderProblem, type RenderSettings } from '../render/renderer';
import { isAutoscalerReplicas, quickFix } from './code-actions';
import { findingOf } from './diagnostics';
import type { DocumentSource } from './document-service';
import type { RefreshScheduler } from './refresh';
import type { Session } from './session';
import { filePath, type ClassifiedFile } from './source-files';
import { controllerOfPath, isRenderedSource, type Workspace } from './workspace';
import { isInsideReally, isRegularFile } from '../render/paths';

/** Saves that come together (save all, a formatter) make one render. */
const RENDER_DEBOUNCE_MS = 300;
/** A values file larger than this is not read for a quick fix. */
const MAX_EDITED_FILE_BYTES = 4 * 1024 * 1024;

/** A render that succeeded: what its target sends and where each field comes from. */
interface GoodRender {
  /** The objects as they would be sent, by their index in the rendered stream. */
  readonly resources: readonly ManifestResource[];
  readonly sourceMap: SourceMap;
  /** For a chart: which Helm sends it, as which release. */
  readonly helm?: { readonly release: string; readonly namespace: string; readonly major: 3 | 4 };
  /** For a chart: how its release was settled, said on its Chart.yaml when it was guessed or is one of several. */
  readonly release?: { readonly origin: ReleaseOrigin; readonly chartFile: string; readonly chartEntry: string };
  /** Whether a save of this file asks for a new render. */
  readonly covers: (file: string) => boolean;
}

type Outcome =
  | { ok: true; rendered: GoodRender }
  | ({ ok: false; notInstalled?: string; covers?: (file: string) => boolean } & FailedRender);

/** Why the last render failed, in the tool's words, and the places that say so (core/findings/render-failure.ts). */
interface FailedRender {
  readonly code: 'render-failed' | 'tool-missing';
  readonly message: string;
  readonly places: readonly FailurePlace[];
}

interface TargetSpec {
  readonly key: string;
  readonly target: RenderTarget;
  /** Where a failure of this target is shown (read when it fails: a kustomization's text then). */
  readonly failureSource: () => RenderFailureSource;
  readonly run: () => Promise<Outcome>;
  /** Before the first render: which saved files concern it. */
  readonly covers: (file: string) => boolean;
}

/** One render target's state in the editor: its last good render or failure, and the render running or due. */
interface TargetState {
  spec: TargetSpec;
  result?: GoodRender;
  running?: Promise<void>;
  /** A save arrived while rendering: render again when done. */
  again: boolean;
  timer?: NodeJS.Timeout;
  /**
   * Why the last render failed: shown on the source's files until a render succeeds. Meanwhile the
   * last good render's findings are not shown: its lines may no longer be the ones that set a field.
   */
  failure?: FailedRender;
  /** The files the last render read, failed or not: a save of one of them renders again (a base fixed for a failing overlay). */
  covers?: (file: string) => boolean;
  /** When the last render started: a change on disk older than that was read by it. */
  startedAt?: number;
  /**
   * Files saved or changed while a render ran, which the files known before it do not cover: what
   * it read is known only when it ends (a base outside the overlay's folder, on the first render),
   * and one of them may have changed after it was read.
   */
  changedWhileRunning?: Set<string>;
}

/** More changes than this during one render: render again whatever they were. */
const MAX_CHANGES_REMEMBERED = 1000;

interface FileContext {
  readonly path: string;
  readonly session: Session;
  readonly settings: Settings;
  readonly renderings: readonly TargetState[];
  /** The overlays that use the file and that the user's choice leaves out (kustomizeOverlays). */
  readonly excluded: readonly string[];
  /** How messages name each overlay that uses the file. */
  readonly labels: ReadonlyMap<string, string>;
}

export class RenderedSources implements DocumentSource {
  private readonly renderings = new Map<string, TargetState>();
  /** Tools said to be missing, each said once per connection. */
  private readonly missingTold = new Set<string>();
  /** Other messages already said (tellOnce). */
  private readonly toldOnce = new Set<string>();
  private disposed = false;
  /** Whether a fix may create a file (a new patch of an overlay's own): the client's workspaceEdit capabilities. */
  private canCreateFiles = false;

  constructor(
    private readonly connection: Connection,
    private readonly workspace: Workspace,
    private readonly refresh: RefreshScheduler,
  ) {}

  /** Kustomizations, the files they use and a chart's files. */
  claims(file: ClassifiedFile): boolean {
    return isRenderedSource(file);
  }

  async findings(document: TextDocument): Promise<readonly Finding[]> {
    const context = await this.contextOf(document.uri);
    if (!context) return [];
    const out: Finding[] = [];
    for (const rendering of context.renderings) {
      const failure = rendering.failure;
      if (!failure) continue;
      // Where the tool's words point, and on any other file of the source at its first line: the
      // file open is not judged either.
      const here = failure.places.filter((p) => p.file === context.path);
      const places =
        here.length > 0
          ? here
          : [{ file: context.path, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } }];
      for (const f of renderFailureFindings(failure.code, places, failure.message))
        out.push({ code: f.code, severity: f.severity, message: f.message, range: f.range });
    }
    // On Chart.yaml: the release was one of several, or none was found (core/findings/helm-release.ts).
    for (const rendering of context.renderings) {
      const release = rendering.failure ? undefined : rendering.result?.release;
      const helm = rendering.result?.helm;
      if (!release || !helm || release.chartFile !== context.path) continue;
      const f = releaseOriginFinding(release.origin, helm, {
        start: { line: 0, character: 0 },
        end: { line: 0, character: 0 },
      });
      if (f) out.push(f);
    }
    // Silent by the user's choice, not because nothing is wrong: said, with the way back.
    if (context.renderings.length === 0 && context.excluded.length > 0)
      out.push(notChosenFinding(context.excluded.map((r) => context.labels.get(r)!)));
    for (const { rendering, resource, facts } of this.objects(context)) {
      for (const f of renderedObjectFindings(
        resource,
        facts,
        this.applyOf(rendering.result!, context),
        rendering.result!.sourceMap,
      )) {
        if (f.source.file === context.path) out.push(f);
      }
    }
    return out;
  }

  /** The hover on a line of a rendered source: the rendered field's. */
  async hover(document: TextDocument, position: Position): Promise<Hover | null> {
    const context = await this.contextOf(document.uri);
    if (!context) return null;
    // The first object that writes on this line, unless a later one has a finding there.
    let best: { text: string; label: string; diagnosed: boolean } | undefined;
    for (const { rendering, resource, facts } of this.objects(context)) {
      const map = rendering.result!.sourceMap;
      const hover = renderedLineHover(
        resource,
        facts,
        this.applyOf(rendering.result!, context),
        map,
        context.path,
        position.line,
        Date.now(),
      );
      if (hover && (!best || (hover.diagnosed && !best.diagnosed)))
        best = { ...hover, label: `${resource.kind} ${resource.name ?? ''} in ${map.target.label}` };
      if (best?.diagnosed) break;
    }
    if (!best) return null;
    return { contents: { kind: 'markdown', value: `_${best.label}_\n\n${best.text}` } };
  }

  /** A lens sums up an object of the file's own text; a rendered source has none. */
  async codeLenses(): Promise<CodeLens[]> {
    return [];
  }

  /** The ownership hints on the lines of a rendered source (core/findings/ownership-hints.ts), one per line and owner label. */
  async ownershipHints(document: TextDocument, lines: LineSpan, now: number): Promise<OwnershipHint[]> {
    const context = await this.contextOf(document.uri);
    if (!context) return [];
    const out: OwnershipHint[] = [];
    for (const { rendering, resource, facts } of this.objects(context)) {
      if (facts.live.state !== 'exists') continue;
      const own = this.applyOf(rendering.result!, context).settings;
      for (const hint of renderedOwnershipHints(
        resource,
        facts.live.object,
        facts.schema,
        own,
        now,
        rendering.result!.sourceMap,
        context.path,
      )) {
        // A base two overlays use, a template that renders two objects: the same words once.
        if (!out.some((h) => h.line === hint.line && h.label === hint.label)) out.push(hint);
      }
    }
    return out.filter((h) => h.line >= lines.start && h.line <= lines.end);
  }

  /** Quick fixes that edit the source line a finding landed on. */
  async codeActions(document: TextDocument, params: CodeActionParams): Promise<CodeAction[]> {
    const file = await this.workspace.classify(document.uri);
    if (!file) return [];
    const actions: CodeAction[] = [];
    const text = document.getText();
    const context = file.path;
    for (const diagnostic of params.context.diagnostics) {
      const finding = findingOf(diagnostic) as RelocatedFinding | undefined;
      if (finding?.code === 'overlay-not-chosen') {
        // The client shows the choice (VS Code: the quick pick of Choose Kustomize overlays…); other editors get the overlays as data.
        const args: DocumentParams = { uri: document.uri };
        actions.push({
          title: 'Choose Kustomize overlays…',
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          isPreferred: true,
          command: { title: 'Choose Kustomize overlays…', command: requests.overlays.command, arguments: [args] },
        });
        continue;
      }
      if (!finding || finding.code !== 'field-conflict' || !finding.path || !finding.source) continue;
      const who = finding.manager ? describeManager(finding.manager) : 'its owner';
      const offer = (title: string, result: EditResult, preferred = false, uri = document.uri) =>
        actions.push(quickFix(title, diagnostic, result, uri, preferred));
      const leaveIt = isAutoscalerReplicas(finding);
      const line = finding.source.range.start.line;
      // Leaving the field to its owner means it is gone from what is sent: every source that writes
      // it is edited at once (a patch and the base it patches; a template line, whichever of its
      // lines or values the finding sits on), or the removal is not offered as a fix.
      const removal = await this.removalOf(document.uri, finding);
      const removes = removal?.files !== undefined && removal.files.length > 0;
      const offerRemoval = (title: string, preferred: boolean) => {
        if (!removal?.files) return;
        const changes: Record<string, TextEdit[]> = {};
        for (const f of removal.files) changes[pathToFileURL(f.file).href] = [...f.edits];
        actions.push({
          title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          isPreferred: preferred,
          edit: { changes },
        });
      };
      // A fix that edits a file other overlays render too says so in its title.
      const removalShared = removal?.files
        ? await this.alsoUsedBy(
            removal.files.map((f) => f.file),
            finding.rendered.target.root,
          )
        : undefined;
      const removalTitle = () => {
        const files = removal?.files?.map((f) => f.file) ?? [];
        if (files.length === 1 && files[0] === context && finding.source.role === 'template')
          return `Remove this line from the template (leave ${finding.path} to ${who})`;
        const others = files
          .filter((f) => f !== context)
          .map((f) => path.posix.relative(path.posix.dirname(context ?? f), f));
        const where = [
          ...(files.includes(context ?? '') ? ['here'] : []),
          ...(others.length > 0 ? [`in ${others.join(' and ')}`] : []),
        ].join(' and ');
        return `Remove ${finding.path} ${where || 'here'}${removalShared ? `, also used by ${removalShared}` : ''} (leave it to ${who})`;
      };
      switch (finding.source.role) {
        case 'values': {
          const fix = valuesFix(finding, text, line, 'for', who, await this.chartsAlsoUsing(document.uri, finding));
          if (fix) offer(fix.title, fix.result, !(leaveIt && removes));
          if (removes) offerRemoval(removalTitle(), leaveIt);
          break;
        }
        case 'template': {
          // The line takes its value from values files: taking the live value is done there, the
          // same as on the values line. Removing the key is done on the template line either way.
          const places = await this.valuesPlaces(document.uri, finding);
          if (places === undefined) break;
          for (const place of places) {
            const valuesText = this.textOf(place.file);
            const also = await this.chartsAlsoUsing(pathToFileURL(place.file).href, finding);
            const fix =
              valuesText === undefined
                ? undefined
                : valuesFix(
                    finding,
                    valuesText,
                    place.range.start.line,
                    `in ${path.posix.basename(place.file)} for`,
                    who,
                    also,
                  );
            if (fix) offer(fix.title, fix.result, !(leaveIt && removes), pathToFileURL(place.file).href);
          }
          // Said only where it is true: a line with a control action or a block is not offered at all.
          if (removes) offerRemoval(removalTitle(), leaveIt);
          break;
        }
        case 'patch':
        case 'resource': {
          // A strategic-merge patch and a resource file write the object's own paths.
          const owner = parseManifestText(text).resources.find(
            (r) => r.range.start.line <= line && line <= r.range.end.line,
          );
          if (!owner) break;
          // This file, or one the removal edits, is rendered by other overlays too: the same change
          // made in this overlay alone (a patch of its own) is offered beside the shared one, and
          // preferred to it.
          const shared = await this.alsoUsedBy([context ?? finding.source.file], finding.rendered.target.root);
          const local = shared || removalShared ? await this.localChanges(document.uri, finding) : undefined;
          const label = finding.rendered.target.label;
          if (removes) offerRemoval(removalTitle(), leaveIt && !local?.remove.files);
          else if (removal !== undefined)
            offer(`Remove ${finding.path} here (leave it to ${who})`, {
              edits: undefined,
              reason: 'reason' in removal ? removal.reason : `no source line writes ${finding.path}`,
            });
          // (Taking the live value is already local where this file is the overlay's own.)
          if (local)
            this.offerLocal(
              actions,
              diagnostic,
              `Remove ${finding.path} from ${label} only (a patch of its own drops it; leave it to ${who})`,
              local.remove,
              leaveIt,
            );
          if (finding.liveValue !== undefined) {
            offer(
              `Use the live value ${showValue(finding.liveValue)} for ${finding.path}${shared ? ` here, also used by ${shared}` : ''} (share ownership with ${who})`,
              replaceValueEdits(text, owner, finding.path, finding.liveValue),
            );
            if (shared && local?.take)
              this.offerLocal(
                actions,
                diagnostic,
                `Use the live value ${showValue(finding.liveValue)} for ${finding.path} in ${label} only (a patch of its own; share ownership with ${who})`,
                local.take,
              );
          }
          break;
        }
        default:
          // A kustomization entry: no edit is known to be right.
          break;
      }
    }
    return actions;
  }

  /**
   * The overlays other than `root` that render any of `files` (absolute paths), as a title names
   * them (`overlay staging`, `overlays staging and qa`); undefined when none does.
   */
  private async alsoUsedBy(files: readonly string[], root: string): Promise<string | undefined> {
    const users = new Set<string>();
    for (const file of files) {
      const uri = pathToFileURL(file).href;
      const text = this.textOf(file);
      if (text === undefined) continue;
      const open = new Map(
        this.workspace.documents
          .all()
          .filter((d) => d.uri !== uri)
          .map((d) => [d.uri, d.getText()]),
      );
      const classified = await this.workspace.sourceFiles.classify(uri, text, open);
      for (const r of this.overlaysOf(classified)) if (r !== root) users.add(r);
    }
    if (users.size === 0) return undefined;
    const folder = this.workspace.sourceFiles.folderOf(root) ?? root;
    const labels = this.labelsOf(folder, [...users, root].sort());
    const names = [...users].sort().map((r) => labels.get(r)!.replace(/^overlay /, ''));
    return `${names.length === 1 ? 'overlay' : 'overlays'} ${listed(names)}`;
  }

  /**
   * The other charts of the workspace folder that a values file is given to (helmValuesFiles, which
   * each chart resolves from its own folder: `../values-prod.yaml` is one file for every chart
   * beside it), as a title names them (`chart api`, `charts api and worker`); undefined when none is.
   */
  private async chartsAlsoUsing(uri: string, finding: RelocatedFinding): Promise<string | undefined> {
    const file = filePath(uri);
    const chart = finding.rendered.target.root;
    const folder = file && this.workspace.sourceFiles.folderOf(file);
    if (!file || !folder || finding.rendered.target.kind !== 'helm') return undefined;
    const given = (await this.workspace.settingsFor(uri)).helmValuesFiles;
    const others = (await this.workspace.sourceFiles.chartsIn(folder))
      .filter((c) => c !== chart && topChart(c, (p) => this.workspace.sourceFiles.inside(p)) === c)
      .filter((c) => given.some((f) => path.resolve(c, f).split(path.sep).join('/') === file));
    if (others.length === 0) return undefined;
    // A chart by its folder's name; by its path in the workspace folder where two share a name.
    const names = others
      .sort()
      .map((c) =>
        others.filter((o) => path.posix.basename(o) === path.posix.basename(c)).length > 1
          ? path.posix.relative(folder, c) || '.'
          : path.posix.basename(c),
      );
    return `${names.length === 1 ? 'chart' : 'charts'} ${listed(names)}`;
  }

  /**
   * The finding's field set to the live value, and taken out, in the finding's overlay alone
   * (core/findings/rendered.ts: a strategic-merge patch of the overlay's own); undefined when the
   * rendering that gave the finding is gone.
   */
  private async localChanges(
    uri: string,
    finding: RelocatedFinding,
  ): Promise<{ take?: LocalChange; remove: LocalChange } | undefined> {
    const found = await this.findingObject(uri, finding);
    if (!found) return undefined;
    if (!found.at)
      return { remove: { reason: `${finding.path ?? 'the field'} is not a field of the rendered object` } };
    const root = found.map.target.root;
    const change = (value: JsonValue) =>
      overlayLocalChange(
        found.map,
        found.resource,
        found.at!,
        value,
        finding.source.file,
        overlayKustomization(root),
        (f) => this.textOf(f),
        (f) => fs.existsSync(f),
      );
    return { remove: change(null), ...(finding.liveValue !== undefined ? { take: change(finding.liveValue) } : {}) };
  }

  /** A change local to one overlay as a fix: plain edits, or with the patch file it creates (for a client that can create files). */
  private offerLocal(
    actions: CodeAction[],
    diagnostic: Diagnostic,
    title: string,
    change: LocalChange,
    preferred = false,
  ): void {
    const base = { title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic] };
    if (!change.files) return void actions.push({ ...base, disabled: { reason: change.reason } });
    if (change.created && !this.canCreateFiles)
      return void actions.push({
        ...base,
        disabled: { reason: 'the editor cannot create the patch file through a fix' },
      });
    const edits = change.files.map((f) =>
      TextDocumentEdit.create(
        {
          uri: pathToFileURL(f.file).href,
          version: this.workspace.documents.get(pathToFileURL(f.file).href)?.version ?? null,
        },
        [...f.edits],
      ),
    );
    if (!change.created)
      return void actions.push({ ...base, isPreferred: preferred, edit: { documentChanges: edits } });
    const created = pathToFileURL(change.created.file).href;
    const start = { line: 0, character: 0 };
    actions.push({
      ...base,
      isPreferred: preferred,
      edit: {
        documentChanges: [
          CreateFile.create(created, { overwrite: false, ignoreIfExists: false }),
          TextDocumentEdit.create({ uri: created, version: null }, [
            { range: { start, end: start }, newText: change.created.text },
          ]),
          ...edits,
        ],
      },
    });
  }

  /** What the client can do with a fix's edit (LSP initialize). */
  initialize(capabilities: ClientCapabilities): void {
    const edit = capabilities.workspace?.workspaceEdit;
    this.canCreateFiles = edit?.documentChanges === true && (edit.resourceOperations ?? []).includes('create');
  }

  /**
   * The values-file lines a template line's finding reads its value from (the map names them after
   * the template line); empty for a line that reads none; undefined when the rendering that gave
   * the finding is gone.
   */
  private async valuesPlaces(uri: string, finding: RelocatedFinding): Promise<SourceLocation[] | undefined> {
    const found = await this.findingObject(uri, finding);
    if (!found) return undefined;
    if (!found.at) return [];
    return found.map
      .locate(found.resource.documentIndex, found.at, locateOptions(found.resource, found.facts.schema))
      .filter((l) => l.role === 'values');
  }

  /**
   * The rendered object a finding was made on, with its source map and the finding's path in it
   * (undefined when the path is no field of the object); undefined when that rendering is gone.
   */
  private async findingObject(uri: string, finding: RelocatedFinding) {
    const context = await this.contextOf(uri);
    if (!context) return undefined;
    for (const { rendering, resource, facts } of this.objects(context)) {
      const map = rendering.result!.sourceMap;
      if (map.target.root !== finding.rendered.target.root || resource.documentIndex !== finding.rendered.index)
        continue;
      return { map, resource, facts, at: findingPath(finding, resource.object) };
    }
    return undefined;
  }

  /**
   * Removing the finding's field from what its target sends (core/findings/rendered.ts), from the
   * rendering that gave the finding; undefined when that rendering is gone.
   */
  private async removalOf(uri: string, finding: RelocatedFinding): Promise<SourceRemoval | undefined> {
    const found = await this.findingObject(uri, finding);
    if (!found) return undefined;
    if (!found.at) return { reason: `${finding.path ?? 'the field'} is not a field of the rendered object` };
    return removalFromSources(
      found.map,
      found.resource,
      found.at,
      locateOptions(found.resource, found.facts.schema),
      (f) => this.textOf(f),
    );
  }

  /** A source file's text: the editor's when it is open, else the disk's (a regular file inside a workspace folder, of a sane size). */
  private textOf(file: string): string | undefined {
    const open = this.workspace.documents.get(pathToFileURL(file).href);
    if (open) return open.getText();
    if (!this.workspace.sourceFiles.inside(file)) return undefined;
    return readSmallText(file, { maxBytes: MAX_EDITED_FILE_BYTES });
  }

  /** *Refresh from the cluster*: every chart renders again, so that where it is installed is read again. */
  renderAgain(): void {
    if (!this.workspace.clusterAccess) return;
    for (const rendering of this.renderings.values())
      if (rendering.spec.target.kind === 'helm') this.schedule(rendering);
  }

  /** A file was saved in the editor: the targets that read it render again, after a short pause. */
  saved(uri: string): void {
    const p = filePath(uri);
    if (!p || !this.workspace.clusterAccess) return;
    for (const rendering of this.renderings.values()) {
      if (this.coversFile(rendering, p)) this.schedule(rendering);
      else this.rememberWhileRunning(rendering, p);
    }
  }

  /**
   * Files changed on disk (the editor's file watcher): a `_helpers.tpl`, a generator's `.env`, a file
   * no editor has open — any file a target reads renders it again. A save the editor also reported
   * arrives here too; a render that started after the change already read it and is not repeated.
   */
  changedOnDisk(uris: readonly string[]): void {
    if (!this.workspace.clusterAccess) return;
    for (const uri of uris) {
      const p = filePath(uri);
      if (!p) continue;
      const modified = modifiedAt(p);
      for (const rendering of this.renderings.values()) {
        if (!this.coversFile(rendering, p)) {
          this.rememberWhileRunning(rendering, p);
          continue;
        }
        const readIt = modified !== undefined && rendering.startedAt !== undefined && rendering.startedAt > modified;
        if (!readIt) this.schedule(rendering);
      }
    }
  }

  /** A change that the running render may turn out to have read: judged when it ends. */
  private rememberWhileRunning(rendering: TargetState, file: string): void {
    if (!rendering.running) return;
    const changed = (rendering.changedWhileRunning ??= new Set());
    if (changed.size < MAX_CHANGES_REMEMBERED) changed.add(file);
    else rendering.again = true;
  }

  private coversFile(rendering: TargetState, file: string): boolean {
    return (rendering.covers ?? rendering.spec.covers)(file);
  }

  private schedule(rendering: TargetState): void {
    clearTimeout(rendering.timer);
    rendering.timer = setTimeout(() => {
      rendering.timer = undefined;
      this.start(rendering);
    }, RENDER_DEBOUNCE_MS);
    rendering.timer.unref?.();
  }

  dispose(): void {
    this.disposed = true;
    for (const r of this.renderings.values()) clearTimeout(r.timer);
  }

  private applyOf(rendered: GoodRender, context: Pick<FileContext, 'settings' | 'session'>): RenderedApply {
    const settings = context.settings;
    // An overlay a GitOps controller's source path builds is sent by that controller (the applier setting).
    const target = rendered.sourceMap.target;
    const controller =
      rendered.helm || target.kind !== 'kustomize'
        ? undefined
        : controllerOfPath(path.join(target.root, 'kustomization.yaml'), settings, context.session);
    const apply = rendered.helm
      ? helmApply(rendered.helm, settings.severity)
      : {
          settings: {
            fieldManager: settings.fieldManager,
            applyMode: settings.applyMode,
            severity: settings.severity,
            ...(controller ? { controller } : {}),
          },
        };
    // A CRD rendered with its resources is applied with them, as on the command line.
    return {
      ...apply,
      settings: withDefinedKinds(apply.settings, definedKinds(rendered.resources, rendered.sourceMap.target.label)),
    };
  }

  /** Every rendered object of the file's targets that has been rendered, with its facts as the caches have them. */
  private *objects(context: FileContext) {
    for (const rendering of context.renderings) {
      if (!rendering.result || rendering.failure) continue;
      for (const resource of rendering.result.resources) {
        const named = namedObject(resource);
        const facts = named
          ? context.session.facts.peek(named)
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
    const counted = await this.countedOverlaysOf(file, settings);
    const renderings = this.targetsOf(file, settings, session, counted).map((spec) => this.ensure(spec));
    const found = this.overlaysOf(file);
    const excluded = found.filter((r) => !counted.includes(r));
    return { path: file.path, session, settings, renderings, excluded, labels: this.labelsOf(file.folder, found) };
  }

  /**
   * The overlays that use the file and that count (kustomizeOverlays; empty: all of them). Each
   * invalid entry, and each valid one that names no overlay of the folder, is told once.
   */
  private async countedOverlaysOf(file: ClassifiedFile, settings: Settings): Promise<string[]> {
    const folder = file.folder!;
    const found = this.overlaysOf(file);
    if (settings.kustomizeOverlays.length === 0) return found;
    const entries = parseOverlayEntries(folder, settings.kustomizeOverlays);
    for (const { entry, reason } of entries.invalid)
      this.tellOnce(
        `invalid ${folder} ${entry}`,
        `kubeConflictHints.kustomizeOverlays: ${JSON.stringify(entry)} ${reason}; it is ignored.`,
        MessageType.Warning,
      );
    if (entries.patterns.length > 0) {
      for (const entry of unmatchedEntries(folder, await this.workspace.sourceFiles.overlaysIn(folder), entries)) {
        this.tellOnce(
          `unmatched ${folder} ${entry}`,
          `kubeConflictHints.kustomizeOverlays: ${JSON.stringify(entry)} names no Kustomize overlay in the workspace folder ${path.posix.basename(folder)}.`,
          MessageType.Warning,
        );
      }
    }
    return countedOverlays(folder, found, entries);
  }

  /** The overlays that use the document, for the user to choose which count (the setting is the workspace folder's). */
  async overlayChoices(uri: string): Promise<OverlaysResult> {
    const none = (problem: string): OverlaysResult => ({ overlays: [], keep: [], everyOverlay: true, problem });
    const file = await this.workspace.classify(uri);
    if (!file || !file.path) return none('Open a file of a Kustomize overlay first.');
    if (!file.folder) return none('The file is in no workspace folder: overlays are chosen per workspace folder.');
    if (file.kind.kind !== 'kustomization' && file.kind.kind !== 'kustomization-input')
      return none('The file is not a kustomization or a file that one uses.');
    const folder = file.folder;
    const found = file.overlays.filter((r) => this.workspace.sourceFiles.folderOf(r) === folder);
    if (found.length === 0) return none('No overlay in the workspace folder uses this file.');
    const settings = await this.workspace.settingsFor(uri);
    const entries = parseOverlayEntries(folder, settings.kustomizeOverlays);
    const counted = new Set(countedOverlays(folder, found, entries));
    const labels = overlayLabels(found, kustomizationLabel, (r) => overlayEntryOf(folder, r));
    return {
      folder: pathToFileURL(folder).href,
      overlays: found.map((r) => ({
        entry: overlayEntryOf(folder, r),
        label: labels.get(r)!,
        counted: counted.has(r),
      })),
      keep: entriesToKeep(
        folder,
        await this.workspace.sourceFiles.overlaysIn(folder),
        found,
        settings.kustomizeOverlays,
      ),
      everyOverlay: entries.patterns.length === 0,
    };
  }

  /** The releases the document's chart is installed as, for the user to choose which is judged (the folder's helmReleases). */
  async releaseChoices(uri: string): Promise<ReleasesResult> {
    const none = (problem: string): ReleasesResult => ({ releases: [], problem });
    const file = await this.workspace.classify(uri);
    if (!file || !file.path || file.kind.kind !== 'helm-chart') return none('Open a file of a Helm chart first.');
    if (!file.folder) return none('The file is in no workspace folder: releases are chosen per workspace folder.');
    const context = await this.contextOf(uri);
    if (!context) return none('Charts are rendered only in a trusted workspace with a cluster.');
    for (const rendering of context.renderings) {
      const release = rendering.result?.release;
      const helm = rendering.result?.helm;
      if (!release || !helm) continue;
      const origin = release.origin;
      if (origin.kind !== 'ambiguous' && origin.kind !== 'chosen')
        return none(
          origin.kind === 'guessed'
            ? `No release of the chart found: ${origin.why}.`
            : `The chart is installed as one release: ${helm.release} in ${helm.namespace}.`,
        );
      return {
        folder: pathToFileURL(file.folder).href,
        chart: release.chartEntry,
        releases: origin.among.map((c) => ({
          value: placeKey(c),
          label: c.release,
          description: describeCandidate(c),
          judged: placeKey(c) === placeKey(helm),
        })),
      };
    }
    return none('The chart has not been rendered yet (or did not render).');
  }

  private ensure(spec: TargetSpec): TargetState {
    let rendering = this.renderings.get(spec.key);
    if (!rendering) {
      rendering = { spec, again: false };
      this.renderings.set(spec.key, rendering);
      this.start(rendering);
    }
    return rendering;
  }

  private start(rendering: TargetState): void {
    if (this.disposed) return;
    if (rendering.running) {
      rendering.again = true;
      return;
    }
    rendering.again = false;
    rendering.changedWhileRunning = undefined;
    rendering.startedAt = Date.now();
    rendering.running = rendering.spec.run().then(
      (outcome) => this.finished(rendering, outcome),
      (error: unknown) => {
        const message = `cannot render ${rendering.spec.target.label}: ${error instanceof Error ? error.message : String(error)}`;
        this.finished(rendering, {
          ok: false,
          code: 'render-failed',
          message,
          places: renderFailurePlaces(rendering.spec.failureSource(), message),
        });
      },
    );
  }

  private finished(rendering: TargetState, outcome: Outcome): void {
    rendering.running = undefined;
    const covers = outcome.ok ? outcome.rendered.covers : outcome.covers;
    if (covers) rendering.covers = covers;
    // A file this render read that changed while it ran (it may have read the old text): again.
    const changed = rendering.changedWhileRunning;
    rendering.changedWhileRunning = undefined;
    if (changed && [...changed].some((file) => this.coversFile(rendering, file))) rendering.again = true;
    if (outcome.ok) {
      rendering.result = outcome.rendered;
      rendering.failure = undefined;
      // Several releases and none chosen: the user is asked once per chart and connection.
      const release = outcome.rendered.release;
      // The question names an open document of the chart: the one the editor can ask the server about.
      const chart = release && `${path.posix.dirname(release.chartFile)}/`;
      const open = chart && this.workspace.documents.all().find((d) => filePath(d.uri)?.startsWith(chart));
      if (release?.origin.kind === 'ambiguous' && open && !this.toldOnce.has(`releases ${release.chartFile}`)) {
        this.toldOnce.add(`releases ${release.chartFile}`);
        void sendNotification(this.connection, notifications.chooseRelease, { uri: open.uri });
      }
    } else {
      // Shown on the source's files (Chart.yaml or the kustomization, and the line the tool names)
      // for as long as it lasts; a missing tool is also said once as a message.
      rendering.failure = { code: outcome.code, message: outcome.message, places: outcome.places };
      this.connection.console.warn(outcome.message);
      if (outcome.notInstalled !== undefined && !this.missingTold.has(outcome.notInstalled)) {
        this.missingTold.add(outcome.notInstalled);
        this.tell(outcome.message);
      }
    }
    if (rendering.again) this.start(rendering);
    this.refresh.schedule();
  }

  /** An information message the user need not answer (a notification: nothing waits for a click). */
  private tell(message: string, type: MessageType = MessageType.Info): void {
    void this.connection.sendNotification(ShowMessageNotification.type, {
      type,
      message: `Kube Conflict Hints: ${message}`,
    });
  }

  /** A message said once per connection (a setting's bad entry is not repeated on every pull). */
  private tellOnce(key: string, message: string, type: MessageType): void {
    if (this.toldOnce.has(key)) return;
    this.toldOnce.add(key);
    this.tell(message, type);
  }

  private targetsOf(
    file: ClassifiedFile,
    settings: Settings,
    session: Session,
    overlays: readonly string[],
  ): TargetSpec[] {
    const folder = file.folder!;
    // The workspace folder is the checked one: no tool is taken from it by name, no overlay reads out of it.
    const tools: RenderSettings = {
      ...(settings.helmPath ? { helm: settings.helmPath } : {}),
      ...(settings.kustomizePath ? { kustomize: settings.kustomizePath } : {}),
      workspace: folder,
    };
    if (file.kind.kind === 'helm-chart') {
      const chart = topChart(file.kind.chart, (p) => this.workspace.sourceFiles.inside(p));
      // Values files named in the settings (which the workspace may write), inside the chart's
      // workspace folder, links followed, and regular files only: a link to a file outside would
      // put its values into what the chart renders, and so into the findings.
      const valuesFiles = settings.helmValuesFiles
        .map((f) => path.resolve(chart, f).split(path.sep).join('/'))
        .filter(
          (f) => this.workspace.sourceFiles.folderOf(f) === folder && isRegularFile(f) && isInsideReally(f, folder),
        );
      // The release and namespace: the user's when both are named, else the cluster's (core/sources/helm-release.ts).
      const { named, guess } = chartRelease(
        chart,
        { release: settings.helmRelease, namespace: settings.namespace },
        session.connection.defaultNamespace || 'default',
      );
      const remembered = rememberedRelease(settings, path.posix.relative(folder, chart) || '.');
      const target = helmTarget(chart, guess.release);
      const coversChart = (p: string) => p.startsWith(`${chart}/`) || valuesFiles.includes(p);
      return [
        {
          key: JSON.stringify([
            'helm',
            chart,
            guess,
            named,
            remembered ?? null,
            session.connection.context?.name ?? '',
            valuesFiles,
            tools.helm ?? '',
          ]),
          target,
          failureSource: () => ({ tool: 'helm', chart, valuesFiles }),
          covers: coversChart,
          run: async (): Promise<Outcome> => {
            // Everything under the chart folder (templates, `_helpers.tpl`, Chart.yaml, values, the
            // subcharts under charts/): helm reads them all. A link out of it is not followed: the
            // chart is not rendered (render/helm.ts), and the link itself is under the folder.
            const covers = coversChart;
            const { found, out } = await renderInstalledChart(
              { chart, valuesFiles, named, guess, ...(remembered ? { remembered } : {}) },
              tools,
              (kinds) => session.connection.helmSightings(kinds),
            );
            if (!out.ok) return { covers, ...failedOutcome(target, out.problem, { tool: 'helm', chart, valuesFiles }) };
            const { apply, resources } = sentByHelm(out);
            const helm = apply.helm!;
            return {
              ok: true,
              rendered: {
                resources,
                sourceMap: out.sourceMap,
                helm,
                covers,
                release: {
                  origin: found.origin,
                  chartFile: `${chart}/Chart.yaml`,
                  chartEntry: path.posix.relative(folder, chart) || '.',
                },
              },
            };
          },
        },
      ];
    }
    // Labels from every overlay that uses the file, so that choosing some does not rename them.
    const labels = this.labelsOf(folder, this.overlaysOf(file));
    return overlays.map((root) => {
      const target: RenderTarget = { kind: 'kustomize', root, label: labels.get(root)! };
      const initial = (p: string) => p.startsWith(`${root}/`);
      return {
        key: JSON.stringify(['kustomize', root, target.label, tools.kustomize ?? '']),
        target,
        failureSource: () => overlayFailureSource(root),
        covers: initial,
        run: async (): Promise<Outcome> => {
          // A save of any file the overlay reads renders it again, also after a failed build, whose
          // fix may be in a base outside the overlay's folder.
          const out = await renderOverlay(target, tools);
          const files = new Set(out.read.keys());
          // Also any file beside one of its kustomizations: a generator's input or a patch that
          // does not exist yet (the build fails until it does) is named there, not read.
          const folders = new Set(
            [...files].filter((f) => isKustomizationFileName(path.posix.basename(f))).map((f) => path.posix.dirname(f)),
          );
          const covers = (p: string) => files.has(p) || initial(p) || folders.has(path.posix.dirname(p));
          if (out.ok)
            return { ok: true, rendered: { resources: out.resources, sourceMap: out.result.sourceMap, covers } };
          if (out.problem) return { covers, ...failedOutcome(target, out.problem, out.source) };
          return {
            ok: false,
            covers,
            code: 'render-failed',
            message: out.unreadable,
            places: renderFailurePlaces(out.source, out.unreadable),
          };
        },
      };
    });
  }

  /** The overlays of the file's workspace folder that use it. */
  private overlaysOf(file: ClassifiedFile): string[] {
    return file.overlays.filter((r) => this.workspace.sourceFiles.folderOf(r) === file.folder);
  }

  /** `overlay staging`, from every overlay that uses a file (the folder's path where two share a name). */
  private labelsOf(folder: string, overlays: readonly string[]): Map<string, string> {
    return overlayLabels(overlays, kustomizationLabel, (r) => path.posix.relative(folder, r) || '.');
  }
}

/**
 * Taking the live value on a values line, offered only where that makes the rendered field agree:
 * the values line holds the very value the template printed (`replicas: {{ .Values.replicaCount }}`).
 * A value the template changes on its way (`{{ .Values.image.repository }}:{{ .Values.image.tag }}`,
 * `{{ add .Values.x 1 }}`) is not one the live value can be written back into, so nothing is offered.
 */
function valuesFix(
  finding: Finding,
  text: string,
  line: number,
  where: string,
  who: string,
  also?: string,
): { title: string; result: EditResult } | undefined {
  if (finding.liveValue === undefined || finding.manifestValue === undefined) return undefined;
  const written = plainYamlValueAt(text, line);
  if (written === undefined || !jsonEqual(written, finding.manifestValue)) return undefined;
  const key = text.split('\n')[line]?.trim().split(':')[0] ?? 'this value';
  return {
    title: `Use the live value ${showValue(finding.liveValue)} ${where} ${key}${also ? `, also used by ${also}` : ''} (share ownership with ${who})`,
    result: replacePlainYamlValueEdits(text, line, finding.liveValue),
  };
}

/**
 * Why a file of overlays the user left out says nothing: a hint on its first line (shown as news,
 * off the Problems panel), which the status bar reads as "not judged", with *Choose Kustomize
 * overlays…* as its fix.
 */
function notChosenFinding(labels: readonly string[]): Finding {
  const start = { line: 0, character: 0 };
  const which = labels.length === 1 ? `${labels[0]} uses it and is` : `${listed(labels)} use it and are`;
  return {
    code: 'overlay-not-chosen',
    severity: findingCatalogue['overlay-not-chosen'].severity,
    message: `Not judged: no chosen Kustomize overlay uses this file (${which} left out by kubeConflictHints.kustomizeOverlays). Choose Kustomize overlays… to judge it.`,
    range: { start, end: start },
  };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** When a file last changed (ms since the epoch); undefined when it is gone or cannot be looked at. */
function modifiedAt(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** A failed render as an outcome: the tool's words, and the places that show them. */
function failedOutcome(
  target: RenderTarget,
  problem: RenderProblem,
  source: RenderFailureSource,
): Extract<Outcome, { ok: false }> {
  const missing = problem.kind === 'not-installed';
  // The editor's words for a missing tool name the setting that names it.
  const setting = target.kind === 'helm' ? 'kubeConflictHints.helmPath' : 'kubeConflictHints.kustomizePath';
  const message = missing
    ? `cannot render ${target.label}: ${problem.message.split('\n')[0]!.trim()} (install it, or name the binary with ${setting})`
    : describeRenderProblem(target, problem);
  return {
    ok: false,
    code: missing ? 'tool-missing' : 'render-failed',
    message,
    // The tool's own words name the place (a template's line); ours name the source.
    places: renderFailurePlaces(source, problem.message),
    ...(missing ? { notInstalled: problem.command } : {}),
  };
}

/** The release chosen for this chart (kubeConflictHints.helmReleases), if any. */
function rememberedRelease(settings: Settings, chartEntry: string): ReleasePlace | undefined {
  const chosen = settings.helmReleases[chartEntry];
  if (!chosen) return undefined;
  const [namespace, release] = chosen.split('/');
  return namespace && release ? { namespace, release } : undefined;
}

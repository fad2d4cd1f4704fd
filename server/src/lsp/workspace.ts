// What one connection knows about the editor's workspace: the open documents and their analyses,
// whether the editor said the workspace is trusted, which other extensions report syntax errors,
// and the cluster sessions the documents' settings select. Handlers ask it for a document's
// analysis and delegate; nothing is kept beyond the connection.
import { fileURLToPath } from 'node:url';
import { TextDocuments } from 'vscode-languageserver/node';
import type { ControllerApplier } from '../core/gitops/model';
import { applierOfFile, gitRepositoryOf } from '../render/git-repository';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { namedObject, rangeContains, type ManifestResource, type Position } from '../core/manifest/manifest';
import {
  statedTrust,
  type InitializationOptions,
  type Settings,
  type StatedTrust,
  type SyntaxServices,
} from '../protocol';
import { DocumentAnalyzer, syntaxHeldBack, type AnalyzedResource, type DocumentAnalysis } from './document-analysis';
import { columnState, fleetAnalysis, FleetContexts, fleetStaleness, fleetTrouble, type FleetColumn } from './fleet';
import { stalenessOf } from './stale';
import { Sessions, type Session, type SessionEvents } from './session';
import { SourceFiles, type ClassifiedFile } from './source-files';
import type { TextDocument as Document } from 'vscode-languageserver-textdocument';
import type { SettingsSources } from './settings-sources';
import type { StatusReporter } from './status';

export class Workspace {
  readonly documents = new TextDocuments(TextDocument);
  readonly analyzer = new DocumentAnalyzer();
  readonly sessions: Sessions;
  /** What each open file is: a plain manifest, or a source of rendered ones (a template, a patch...). */
  readonly sourceFiles = new SourceFiles();
  private readonly kinds = new Map<string, { version: number; generation: number; file: Promise<ClassifiedFile> }>();
  private kindGeneration = 0;
  // Fails closed: only an editor that says the workspace is trusted gets cluster access.
  private access: { clusterAccess: boolean; trust: StatedTrust } = { clusterAccess: false, trust: 'unstated' };
  /** Other language services that already report syntax errors, by language id. */
  private syntaxServices: SyntaxServices = {};
  /** The contexts `kubeConflictHints.contexts` selects. */
  private readonly fleetContexts: FleetContexts;
  /** Each open document last judged in several contexts: what its state says of the contexts that gave nothing. */
  private readonly fleetDocuments = new Map<string, { trouble: string | undefined; stale: string | undefined }>();

  constructor(
    private readonly settingsSources: SettingsSources,
    private readonly status: StatusReporter,
    sessionEvents: SessionEvents,
    env: NodeJS.ProcessEnv,
  ) {
    this.sessions = new Sessions(sessionEvents, env, () => this.access.clusterAccess);
    this.fleetContexts = new FleetContexts(env);
  }

  /**
   * What the client said at start-up (its initializationOptions, as sent). `standalone`: started by
   * an editor's own configuration, whose user chose to run it, so a client that says nothing about
   * trust gets cluster access; one that says anything but `true` gets none (statedTrust).
   */
  initialize(options: unknown, standalone: boolean): void {
    const trust = statedTrust(options);
    this.syntaxServices = sanitizeSyntaxServices(
      (options as Partial<InitializationOptions> | null | undefined)?.syntaxServices,
    );
    this.access = { trust, clusterAccess: trust === 'trusted' || (trust === 'unstated' && standalone) };
  }

  get clusterAccess(): boolean {
    return this.access.clusterAccess;
  }

  /** What the client said of trust (the status says why there is no access). */
  get trust(): StatedTrust {
    return this.access.trust;
  }

  /** The syntax-reporting language services changed (whatever the client sent). */
  setSyntaxServices(raw: unknown): void {
    this.syntaxServices = sanitizeSyntaxServices(raw);
  }

  /** Settings are asked for per document (a folder can override them) and never cached globally. */
  settingsFor(uri: string | undefined): Promise<Settings> {
    return this.settingsSources.settingsFor(uri);
  }

  /**
   * The session these settings select, which becomes the one the status bar shows. Only called
   * for a document holding Kubernetes objects or for a user's command: this is where the
   * kubeconfig is first read and the cluster first contacted.
   */
  async sessionFor(settings: Settings): Promise<Session | undefined> {
    const session = await this.sessions.for(settings);
    if (!session) return undefined;
    this.status.show(session);
    return session;
  }

  /**
   * Since when the facts of this document's cluster are old ("as of 12:03:10 — cluster unreachable
   * since 12:05:02"), or undefined while its cluster answers (or none was asked).
   */
  async stalenessOf(uri: string, settings?: Settings): Promise<string | undefined> {
    if (!this.clusterAccess) return undefined;
    // Judged in several contexts: each one's trouble is the document's state, not one suffix for all.
    if (this.fleetDocuments.has(uri)) return undefined;
    const session = this.sessions.existing(settings ?? (await this.settingsFor(uri)));
    return session && stalenessOf(session.connection.health());
  }

  /** A file was saved, created, deleted or opened, or the workspace folders changed: what the files are is judged again. */
  filesChanged(uri?: string): void {
    if (uri) this.sourceFiles.changed(uri);
    else this.sourceFiles.invalidate();
    this.kindGeneration++;
  }

  /**
   * What an open document is (core/sources/file-kinds.ts, with the Chart.yaml and kustomization
   * files of its workspace folder), once per version of it and of the workspace's files.
   */
  classify(uri: string): Promise<ClassifiedFile> | undefined {
    const document = this.documents.get(uri);
    if (!document) return undefined;
    const known = this.kinds.get(uri);
    if (known && known.version === document.version && known.generation === this.kindGeneration) return known.file;
    const open = new Map(
      this.documents
        .all()
        .filter((d) => d.uri !== uri)
        .map((d) => [d.uri, d.getText()]),
    );
    const file = this.sourceFiles.classify(uri, document.getText(), open);
    this.kinds.set(uri, { version: document.version, generation: this.kindGeneration, file });
    return file;
  }

  /** For a document last judged in several contexts, the contexts that gave nothing and why (undefined when all judged it). */
  fleetTroubleOf(uri: string): string | undefined {
    return this.fleetDocuments.get(uri)?.trouble;
  }

  /** For a document last judged in several contexts, those judged on old facts and since when. */
  fleetStalenessOf(uri: string): string | undefined {
    return this.fleetDocuments.get(uri)?.stale;
  }

  /**
   * The contexts the document's settings select when there are two or more; one selected context
   * becomes the settings' `context`. Read only with cluster access (the kubeconfig is read).
   */
  private async contextsOf(
    settings: Settings,
  ): Promise<{ settings: Settings; fleet?: { contexts: readonly string[]; unmatched: readonly string[] } }> {
    if (!this.clusterAccess || settings.contexts.length === 0) return { settings };
    const selected = await this.fleetContexts.select(settings);
    if (!selected || selected.contexts.length === 0) return { settings };
    if (selected.contexts.length === 1) return { settings: { ...settings, context: selected.contexts[0]! } };
    return { settings, fleet: selected };
  }

  forget(uri: string): void {
    this.fleetDocuments.delete(uri);
    this.kinds.delete(uri);
    this.analyzer.forget(uri);
  }

  /** `given`: the document's settings, when the caller has just asked for them. */
  async analysisOf(uri: string, given?: Settings): Promise<DocumentState | undefined> {
    const document = this.documents.get(uri);
    if (!document) return undefined;
    const file = await this.classify(uri);
    const asked = given ?? (await this.settingsFor(uri));
    if (file && isRenderedSource(file)) {
      // A template is not YAML, a patch is a fragment, a kustomization is a recipe: nothing is
      // judged from their own text (no syntax, kind or deletion findings); lsp/rendered.ts judges
      // what they render to.
      return { document, settings: asked, session: undefined, analysis: emptyAnalysis, file };
    }
    // A Kubernetes manifest is a document with apiVersion and kind at its top level (core/manifest/manifest
    // finds them); any other YAML or JSON gets no session, so opening it contacts no cluster and
    // reads no kubeconfig (not even for the contexts kubeConflictHints.contexts names). The
    // session of a file of manifests is asked for as soon as its first object is read: the kubeconfig
    // is read and the cluster asked for that object (its kind, its list, its schema) while the rest
    // of the file is — in each context, with several.
    const early = (first: ManifestResource) =>
      void this.contextsOf(asked)
        .then(async ({ settings, fleet }) => {
          const named = namedObject(first);
          const sessions = fleet
            ? await Promise.all(fleet.contexts.map((context) => this.sessions.for({ ...settings, context })))
            : [await this.sessionFor(settings)];
          for (const session of sessions) if (session && named) session.facts.peek(named);
        })
        .catch(() => undefined);
    await this.analyzer.prepare(uri, document.version, document.getText(), early);
    const isManifest = this.analyzer.parse(uri, document.version, document.getText()).resources.length > 0;
    const { settings, fleet } = isManifest ? await this.contextsOf(asked) : { settings: asked, fleet: undefined };
    if (fleet) return this.fleetAnalysisOf(document, settings, file, fleet);
    this.fleetDocuments.delete(uri);
    const session = isManifest ? await this.sessionFor(settings) : undefined;
    const heldBack = syntaxHeldBack(settings, document.languageId, this.syntaxServices);
    return {
      document,
      settings,
      session,
      analysis: this.analyzer.analyze(
        uri,
        document.version,
        document.getText(),
        settings,
        session,
        heldBack,
        undefined,
        controllerOf(uri, settings, session),
      ),
      file,
    };
  }

  /**
   * A document of Kubernetes objects judged in each of several contexts: a session per context
   * (made at once, each context's facts peeked on their own, so one that does not answer holds
   * nobody back), the one analysis per context, then merged (fleet.ts). The status bar shows every
   * context's health.
   */
  private async fleetAnalysisOf(
    document: Document,
    settings: Settings,
    file: ClassifiedFile | undefined,
    fleet: { contexts: readonly string[]; unmatched: readonly string[] },
  ): Promise<DocumentState> {
    const uri = document.uri;
    const perContext = fleet.contexts.map((context) => ({ ...settings, context }));
    const sessions = await Promise.all(perContext.map((s) => this.sessions.for(s)));
    this.status.showFleet(fleet.contexts.map((context, i) => ({ context, session: sessions[i] })));
    const heldBack = syntaxHeldBack(settings, document.languageId, this.syntaxServices);
    const columns = perContext.map((s, i): FleetColumn => {
      const session = sessions[i];
      const analysis = this.analyzer.analyze(
        uri,
        document.version,
        document.getText(),
        s,
        session,
        heldBack,
        s.context,
        controllerOf(uri, s, session),
      );
      return { context: s.context, settings: s, session, analysis, ...columnState(session, analysis, s) };
    });
    this.fleetDocuments.set(uri, { trouble: fleetTrouble(columns, fleet.unmatched), stale: fleetStaleness(columns) });
    const judged = columns.find((c) => !c.trouble) ?? columns[0]!;
    return {
      document,
      settings: judged.settings,
      session: judged.session,
      analysis: fleetAnalysis(columns),
      file,
      fleet: columns,
    };
  }
}

/**
 * The GitOps controller that sends a document's objects, as `kubeConflictHints.applier` says: named,
 * or (`auto`) the Argo CD Application or Flux Kustomization whose source path holds the file, from
 * the session's read of them (peeked: none until it is read, and its arrival refreshes). Only for a
 * file on disk, and only with a session (cluster access).
 */
function controllerOf(uri: string, settings: Settings, session: Session | undefined): ControllerApplier | undefined {
  if (!uri.startsWith('file:')) return undefined;
  let file: string;
  try {
    file = fileURLToPath(uri);
  } catch {
    return undefined;
  }
  return controllerOfPath(file, settings, session);
}

/** The same for a file by its path (an overlay's kustomization, lsp/rendered.ts). */
export function controllerOfPath(
  file: string,
  settings: Settings,
  session: Session | undefined,
): ControllerApplier | undefined {
  if (!session || settings.applier === 'kubectl' || settings.applier === 'helm') return undefined;
  if (settings.applier !== 'auto') return applierOfFile(settings.applier, file, undefined, undefined);
  // Outside a checkout with a remote nothing can match: the controllers' sources are not read.
  if (!inCheckoutWithRemote(file)) return undefined;
  const sources = session.connection.gitopsPolicies.peekRepositorySources();
  if (!sources) return undefined;
  // Per read of the sources, each file's answer once: a keystroke reads no .git/config.
  let known = detected.get(sources);
  if (!known) detected.set(sources, (known = new Map()));
  if (!known.has(file)) known.set(file, applierOfFile('auto', file, undefined, sources));
  return known.get(file);
}

/** Whether a file lies in a git checkout with a remote, read once per file (a keystroke reads no .git/config). */
function inCheckoutWithRemote(file: string): boolean {
  let known = checkouts.get(file);
  if (known === undefined) {
    if (checkouts.size >= 4096) checkouts.clear();
    checkouts.set(file, (known = (gitRepositoryOf(file)?.remotes.length ?? 0) > 0));
  }
  return known;
}
const checkouts = new Map<string, boolean>();

/** The applier `auto` found per file, for each read of the controllers' sources (a new read starts afresh). */
const detected = new WeakMap<object, Map<string, ControllerApplier | undefined>>();

/** Kustomizations, the files they use and a chart's files: sources of rendered manifests. */
export function isRenderedSource(file: ClassifiedFile): boolean {
  return (
    file.kind.kind === 'kustomization' || file.kind.kind === 'kustomization-input' || file.kind.kind === 'helm-chart'
  );
}

const emptyAnalysis: DocumentAnalysis = {
  parsed: { resources: [], problems: [], parsedDocuments: 0, totalDocuments: 0 },
  resources: [],
  findings: [],
};

/** A document's analysis with what it was made with (settings, session), as handlers get it. */
export interface DocumentState {
  readonly document: Document;
  /** The settings it was judged with (with several contexts, those of the first context that answered). */
  readonly settings: Settings;
  readonly session: Session | undefined;
  /** With several contexts, every context's findings merged (fleet.ts). */
  readonly analysis: DocumentAnalysis;
  readonly file: ClassifiedFile | undefined;
  /** Judged in several contexts (`kubeConflictHints.contexts`): each one's judgement, in the setting's order. */
  readonly fleet?: readonly FleetColumn[];
}

/**
 * The resource whose range holds the position. Only the resources whose document may hold its
 * line are asked for their range: a document read for its values alone has none until its node
 * tree is built, and a hover at the end of a 2,000-document file built all of them.
 */
export function resourceAt(resources: readonly AnalyzedResource[], position: Position): AnalyzedResource | undefined {
  const mayHold = documentLines(resources);
  return resources.find(
    ({ resource }, i) => mayHold(i, position.line, position.line) && rangeContains(resource.range, position),
  );
}

/**
 * Whether the document of `resources[i]` may hold any of the lines `from`..`to`, told from where
 * each document starts, without its range: a document's range starts on or after its first line
 * and ends on or before the line where the next document starts (the items of a List share one
 * document).
 */
export function documentLines(
  resources: readonly AnalyzedResource[],
): (i: number, from: number, to: number) => boolean {
  const nextStart: number[] = new Array<number>(resources.length);
  let next = Infinity;
  for (let i = resources.length - 1; i >= 0; i--) {
    nextStart[i] = next;
    const here = resources[i]!.resource;
    if (i === 0 || resources[i - 1]!.resource.documentIndex !== here.documentIndex) next = here.lineOffset;
  }
  return (i, from, to) => resources[i]!.resource.lineOffset <= to && nextStart[i]! >= from;
}

/** Language id → extension id, from whatever the client sent; anything else is dropped. */
function sanitizeSyntaxServices(raw: unknown): SyntaxServices {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  return Object.fromEntries(
    Object.entries(raw).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''),
  );
}

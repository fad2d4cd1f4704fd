import {
  CodeLens,
  CodeLensRefreshRequest,
  createConnection,
  DocumentDiagnosticReportKind,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type DocumentDiagnosticReport,
  type Hover,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { readKubeconfig, redactText, type ClusterHealthReport } from '../cluster';
import { managerNames, type Finding } from '../core/findings/analysis';
import { fieldHover, objectHover } from '../core/findings/hover-text';
import { ownershipView } from '../core/findings/ownership-view';
import { nodeAt } from '../core/findings/ownership';
import { absoluteRange, isIdentityPath, rangeContains, type ManifestResource, type Position } from '../core/manifest/manifest';
import {
  requests,
  statusNotification,
  syntaxServicesNotification,
  type ContextsResult,
  type DocumentParams,
  type InitializationOptions,
  type OwnershipResult,
  type RefreshParams,
  type Settings,
  type StatusParams,
  type SyntaxServices,
  type VerifyResult,
} from '../protocol';
import { codeActions, codeActionKinds } from './code-actions';
import { serveCommands, serverCommandIds } from './commands';
import { toDiagnostic } from './diagnostics';
import { DocumentAnalyzer, reportsSyntax, type AnalyzedResource } from './document-analysis';
import { LoadProgress } from './progress';
import { DiagnosticsPusher } from './push-diagnostics';
import { Sessions, type Session } from './session';
import { SettingsSources } from './settings-sources';
import { verifyDocument } from './verify';

export interface ServerOptions {
  /**
   * Started by an editor's own configuration (`kube-conflict-hints lsp`), not by the VS Code
   * extension: the user who wrote that configuration chose to run it, so a client that says nothing
   * about workspace trust gets cluster access. A client that says `clusterAccess: false` still gets none.
   */
  standalone?: boolean;
}

/** Starts the server on the transport the client chose on the command line (--stdio, --node-ipc). */
export function startProcessServer(options: ServerOptions = {}): void {
  startServer(createConnection(ProposedFeatures.all), process.env, options);
}

/** Starts a server over a pair of streams: the protocol tests' in-memory transport. */
export function startStreamServer(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, env: NodeJS.ProcessEnv = process.env, options: ServerOptions = {}): void {
  startServer(createConnection(ProposedFeatures.all, input, output), env, options);
}

/**
 * Wires one connection. Handlers look up a document and delegate; nothing here knows Kubernetes
 * beyond calling core/ and cluster/.
 */
export function startServer(connection: Connection, env: NodeJS.ProcessEnv = process.env, serverOptions: ServerOptions = {}): void {
  const documents = new TextDocuments(TextDocument);
  const analyzer = new DocumentAnalyzer();
  // Fails closed: only an editor that says the workspace is trusted gets cluster access.
  let clusterAccess = false;
  let trustStated = false;
  const settingsSources = new SettingsSources(connection);
  const pusher = new DiagnosticsPusher(connection, () => documents.keys(), (uri) => diagnosticsOf(uri));
  const progress = new LoadProgress(connection);
  let canRefreshDiagnostics = false;
  let canRefreshCodeLens = false;
  let statusSession: Session | undefined;
  /** Sessions whose health has been asked once (when they first served a manifest or a command). */
  const probed = new WeakSet<Session>();
  /** Other language services that already report syntax errors, by language id. */
  let syntaxServices: SyntaxServices = {};
  let lastStatus = '';
  /** The server's own dry-run answers where they differed from the prediction, per document version. */
  const verified = new Map<string, { version: number; findings: Finding[] }>();

  const sendStatus = (params: StatusParams) => {
    const key = JSON.stringify(params);
    if (key === lastStatus) return;
    lastStatus = key;
    void connection.sendNotification(statusNotification, params);
  };
  const statusOf = (session: Session, health: ClusterHealthReport): StatusParams => ({
    health: health.state,
    context: health.context ?? session.connection.context?.name ?? '',
    ...(health.server ? { server: health.server } : {}),
    // The cluster layer redacts its messages; the status is shown in a tooltip and logged, so again here.
    detail: redactText(health.problem?.message ?? (health.state === 'connected' ? 'Connected' : 'Not asked yet')),
  });

  let refreshTimer: NodeJS.Timeout | undefined;
  const scheduleRefresh = () => {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = undefined;
      if (canRefreshDiagnostics) void connection.languages.diagnostics.refresh();
      if (canRefreshCodeLens) void connection.sendRequest(CodeLensRefreshRequest.type);
      pusher.scheduleAll();
    }, 50);
  };
  settingsSources.onChange(scheduleRefresh);

  const sessions = new Sessions(
    {
      onFactsChange: scheduleRefresh,
      onHealthChange: (session, health) => {
        if (session === statusSession) sendStatus(statusOf(session, health));
        scheduleRefresh();
      },
    },
    env,
    () => clusterAccess,
  );

  connection.onInitialize((params) => {
    const options = (params.initializationOptions ?? {}) as Partial<InitializationOptions>;
    trustStated = typeof options.clusterAccess === 'boolean';
    syntaxServices = sanitizeSyntaxServices(options.syntaxServices);
    clusterAccess = trustStated ? options.clusterAccess === true : serverOptions.standalone === true;
    const caps = params.capabilities;
    settingsSources.initialize(params);
    pusher.initialize(caps);
    progress.initialize(caps);
    canRefreshDiagnostics = caps.workspace?.diagnostics?.refreshSupport === true;
    canRefreshCodeLens = caps.workspace?.codeLens?.refreshSupport === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        diagnosticProvider: { interFileDependencies: false, workspaceDiagnostics: false },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [...codeActionKinds] },
        codeLensProvider: { resolveProvider: false },
        executeCommandProvider: { commands: serverCommandIds },
      },
      serverInfo: { name: 'kube-conflict-hints' },
    };
  });

  connection.onInitialized(() => {
    if (!clusterAccess) {
      const detail = trustStated
        ? 'Untrusted workspace: no cluster is contacted.'
        : 'The editor did not say that this workspace is trusted: no cluster is contacted.';
      sendStatus({ health: 'disabled', context: '', detail });
      return;
    }
    // The extension starts on every YAML and JSON file: a CI workflow or a compose file is no
    // reason to read the kubeconfig, whose exec plugin may open a login prompt. The cluster is
    // contacted once a Kubernetes manifest is open, or when the user asks (a command).
    sendStatus({ health: 'idle', context: '', detail: 'No Kubernetes manifest is open yet: no cluster has been contacted.' });
  });

  /** Settings are asked for per document (a folder can override them) and never cached globally. */
  function settingsFor(uri: string | undefined): Promise<Settings> {
    return settingsSources.settingsFor(uri);
  }

  /**
   * The session these settings select, which becomes the one the status bar shows. Only called
   * for a document holding Kubernetes objects or for a user's command: this is where the
   * kubeconfig is first read and the cluster first contacted.
   */
  async function sessionFor(settings: Settings): Promise<Session | undefined> {
    const session = await sessions.for(settings);
    if (!session) return undefined;
    if (session !== statusSession) {
      statusSession = session;
      sendStatus(statusOf(session, session.connection.health()));
    }
    if (!probed.has(session)) {
      // Say at once whether this cluster answers, before the first object's reads come back.
      probed.add(session);
      void session.connection.checkHealth();
    }
    return session;
  }

  async function analysisOf(uri: string) {
    const document = documents.get(uri);
    if (!document) return undefined;
    const settings = await settingsFor(uri);
    await analyzer.prepare(uri, document.version, document.getText());
    // A Kubernetes manifest is a document with apiVersion and kind at its top level (core/manifest/manifest
    // finds them); any other YAML or JSON gets no session, so opening it contacts no cluster.
    const isManifest = analyzer.parse(uri, document.version, document.getText()).resources.length > 0;
    const session = isManifest ? await sessionFor(settings) : undefined;
    const reportSyntax = reportsSyntax(settings, document.languageId, syntaxServices);
    return { document, settings, session, analysis: analyzer.analyze(uri, document.version, document.getText(), settings, session, reportSyntax) };
  }

  function resourceAt(resources: readonly AnalyzedResource[], position: Position): AnalyzedResource | undefined {
    return resources.find(({ resource: { range } }) => rangeContains(range, position));
  }

  /** The one path to a document's diagnostics, pulled by the client or pushed to it. */
  async function diagnosticsOf(uri: string) {
    const state = await analysisOf(uri);
    if (!state) return undefined;
    progress.observe(uri, state.analysis.resources);
    const version = state.document.version;
    const confirmed = verified.get(state.document.uri);
    const findings = confirmed?.version === version ? [...state.analysis.findings, ...confirmed.findings] : state.analysis.findings;
    return { version, diagnostics: findings.map((f) => toDiagnostic(f, version)) };
  }

  connection.languages.diagnostics.on(async (params): Promise<DocumentDiagnosticReport> => {
    const computed = await diagnosticsOf(params.textDocument.uri);
    return { kind: DocumentDiagnosticReportKind.Full, items: computed?.diagnostics ?? [] };
  });

  connection.onHover(async (params): Promise<Hover | null> => {
    const state = await analysisOf(params.textDocument.uri);
    const hit = state && resourceAt(state.analysis.resources, params.position);
    if (!hit) return null;
    const now = Date.now();
    const at = nodeAt(hit.resource, params.position, hit.facts?.schema);
    const value =
      !at || isIdentityPath(at.path)
        ? objectHover(hit.resource, hit.facts, now)
        : fieldHover(hit.resource, hit.facts, at.path, at.node, now);
    return { contents: { kind: 'markdown', value }, ...(at ? { range: at.keyRange } : {}) };
  });

  connection.onCodeAction(async (params) => {
    const state = await analysisOf(params.textDocument.uri);
    if (!state) return [];
    return codeActions(params, state.document, state.analysis);
  });

  connection.onCodeLens(async (params): Promise<CodeLens[]> => {
    const state = await analysisOf(params.textDocument.uri);
    if (!state || !state.settings.codeLens || !state.session) return [];
    return state.analysis.resources.flatMap(({ resource, facts, findings }) => {
      const title = codeLensTitle(resource, facts, findings);
      // Above the object's first line (a document's range starts at its `---`).
      const start = absoluteRange(resource, resource.root.entries[0]?.keyRange ?? resource.root.range).start;
      return title ? [{ range: { start, end: start }, command: { title, command: '' } }] : [];
    });
  });

  // Each product request is also a workspace/executeCommand command (see commands.ts).
  const commandHandlers = new Map<string, (params: DocumentParams) => unknown>();
  const onProductRequest = (method: string, handler: (params: DocumentParams) => unknown) => {
    commandHandlers.set(method, handler);
    connection.onRequest(method, handler);
  };
  serveCommands(connection, commandHandlers);

  onProductRequest(requests.refresh, async (params: RefreshParams | null | undefined) => {
    // A user's command connects even with no manifest open; the Kubernetes extension's context
    // switch (sent without `connect`) only refreshes what is already connected.
    if (params?.connect && clusterAccess) await sessionFor(await settingsFor(params.uri));
    sessions.refresh();
    scheduleRefresh();
    return null;
  });

  // (A context picked or a field manager changed arrives as didChangeConfiguration, which
  // settingsSources turns into a refresh.)
  connection.onNotification(syntaxServicesNotification, (params: unknown) => {
    syntaxServices = sanitizeSyntaxServices(params);
    scheduleRefresh();
  });

  onProductRequest(requests.contexts, async (params: DocumentParams | undefined): Promise<ContextsResult> => {
    const settings = await settingsFor(params?.uri);
    const read = await readKubeconfig({ kubeconfig: settings.kubeconfig }, env);
    if (!read.ok) return { contexts: [], problem: read.problem.message };
    return {
      ...(settings.context || read.value.currentContext ? { current: settings.context || read.value.currentContext } : {}),
      contexts: read.value.contexts.map((c) => ({
        name: c.name,
        cluster: c.cluster,
        ...(c.namespace ? { namespace: c.namespace } : {}),
        ...(c.server ? { server: c.server } : {}),
      })),
    };
  });

  onProductRequest(requests.managers, async (params: DocumentParams): Promise<string[]> => {
    const state = await analysisOf(params.uri);
    const names = new Set<string>([state?.settings.fieldManager ?? 'kubectl', 'kubectl']);
    for (const { facts } of state?.analysis.resources ?? []) {
      if (facts?.live.state === 'exists') for (const n of managerNames(facts.live.object)) names.add(n);
    }
    return [...names];
  });

  onProductRequest(requests.ownership, async (params: DocumentParams): Promise<OwnershipResult | null> => {
    const state = await analysisOf(params.uri);
    const hit = state && (params.position ? resourceAt(state.analysis.resources, params.position) : state.analysis.resources[0]);
    if (!hit || !hit.facts || hit.facts.live.state !== 'exists') return null;
    const { resource } = hit;
    return {
      title: `${resource.kind} ${resource.namespace ? `${resource.namespace}/` : ''}${resource.name ?? ''} (live, with owners)`,
      text: ownershipView(hit.facts.live.object, hit.facts.schema),
    };
  });

  async function verify(uri: string): Promise<VerifyResult> {
    const state = await analysisOf(uri);
    if (!state || !state.session) {
      const why = clusterAccess ? 'No Kubernetes object in this document.' : 'No cluster access in this workspace.';
      return { agreed: 0, differences: [], failed: [why] };
    }
    const { findings, ...result } = await verifyDocument(state.session, state.settings, state.analysis);
    verified.set(uri, { version: state.document.version, findings });
    for (const line of result.differences) connection.console.warn(redactText(`verify: ${line}`));
    for (const line of result.failed) connection.console.warn(redactText(`verify: could not verify ${line}`));
    connection.console.info(`verify: ${result.agreed} resource(s) answered as predicted, ${result.differences.length} differed`);
    scheduleRefresh();
    return result;
  }

  onProductRequest(requests.verify, (params: DocumentParams) => verify(params.uri));

  documents.onDidSave(async (e) => {
    if ((await settingsFor(e.document.uri)).verifyOnSave) await verify(e.document.uri);
  });

  documents.onDidChangeContent((e) => pusher.schedule(e.document.uri));
  documents.onDidClose((e) => {
    analyzer.forget(e.document.uri);
    verified.delete(e.document.uri);
    progress.forget(e.document.uri);
    pusher.closed(e.document.uri);
  });
  connection.onShutdown(() => {
    progress.dispose();
    sessions.dispose();
  });
  documents.listen(connection);
  connection.listen();
}

/** Language id → extension id, from whatever the client sent; anything else is dropped. */
function sanitizeSyntaxServices(raw: unknown): SyntaxServices {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  return Object.fromEntries(Object.entries(raw).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''));
}

function codeLensTitle(resource: ManifestResource, facts: AnalyzedResource['facts'], findings: AnalyzedResource['findings']): string | undefined {
  if (!facts || facts.kind.state !== 'served') return undefined;
  if (facts.live.state === 'absent') return 'new object: nothing to conflict with';
  if (facts.live.state !== 'exists') return undefined;
  const conflicts = findings.filter((f) => f.code === 'field-conflict').length;
  const errors = findings.filter((f) => f.severity === 'error').length;
  const managers = managerNames(facts.live.object);
  const parts = [
    conflicts > 0 ? `${conflicts} field conflict${conflicts === 1 ? '' : 's'}` : errors > 0 ? `${errors} error${errors === 1 ? '' : 's'}` : 'no conflicts',
    managers.length > 0 ? `managed by ${managers.join(', ')}` : 'no recorded owners',
  ];
  void resource;
  return parts.join(' · ');
}

// The language server's wiring: one connection, the state it keeps (workspace.ts: documents,
// trust, sessions; status.ts; refresh.ts; verified.ts), the document service and its sources (one
// per kind of input) and the handlers that answer the client (handlers/: each looks up a document
// and asks the service). Nothing here knows Kubernetes, and nothing is kept at module level: every
// piece of state belongs to a connection.
import {
  createConnection,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  ProposedFeatures,
  TextDocumentSyncKind,
  type Connection,
} from 'vscode-languageserver/node';
import { codeActionKinds } from './code-actions';
import { DocumentService } from './document-service';
import { serveCodeActions } from './handlers/code-actions';
import { serveCodeLenses } from './handlers/code-lens';
import { Commands, serverCommandIds } from './handlers/commands';
import { DiagnosticsHandler } from './handlers/diagnostics';
import { serveHovers } from './handlers/hover';
import { serveInlayHints } from './handlers/inlay-hints';
import { serveRequests } from './handlers/requests';
import { ManifestSource } from './manifest-source';
import { LoadProgress } from './progress';
import { DiagnosticsPusher } from './push-diagnostics';
import { RefreshScheduler } from './refresh';
import { RenderedSources } from './rendered';
import { SettingsSources } from './settings-sources';
import { StatusReporter } from './status';
import { DryRunAnswers } from './verified';
import { Workspace } from './workspace';

export interface ServerOptions {
  /**
   * Started by an editor's own configuration (`kube-conflict-hints lsp`), not by the VS Code
   * extension: the user who wrote that configuration chose to run it, so a client that says nothing
   * about workspace trust gets cluster access. A client that says anything but `clusterAccess: true`
   * (`false`, `"false"`, `null`) still gets none.
   */
  standalone?: boolean;
}

/** Starts the server on the transport the client chose on the command line (--stdio, --node-ipc). */
export function startProcessServer(options: ServerOptions = {}): void {
  startServer(createConnection(ProposedFeatures.all), process.env, options);
}

/** Starts a server over a pair of streams: the protocol tests' in-memory transport. */
export function startStreamServer(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
  options: ServerOptions = {},
): void {
  startServer(createConnection(ProposedFeatures.all, input, output), env, options);
}

/** Wires one connection. */
export function startServer(
  connection: Connection,
  env: NodeJS.ProcessEnv = process.env,
  serverOptions: ServerOptions = {},
): void {
  const settingsSources = new SettingsSources(connection);
  const progress = new LoadProgress(connection);
  const status = new StatusReporter(connection);
  const refresh = new RefreshScheduler(connection);
  settingsSources.onChange(() => refresh.schedule());
  const workspace = new Workspace(
    settingsSources,
    status,
    {
      onFactsChange: () => refresh.schedule(),
      onHealthChange: (session, health) => {
        status.healthChanged(session, health);
        refresh.schedule();
      },
    },
    env,
  );
  refresh.waitFor(workspace.sessions);
  refresh.measureWork(() => workspace.analyzer.workMs());
  // A CustomResourceDefinition opened, edited or closed changes what the other documents are told.
  workspace.analyzer.onDefinedKindsChange(() => refresh.schedule());
  const dryRuns = new DryRunAnswers(connection, workspace, refresh);
  const rendered = new RenderedSources(connection, workspace, refresh);

  // One source per kind of input, the first that claims a document answers for it; a file of
  // Kubernetes objects claims whatever is left. A new kind of input adds its source here.
  const service = new DocumentService(workspace, [rendered, new ManifestSource(workspace, progress, dryRuns)]);
  const diagnostics = new DiagnosticsHandler(connection, workspace, service);
  const pusher = new DiagnosticsPusher(
    connection,
    () => workspace.documents.keys(),
    (uri) => diagnostics.of(uri),
  );
  refresh.onRefresh(() => pusher.scheduleAll());
  serveHovers(connection, workspace, service);
  serveCodeActions(connection, workspace, service);
  serveCodeLenses(connection, workspace, service);
  serveInlayHints(connection, workspace, service);
  // Each product request is also a workspace/executeCommand command (see handlers/commands.ts).
  serveRequests({ connection, commands: new Commands(connection), workspace, refresh, dryRuns, rendered, env });

  connection.onInitialize((params) => {
    workspace.initialize(params.initializationOptions, serverOptions.standalone === true);
    // Rendering reads and runs only inside the folders the editor opened.
    workspace.sourceFiles.setFolders(
      params.workspaceFolders ? params.workspaceFolders.map((f) => f.uri) : params.rootUri ? [params.rootUri] : [],
    );
    watchFolders = params.capabilities.workspace?.workspaceFolders === true;
    watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    const caps = params.capabilities;
    settingsSources.initialize(params);
    pusher.initialize(caps);
    progress.initialize(caps);
    refresh.initialize(caps);
    rendered.initialize(caps);
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        diagnosticProvider: { interFileDependencies: false, workspaceDiagnostics: false },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [...codeActionKinds] },
        codeLensProvider: { resolveProvider: false },
        inlayHintProvider: { resolveProvider: false },
        executeCommandProvider: { commands: serverCommandIds },
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'kube-conflict-hints' },
    };
  });

  let watchFolders = false;
  let watchFiles = false;
  connection.onInitialized(() => {
    status.started(workspace);
    // A chart or an overlay reads files the editor does not send (`_helpers.tpl`, a generator's
    // `.env`, a file no editor has open): the editor's file watcher says when they change.
    if (watchFiles)
      void connection.client
        .register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*' }] })
        .catch(() => undefined);
    if (!watchFolders) return;
    connection.workspace.onDidChangeWorkspaceFolders(async () => {
      const folders = await connection.workspace.getWorkspaceFolders();
      workspace.sourceFiles.setFolders((folders ?? []).map((f) => f.uri));
      workspace.filesChanged();
      refresh.schedule();
    });
  });

  const { documents } = workspace;
  documents.onDidSave((e) => {
    // A saved kustomization or Chart.yaml may change what the files are; a saved source renders again.
    workspace.filesChanged(e.document.uri);
    rendered.saved(e.document.uri);
    dryRuns.saved(e.document.uri);
  });
  connection.onDidChangeWatchedFiles((params) => {
    // A Chart.yaml or kustomization that came, went or changed may change what the open files are.
    // So may anything created or deleted: an editor reports a new folder (`helm create`, a
    // `git checkout`, a move) as one event for the folder, never for the Chart.yaml inside it.
    const cameOrWent = params.changes.some((c) => c.type !== FileChangeType.Changed);
    const contexts = params.changes.filter((c) => workspace.sourceFiles.isContext(c.uri));
    if (cameOrWent) workspace.filesChanged();
    else for (const change of contexts) workspace.filesChanged(change.uri);
    if (cameOrWent || contexts.length > 0) refresh.schedule();
    rendered.changedOnDisk(params.changes.map((c) => c.uri));
  });
  documents.onDidOpen((e) => {
    // A Chart.yaml or kustomization opened says what its neighbours are, even when no file event
    // told the server it exists.
    if (!workspace.sourceFiles.isContext(e.document.uri)) return;
    workspace.filesChanged(e.document.uri);
    refresh.schedule();
  });
  documents.onDidChangeContent((e) => pusher.schedule(e.document.uri));
  documents.onDidClose((e) => {
    workspace.forget(e.document.uri);
    dryRuns.forget(e.document.uri);
    progress.forget(e.document.uri);
    pusher.closed(e.document.uri);
  });
  connection.onShutdown(() => {
    progress.dispose();
    rendered.dispose();
    workspace.sessions.dispose();
  });
  documents.listen(connection);
  connection.listen();
}

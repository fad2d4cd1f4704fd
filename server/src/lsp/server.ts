// The language server's wiring: one connection, the state it keeps (workspace.ts: documents,
// trust, sessions; status.ts; refresh.ts; verified.ts) and the handlers that answer the client
// (handlers/: each looks up a document and delegates to core/ and cluster/). Nothing here knows
// Kubernetes, and nothing is kept at module level: every piece of state belongs to a connection.
import { createConnection, ProposedFeatures, TextDocumentSyncKind, type Connection } from 'vscode-languageserver/node';
import type { InitializationOptions } from '../protocol';
import { codeActionKinds } from './code-actions';
import { serveCodeActions } from './handlers/code-actions';
import { serveCodeLenses } from './handlers/code-lens';
import { Commands, serverCommandIds } from './handlers/commands';
import { DiagnosticsHandler, manifestFindings } from './handlers/diagnostics';
import { serveHovers } from './handlers/hover';
import { serveRequests } from './handlers/requests';
import { LoadProgress } from './progress';
import { DiagnosticsPusher } from './push-diagnostics';
import { RefreshScheduler } from './refresh';
import { SettingsSources } from './settings-sources';
import { StatusReporter } from './status';
import { DryRunAnswers } from './verified';
import { Workspace } from './workspace';

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

/** Wires one connection. */
export function startServer(connection: Connection, env: NodeJS.ProcessEnv = process.env, serverOptions: ServerOptions = {}): void {
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
  const dryRuns = new DryRunAnswers(connection, workspace, refresh);

  // What a document's diagnostics are made of, in order. A new kind of input adds its source here.
  const diagnostics = new DiagnosticsHandler(connection, workspace, [manifestFindings(workspace, progress), dryRuns]);
  const pusher = new DiagnosticsPusher(connection, () => workspace.documents.keys(), (uri) => diagnostics.of(uri));
  refresh.onRefresh(() => pusher.scheduleAll());
  serveHovers(connection, workspace);
  serveCodeActions(connection, workspace);
  serveCodeLenses(connection, workspace);
  // Each product request is also a workspace/executeCommand command (see handlers/commands.ts).
  serveRequests({ connection, commands: new Commands(connection), workspace, refresh, dryRuns, env });

  connection.onInitialize((params) => {
    workspace.initialize((params.initializationOptions ?? {}) as Partial<InitializationOptions>, serverOptions.standalone === true);
    const caps = params.capabilities;
    settingsSources.initialize(params);
    pusher.initialize(caps);
    progress.initialize(caps);
    refresh.initialize(caps);
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

  connection.onInitialized(() => status.started(workspace));

  const { documents } = workspace;
  documents.onDidSave((e) => dryRuns.saved(e.document.uri));
  documents.onDidChangeContent((e) => pusher.schedule(e.document.uri));
  documents.onDidClose((e) => {
    workspace.analyzer.forget(e.document.uri);
    dryRuns.forget(e.document.uri);
    progress.forget(e.document.uri);
    pusher.closed(e.document.uri);
  });
  connection.onShutdown(() => {
    progress.dispose();
    workspace.sessions.dispose();
  });
  documents.listen(connection);
  connection.listen();
}

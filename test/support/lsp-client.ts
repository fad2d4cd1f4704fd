// A language client for protocol tests: real JSON-RPC over an in-memory stream pair, the server
// running in this process exactly as the bundled server runs behind VS Code. No editor involved.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import type {
  CodeAction,
  CodeLens,
  Diagnostic,
  DocumentDiagnosticReport,
  Hover,
  InitializeResult,
  Position,
  Range,
  TextEdit,
  WorkspaceEdit,
} from 'vscode-languageserver-protocol';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { startStreamServer } from '../../server/src/lsp/server';
import { serverEnv, serverExecArgv, type InitializationOptions, type Settings } from '../../server/src/protocol';

export interface TestServerOptions {
  settings?: Partial<Settings>;
  /**
   * What the client says at start-up; default: a trusted workspace. `null` sends no
   * initializationOptions at all (a client that says nothing about trust).
   */
  initializationOptions?: InitializationOptions | Record<string, unknown> | null;
  /** Run the bundled server (dist/server.js, built by `npm test`) as its own process over stdio, with the Node options VS Code's client gives it. */
  process?: boolean;
  /** The workspace folders the editor has open (file URIs); default none. */
  workspaceFolders?: string[];
  /** The server's environment (its cache place, KCH_API_CACHE); default this process's. */
  env?: NodeJS.ProcessEnv;
  /** Node options added to the client's for a server in its own process (a profile: `--cpu-prof`). */
  execArgv?: string[];
}

export interface TestServer {
  readonly initializeResult: InitializeResult;
  /** The server's process, when it runs in one (options.process). */
  readonly child?: ChildProcess;
  /** Every notification the server sent, in order (method and params). */
  readonly notifications: { method: string; params: unknown }[];
  /** How many times the server asked the editor to pull diagnostics again. */
  readonly refreshCount: () => number;
  setSettings(settings: Partial<Settings>): void;
  open(uri: string, text: string, languageId?: string): Promise<void>;
  /** Replaces the whole text; returns the new version. */
  change(uri: string, text: string): Promise<number>;
  /** Inserts `text` at the offset, sent as an incremental change (as VS Code types); returns the new version. */
  insert(uri: string, offset: number, text: string): Promise<number>;
  close(uri: string): Promise<void>;
  /** Says the document was saved (the test writes the file itself, as the editor would). */
  save(uri: string): Promise<void>;
  text(uri: string): string;
  diagnostics(uri: string): Promise<Diagnostic[]>;
  /**
   * Pulls diagnostics until `done` holds, pulling again each time the server asks the editor to
   * (as VS Code does): waits on the server's signal, never on a fixed delay.
   */
  diagnosticsUntil(uri: string, done: (d: Diagnostic[]) => boolean, timeoutMs?: number): Promise<Diagnostic[]>;
  hover(uri: string, position: Position): Promise<Hover | null>;
  codeLenses(uri: string): Promise<CodeLens[]>;
  /** Any request, e.g. the product's own `kubeConflictHints/...` ones. */
  request(method: string, params: unknown): Promise<unknown>;
  /** Any notification from the client, e.g. the product's own `kubeConflictHints/...` ones. */
  notify(method: string, params: unknown): Promise<void>;
  codeActions(uri: string, range: Range, diagnostics: Diagnostic[], only?: string[]): Promise<CodeAction[]>;
  /** Applies a workspace edit to the open documents (as the editor would) and syncs the server. */
  applyEdit(edit: WorkspaceEdit): Promise<void>;
  /** Resolves when a notification with this method arrives (or has arrived since `since`). */
  waitForNotification(method: string, predicate?: (params: unknown) => boolean, timeoutMs?: number): Promise<unknown>;
  /** Resolves on the next workspace/diagnostic/refresh request from the server. */
  waitForRefresh(timeoutMs?: number): Promise<void>;
  shutdown(): Promise<void>;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  let connection: MessageConnection;
  let child: ChildProcess | undefined;
  if (options.process) {
    child = spawn(
      process.execPath,
      [
        ...serverExecArgv,
        ...(options.execArgv ?? []),
        path.join(import.meta.dirname, '..', '..', 'dist', 'server.js'),
        '--stdio',
      ],
      // As the VS Code client starts it: its environment with serverEnv added.
      { stdio: ['pipe', 'pipe', 'inherit'], env: { ...(options.env ?? process.env), ...serverEnv } },
    );
    connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  } else {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    startStreamServer(toServer, toClient, options.env);
    connection = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  }

  let settings: Partial<Settings> = { ...options.settings };
  const documents = new Map<string, TextDocument>();
  const notifications: { method: string; params: unknown }[] = [];
  const notificationWaiters: { method: string; predicate: (p: unknown) => boolean; resolve: (p: unknown) => void }[] =
    [];
  let refreshes = 0;
  /** The last full diagnostics report per document, as an editor keeps it. */
  const reports = new Map<string, { resultId?: string; items: Diagnostic[] }>();
  const refreshWaiters: (() => void)[] = [];

  connection.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) =>
    params.items.map((item) => (item.section === 'kubeConflictHints' ? settings : null)),
  );
  connection.onRequest('workspace/diagnostic/refresh', () => {
    refreshes++;
    refreshWaiters.splice(0).forEach((resolve) => resolve());
    return null;
  });
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onNotification((method: string, params: unknown) => {
    notifications.push({ method, params });
    for (const waiter of [...notificationWaiters]) {
      if (waiter.method === method && waiter.predicate(params)) {
        notificationWaiters.splice(notificationWaiters.indexOf(waiter), 1);
        waiter.resolve(params);
      }
    }
  });
  connection.listen();

  const initializeResult: InitializeResult = await connection.sendRequest('initialize', {
    processId: null, // a pid makes the server poll for its parent, which keeps the test process alive
    rootUri: null,
    ...(options.workspaceFolders
      ? {
          workspaceFolders: options.workspaceFolders.map((uri) => ({ uri, name: uri.slice(uri.lastIndexOf('/') + 1) })),
        }
      : {}),
    capabilities: {
      workspace: {
        configuration: true,
        diagnostics: { refreshSupport: true },
        workspaceEdit: { documentChanges: true, resourceOperations: ['create'] },
      },
      textDocument: {
        diagnostic: { dynamicRegistration: false },
        hover: { contentFormat: ['markdown', 'plaintext'] },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source.fixAll'] } } },
        codeLens: {},
      },
    },
    ...(options.initializationOptions === null
      ? {}
      : { initializationOptions: options.initializationOptions ?? { clusterAccess: true } }),
  });
  await connection.sendNotification('initialized', {});

  const server: TestServer = {
    initializeResult,
    ...(child ? { child } : {}),
    notifications,
    refreshCount: () => refreshes,
    setSettings(next) {
      settings = { ...next };
      void connection.sendNotification('workspace/didChangeConfiguration', {
        settings: { kubeConflictHints: settings },
      });
    },
    async open(uri, text, languageId = 'yaml') {
      documents.set(uri, TextDocument.create(uri, languageId, 1, text));
      await connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId, version: 1, text },
      });
    },
    async change(uri, text) {
      const doc = documents.get(uri);
      if (!doc) throw new Error(`not open: ${uri}`);
      const next = TextDocument.create(uri, doc.languageId, doc.version + 1, text);
      documents.set(uri, next);
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: next.version },
        contentChanges: [{ text }],
      });
      return next.version;
    },
    async insert(uri, offset, text) {
      const doc = documents.get(uri);
      if (!doc) throw new Error(`not open: ${uri}`);
      const at = doc.positionAt(offset);
      const next = TextDocument.create(
        uri,
        doc.languageId,
        doc.version + 1,
        TextDocument.applyEdits(doc, [{ range: { start: at, end: at }, newText: text }]),
      );
      documents.set(uri, next);
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: next.version },
        contentChanges: [{ range: { start: at, end: at }, text }],
      });
      return next.version;
    },
    async close(uri) {
      documents.delete(uri);
      reports.delete(uri);
      await connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
    },
    async save(uri) {
      await connection.sendNotification('textDocument/didSave', { textDocument: { uri } });
    },
    text(uri) {
      const doc = documents.get(uri);
      if (!doc) throw new Error(`not open: ${uri}`);
      return doc.getText();
    },
    async diagnostics(uri) {
      // As VS Code pulls: naming the report it holds, and keeping it when the server says "unchanged".
      const held = reports.get(uri);
      const report: DocumentDiagnosticReport = await connection.sendRequest('textDocument/diagnostic', {
        textDocument: { uri },
        ...(held?.resultId ? { previousResultId: held.resultId } : {}),
      });
      if (report.kind === 'unchanged') {
        if (!held || report.resultId !== held.resultId)
          throw new Error(`the server answered "unchanged" for ${uri} about a report the client does not hold`);
        return held.items;
      }
      reports.set(uri, { ...(report.resultId ? { resultId: report.resultId } : {}), items: report.items });
      return report.items;
    },
    async diagnosticsUntil(uri, done, timeoutMs = 20000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const refreshed = server.waitForRefresh(Math.max(1, deadline - Date.now())).catch(() => undefined);
        const items = await server.diagnostics(uri);
        if (done(items)) return items;
        if (Date.now() >= deadline) {
          throw new Error(
            `diagnostics of ${uri} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(items.map((d) => d.message))}`,
          );
        }
        await refreshed;
      }
    },
    hover(uri, position) {
      return connection.sendRequest('textDocument/hover', { textDocument: { uri }, position });
    },
    codeLenses(uri) {
      return connection.sendRequest('textDocument/codeLens', { textDocument: { uri } });
    },
    request(method, params) {
      return connection.sendRequest(method, params);
    },
    notify(method, params) {
      return connection.sendNotification(method, params);
    },
    codeActions(uri, range, diagnostics, only) {
      return connection.sendRequest('textDocument/codeAction', {
        textDocument: { uri },
        range,
        context: { diagnostics, ...(only ? { only } : {}) },
      });
    },
    async applyEdit(edit) {
      const byUri = new Map<string, TextEdit[]>();
      for (const [uri, edits] of Object.entries(edit.changes ?? {})) byUri.set(uri, [...edits]);
      for (const change of edit.documentChanges ?? []) {
        // A file the edit creates is opened empty, as an editor opens it, before its text goes in.
        if ('kind' in change && change.kind === 'create' && !documents.has(change.uri))
          await server.open(change.uri, '');
        if ('textDocument' in change)
          byUri.set(change.textDocument.uri, [
            ...(byUri.get(change.textDocument.uri) ?? []),
            ...(change.edits as TextEdit[]),
          ]);
      }
      for (const [uri, edits] of byUri) {
        const doc = documents.get(uri);
        if (!doc) throw new Error(`edit for a document that is not open: ${uri}`);
        await server.change(uri, TextDocument.applyEdits(doc, edits));
      }
    },
    waitForNotification(method, predicate = () => true, timeoutMs = 15000) {
      const seen = notifications.find((n) => n.method === method && predicate(n.params));
      if (seen) return Promise.resolve(seen.params);
      return withTimeout(
        new Promise((resolve) => notificationWaiters.push({ method, predicate, resolve })),
        timeoutMs,
        `notification ${method}`,
      );
    },
    waitForRefresh(timeoutMs = 15000) {
      return withTimeout(new Promise<void>((resolve) => refreshWaiters.push(resolve)), timeoutMs, 'diagnostic refresh');
    },
    async shutdown() {
      await connection.sendRequest('shutdown');
      if (child) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        await connection.sendNotification('exit');
        await exited;
        connection.dispose();
        return;
      }
      // Neither an `exit` notification nor closing the streams: vscode-languageserver answers both
      // with process.exit(), and this server shares the test's process.
      connection.dispose();
    },
  };
  return server;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      timer.unref();
    }),
  ]);
}

/**
 * The in-process server keeps no timer or socket referenced while it merely waits (so that it never
 * keeps a command line alive); a test waiting on it holds the event loop itself.
 */
export async function holdingTheLoop<T>(work: () => Promise<T>): Promise<T> {
  const hold = setInterval(() => {}, 60_000);
  try {
    return await work();
  } finally {
    clearInterval(hold);
  }
}

// A language client that starts the server as other editors do — `node dist/cli.js lsp --stdio`
// as a child process — and says only what a chosen editor says: its capabilities, its
// initializationOptions, its answer to workspace/configuration (or none). Every message the server
// sends is recorded, so tests wait on what arrived (published diagnostics, progress) and never on time.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import type { ClientCapabilities, Diagnostic, InitializeResult } from 'vscode-languageserver-protocol';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export interface StdioClientOptions {
  capabilities: ClientCapabilities;
  initializationOptions?: unknown;
  /** Answers workspace/configuration items; only asked when the capabilities say so. */
  configuration?: (section: string | undefined) => unknown;
  env: NodeJS.ProcessEnv;
}

export interface Received {
  method: string;
  params: unknown;
  /** A request from the server (rather than a notification). */
  request: boolean;
}

export interface StdioClient {
  readonly initializeResult: InitializeResult;
  readonly received: readonly Received[];
  open(uri: string, text: string): Promise<void>;
  notify(method: string, params: unknown): Promise<void>;
  request<T>(method: string, params: unknown): Promise<T>;
  /** Resolves with the first message from the server (since index `from`) that matches. */
  waitFor(match: (m: Received) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<Received>;
  /** The latest diagnostics published for a document once `done` holds for them. */
  publishedUntil(uri: string, done: (d: Diagnostic[]) => boolean, timeoutMs?: number): Promise<Diagnostic[]>;
  close(): Promise<void>;
}

export async function startStdioClient(options: StdioClientOptions): Promise<StdioClient> {
  const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'lsp', '--stdio'], {
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const connection: MessageConnection = createMessageConnection(
    new StreamMessageReader(child.stdout!),
    new StreamMessageWriter(child.stdin!),
  );
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const record = (m: Received) => {
    received.push(m);
    for (const w of [...waiters]) w();
  };
  connection.onNotification((method: string, params: unknown) => record({ method, params, request: false }));
  // vscode-jsonrpc keeps $/progress from the handler above; progress for tokens it does not know arrives here.
  connection.onUnhandledProgress((params) => record({ method: '$/progress', params, request: false }));
  connection.onRequest((method: string, params: unknown) => {
    record({ method, params, request: true });
    if (method === 'workspace/configuration') {
      const items = (params as { items: { section?: string }[] }).items;
      return items.map((item) => options.configuration?.(item.section) ?? null);
    }
    return null;
  });
  connection.listen();

  const initializeResult: InitializeResult = await connection.sendRequest('initialize', {
    processId: null,
    rootUri: null,
    capabilities: options.capabilities,
    ...(options.initializationOptions !== undefined ? { initializationOptions: options.initializationOptions } : {}),
  });
  await connection.sendNotification('initialized', {});

  const client: StdioClient = {
    initializeResult,
    received,
    async open(uri, text) {
      await connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'yaml', version: 1, text },
      });
    },
    notify: (method, params) => connection.sendNotification(method, params),
    request: (method, params) => connection.sendRequest(method, params),
    waitFor(match, { from = 0, timeoutMs = 60_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.slice(from).find(match);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const sent = received.map((m) =>
            m.method === 'kubeConflictHints/status' ? `${m.method} ${JSON.stringify(m.params)}` : m.method,
          );
          reject(new Error(`timed out; the server sent: ${sent.join(', ')}; stderr: ${stderr}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async publishedUntil(uri, done, timeoutMs = 60_000) {
      const latest = (m: Received) =>
        m.method === 'textDocument/publishDiagnostics' && (m.params as { uri: string }).uri === uri;
      let result: Diagnostic[] | undefined;
      await client.waitFor(
        (m) => {
          if (!latest(m)) return false;
          // Only the latest publication counts: an older one has been replaced in the editor.
          const last = [...received].reverse().find(latest)!;
          const diagnostics = (last.params as { diagnostics: Diagnostic[] }).diagnostics;
          if (!done(diagnostics)) return false;
          result = diagnostics;
          return true;
        },
        { timeoutMs },
      );
      return result!;
    },
    async close() {
      try {
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
      } catch {
        // Already gone.
      }
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.on('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      connection.dispose();
    },
  };
  return client;
}

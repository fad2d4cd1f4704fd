import {
  createConnection,
  DocumentDiagnosticReportKind,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type Diagnostic,
  type DocumentDiagnosticReport,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { sanitizeSettings, type InitializationOptions, type Settings } from '../protocol';

/** Starts the server on the transport the client chose on the command line (--stdio, --node-ipc). */
export function startProcessServer(): void {
  startServer(createConnection(ProposedFeatures.all));
}

/** Starts a server over a pair of streams: the protocol tests' in-memory transport. */
export function startStreamServer(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): void {
  startServer(createConnection(ProposedFeatures.all, input, output));
}

/**
 * Wires one connection: open documents, settings per document, pull diagnostics.
 * Handlers only look up state and delegate; nothing here knows Kubernetes.
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  let clusterAccess = true;
  let canReadConfiguration = false;

  connection.onInitialize((params) => {
    const options = (params.initializationOptions ?? {}) as Partial<InitializationOptions>;
    clusterAccess = options.clusterAccess !== false;
    canReadConfiguration = params.capabilities.workspace?.configuration === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        diagnosticProvider: { interFileDependencies: false, workspaceDiagnostics: false },
      },
      serverInfo: { name: 'kube-conflict-hints' },
    };
  });

  /** Settings are asked for per document (a folder can override them) and never cached globally. */
  async function settingsFor(uri: string): Promise<Settings> {
    if (!canReadConfiguration) return sanitizeSettings({});
    const raw: unknown = await connection.workspace.getConfiguration({ scopeUri: uri, section: 'kubeConflictHints' });
    return sanitizeSettings(raw);
  }

  connection.languages.diagnostics.on(async (params): Promise<DocumentDiagnosticReport> => {
    const document = documents.get(params.textDocument.uri);
    if (!document) return { kind: DocumentDiagnosticReportKind.Full, items: [] };
    const settings = await settingsFor(document.uri);
    const items: Diagnostic[] = clusterAccess ? diagnose(document, settings) : [];
    return { kind: DocumentDiagnosticReportKind.Full, items };
  });

  documents.listen(connection);
  connection.listen();
}

function diagnose(_document: TextDocument, _settings: Settings): Diagnostic[] {
  return [];
}

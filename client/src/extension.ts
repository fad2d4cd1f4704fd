// The thin client: starts the language server, shows its status, forwards commands. Every
// decision about manifests and clusters is made in the server.
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { statusNotification, type InitializationOptions, type StatusParams } from '../../server/src/protocol';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Kube Conflict Hints');
  const status = vscode.window.createStatusBarItem('kubeConflictHints.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Kube Conflict Hints';
  status.text = '$(loading~spin) k8s';
  status.tooltip = 'Kube Conflict Hints: starting';
  status.show();
  context.subscriptions.push(output, status);

  const start = async () => {
    client = createClient(context, output);
    client.onNotification(statusNotification, (params: StatusParams) => showStatus(status, params));
    await client.start();
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('kubeConflictHints.restart', async () => {
      await client?.stop();
      await start();
    }),
    // Trust is decided at start-up (initializationOptions); granting it later needs a fresh server.
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await client?.stop();
      await start();
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

function createClient(context: vscode.ExtensionContext, output: vscode.OutputChannel): LanguageClient {
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6010'] } },
  };
  const initializationOptions: InitializationOptions = { clusterAccess: vscode.workspace.isTrusted };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { language: 'yaml', scheme: 'file' },
      { language: 'yaml', scheme: 'untitled' },
      { language: 'json', scheme: 'file' },
      { language: 'json', scheme: 'untitled' },
    ],
    synchronize: { configurationSection: 'kubeConflictHints' },
    initializationOptions,
    outputChannel: output,
  };
  return new LanguageClient('kubeConflictHints', 'Kube Conflict Hints', serverOptions, clientOptions);
}

const healthIcons: Record<StatusParams['health'], string> = {
  connected: '$(check)',
  unreachable: '$(debug-disconnect)',
  unauthenticated: '$(lock)',
  forbidden: '$(circle-slash)',
  disabled: '$(shield)',
  unknown: '$(question)',
};

function showStatus(item: vscode.StatusBarItem, params: StatusParams): void {
  item.text = `${healthIcons[params.health]} ${params.context || 'k8s'}`;
  item.tooltip = `Kube Conflict Hints: ${params.health}${params.server ? ` (${params.server})` : ''}\n${params.detail}`;
  item.backgroundColor =
    params.health === 'connected' || params.health === 'disabled'
      ? undefined
      : new vscode.ThemeColor('statusBarItem.warningBackground');
}

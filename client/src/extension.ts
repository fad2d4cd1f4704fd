// The thin client: starts the language server, shows its status, turns commands into requests.
// Every decision about manifests and clusters is made in the server.
import * as vscode from 'vscode';
import {
  LanguageClient,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  notifications,
  onNotification,
  defaultSettings,
  requests,
  sendNotification,
  sendRequest,
  serverEnv,
  serverExecArgv,
  settingsSection,
  type FleetViewResult,
  type ForcePreviewResult,
  type InitializationOptions,
  type OwnershipResult,
  type RefreshParams,
  type Settings,
  type DocumentStateParams,
  type StatusParams,
  type SyntaxServices,
} from '../../server/src/protocol';
import { kubernetesToolsSelection, watchKubernetesTools } from './kubernetes-tools';

const ownershipScheme = 'kube-conflict-hints-ownership';

/**
 * Extensions that report syntax errors for a language: where one is installed and enabled, the
 * server leaves syntax errors to it (kubeConflictHints.syntaxErrors: "auto"), so each appears once.
 * Red Hat's YAML extension is what most Kubernetes users have (the Kubernetes extension depends on
 * it); VS Code's built-in JSON support validates every JSON file.
 */
const syntaxServiceExtensions: Record<string, readonly string[]> = {
  yaml: ['redhat.vscode-yaml'],
  json: ['vscode.json-language-features'],
};

function detectSyntaxServices(): SyntaxServices {
  const found: SyntaxServices = {};
  for (const [languageId, ids] of Object.entries(syntaxServiceExtensions)) {
    const id = ids.find((candidate) => vscode.extensions.getExtension(candidate) !== undefined);
    if (id) found[languageId] = id;
  }
  return found;
}
let client: LanguageClient | undefined;
/** Where the "Preview forcing…" code action's answer is shown (set at activation). */
let forcePreviewDocs: OwnershipDocuments | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Kube Conflict Hints');
  const status = vscode.window.createStatusBarItem('kubeConflictHints.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Kube Conflict Hints';
  status.text = '$(loading~spin) k8s';
  status.tooltip = 'Kube Conflict Hints: starting';
  status.command = 'kubeConflictHints.pickContext';
  status.show();
  const statusBar = new StatusBar(status);
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(() => statusBar.show()));
  const ownershipDocs = new OwnershipDocuments();
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(ownershipScheme, ownershipDocs),
  );

  let syntaxServices = detectSyntaxServices();
  const start = async () => {
    syntaxServices = detectSyntaxServices();
    client = createClient(context, output, syntaxServices);
    onNotification(client, notifications.status, (params) => statusBar.cluster(params));
    onNotification(client, notifications.documentState, (params) => statusBar.document(params));
    // A chart installed as several releases: asked once, when the server first finds them.
    onNotification(
      client,
      notifications.chooseRelease,
      (params) => void vscode.commands.executeCommand('kubeConflictHints.chooseRelease', params.uri),
    );
    await client.start();
  };
  const restart = async () => {
    await client?.stop();
    await start();
  };
  const fleetView = new FleetView(() => (client?.isRunning() ? client : undefined));
  context.subscriptions.push(fleetView);
  const activeUri = () => vscode.window.activeTextEditor?.document.uri.toString();
  // The user asked: connect even when no manifest is open (the server waits for one otherwise).
  const refreshParams = (): RefreshParams => ({ ...(activeUri() ? { uri: activeUri() } : {}), connect: true });
  // Commands work while the server is down: they say so instead of failing.
  const withClient =
    <T, A extends unknown[]>(run: (c: LanguageClient, ...args: A) => Promise<T>) =>
    async (...args: A): Promise<T | undefined> => {
      if (!client?.isRunning()) {
        void vscode.window.showWarningMessage('Kube Conflict Hints: the language server is not running.');
        return undefined;
      }
      return run(client, ...args);
    };

  context.subscriptions.push(
    vscode.commands.registerCommand('kubeConflictHints.restart', restart),
    vscode.window.createTreeView('kubeConflictHints.fleet', { treeDataProvider: fleetView, showCollapseAll: true }),
    vscode.commands.registerCommand('kubeConflictHints.refreshFleet', () => fleetView.refresh()),
    // VS Code makes a focus command for every view: the palette finds it under the product's name too.
    vscode.commands.registerCommand('kubeConflictHints.showFleet', () =>
      vscode.commands.executeCommand('kubeConflictHints.fleet.focus'),
    ),
    // What the documents are told changes with their diagnostics: the view follows, a moment later.
    vscode.languages.onDidChangeDiagnostics(() => fleetView.refreshSoon()),
    vscode.commands.registerCommand(
      'kubeConflictHints.refresh',
      withClient((c) => sendRequest(c, requests.refresh, refreshParams())),
    ),
    vscode.commands.registerCommand(
      'kubeConflictHints.pickContext',
      withClient(async (c) => {
        const result = await sendRequest(c, requests.contexts, { uri: activeUri() });
        if (result.problem) return void vscode.window.showErrorMessage(`Kube Conflict Hints: ${result.problem}`);
        const picked = await vscode.window.showQuickPick(
          result.contexts.map((ctx) => ({
            label: ctx.name,
            description: ctx.name === result.current ? '(current)' : '',
            detail: [ctx.server, ctx.namespace && `namespace ${ctx.namespace}`].filter(Boolean).join(' · '),
          })),
          { placeHolder: 'The kubeconfig context to check manifests against' },
        );
        if (!picked) return;
        await settingsOf().update(settingKey('context'), picked.label, vscode.ConfigurationTarget.Global);
        // The user chose a cluster: say at once whether it answers.
        await sendRequest(c, requests.refresh, refreshParams());
      }),
    ),
    vscode.commands.registerCommand(
      'kubeConflictHints.pickFieldManager',
      withClient(async (c) => {
        const uri = activeUri();
        const seen = uri ? await sendRequest(c, requests.managers, { uri }) : ['kubectl'];
        const picked = await vscode.window.showQuickPick([...seen, 'Other…'], {
          placeHolder: 'The field manager your apply uses',
        });
        const value = picked === 'Other…' ? await vscode.window.showInputBox({ prompt: 'Field manager name' }) : picked;
        if (value) await settingsOf().update(settingKey('fieldManager'), value, vscode.ConfigurationTarget.Workspace);
      }),
    ),
    vscode.commands.registerCommand('kubeConflictHints.showOwnership', async (options?: { manager?: string }) => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return;
      // Asked again from a view: the object that view shows.
      const source = ownershipDocs.sourceOf(editor.document.uri) ?? cursorOf(editor);
      const manager = typeof options?.manager === 'string' && options.manager !== '' ? options.manager : undefined;
      await withClient((c) =>
        showOwnershipView(c, ownershipDocs, { ...source, ...(manager !== undefined ? { manager } : {}) }),
      )();
    }),
    vscode.commands.registerCommand(
      'kubeConflictHints.filterOwnership',
      withClient(async (c) => {
        const editor = vscode.window.activeTextEditor;
        if (!editor) return;
        // From a view, its object and legend; from a manifest, the object under the cursor.
        const source = ownershipDocs.sourceOf(editor.document.uri) ?? cursorOf(editor);
        const shown = ownershipDocs.resultOf(editor.document.uri) ?? (await sendRequest(c, requests.ownership, source));
        if (!shown)
          return void vscode.window.showInformationMessage(
            'Kube Conflict Hints: no live object for the resource under the cursor.',
          );
        const names = [...new Set(shown.managers.map((m) => m.manager))];
        const items = [
          {
            label: 'All managers',
            description: 'every line with its owners',
            manager: undefined as string | undefined,
          },
          ...names.map((name) => ({
            label: name,
            description: shown.managers
              .filter((m) => m.manager === name)
              .map(
                (m) =>
                  `${[m.operation, m.subresource].filter(Boolean).join(', ')} · ${m.fields} ${m.fields === 1 ? 'field' : 'fields'}${m.time ? ` · ${m.time}` : ''}`,
              )
              .join('; '),
            manager: name as string | undefined,
          })),
        ];
        const picked = await vscode.window.showQuickPick(items, {
          placeHolder: 'Filter by manager…: mark only the lines this manager owns',
        });
        if (!picked) return;
        await showOwnershipView(c, ownershipDocs, {
          ...source,
          ...(picked.manager !== undefined ? { manager: picked.manager } : {}),
        });
      }),
    ),
    vscode.commands.registerCommand('kubeConflictHints.toggleOwnershipHints', async () => {
      // Flipped where it takes effect: the user's own settings, unless a workspace or folder sets it.
      const scope = vscode.window.activeTextEditor?.document.uri;
      const settings = settingsOf(scope);
      const key = settingKey('ownershipHints');
      const inspected = settings.inspect<boolean>(key);
      const target =
        inspected?.workspaceFolderValue !== undefined
          ? vscode.ConfigurationTarget.WorkspaceFolder
          : inspected?.workspaceValue !== undefined
            ? vscode.ConfigurationTarget.Workspace
            : vscode.ConfigurationTarget.Global;
      await settings.update(key, !settings.get<boolean>(key, defaultSettings.ownershipHints), target);
    }),
    vscode.commands.registerCommand(
      'kubeConflictHints.forcePreview',
      withClient(async (c) => {
        const editor = vscode.window.activeTextEditor;
        if (!editor) return;
        const result = await sendRequest(c, requests.forcePreview, {
          uri: editor.document.uri.toString(),
          position: { line: editor.selection.active.line, character: editor.selection.active.character },
        });
        await showForcePreview(ownershipDocs, result);
      }),
    ),
    vscode.commands.registerCommand(
      'kubeConflictHints.verify',
      withClient(async (c) => {
        const uri = activeUri();
        if (!uri) return;
        const result = await sendRequest(c, requests.verify, { uri });
        const summary = `${result.agreed} resource(s) answered as predicted, ${result.differences.length} differed${result.failed.length ? `, ${result.failed.length} not verified` : ''}.`;
        if (result.differences.length || result.failed.length) {
          output.show(true);
          void vscode.window.showWarningMessage(`Kube Conflict Hints (dry run): ${summary} See the output.`);
        } else void vscode.window.showInformationMessage(`Kube Conflict Hints (dry run): ${summary}`);
      }),
    ),
    vscode.commands.registerCommand(
      'kubeConflictHints.chooseOverlays',
      // `uri`: the file a quick fix names (the hint of a file whose overlays are all left out); else the active one.
      withClient(async (c, uri?: unknown) => {
        const document =
          (typeof uri === 'string' ? uri : undefined) ?? vscode.window.activeTextEditor?.document.uri.toString();
        if (!document)
          return void vscode.window.showInformationMessage(
            'Kube Conflict Hints: open a file of a Kustomize overlay first.',
          );
        // The server found the overlays and says which count; the choice is the workspace folder's setting.
        const result = await sendRequest(c, requests.overlays, { uri: document });
        const folder = result.folder ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(result.folder)) : undefined;
        if (result.problem || !folder)
          return void vscode.window.showInformationMessage(
            `Kube Conflict Hints: ${result.problem ?? 'the file is in no workspace folder.'}`,
          );
        const items = result.overlays.map((o) => ({
          label: o.label,
          description: o.entry,
          picked: o.counted,
          entry: o.entry,
        }));
        const picked = await vscode.window.showQuickPick(items, {
          canPickMany: true,
          placeHolder: 'The overlays that count for this file (each is judged on its own)',
        });
        if (!picked) return;
        if (picked.length === 0)
          return void vscode.window.showInformationMessage(
            'Kube Conflict Hints: choose at least one overlay (an empty list means every overlay counts).',
          );
        if (result.everyOverlay && picked.length === items.length) return;
        const chosen = [...new Set([...result.keep, ...picked.map((p) => p.entry)])];
        await settingsOf(folder.uri).update(
          settingKey('kustomizeOverlays'),
          chosen,
          vscode.ConfigurationTarget.WorkspaceFolder,
        );
      }),
    ),
    vscode.commands.registerCommand(
      'kubeConflictHints.chooseRelease',
      withClient(async (c, asked?: unknown) => {
        const uri = typeof asked === 'string' ? asked : vscode.window.activeTextEditor?.document.uri.toString();
        if (!uri)
          return void vscode.window.showInformationMessage('Kube Conflict Hints: open a file of a Helm chart first.');
        // The server knows the releases the cluster holds the chart as; the choice is the workspace folder's setting.
        const result = await sendRequest(c, requests.releases, { uri });
        const folder = result.folder ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(result.folder)) : undefined;
        if (result.problem || !folder || result.chart === undefined)
          return void vscode.window.showInformationMessage(
            `Kube Conflict Hints: ${result.problem ?? 'the file is in no workspace folder.'}`,
          );
        const items = result.releases.map((r) => ({
          label: r.label,
          description: r.description,
          picked: r.judged,
          value: r.value,
        }));
        const picked = await vscode.window.showQuickPick(items, {
          placeHolder: `The chart ${result.chart} is installed as several releases: which one do its files describe?`,
          ignoreFocusOut: true,
        });
        if (!picked) return;
        const settings = settingsOf(folder.uri);
        const now = settings.inspect<Record<string, string>>(settingKey('helmReleases'))?.workspaceFolderValue ?? {};
        await settings.update(
          settingKey('helmReleases'),
          { ...now, [result.chart]: picked.value },
          vscode.ConfigurationTarget.WorkspaceFolder,
        );
      }),
    ),
    // Trust is decided at start-up (initializationOptions); granting it later needs a fresh server.
    vscode.workspace.onDidGrantWorkspaceTrust(restart),
    // Red Hat's YAML extension installed, enabled or removed while the editor runs.
    vscode.extensions.onDidChange(() => {
      const now = detectSyntaxServices();
      if (JSON.stringify(now) === JSON.stringify(syntaxServices)) return;
      syntaxServices = now;
      if (client?.isRunning()) void sendNotification(client, notifications.syntaxServices, now);
    }),
  );
  forcePreviewDocs = ownershipDocs;
  await start();
  context.subscriptions.push(
    ...(await watchKubernetesTools(() => void (client && sendRequest(client, requests.refresh, undefined)))),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

function createClient(
  context: vscode.ExtensionContext,
  output: vscode.OutputChannel,
  syntaxServices: SyntaxServices,
): LanguageClient {
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc, options: { execArgv: [...serverExecArgv], env: { ...serverEnv } } },
    debug: {
      module,
      transport: TransportKind.ipc,
      options: { execArgv: [...serverExecArgv, '--nolazy', '--inspect=6010'], env: { ...serverEnv } },
    },
  };
  // The server contacts no cluster unless told the workspace is trusted (it fails closed).
  const initializationOptions: InitializationOptions = { clusterAccess: vscode.workspace.isTrusted, syntaxServices };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { language: 'yaml', scheme: 'file' },
      { language: 'yaml', scheme: 'untitled' },
      { language: 'json', scheme: 'file' },
      { language: 'json', scheme: 'untitled' },
    ],
    synchronize: { configurationSection: settingsSection },
    initializationOptions,
    outputChannel: output,
    middleware: {
      // The "Preview forcing…" code action runs the server's command; its answer is shown here
      // (VS Code would otherwise drop what a command returns).
      executeCommand: async (command, args, next) => {
        // The quick fix of a file no chosen overlay uses: the choice itself, not the server's list.
        if (command === requests.overlays.command)
          return vscode.commands.executeCommand(
            'kubeConflictHints.chooseOverlays',
            (args[0] as { uri?: string } | undefined)?.uri,
          );
        const result = await next(command, args);
        if (command === requests.forcePreview.command && forcePreviewDocs)
          await showForcePreview(forcePreviewDocs, (result ?? null) as ForcePreviewResult | null);
        return result;
      },
      // Where the user set nothing, follow the Kubernetes extension's kubeconfig and context.
      // In an untrusted workspace, no kubeconfig or context the workspace provides is passed on
      // (nor the Kubernetes extension's, which its workspace settings may choose): a kubeconfig
      // can run a program. The server contacts no cluster there anyway; this keeps it that way
      // should a server ever be started with access by mistake.
      workspace: {
        configuration: async (params, token, next) => {
          const answers = (await next(params, token)) as unknown[];
          if (!Array.isArray(answers)) return answers;
          const trusted = vscode.workspace.isTrusted;
          const selection = trusted ? await kubernetesToolsSelection() : undefined;
          return answers.map((answer, i) => {
            const item = params.items[i];
            if (item?.section !== settingsSection || !answer || typeof answer !== 'object') return answer;
            const own = answer as { kubeconfig?: string; context?: string; contexts?: unknown };
            const kubeconfig = trusted ? own.kubeconfig : userValue('kubeconfig', item.scopeUri);
            const context = trusted ? own.context : userValue('context', item.scopeUri);
            const contexts = trusted ? own.contexts : userList('contexts', item.scopeUri);
            // The rendering tools are programs: whatever the workspace says, only the user's own choice runs.
            const helmPath = userValue('helmPath', item.scopeUri);
            const kustomizePath = userValue('kustomizePath', item.scopeUri);
            return {
              ...answer,
              kubeconfig: kubeconfig || selection?.kubeconfig || '',
              context: context ?? '',
              contexts: Array.isArray(contexts) ? contexts : [],
              helmPath,
              kustomizePath,
            };
          });
        },
      },
    },
  };
  // The client's id names its trace setting, `kubeConflictHints.trace.server`: one section for all settings.
  return new LanguageClient(settingsSection, 'Kube Conflict Hints', serverOptions, clientOptions);
}

/** A setting's value from the user's own settings only, never from a workspace or folder. */
function userValue(key: 'kubeconfig' | 'context' | 'helmPath' | 'kustomizePath', scopeUri: string | undefined): string {
  const inspected = settingsOf(scopeUri ? vscode.Uri.parse(scopeUri) : undefined).inspect<string>(settingKey(key));
  return inspected?.globalValue ?? inspected?.defaultValue ?? '';
}

/** A list setting's value from the user's own settings only. */
function userList(key: 'contexts', scopeUri: string | undefined): unknown {
  const inspected = settingsOf(scopeUri ? vscode.Uri.parse(scopeUri) : undefined).inspect<unknown>(settingKey(key));
  return inspected?.globalValue ?? inspected?.defaultValue ?? [];
}

const healthIcons: Record<StatusParams['health'], string> = {
  connected: '$(check)',
  unreachable: '$(debug-disconnect)',
  unauthenticated: '$(lock)',
  forbidden: '$(circle-slash)',
  throttled: '$(watch)',
  failing: '$(error)',
  disabled: '$(shield)',
  unknown: '$(question)',
  idle: '$(circle-outline)',
};

/** States that are no trouble: no warning background, no state word after the context. */
const calmStates: ReadonlySet<StatusParams['health']> = new Set(['connected', 'disabled', 'idle']);

/**
 * The status bar: the cluster's health, and the active file's state over it — never a calm ✓ over
 * a file that was not judged (a render failed, a tool is missing, a document does not parse).
 */
class StatusBar {
  private health: StatusParams | undefined;
  private readonly documents = new Map<string, DocumentStateParams>();

  constructor(private readonly item: vscode.StatusBarItem) {}

  cluster(params: StatusParams): void {
    this.health = params;
    this.show();
  }

  document(params: DocumentStateParams): void {
    if (params.state === 'judged') this.documents.delete(params.uri);
    else this.documents.set(params.uri, params);
    this.show();
  }

  show(): void {
    const params = this.health;
    if (!params) return;
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const file = active ? this.documents.get(active) : undefined;
    const notJudged = file?.state === 'not-judged';
    const calm = calmStates.has(params.health) && !notJudged;
    const word = notJudged ? ' not judged' : calmStates.has(params.health) ? '' : ` ${params.health}`;
    // Several contexts: each one's health under its name (`$(check) staging $(debug-disconnect) gone`).
    const shown = params.contexts
      ? params.contexts.map((c) => `${healthIcons[c.health]} ${c.context}`).join(' ')
      : `${healthIcons[params.health]} ${params.context || 'k8s'}`;
    this.item.text = notJudged
      ? `$(warning) ${params.contexts ? params.contexts.map((c) => c.context).join(', ') : params.context || 'k8s'}${word}`
      : params.contexts
        ? shown
        : `${shown}${word}`;
    this.item.tooltip = [
      ...(file?.reason ? [`This file: ${file.reason}`] : []),
      `Kube Conflict Hints: ${params.health === 'idle' ? 'waiting for a Kubernetes manifest' : params.health}${params.server ? ` (${params.server})` : ''}`,
      params.detail,
      'Click to pick a context.',
    ].join('\n');
    this.item.backgroundColor = calm ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
  }
}

/**
 * The force preview beside the manifest, read-only, with the kubectl command to copy. Nothing is
 * run: the user copies the command and decides.
 */
async function showForcePreview(docs: OwnershipDocuments, result: ForcePreviewResult | null): Promise<void> {
  if (!result)
    return void vscode.window.showInformationMessage(
      'Kube Conflict Hints: no live object for the resource under the cursor.',
    );
  const doc = await vscode.workspace.openTextDocument(docs.put(result, { extension: 'txt' }));
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  const copy = 'Copy kubectl command';
  const taken = result.preview.losses.reduce((n, l) => n + l.fields.length, 0);
  const back = result.preview.losses.flatMap((l) =>
    l.takesBack ? [`${l.takesBack.by} ${l.takesBack.certainty} take ${l.takesBack.paths.join(', ')} back`] : [],
  );
  const summary = `Forcing takes ${taken} field${taken === 1 ? '' : 's'}${back.length ? `; ${back.join('; ')}` : ''}.`;
  if ((await vscode.window.showInformationMessage(`Kube Conflict Hints: ${summary}`, copy)) === copy)
    await vscode.env.clipboard.writeText(result.command);
}

/** The manifest and place an ownership view was asked for. */
interface OwnershipSource {
  uri: string;
  position: { line: number; character: number };
}

function cursorOf(editor: vscode.TextEditor): OwnershipSource {
  return {
    uri: editor.document.uri.toString(),
    position: { line: editor.selection.active.line, character: editor.selection.active.character },
  };
}

/** Asks for the view of the object at `params` (one manager's lines when `manager` is given) and opens it beside. */
async function showOwnershipView(
  c: LanguageClient,
  docs: OwnershipDocuments,
  params: OwnershipSource & { manager?: string },
): Promise<void> {
  const result = await sendRequest(c, requests.ownership, params);
  if (!result)
    return void vscode.window.showInformationMessage(
      'Kube Conflict Hints: no live object for the resource under the cursor.',
    );
  const uri = docs.put(result, { result, source: { uri: params.uri, position: params.position } });
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.languages.setTextDocumentLanguage(doc, 'kube-ownership');
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

/** Read-only documents for "show ownership" (with what each was asked for, to filter it) and the force preview, served from memory. */
class OwnershipDocuments implements vscode.TextDocumentContentProvider {
  private readonly views = new Map<string, { text: string; result?: OwnershipResult; source?: OwnershipSource }>();
  private counter = 0;
  /** A view: an ownership view with its result and what it was asked for, or another read-only text (the force preview). */
  put(
    shown: { title: string; text: string },
    extra: { extension?: string; result?: OwnershipResult; source?: OwnershipSource } = {},
  ): vscode.Uri {
    const uri = vscode.Uri.from({
      scheme: ownershipScheme,
      path: `/${++this.counter}/${shown.title.replace(/[\\/]/g, '_')}.${extra.extension ?? 'yaml'}`,
    });
    this.views.set(uri.toString(), {
      text: shown.text,
      ...(extra.result ? { result: extra.result } : {}),
      ...(extra.source ? { source: extra.source } : {}),
    });
    return uri;
  }
  sourceOf(uri: vscode.Uri): OwnershipSource | undefined {
    return this.views.get(uri.toString())?.source;
  }
  resultOf(uri: vscode.Uri): OwnershipResult | undefined {
    return this.views.get(uri.toString())?.result;
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.views.get(uri.toString())?.text ?? '';
  }
}

/** The extension's settings, the section the server reads. */
function settingsOf(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(settingsSection, scope);
}

/** A setting's key, checked against the settings the server reads. */
function settingKey(key: keyof Settings): string {
  return key;
}

type FleetNode =
  | { readonly kind: 'document'; readonly document: FleetViewResult['documents'][number] }
  | {
      readonly kind: 'object';
      readonly uri: string;
      readonly object: FleetViewResult['documents'][number]['objects'][number];
    }
  | {
      readonly kind: 'cell';
      readonly uri: string;
      readonly line: number;
      readonly context: string;
      readonly cell: string;
    };

/**
 * The *Fleet* view: each open document judged in several contexts, its objects with each context's
 * state (a conflict and with whom, exists, missing, not judged), a click jumping to the object's
 * line. The server says it all (requests.fleet); the view only lays it out.
 */
class FleetView implements vscode.TreeDataProvider<FleetNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<FleetNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly running: () => LanguageClient | undefined) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  refreshSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 300);
  }

  async getChildren(node?: FleetNode): Promise<FleetNode[]> {
    if (!node) {
      const c = this.running();
      const result = c ? await sendRequest(c, requests.fleet, undefined).catch(() => undefined) : undefined;
      return (result?.documents ?? []).map((document) => ({ kind: 'document' as const, document }));
    }
    if (node.kind === 'document')
      return node.document.objects.map((object) => ({ kind: 'object' as const, uri: node.document.uri, object }));
    if (node.kind === 'object')
      return node.object.cells.map((c) => ({
        kind: 'cell' as const,
        uri: node.uri,
        line: node.object.line,
        context: c.context,
        cell: c.cell,
      }));
    return [];
  }

  getTreeItem(node: FleetNode): vscode.TreeItem {
    if (node.kind === 'document') {
      const uri = vscode.Uri.parse(node.document.uri);
      const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.Expanded);
      // The folder, where the file is not at the top of the workspace.
      const relative = vscode.workspace.asRelativePath(uri, false);
      if (relative.includes('/')) item.description = relative.slice(0, relative.lastIndexOf('/'));
      return item;
    }
    const jump = (uri: string, line: number): vscode.Command => ({
      title: 'Go to the object',
      command: 'vscode.open',
      arguments: [vscode.Uri.parse(uri), { selection: new vscode.Range(line, 0, line, 0) }],
    });
    if (node.kind === 'object') {
      const item = new vscode.TreeItem(node.object.title, vscode.TreeItemCollapsibleState.Expanded);
      // One column per context, in the setting's order.
      item.description = node.object.cells.map((c) => `${c.context}: ${c.cell}`).join(' │ ');
      item.tooltip = new vscode.MarkdownString(
        [
          `**${node.object.title}**`,
          '',
          '| context | state |',
          '|---|---|',
          ...node.object.cells.map((c) => `| ${c.context.replace(/\|/g, '\\|')} | ${c.cell.replace(/\|/g, '\\|')} |`),
        ].join('\n'),
      );
      item.command = jump(node.uri, node.object.line);
      return item;
    }
    const item = new vscode.TreeItem(node.context, vscode.TreeItemCollapsibleState.None);
    item.description = node.cell;
    item.iconPath = new vscode.ThemeIcon(fleetIcon(node.cell));
    item.command = jump(node.uri, node.line);
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
  }
}

function fleetIcon(cell: string): string {
  if (cell === 'exists' || cell === 'missing') return 'pass';
  if (cell === 'not judged' || cell === '-') return 'question';
  return cell.startsWith('conflict') ? 'error' : 'warning';
}

// The product's own requests (`kubeConflictHints/...`: refresh, ownership view, dry-run verify,
// contexts, managers) as `workspace/executeCommand` commands, for clients that cannot send custom
// requests or show custom UI: Helix, Zed, eglot and LSP4IJ can all run a server's commands, and a
// command's result (the ownership view's text, the verify summary) is what such a client can show.
//
// The ids differ from the VS Code extension's `kubeConflictHints.*` commands on purpose: VS Code's
// language client registers every command a server advertises, and two registrations of one id fail.
import type { Connection, ExecuteCommandParams } from 'vscode-languageserver/node';
import { requests, type DocumentParams } from '../protocol';

export const serverCommands = {
  [requests.refresh]: 'kube-conflict-hints.refresh',
  [requests.ownership]: 'kube-conflict-hints.showOwnership',
  [requests.verify]: 'kube-conflict-hints.verify',
  [requests.contexts]: 'kube-conflict-hints.contexts',
  [requests.managers]: 'kube-conflict-hints.managers',
} as const;

export const serverCommandIds: string[] = Object.values(serverCommands);

type Handler = (params: DocumentParams) => unknown;

/**
 * Answers `workspace/executeCommand` with the handler of the matching request. Arguments: a
 * DocumentParams object (`{ uri, position? }`), or a URI and an optional position, as editors'
 * configuration languages make it easiest to write.
 */
export function serveCommands(connection: Connection, handlers: ReadonlyMap<string, Handler>): void {
  const byCommand = new Map(Object.entries(serverCommands).map(([method, command]) => [command as string, method]));
  connection.onExecuteCommand(async (params: ExecuteCommandParams) => {
    const method = byCommand.get(params.command);
    const handler = method && handlers.get(method);
    if (!handler) throw new Error(`unknown command ${JSON.stringify(params.command)}; the server offers ${serverCommandIds.join(', ')}`);
    const args = documentParams(params.arguments ?? []);
    const needsDocument = method !== requests.refresh && method !== requests.contexts;
    if (needsDocument && !args) throw new Error(`${params.command} needs the document: arguments [{ "uri": ..., "position": ... }] or [uri, position]`);
    return (await handler(args ?? { uri: '' })) ?? null;
  });
}

function documentParams(args: readonly unknown[]): DocumentParams | undefined {
  const [first, second] = args;
  const position = (value: unknown) =>
    typeof value === 'object' && value !== null && Number.isInteger((value as { line?: unknown }).line) && Number.isInteger((value as { character?: unknown }).character)
      ? { line: (value as { line: number }).line, character: (value as { character: number }).character }
      : undefined;
  if (typeof first === 'string') {
    const at = position(second);
    return { uri: first, ...(at ? { position: at } : {}) };
  }
  if (typeof first === 'object' && first !== null && typeof (first as { uri?: unknown }).uri === 'string') {
    const at = position((first as { position?: unknown }).position);
    return { uri: (first as { uri: string }).uri, ...(at ? { position: at } : {}) };
  }
  return undefined;
}

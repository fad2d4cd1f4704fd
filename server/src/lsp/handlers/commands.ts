// The product's own requests (`kubeConflictHints/...`: refresh, ownership view, dry-run verify,
// contexts, managers) as `workspace/executeCommand` commands, for clients that cannot send custom
// requests or show custom UI: Helix, Zed, eglot and LSP4IJ can all run a server's commands, and a
// command's result (the ownership view's text, the verify summary) is what such a client can show.
// Each request's command id is declared with the request in protocol.ts.
//
// The ids differ from the VS Code extension's `kubeConflictHints.*` commands on purpose: VS Code's
// language client registers every command a server advertises, and two registrations of one id fail.
import type { Connection, ExecuteCommandParams } from 'vscode-languageserver/node';
import { onRequest, requests, type ClientRequest, type DocumentParams, type RequestHandler } from '../../protocol';

/** Every command the server offers: one per custom request. */
export const serverCommandIds: string[] = Object.values(requests).map((request) => request.command);

interface CommandEntry {
  readonly request: ClientRequest<unknown, unknown>;
  readonly handler: (params: DocumentParams) => unknown;
}

/**
 * Answers `workspace/executeCommand` with the handler of the matching request. Arguments: a
 * DocumentParams object (`{ uri, position? }`), or a URI and an optional position, as editors'
 * configuration languages make it easiest to write. The ownership view's filter rides along:
 * `{ uri, position, manager }`, or a manager's name after the URI and position; so does the force
 * preview's context (`{ uri, position, context }`).
 */
export class Commands {
  private readonly byCommand = new Map<string, CommandEntry>();

  constructor(connection: Connection) {
    connection.onExecuteCommand(async (params: ExecuteCommandParams) => {
      const entry = this.byCommand.get(params.command);
      if (!entry)
        throw new Error(
          `unknown command ${JSON.stringify(params.command)}; the server offers ${serverCommandIds.join(', ')}`,
        );
      const args = documentParams(params.arguments ?? []);
      if (entry.request.needsDocument && !args)
        throw new Error(
          `${params.command} needs the document: arguments [{ "uri": ..., "position": ... }] or [uri, position]`,
        );
      return (await entry.handler(args ?? { uri: '' })) ?? null;
    });
  }

  /** Answers the request both as itself and as its command. */
  serve<P, R>(connection: Connection, request: ClientRequest<P, R>, handler: RequestHandler<P, R>): void {
    onRequest(connection, request, handler);
    // Every request's params accept DocumentParams (protocol.ts refuses to declare one that does not).
    this.byCommand.set(request.command, { request, handler: handler as (params: unknown) => unknown });
  }
}

function documentParams(
  args: readonly unknown[],
): (DocumentParams & { manager?: string; context?: string }) | undefined {
  const [first, second, third] = args;
  const manager = (value: unknown) => (typeof value === 'string' && value !== '' ? { manager: value } : {});
  const position = (value: unknown) =>
    typeof value === 'object' &&
    value !== null &&
    Number.isInteger((value as { line?: unknown }).line) &&
    Number.isInteger((value as { character?: unknown }).character)
      ? { line: (value as { line: number }).line, character: (value as { character: number }).character }
      : undefined;
  if (typeof first === 'string') {
    const at = position(second);
    return { uri: first, ...(at ? { position: at } : {}), ...manager(at ? third : second) };
  }
  if (typeof first === 'object' && first !== null && typeof (first as { uri?: unknown }).uri === 'string') {
    const at = position((first as { position?: unknown }).position);
    return {
      uri: (first as { uri: string }).uri,
      ...(at ? { position: at } : {}),
      ...manager((first as { manager?: unknown }).manager),
      // The force preview's context, with several contexts (a fix names it).
      ...(typeof (first as { context?: unknown }).context === 'string'
        ? { context: (first as { context: string }).context }
        : {}),
    };
  }
  return undefined;
}

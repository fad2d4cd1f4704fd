// Asking the editor to look again. When what the server knows changes (a live object, a schema, a
// watch event, the settings, a dry-run answer), clients that pull diagnostics, code lenses and inlay
// hints are asked to pull again, and the diagnostics of clients that cannot pull are pushed again. Changes
// that arrive together (a relist, a burst of watch events) collapse into one refresh.
import { CodeLensRefreshRequest, InlayHintRefreshRequest, type ClientCapabilities, type Connection } from 'vscode-languageserver/node';

export class RefreshScheduler {
  private timer: NodeJS.Timeout | undefined;
  private canRefreshDiagnostics = false;
  private canRefreshCodeLens = false;
  private canRefreshInlayHints = false;
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly connection: Connection) {}

  initialize(capabilities: ClientCapabilities): void {
    this.canRefreshDiagnostics = capabilities.workspace?.diagnostics?.refreshSupport === true;
    this.canRefreshCodeLens = capabilities.workspace?.codeLens?.refreshSupport === true;
    this.canRefreshInlayHints = capabilities.workspace?.inlayHint?.refreshSupport === true;
  }

  /** Also done on each refresh (pushing diagnostics to clients that cannot pull them). */
  onRefresh(listener: () => void): void {
    this.listeners.push(listener);
  }

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.canRefreshDiagnostics) void this.connection.languages.diagnostics.refresh();
      if (this.canRefreshCodeLens) void this.connection.sendRequest(CodeLensRefreshRequest.type);
      if (this.canRefreshInlayHints) void this.connection.sendRequest(InlayHintRefreshRequest.type).catch(() => undefined);
      for (const listener of this.listeners) listener();
    }, 50);
  }
}

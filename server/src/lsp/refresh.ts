// Asking the editor to look again. When what the server knows changes (a live object, a schema, a
// watch event, the settings, a dry-run answer), clients that pull diagnostics, code lenses and inlay
// hints are asked to pull again, and the diagnostics of clients that cannot pull are pushed again.
//
// When: as soon as the clusters have answered everything asked of them, so that the facts a file
// was waiting for (its objects, then their schema) are judged once, when the last of them lands,
// and without a pause. While requests are still out, a change waits for them, at most
// `refreshIntervalMs`. Refreshes are at least `refreshIntervalMs` apart: changes that arrive
// together or in quick succession (a relist, a burst of watch events) collapse into one.
import {
  CodeLensRefreshRequest,
  InlayHintRefreshRequest,
  type ClientCapabilities,
  type Connection,
} from 'vscode-languageserver/node';

export const refreshIntervalMs = 50;

/** Whether answers are still on their way (cluster requests in flight), and when the last one lands. */
export interface Pending {
  busy(): boolean;
  onQuiet(listener: () => void): void;
}

export class RefreshScheduler {
  /** A refresh is due: it goes when nothing is pending, or when this timer ends. */
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private last = -Infinity;
  private canRefreshDiagnostics = false;
  private canRefreshCodeLens = false;
  private canRefreshInlayHints = false;
  private readonly listeners: (() => void)[] = [];
  private pending: Pending = { busy: () => false, onQuiet: () => {} };

  constructor(private readonly connection: Connection) {}

  /** What a due refresh waits for (the cluster sessions' requests). */
  waitFor(pending: Pending): void {
    this.pending = pending;
    pending.onQuiet(() => this.goWhenQuiet());
  }

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
    const sinceLast = Date.now() - this.last;
    // Soon after the last refresh: the rest of the interval. Else: at most the interval, and at
    // once if nothing is pending. (A clock set back counts as soon after.)
    const early = sinceLast >= refreshIntervalMs;
    this.timer = setTimeout(
      () => this.fire(),
      early || sinceLast < 0 ? refreshIntervalMs : refreshIntervalMs - sinceLast,
    );
    if (early) this.goWhenQuiet();
  }

  /** A due refresh goes now if nothing is pending (after this turn's other changes have arrived). */
  private goWhenQuiet(): void {
    if (!this.timer || this.soon || Date.now() - this.last < refreshIntervalMs) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      if (this.timer && !this.pending.busy()) this.fire();
    });
  }

  private fire(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.last = Date.now();
    if (this.canRefreshDiagnostics) void this.connection.languages.diagnostics.refresh();
    if (this.canRefreshCodeLens) void this.connection.sendRequest(CodeLensRefreshRequest.type);
    if (this.canRefreshInlayHints)
      void this.connection.sendRequest(InlayHintRefreshRequest.type).catch(() => undefined);
    for (const listener of this.listeners) listener();
  }
}

// Asking the editor to look again. When what the server knows changes (a live object, a schema, a
// watch event, the settings, a dry-run answer), clients that pull diagnostics, code lenses and inlay
// hints are asked to pull again, and the diagnostics of clients that cannot pull are pushed again.
//
// When: as soon as the clusters have answered everything asked of them, so that the facts a file
// was waiting for (its objects, then their schema) are judged once, when the last of them lands,
// and without a pause. While requests are still out, a change waits for them, at most
// `refreshIntervalMs`, or longer when the passes over the open files that a refresh causes are
// long: then refreshes are spaced `busyShare` times the last one's passes apart (at most
// `longestBusyWaitMs`), so that judging a large file again and again on partial facts (2,000
// objects waiting for their list) takes a small share of the time the answers take to land.
// Refreshes are at least `refreshIntervalMs` apart: changes that arrive together or in quick
// succession (a relist, a burst of watch events) collapse into one.
import {
  CodeLensRefreshRequest,
  InlayHintRefreshRequest,
  type ClientCapabilities,
  type Connection,
} from 'vscode-languageserver/node';

export const refreshIntervalMs = 50;
/** While answers are out, refreshes are at least this many times the last one's passes apart... */
export const busyShare = 8;
/** ...and at most this long. */
export const longestBusyWaitMs = 1000;

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
  /**
   * The time the passes over the open files have taken so far (ms), its reading at the last
   * refresh, and the passes before that refresh (since the one before, or since the start: a file
   * is judged when it is opened, before any refresh).
   */
  private work: () => number = () => 0;
  private workAtLast = 0;
  private workBeforeLast = 0;

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

  /** What the refreshes cost: the time the editor's passes over the open files have taken so far, in ms. */
  measureWork(work: () => number): void {
    this.work = work;
    this.workAtLast = work();
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
      () => this.due(),
      early || sinceLast < 0 ? refreshIntervalMs : refreshIntervalMs - sinceLast,
    );
    if (early) this.goWhenQuiet();
  }

  /**
   * The wait for answers is over: the refresh goes, unless answers are still out and the last
   * refresh's passes ask for a longer spacing; then it goes at the end of that, or when they land.
   */
  private due(): void {
    // The passes of the last refresh, or those before it when it has caused none yet.
    const passes = Math.max(this.work() - this.workAtLast, this.workBeforeLast);
    const spacing = Math.min(longestBusyWaitMs, busyShare * passes);
    const wait = this.last + spacing - Date.now();
    if (wait > 0 && this.pending.busy()) {
      this.timer = setTimeout(() => this.due(), wait);
      return;
    }
    this.fire();
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
    const work = this.work();
    this.workBeforeLast = work - this.workAtLast;
    this.workAtLast = work;
    if (this.canRefreshDiagnostics) void this.connection.languages.diagnostics.refresh();
    if (this.canRefreshCodeLens) void this.connection.sendRequest(CodeLensRefreshRequest.type);
    if (this.canRefreshInlayHints)
      void this.connection.sendRequest(InlayHintRefreshRequest.type).catch(() => undefined);
    for (const listener of this.listeners) listener();
  }
}

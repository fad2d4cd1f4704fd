// Progress while the live objects of the open documents are first loaded. A file of hundreds of
// objects against a slow cluster leaves the diagnostics empty for a while, which reads as "no
// conflicts"; the editor says "loading" instead. Shown only when the load has taken longer than a
// second (a quick load would flash), and only to clients that support server-initiated progress
// (`window.workDoneProgress`); it ends when nothing is pending any more or the documents close.
import type { ClientCapabilities, Connection, WorkDoneProgressServerReporter } from 'vscode-languageserver/node';
import type { AnalyzedResource } from './document-analysis';

export const progressDelayMs = 1000;

interface Counts {
  pending: number;
  total: number;
}

export class LoadProgress {
  private supported = false;
  private readonly counts = new Map<string, Counts>();
  private timer: NodeJS.Timeout | undefined;
  private reporter: Promise<WorkDoneProgressServerReporter | undefined> | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly delayMs = progressDelayMs,
  ) {}

  initialize(capabilities: ClientCapabilities): void {
    this.supported = capabilities.window?.workDoneProgress === true;
  }

  /** What the latest analysis of a document found still loading. */
  observe(uri: string, resources: readonly AnalyzedResource[]): void {
    if (!this.supported) return;
    let pending = 0;
    let total = 0;
    for (const { facts } of resources) {
      if (!facts) continue;
      total++;
      if (facts.kind.state === 'pending' || facts.live.state === 'pending') pending++;
    }
    this.counts.set(uri, { pending, total });
    this.update();
  }

  forget(uri: string): void {
    this.counts.delete(uri);
    this.update();
  }

  dispose(): void {
    this.counts.clear();
    this.update();
  }

  private sum(): Counts {
    let pending = 0;
    let total = 0;
    for (const c of this.counts.values()) {
      pending += c.pending;
      total += c.total;
    }
    return { pending, total };
  }

  private message({ pending, total }: Counts): { percentage: number; text: string } {
    const loaded = total - pending;
    return {
      percentage: total > 0 ? Math.floor((loaded * 100) / total) : 0,
      text: `${loaded} of ${total} objects loaded from the cluster`,
    };
  }

  private update(): void {
    const now = this.sum();
    if (now.pending === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      const reporter = this.reporter;
      this.reporter = undefined;
      void reporter?.then((r) => r?.done());
      return;
    }
    if (this.reporter) {
      const { percentage, text } = this.message(now);
      void this.reporter.then((r) => r?.report(percentage, text));
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.sum().pending === 0) return;
      this.reporter = this.connection.window.createWorkDoneProgress().then(
        (reporter) => {
          // Read the counts again: they may have moved while the client created the token.
          const { percentage, text } = this.message(this.sum());
          reporter.begin('Kube Conflict Hints', percentage, text, false);
          return reporter;
        },
        () => undefined,
      );
    }, this.delayMs);
  }
}

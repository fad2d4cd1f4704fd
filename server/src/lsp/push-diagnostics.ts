// Diagnostics for clients that cannot pull them (Neovim before 0.10, Helix, Emacs eglot, many
// others): the server publishes them when a document opens or changes, and again whenever what it
// knows changes (a live object, a schema, the settings) — the moments it would otherwise ask a
// pulling client to pull again. A client that pulls gets nothing pushed, so it never sees a
// document's diagnostics twice.
import type { ClientCapabilities, Connection, Diagnostic } from 'vscode-languageserver/node';

export interface ComputedDiagnostics {
  readonly version: number;
  readonly diagnostics: Diagnostic[];
}

export class DiagnosticsPusher {
  private enabled = false;
  /** Per document: a computation running, and whether another was asked for meanwhile. */
  private readonly running = new Map<string, { again: boolean }>();

  constructor(
    private readonly connection: Connection,
    private readonly openDocuments: () => readonly string[],
    /** Undefined when the document is no longer open. */
    private readonly compute: (uri: string) => Promise<ComputedDiagnostics | undefined>,
  ) {}

  initialize(capabilities: ClientCapabilities): void {
    this.enabled = capabilities.textDocument?.diagnostic === undefined;
  }

  get active(): boolean {
    return this.enabled;
  }

  /** Publishes the document's diagnostics soon; requests made while one runs collapse into one more run. */
  schedule(uri: string): void {
    if (!this.enabled) return;
    const run = this.running.get(uri);
    if (run) {
      run.again = true;
      return;
    }
    const state = { again: false };
    this.running.set(uri, state);
    void (async () => {
      try {
        do {
          state.again = false;
          const computed = await this.compute(uri).catch(() => undefined);
          // Closed meanwhile: its empty list was already sent and must stay the last word.
          if (!computed || !this.openDocuments().includes(uri)) break;
          await this.connection.sendDiagnostics({ uri, version: computed.version, diagnostics: computed.diagnostics });
        } while (state.again);
      } finally {
        this.running.delete(uri);
      }
    })();
  }

  scheduleAll(): void {
    for (const uri of this.openDocuments()) this.schedule(uri);
  }

  /** A closed document's diagnostics are withdrawn: the client would otherwise keep showing them. */
  closed(uri: string): void {
    if (!this.enabled) return;
    void this.connection.sendDiagnostics({ uri, diagnostics: [] });
  }
}

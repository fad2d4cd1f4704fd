// Cluster sessions: one connection (and its caches and watches) per kubeconfig + context +
// namespace that some open document's settings name. Settings are not kept here: each request
// asks for the session its document's settings select.
import { createClusterConnection, createFactsSource, type ClusterConnection, type ClusterHealth, type FactsSource } from '../cluster';
import type { Settings } from '../protocol';

/**
 * How the editor's requests appear in the API server's audit log: the product, and the process,
 * so an administrator (and a test) can tell one editor from another.
 */
export const editorUserAgent = `kube-conflict-hints (editor; pid ${process.pid})`;

export interface Session {
  readonly key: string;
  readonly connection: ClusterConnection;
  readonly facts: FactsSource;
}

export interface SessionEvents {
  /** Facts changed (an object, a schema, a watch event): diagnostics should be pulled again. */
  onFactsChange(): void;
  onHealthChange(session: Session, health: ClusterHealth): void;
}

export class Sessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly events: SessionEvents,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  for(settings: Settings): Session {
    const key = JSON.stringify([settings.kubeconfig, settings.context, settings.namespace]);
    let session = this.sessions.get(key);
    if (!session) {
      const connection = createClusterConnection(
        { kubeconfig: settings.kubeconfig, context: settings.context, namespace: settings.namespace },
        { env: this.env, userAgent: editorUserAgent },
      );
      const facts = createFactsSource(connection);
      const created: Session = { key, connection, facts };
      facts.onChange(() => this.events.onFactsChange());
      connection.onHealthChange((health) => this.events.onHealthChange(created, health));
      this.sessions.set(key, created);
      session = created;
    }
    return session;
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  refresh(): void {
    for (const s of this.sessions.values()) s.connection.refresh();
  }

  dispose(): void {
    for (const s of this.sessions.values()) {
      s.facts.dispose();
      s.connection.dispose();
    }
    this.sessions.clear();
  }
}

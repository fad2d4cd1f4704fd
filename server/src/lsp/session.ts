// Cluster sessions: one connection (and its caches and watches) per kubeconfig + context +
// namespace that some open document's settings name. Settings are not kept here: each request
// asks for the session its document's settings select.
//
// Trust is decided here, once for every way in: without the editor's word that the workspace is
// trusted there is no session at all, so no kubeconfig is read and no exec plugin runs (a
// kubeconfig named by a workspace's settings can run any program).
import {
  createClusterConnection,
  createClusterShare,
  createFactsSource,
  kubeconfigPaths,
  type ClusterConnection,
  type ClusterHealthReport,
  type FactsSource,
} from '../cluster';
import type { Settings } from '../protocol';
import { fingerprintOf, watchFiles } from './kubeconfig-watch';

/**
 * How the editor's requests appear in the API server's audit log: the product, and the process,
 * so an administrator (and a test) can tell one editor from another.
 */
export const editorUserAgent = `kube-conflict-hints (editor; pid ${process.pid})`;

export interface Session {
  readonly key: string;
  /** The kubeconfig and context: sessions of several namespaces share one cluster. */
  readonly cluster: string;
  readonly connection: ClusterConnection;
  readonly facts: FactsSource;
}

export interface SessionEvents {
  /** Facts changed (an object, a schema, a watch event): diagnostics should be pulled again. */
  onFactsChange(): void;
  onHealthChange(session: Session, health: ClusterHealthReport): void;
}

export class Sessions {
  /** Sessions being created (the kubeconfig is read asynchronously): callers share one. */
  private readonly sessions = new Map<string, Promise<Session>>();
  private readonly ready = new Map<string, Session>();
  /** Per session: the kubeconfig files it was made from, what they looked like, and their watch. */
  private readonly sources = new Map<string, { files: string[]; fingerprint: string; watch: { dispose(): void } }>();
  private readonly quietListeners = new Set<() => void>();
  /** What every session's connection shares (cluster/share.ts): one document, schema and rules per content, whichever contexts use it. */
  private readonly share = createClusterShare();
  private disposed = false;

  constructor(
    private readonly events: SessionEvents,
    private readonly env: NodeJS.ProcessEnv = process.env,
    /** Whether the editor said the workspace is trusted; asked on every use, never assumed. */
    private readonly trusted: () => boolean = () => false,
  ) {}

  /** The session these settings select; undefined without trust (no cluster is contacted). */
  for(settings: Settings): Promise<Session | undefined> {
    if (!this.trusted() || this.disposed) return Promise.resolve(undefined);
    const key = sessionKey(settings);
    let session = this.sessions.get(key);
    if (!session) {
      session = this.create(key, settings);
      this.sessions.set(key, session);
    }
    return session;
  }

  private async create(key: string, settings: Settings): Promise<Session> {
    // Remembered before the files are read, so that a rewrite during the read is not missed.
    const files = kubeconfigPaths(settings.kubeconfig || undefined, this.env);
    const fingerprint = fingerprintOf(files);
    const connection = await createClusterConnection(
      { kubeconfig: settings.kubeconfig, context: settings.context, namespace: settings.namespace },
      { env: this.env, userAgent: editorUserAgent, diskCache: true, share: this.share },
    );
    const facts = createFactsSource(connection);
    const created: Session = { key, cluster: clusterKey(settings), connection, facts };
    if (this.disposed) {
      facts.dispose();
      connection.dispose();
      return created;
    }
    facts.onChange(() => this.events.onFactsChange());
    connection.onHealthChange((health) => this.events.onHealthChange(created, health));
    connection.onQuiet(() => {
      if (!this.busy()) this.quietListeners.forEach((l) => l());
    });
    this.ready.set(key, created);
    this.sources.set(key, { files, fingerprint, watch: watchFiles(files, () => this.reread()) });
    // Rewritten while it was read, before the watch began: the next turn makes the session again.
    if (fingerprintOf(files) !== fingerprint) setImmediate(() => this.reread());
    return created;
  }

  /**
   * Sessions whose kubeconfig files changed since they were made are dropped: the next document or
   * command makes a new one from the files as they are now. Returns whether any was.
   */
  private reread(): boolean {
    let dropped = false;
    for (const [key, source] of this.sources) {
      if (fingerprintOf(source.files) === source.fingerprint) continue;
      const session = this.ready.get(key);
      source.watch.dispose();
      this.sources.delete(key);
      this.ready.delete(key);
      this.sessions.delete(key);
      session?.facts.dispose();
      session?.connection.dispose();
      dropped = true;
    }
    if (dropped) this.events.onFactsChange();
    return dropped;
  }

  /** Whether some cluster is yet to answer a request (a watch does not count). */
  busy(): boolean {
    for (const s of this.ready.values()) if (s.connection.busy()) return true;
    return false;
  }

  /** Called when the last cluster request waiting for an answer has it. */
  onQuiet(listener: () => void): void {
    this.quietListeners.add(listener);
  }

  /**
   * A session made for the cluster these settings select (any namespace: rendered sources use the
   * release's or the overlay's), if one has been made; never makes one.
   */
  existing(settings: Settings): Session | undefined {
    const own = this.ready.get(sessionKey(settings));
    if (own) return own;
    const cluster = clusterKey(settings);
    for (const session of this.ready.values()) if (session.cluster === cluster) return session;
    return undefined;
  }

  all(): Session[] {
    return [...this.ready.values()];
  }

  /** The user's Refresh: the kubeconfig is read again where it changed, and every cluster asked again. */
  refresh(): void {
    this.reread();
    for (const s of this.ready.values()) s.connection.refresh();
  }

  dispose(): void {
    this.disposed = true;
    for (const s of this.ready.values()) {
      s.facts.dispose();
      s.connection.dispose();
    }
    for (const source of this.sources.values()) source.watch.dispose();
    this.sources.clear();
    this.ready.clear();
    this.sessions.clear();
  }
}

function sessionKey(settings: Settings): string {
  return JSON.stringify([settings.kubeconfig, settings.context, settings.namespace]);
}

function clusterKey(settings: Settings): string {
  return JSON.stringify([settings.kubeconfig, settings.context]);
}

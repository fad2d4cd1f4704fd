// The status bar: the health of the cluster session the editor last used, sent to the client as
// the `status` notification (each change once). Which session is shown follows the documents and
// commands: the last one a manifest or a command asked for.
import type { Connection } from 'vscode-languageserver/node';
import { redactText, type ClusterHealthReport } from '../cluster';
import { notifications, sendNotification, type StatedTrust, type StatusParams } from '../protocol';
import type { Session } from './session';

export class StatusReporter {
  private last = '';
  /** The session the status bar shows. */
  private shown: Session | undefined;
  /** With several contexts, the sessions it shows, each under its context's name. */
  private fleet: readonly { context: string; session: Session | undefined }[] | undefined;
  /** Sessions whose health has been asked once (when they first served a manifest or a command). */
  private readonly probed = new WeakSet<Session>();

  constructor(private readonly connection: Connection) {}

  /** Before any session: what the trust the editor stated allows. */
  started(access: { clusterAccess: boolean; trust: StatedTrust }): void {
    if (!access.clusterAccess) {
      const detail =
        access.trust === 'untrusted'
          ? 'Untrusted workspace: no cluster is contacted.'
          : access.trust === 'garbled'
            ? "The editor's clusterAccess is neither true nor false: no cluster is contacted."
            : 'The editor did not say that this workspace is trusted: no cluster is contacted.';
      this.send({ health: 'disabled', context: '', detail });
      return;
    }
    // The extension starts on every YAML and JSON file: a CI workflow or a compose file is no
    // reason to read the kubeconfig, whose exec plugin may open a login prompt. The cluster is
    // contacted once a Kubernetes manifest is open, or when the user asks (a command).
    this.send({
      health: 'idle',
      context: '',
      detail: 'No Kubernetes manifest is open yet: no cluster has been contacted.',
    });
  }

  /** A manifest or a command used this session: it becomes the one shown. */
  show(session: Session): void {
    if (session !== this.shown || this.fleet) {
      this.shown = session;
      this.fleet = undefined;
      this.send(statusOf(session, session.connection.health()));
    }
    this.probe(session);
  }

  /**
   * A manifest judged in several contexts: the status bar shows every context's health, summed up
   * by the first in trouble (else connected), each probed as one context's is.
   */
  showFleet(columns: readonly { context: string; session: Session | undefined }[]): void {
    this.shown = undefined;
    this.fleet = columns;
    this.sendFleet();
    for (const { session } of columns) if (session) this.probe(session);
  }

  private sendFleet(): void {
    if (!this.fleet) return;
    const contexts = this.fleet.map(({ context, session }) => {
      if (!session) return { context, health: 'disabled' as const, detail: 'No cluster access.' };
      const one = statusOf(session, session.connection.health());
      return { context, health: one.health, ...(one.server ? { server: one.server } : {}), detail: one.detail };
    });
    const trouble = contexts.find((c) => c.health !== 'connected');
    this.send({
      health: trouble?.health ?? 'connected',
      context: contexts.map((c) => c.context).join(', '),
      detail: contexts.map((c) => `${c.context}: ${c.detail}`).join('\n'),
      contexts,
    });
  }

  private probe(session: Session): void {
    if (!this.probed.has(session)) {
      // Say at once whether this cluster answers, before the first object's reads come back, unless
      // the reads the caller starts now (discovery, the object) are out by then: their answers say
      // it as soon, and a probe beside them would be one more connection and TLS handshake.
      this.probed.add(session);
      setImmediate(() => {
        if (!session.connection.busy()) void session.connection.checkHealth();
      });
    }
  }

  healthChanged(session: Session, health: ClusterHealthReport): void {
    if (session === this.shown) this.send(statusOf(session, health));
    else if (this.fleet?.some((c) => c.session === session)) this.sendFleet();
  }

  private send(params: StatusParams): void {
    const key = JSON.stringify(params);
    if (key === this.last) return;
    this.last = key;
    void sendNotification(this.connection, notifications.status, params);
  }
}

function statusOf(session: Session, health: ClusterHealthReport): StatusParams {
  return {
    health: health.state,
    context: health.context ?? session.connection.context?.name ?? '',
    ...(health.server ? { server: health.server } : {}),
    // The cluster layer redacts its messages; the status is shown in a tooltip and logged, so again here.
    detail: redactText(health.problem?.message ?? (health.state === 'connected' ? 'Connected' : 'Not asked yet')),
  };
}

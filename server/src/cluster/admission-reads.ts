// What admission reads of the cluster besides the object: the admission webhooks (one LIST each of
// ValidatingWebhookConfigurations and MutatingWebhookConfigurations, admissionregistration.k8s.io/v1)
// and a namespace's LimitRanges and ResourceQuotas (one LIST each per namespace, asked for the objects
// that create Pods). Each is a collection of the live-object cache read whole (live-objects.ts list):
// a session reads each once, the editor's cache watches it, and a change it brings (collectionChanged)
// makes them again from the cache, telling the listeners only when they differ; a refresh lists them
// again. Reads only. A 403 (a user who may not read them) is unknown, said quietly: nothing is judged
// of it, and it is no health problem of the connection.
import type { AdmissionWebhook, NamespacePolicyFacts, WebhookFacts } from '../core/findings';
import { isJsonObject, type JsonObject } from '../core/json';
import type { CollectionChange } from './live-objects';
import type { ClusterResult, Disposable } from './types';
import { KeptAnswer } from './kept-answer';
import { tell } from './listeners';

/** What the facts need of a connection's admission reads. */
export interface AdmissionLookup {
  /** Synchronous: the webhooks known now (undefined while the first read is out); starts it. */
  peekWebhooks(): WebhookFacts | undefined;
  webhooks(): Promise<WebhookFacts>;
  peekPolicies(namespace: string): NamespacePolicyFacts | undefined;
  policies(namespace: string): Promise<NamespacePolicyFacts>;
  onChange(listener: () => void): Disposable;
  refresh(): void;
  dispose(): void;
}

/** A whole collection of the live-object cache (LiveObjects.list), read as optional: a refusal is no health problem. */
export type ListCollection = (
  apiVersion: string,
  kind: string,
  namespace: string,
) => Promise<ClusterResult<JsonObject[]>>;

const GROUP_VERSION = 'admissionregistration.k8s.io/v1';
const webhookKinds = [
  { type: 'validating', kind: 'ValidatingWebhookConfiguration' },
  { type: 'mutating', kind: 'MutatingWebhookConfiguration' },
] as const;
const namespaceKinds = ['LimitRange', 'ResourceQuota'] as const;

export class AdmissionReads implements AdmissionLookup {
  private webhookState = this.keptWebhooks();
  private readonly policyStates = new Map<string, KeptAnswer<NamespacePolicyFacts>>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(private readonly list: ListCollection) {}

  peekWebhooks(): WebhookFacts | undefined {
    if (!this.webhookState.known) void this.webhooks();
    return this.webhookState.known;
  }

  webhooks(): Promise<WebhookFacts> {
    return this.webhookState.answer();
  }

  peekPolicies(namespace: string): NamespacePolicyFacts | undefined {
    const known = this.policyStates.get(namespace)?.known;
    if (!known) void this.policies(namespace);
    return known;
  }

  policies(namespace: string): Promise<NamespacePolicyFacts> {
    let state = this.policyStates.get(namespace);
    if (!state) this.policyStates.set(namespace, (state = this.kept(() => this.readPolicies(namespace))));
    return state.answer();
  }

  /**
   * A collection read whole changed (the cache's watch, or a list again): what is made of it is made
   * again from the cache (no request), and the listeners told if it differs.
   */
  collectionChanged(change: CollectionChange): void {
    if (this.disposed) return;
    if (change.apiVersion === GROUP_VERSION && webhookKinds.some((w) => w.kind === change.kind))
      this.webhookState.readAgain();
    else if (change.apiVersion === 'v1' && (namespaceKinds as readonly string[]).includes(change.kind))
      this.policyStates.get(change.namespace)?.readAgain();
  }

  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The user asked to refresh: everything is read again on the next ask (the cache lists again too). */
  refresh(): void {
    this.webhookState = this.keptWebhooks();
    this.policyStates.clear();
    this.changed();
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }

  /** An answer kept until a change of its collections; the listeners told when it differs. */
  private kept<T>(make: () => Promise<T>): KeptAnswer<T> {
    return new KeptAnswer(
      make,
      (answer) => JSON.stringify(answer),
      () => {
        if (!this.disposed) this.changed();
      },
    );
  }

  private keptWebhooks(): KeptAnswer<WebhookFacts> {
    return this.kept(() => this.readWebhooks());
  }

  private changed(): void {
    tell(this.listeners, undefined);
  }

  private async readWebhooks(): Promise<WebhookFacts> {
    const lists = await Promise.all(
      webhookKinds.map(async ({ type, kind }) => ({ type, listed: await this.list(GROUP_VERSION, kind, '') })),
    );
    const webhooks: AdmissionWebhook[] = [];
    for (const { type, listed } of lists) {
      if (!listed.ok) return { state: 'unknown', message: listed.problem.message };
      for (const item of listed.value) {
        const metadata = isJsonObject(item.metadata) ? item.metadata : {};
        const configuration = typeof metadata.name === 'string' ? metadata.name : '';
        const entries = Array.isArray(item.webhooks) ? item.webhooks.filter(isJsonObject) : [];
        for (const spec of entries) webhooks.push({ type, configuration, spec });
      }
    }
    return { state: 'known', webhooks };
  }

  private async readPolicies(namespace: string): Promise<NamespacePolicyFacts> {
    const [limitRanges, quotas] = await Promise.all(namespaceKinds.map((kind) => this.list('v1', kind, namespace)));
    if (!limitRanges!.ok) return { state: 'unknown', message: limitRanges!.problem.message };
    if (!quotas!.ok) return { state: 'unknown', message: quotas!.problem.message };
    return { state: 'known', limitRanges: limitRanges!.value, quotas: quotas!.value };
  }
}

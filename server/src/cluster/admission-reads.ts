// What admission reads of the cluster besides the object: the admission webhooks (one LIST each of
// ValidatingWebhookConfigurations and MutatingWebhookConfigurations, admissionregistration.k8s.io/v1,
// once per connection and again on refresh) and a namespace's LimitRanges and ResourceQuotas (one
// LIST each per namespace, asked for the objects that create Pods). Reads only; the paths are fixed
// or built by names.ts after the API server's own name check. A 403 (a user who may not read them)
// is unknown, said quietly: nothing is judged of it, and it is no health problem of the connection.
import type { AdmissionWebhook, NamespacePolicyFacts, WebhookFacts } from '../core/findings';
import { isJsonObject, type JsonObject } from '../core/json';
import type { ClusterTransport } from './http';
import { collectionPath } from './names';
import type { ApiResourceInfo, Disposable } from './types';

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

const webhookPaths = [
  { type: 'validating', path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations' },
  { type: 'mutating', path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations' },
] as const;

const core = (kind: string, resource: string): ApiResourceInfo => ({
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind,
  resource,
  namespaced: true,
  verbs: [],
  subresources: [],
  shortNames: [],
});
const limitRanges = core('LimitRange', 'limitranges');
const resourceQuotas = core('ResourceQuota', 'resourcequotas');

type Listed = { ok: true; items: JsonObject[] } | { ok: false; message: string };

export class AdmissionReads implements AdmissionLookup {
  private webhookState: WebhookFacts | undefined;
  private webhookRead: Promise<WebhookFacts> | undefined;
  private readonly policyStates = new Map<string, NamespacePolicyFacts>();
  private readonly policyReads = new Map<string, Promise<NamespacePolicyFacts>>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(private readonly transport: ClusterTransport) {}

  peekWebhooks(): WebhookFacts | undefined {
    if (!this.webhookState) void this.webhooks();
    return this.webhookState;
  }

  webhooks(): Promise<WebhookFacts> {
    if (this.webhookState) return Promise.resolve(this.webhookState);
    this.webhookRead ??= this.readWebhooks().then((state) => {
      this.webhookRead = undefined;
      if (!this.disposed) {
        this.webhookState = state;
        this.changed();
      }
      return state;
    });
    return this.webhookRead;
  }

  peekPolicies(namespace: string): NamespacePolicyFacts | undefined {
    const known = this.policyStates.get(namespace);
    if (!known) void this.policies(namespace);
    return known;
  }

  policies(namespace: string): Promise<NamespacePolicyFacts> {
    const known = this.policyStates.get(namespace);
    if (known) return Promise.resolve(known);
    let reading = this.policyReads.get(namespace);
    if (!reading) {
      reading = this.readPolicies(namespace).then((state) => {
        this.policyReads.delete(namespace);
        if (!this.disposed) {
          this.policyStates.set(namespace, state);
          this.changed();
        }
        return state;
      });
      this.policyReads.set(namespace, reading);
    }
    return reading;
  }

  onChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The user asked to refresh: everything is read again on the next ask. */
  refresh(): void {
    this.webhookState = undefined;
    this.policyStates.clear();
    this.changed();
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }

  private changed(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  private async readWebhooks(): Promise<WebhookFacts> {
    const lists = await Promise.all(
      webhookPaths.map(async ({ type, path }) => ({
        type,
        listed: await this.list(path, `${type}webhookconfigurations`),
      })),
    );
    const webhooks: AdmissionWebhook[] = [];
    for (const { type, listed } of lists) {
      if (!listed.ok) return { state: 'unknown', message: listed.message };
      for (const item of listed.items) {
        const metadata = isJsonObject(item.metadata) ? item.metadata : {};
        const configuration = typeof metadata.name === 'string' ? metadata.name : '';
        const entries = Array.isArray(item.webhooks) ? item.webhooks.filter(isJsonObject) : [];
        for (const spec of entries) webhooks.push({ type, configuration, spec });
      }
    }
    return { state: 'known', webhooks };
  }

  private async readPolicies(namespace: string): Promise<NamespacePolicyFacts> {
    const paths = [collectionPath(limitRanges, namespace), collectionPath(resourceQuotas, namespace)];
    const [lr, rq] = paths;
    if (!lr!.ok) return { state: 'unknown', message: lr!.problem.message };
    if (!rq!.ok) return { state: 'unknown', message: rq!.problem.message };
    const [a, b] = await Promise.all([this.list(lr!.value, 'limitranges'), this.list(rq!.value, 'resourcequotas')]);
    if (!a.ok) return { state: 'unknown', message: a.message };
    if (!b.ok) return { state: 'unknown', message: b.message };
    return { state: 'known', limitRanges: a.items, quotas: b.items };
  }

  private async list(path: string, resource: string): Promise<Listed> {
    const purpose = { verb: 'list', resource, optional: true };
    const outcome = await this.transport.send({ method: 'GET', path, purpose });
    if (outcome.kind === 'response' && outcome.status === 200) {
      try {
        const body: unknown = JSON.parse(outcome.body);
        const items = isJsonObject(body) && Array.isArray(body.items) ? body.items.filter(isJsonObject) : [];
        return { ok: true, items };
      } catch {
        return { ok: false, message: `the list of ${resource} is not JSON` };
      }
    }
    if (outcome.kind === 'response')
      return { ok: false, message: `the list of ${resource} answered ${outcome.status}` };
    return { ok: false, message: `no answer for the list of ${resource}` };
  }
}

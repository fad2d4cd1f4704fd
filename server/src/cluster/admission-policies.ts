// The ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) of the cluster, their bindings
// and the params the bindings name, as plain data for core/findings/admission-policy.ts. Reads
// only: one LIST of each of the two cluster-scoped collections, and one LIST of a param kind per
// namespace a binding sends its params from, all through the live-object cache (watched in the
// editor, read again on refresh), so a session reads each once; a change the watch brings makes
// them again (readAgain) and tells the listeners when they differ. A list refused (403) or not served
// leaves the policies `unknown`, which the analysis says quietly; it is never a guess. Params of
// kind Secret are never read: the product never fetches Secret values.
import type { AdmissionPolicyFacts, PolicyParamsFacts } from '../core/findings';
import { isJsonObject, type JsonObject } from '../core/json';
import type { ClusterResult } from './types';
import type { ApiResourceInfo } from './types';
import { KeptAnswer } from './kept-answer';

const GROUP_VERSION = 'admissionregistration.k8s.io/v1';

/** What the reader needs of a connection. */
export interface PolicyReads {
  listObjects(apiVersion: string, kind: string, namespace: string): Promise<ClusterResult<JsonObject[]>>;
  resolveKind(apiVersion: string, kind: string): Promise<ClusterResult<ApiResourceInfo>>;
}

/** How long a peeked answer stands before a peek reads it again (from the watched cache). */
const PEEK_AGAIN_MS = 5_000;

export class AdmissionPolicies {
  private readonly entries = new Map<string, KeptAnswer<AdmissionPolicyFacts>>();

  constructor(
    private readonly reads: PolicyReads,
    private readonly changed: () => void,
  ) {}

  /** What is known now of the policies that may judge an object in this namespace ('' for cluster-scoped). */
  peek(namespace: string): AdmissionPolicyFacts | undefined {
    const entry = this.entryFor(namespace);
    if (!entry.busy && (!entry.known || Date.now() - entry.madeAt >= PEEK_AGAIN_MS)) void entry.fresh();
    return entry.known;
  }

  /** The policies once read. */
  load(namespace: string): Promise<AdmissionPolicyFacts> {
    return this.entryFor(namespace).fresh();
  }

  /**
   * A collection read whole has changed (a policy, a binding or a param made, changed or removed):
   * every namespace's policies are made again from the watched cache (no request), and the
   * listeners told if they changed.
   */
  readAgain(): void {
    for (const entry of this.entries.values()) entry.readAgain();
  }

  private entryFor(namespace: string): KeptAnswer<AdmissionPolicyFacts> {
    let entry = this.entries.get(namespace);
    if (!entry)
      this.entries.set(namespace, (entry = new KeptAnswer(() => this.read(namespace), signatureOf, this.changed)));
    return entry;
  }

  private async read(namespace: string): Promise<AdmissionPolicyFacts> {
    const [policies, bindings] = await Promise.all([
      this.reads.listObjects(GROUP_VERSION, 'ValidatingAdmissionPolicy', ''),
      this.reads.listObjects(GROUP_VERSION, 'ValidatingAdmissionPolicyBinding', ''),
    ]);
    if (!policies.ok) return { state: 'unknown', why: policies.problem.message };
    if (!bindings.ok) return { state: 'unknown', why: bindings.problem.message };
    const byName = new Map<string, JsonObject>();
    for (const p of policies.value) {
      const name = isJsonObject(p.metadata) ? p.metadata.name : undefined;
      if (typeof name === 'string') byName.set(name, p);
    }
    // The params' collections the bindings name, once each.
    const wanted = new Map<string, { apiVersion: string; kind: string; refNamespace: string }>();
    for (const b of bindings.value) {
      const spec = isJsonObject(b.spec) ? b.spec : {};
      const policy = typeof spec.policyName === 'string' ? byName.get(spec.policyName) : undefined;
      const pspec = policy && isJsonObject(policy.spec) ? policy.spec : undefined;
      const paramKind = pspec && isJsonObject(pspec.paramKind) ? pspec.paramKind : undefined;
      if (!paramKind || typeof paramKind.apiVersion !== 'string' || typeof paramKind.kind !== 'string') continue;
      const ref = isJsonObject(spec.paramRef) ? spec.paramRef : {};
      const refNamespace = typeof ref.namespace === 'string' ? ref.namespace : '';
      const key = `${paramKind.apiVersion}\u0000${paramKind.kind}\u0000${refNamespace}`;
      wanted.set(key, { apiVersion: paramKind.apiVersion, kind: paramKind.kind, refNamespace });
    }
    const params = await Promise.all(
      [...wanted.values()].map((w) => this.readParams(w.apiVersion, w.kind, w.refNamespace || namespace)),
    );
    return { state: 'known', policies: policies.value, bindings: bindings.value, params: params.flat() };
  }

  private async readParams(apiVersion: string, kind: string, namespace: string): Promise<PolicyParamsFacts[]> {
    const resolved = await this.reads.resolveKind(apiVersion, kind);
    if (!resolved.ok) return [{ apiVersion, kind, namespace, namespaced: false, why: resolved.problem.message }];
    const namespaced = resolved.value.namespaced;
    const at = namespaced ? namespace : '';
    if (resolved.value.group === '' && resolved.value.resource === 'secrets')
      return [{ apiVersion, kind, namespace: at, namespaced, why: 'the product never reads Secret values' }];
    if (namespaced && at === '') return [{ apiVersion, kind, namespace: at, namespaced }];
    const listed = await this.reads.listObjects(apiVersion, kind, at);
    return [
      listed.ok
        ? { apiVersion, kind, namespace: at, namespaced, objects: listed.value }
        : { apiVersion, kind, namespace: at, namespaced, why: listed.problem.message },
    ];
  }
}

/** What changes a judgement: the objects' resourceVersions (and a failure's words). */
function signatureOf(facts: AdmissionPolicyFacts): string {
  if (facts.state === 'unknown') return `unknown:${facts.why}`;
  const versions = (list: readonly JsonObject[]) =>
    list
      .map((o) => (isJsonObject(o.metadata) ? `${String(o.metadata.name)}@${String(o.metadata.resourceVersion)}` : ''))
      .join(',');
  return [
    versions(facts.policies),
    versions(facts.bindings),
    ...facts.params.map((p) => `${p.apiVersion}/${p.kind}/${p.namespace}:${p.objects ? versions(p.objects) : p.why}`),
  ].join('|');
}

/** Whether a policy may read the namespace of the object: a namespaceSelector, or an expression that names namespaceObject. */
export function policiesReadNamespace(facts: AdmissionPolicyFacts | undefined): boolean {
  if (facts?.state !== 'known') return false;
  const selects = (m: unknown): boolean => {
    if (!isJsonObject(m) || !isJsonObject(m.namespaceSelector)) return false;
    const s = m.namespaceSelector;
    return (
      (isJsonObject(s.matchLabels) && Object.keys(s.matchLabels).length > 0) ||
      (Array.isArray(s.matchExpressions) && s.matchExpressions.length > 0)
    );
  };
  return (
    facts.bindings.some((b) => isJsonObject(b.spec) && selects(b.spec.matchResources)) ||
    facts.policies.some(
      (p) =>
        isJsonObject(p.spec) &&
        (selects(p.spec.matchConstraints) || JSON.stringify(p.spec).includes('namespaceObject')),
    )
  );
}

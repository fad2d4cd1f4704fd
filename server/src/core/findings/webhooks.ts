// Which admission webhooks judge (validating) or change (mutating) the request an apply sends, from
// the cluster's ValidatingWebhookConfigurations and MutatingWebhookConfigurations
// (admissionregistration.k8s.io/v1), matched as the API server matches them:
// k8s.io/apiserver pkg/admission/plugin/webhook/predicates/rules/rules.go (operations, groups,
// versions, resources with `*` and subresources, scope), .../predicates/namespace/matcher.go (the
// namespaceSelector against the namespace's labels; a cluster-scoped object other than a Namespace
// is not filtered by it), .../predicates/object/matcher.go (the objectSelector against the old or
// the new object's labels), and pkg/admission/plugin/webhook/generic/webhook.go (matchPolicy
// Equivalent: the same resource at another version of its group). What a webhook says is never
// predicted: only the dry run asks it. A matchCondition (CEL) or a selector on labels that were
// not read makes a webhook one that "may" be called.
import { isJsonObject, setOwn, type JsonObject, type JsonValue } from '../json';

/** One webhook of a configuration, as the cluster stores it. */
export interface AdmissionWebhook {
  readonly type: 'validating' | 'mutating';
  /** The configuration's name. */
  readonly configuration: string;
  /** The webhook's own entry (`name`, `rules`, `failurePolicy`, …). */
  readonly spec: JsonObject;
}

/**
 * The cluster's webhooks, read once per session (a LIST of each configuration kind). `unknown`: not
 * allowed to read them (403) or no answer; nothing is said then.
 */
export type WebhookFacts =
  | { readonly state: 'known'; readonly webhooks: readonly AdmissionWebhook[] }
  | { readonly state: 'unknown'; readonly message: string };

/** The request the apply sends, as the webhook rules see it. */
export interface AdmissionRequest {
  /** CREATE for an object that does not exist (a server-side apply that creates is admitted as one), UPDATE for one that does. */
  readonly operation: 'CREATE' | 'UPDATE';
  readonly group: string;
  readonly version: string;
  /** The resource, plural (`deployments`); no subresource: an apply writes the main resource. */
  readonly resource: string;
  /** '' for a cluster-scoped object; a Namespace's own name for a Namespace. */
  readonly namespace: string;
  /** The labels of the object's namespace, when read (a Namespace's own new labels for a Namespace). */
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  readonly newLabels: Readonly<Record<string, string>>;
  /** The live object's labels, for an UPDATE. */
  readonly oldLabels: Readonly<Record<string, string>> | undefined;
}

export interface WebhookMatch {
  readonly webhook: AdmissionWebhook;
  readonly name: string;
  /** `will`: the server calls it; `may`: it does if `why` holds. */
  readonly certainty: 'will' | 'may';
  readonly why?: string;
  readonly failurePolicy: string;
  readonly sideEffects: string;
}

/** Configurations the server never sends to webhooks (IsExemptAdmissionConfigurationResource). */
const exempt = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** The webhooks that the server calls for this request, in the order it calls them: mutating, then validating. */
export function matchingWebhooks(facts: WebhookFacts, request: AdmissionRequest): WebhookMatch[] {
  if (facts.state !== 'known') return [];
  if (request.group === 'admissionregistration.k8s.io' && exempt.has(request.resource)) return [];
  const out: WebhookMatch[] = [];
  for (const type of ['mutating', 'validating'] as const)
    for (const webhook of facts.webhooks) {
      if (webhook.type !== type) continue;
      const m = matchOne(webhook, request);
      if (m) out.push(m);
    }
  return out;
}

function matchOne(webhook: AdmissionWebhook, request: AdmissionRequest): WebhookMatch | undefined {
  const spec = webhook.spec;
  const name = typeof spec.name === 'string' ? spec.name : webhook.configuration;
  const doubts: string[] = [];
  const rules = Array.isArray(spec.rules) ? spec.rules.filter(isJsonObject) : [];
  let ruled: 'exact' | 'equivalent' | undefined;
  for (const rule of rules) {
    const r = ruleMatches(rule, request);
    if (r === 'exact') {
      ruled = 'exact';
      break;
    }
    if (r === 'equivalent') ruled ??= 'equivalent';
  }
  if (!ruled) return undefined;
  // matchPolicy Equivalent (v1's default) sends a request for the same resource at another version of its group.
  if (ruled === 'equivalent') {
    if (spec.matchPolicy === 'Exact') return undefined;
    doubts.push(
      `its rules name another version of ${request.group || 'the core group'}'s ${request.resource}, which the server sends it (matchPolicy Equivalent) if that version serves the same resource`,
    );
  }
  // The namespaceSelector: a Namespace by its own labels, a namespaced object by its namespace's; a cluster-scoped object is not filtered.
  if (request.namespace !== '' && isJsonObject(spec.namespaceSelector)) {
    const selected = selectorMatches(spec.namespaceSelector, request.namespaceLabels);
    if (selected === false) return undefined;
    if (selected === undefined)
      doubts.push(
        request.namespaceLabels === undefined
          ? 'its namespaceSelector selects the namespace (its labels were not read)'
          : 'its namespaceSelector is one the product does not read',
      );
  }
  if (isJsonObject(spec.objectSelector)) {
    const selectedNew = selectorMatches(spec.objectSelector, request.newLabels);
    const selectedOld = request.oldLabels ? selectorMatches(spec.objectSelector, request.oldLabels) : false;
    if (selectedNew === false && selectedOld === false) return undefined;
    if (selectedNew !== true && selectedOld !== true)
      doubts.push("its objectSelector selects the object (a mutating webhook's labels may change them first)");
  }
  const conditions = Array.isArray(spec.matchConditions) ? spec.matchConditions.filter(isJsonObject) : [];
  if (conditions.length > 0)
    doubts.push(
      `its matchConditions (${conditions.map((c) => (typeof c.name === 'string' ? c.name : '?')).join(', ')}) hold`,
    );
  return {
    webhook,
    name,
    certainty: doubts.length === 0 ? 'will' : 'may',
    ...(doubts.length > 0 ? { why: doubts.join('; ') } : {}),
    failurePolicy: typeof spec.failurePolicy === 'string' ? spec.failurePolicy : 'Fail',
    sideEffects: typeof spec.sideEffects === 'string' ? spec.sideEffects : 'Unknown',
  };
}

/** rules.go Matcher: operation, scope, group, version, resource. */
function ruleMatches(rule: JsonObject, r: AdmissionRequest): 'exact' | 'equivalent' | undefined {
  const list = (v: JsonValue | undefined): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  const operations = list(rule.operations);
  if (!operations.some((o) => o === '*' || o === r.operation)) return undefined;
  if (!scopeMatches(rule.scope, r)) return undefined;
  if (!list(rule.apiGroups).some((g) => g === '*' || g === r.group)) return undefined;
  if (!list(rule.resources).some((res) => resourceMatches(res, r.resource))) return undefined;
  return list(rule.apiVersions).some((v) => v === '*' || v === r.version) ? 'exact' : 'equivalent';
}

function scopeMatches(scope: JsonValue | undefined, r: AdmissionRequest): boolean {
  if (scope === undefined || scope === null || scope === '*') return true;
  const isNamespace = r.group === '' && r.resource === 'namespaces';
  if (scope === 'Namespaced') return !isNamespace && r.namespace !== '';
  if (scope === 'Cluster') return isNamespace || r.namespace === '';
  return false;
}

// rules.go resource(): the request is for the main resource (no subresource), which `pods`, `*`, `pods/*` and `*/*` match; `pods/status` does not.
function resourceMatches(pattern: string, resource: string): boolean {
  const [res, sub] = pattern.split('/', 2) as [string, string | undefined];
  if (res !== '*' && res !== resource) return false;
  return sub === undefined || sub === '*';
}

/**
 * A metav1.LabelSelector against labels: true, false, or undefined where it cannot be said (labels
 * unknown, an operator it does not know). An empty selector selects everything.
 */
export function selectorMatches(
  selector: JsonObject,
  labels: Readonly<Record<string, string>> | undefined,
): boolean | undefined {
  const matchLabels = isJsonObject(selector.matchLabels) ? selector.matchLabels : {};
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) return true;
  if (labels === undefined) return undefined;
  const has = (k: string) => Object.prototype.hasOwnProperty.call(labels, k);
  for (const [k, v] of Object.entries(matchLabels)) if (!has(k) || labels[k] !== v) return false;
  for (const e of expressions) {
    if (!isJsonObject(e) || typeof e.key !== 'string') return undefined;
    const values = Array.isArray(e.values) ? e.values : [];
    const value = has(e.key) ? labels[e.key] : undefined;
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        return undefined;
    }
  }
  return true;
}

/** The string labels of an object's metadata. */
export function labelsOf(object: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const metadata = isJsonObject(object) && isJsonObject(object.metadata) ? object.metadata : undefined;
  if (metadata && isJsonObject(metadata.labels))
    for (const [k, v] of Object.entries(metadata.labels)) if (typeof v === 'string') setOwn(out, k, v);
  return out;
}

/** A webhook whose sideEffects is not None or NoneOnDryRun: the server refuses every dry run it would be called for. */
export function refusesDryRun(m: WebhookMatch): boolean {
  return m.sideEffects !== 'None' && m.sideEffects !== 'NoneOnDryRun';
}

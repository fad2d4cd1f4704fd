// ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) judged on the object the request
// would store, as the API server's ValidatingAdmissionPolicy plugin judges it (k8s.io/apiserver
// pkg/admission/plugin/policy/validating and pkg/admission/plugin/policy/matching, v0.34):
// - a binding applies its policy (spec.policyName) to a request that the policy's matchConstraints
//   and the binding's matchResources both match: resource rules (operations, apiGroups,
//   apiVersions, resources, scope, resourceNames), excludeResourceRules, namespaceSelector (the
//   labels of the object's namespace; a cluster-scoped object other than a Namespace always
//   matches; a Namespace is matched on its own labels), objectSelector (the new or the old object's
//   labels);
// - params: the policy's paramKind, the binding's paramRef by name or by selector, in paramRef's
//   namespace or the object's; none found is parameterNotFoundAction (Deny refuses, Allow passes);
//   with several, each is judged;
// - matchConditions all true (one false: the policy is skipped), then variables, then every
//   validation; a false one is a failure in the words of messageExpression, else message, else
//   `failed expression: <expression>`;
// - the binding's validationActions: Deny refuses (the reason's code, 403 Forbidden by default),
//   Warn sends a warning, Audit only writes the audit log (nothing said);
// - an expression that fails at run time (a missing key, a division by zero, a text url() or ip()
//   refuses) falls to failurePolicy: Fail refuses (422, `expression '<expression>' resulted in
//   error: <error>`; a match condition's errors likewise unless another condition is false),
//   Ignore passes.
// What the product cannot evaluate (the authorizer, the user, a CEL library it lacks, params it
// could not read) is `admission-policy-unknown`, quiet: the dry run decides. Never a guess.
import { evaluatePolicyExpression, type PolicyAnswer, type PolicyInput } from '../cel/admission';
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import type { FieldPath } from '../ssa/path';
import { qualifiedResource } from '../ssa/messages';
import { defaultSeverity, docsLinks } from './catalogue';
import type { AdmissionPolicyFacts, NamespaceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldRange } from './locate';
import { groupOf, labelSelectorMatches, writesPath } from './stored-object';

/** What the policies are judged on (analysis.ts hands it in). */
export interface PolicyJudgement {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  /** The object the request would store; undefined where the product does not build it. */
  readonly stored: JsonObject | undefined;
  /** The live object (`oldObject`); undefined for a new object. */
  readonly live: JsonObject | undefined;
  /** The kind as the cluster serves it. */
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** The namespace the object lands in ('' for a cluster-scoped kind). */
  readonly namespaceName: string;
  readonly namespace: NamespaceFacts | undefined;
  readonly policies: AdmissionPolicyFacts | undefined;
  at(path: FieldPath): FieldRange;
  readonly nameRange: FieldRange['key'];
  /** Said after a finding when the server answers something else first. */
  readonly before: string;
  /** Whether the server answers something else first: no warning is sent then. */
  readonly answeredFirst: boolean;
}

type Operation = 'CREATE' | 'UPDATE';

/** The findings of every binding that applies to the request. */
export function admissionPolicyFindings(j: PolicyJudgement): Finding[] {
  const facts = j.policies;
  if (!facts || !j.stored) return [];
  if (facts.state === 'unknown')
    return [unknownFinding(j, `The ValidatingAdmissionPolicies of the cluster could not be read (${facts.why})`)];
  const operation: Operation = j.live ? 'UPDATE' : 'CREATE';
  const out: Finding[] = [];
  const byName = new Map<string, JsonObject>();
  for (const p of facts.policies) {
    const name = nameOf(p);
    if (name) byName.set(name, p);
  }
  const bindings = [...facts.bindings].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  for (const binding of bindings) {
    const bspec = isJsonObject(binding.spec) ? binding.spec : {};
    const policy = typeof bspec.policyName === 'string' ? byName.get(bspec.policyName) : undefined;
    if (!policy) continue;
    out.push(...judgeBinding(j, operation, policy, binding, facts));
  }
  return out;
}

function nameOf(o: JsonObject): string {
  const m = isJsonObject(o.metadata) ? o.metadata : {};
  return typeof m.name === 'string' ? m.name : '';
}

function labelsOf(o: JsonValue | undefined): Record<string, string> {
  const m = isJsonObject(o) && isJsonObject(o.metadata) ? o.metadata : {};
  const out: Record<string, string> = {};
  if (isJsonObject(m.labels)) for (const [k, v] of Object.entries(m.labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

const strings = (v: JsonValue | undefined): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

type Match = { matches: boolean } | { unknown: string };

/**
 * One NamedRuleWithOperations against the request (matching.go, rules.Matcher): 'maybe' where only
 * matchPolicy Equivalent could match it, through another served version of the resource, which
 * the product does not know.
 */
function ruleMatches(j: PolicyJudgement, operation: Operation, rule: JsonValue, exact: boolean): boolean | 'maybe' {
  if (!isJsonObject(rule)) return false;
  const ops = strings(rule.operations);
  if (!ops.includes('*') && !ops.includes(operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(j.group)) return false;
  const version = j.resource.apiVersion.includes('/') ? j.resource.apiVersion.split('/')[1]! : j.resource.apiVersion;
  const versions = strings(rule.apiVersions);
  // matchPolicy Equivalent: another served version of the same resource is converted to one the rule names.
  const otherVersion = !versions.includes('*') && !versions.includes(version);
  if (otherVersion && (exact || versions.length === 0)) return false;
  const resources = strings(rule.resources);
  if (!resources.some((r) => r === '*' || r === j.plural || r === '*/*')) return false;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  if (scope === 'Cluster' && j.namespaced) return false;
  if (scope === 'Namespaced' && !j.namespaced) return false;
  const names = strings(rule.resourceNames);
  if (names.length > 0 && !names.includes(j.resource.name ?? '')) return false;
  return otherVersion ? 'maybe' : true;
}

/** A MatchResources (a policy's matchConstraints or a binding's matchResources). */
function matchResources(j: PolicyJudgement, operation: Operation, m: JsonObject, rulesRequired: boolean): Match {
  const exact = m.matchPolicy === 'Exact';
  const rules = Array.isArray(m.resourceRules) ? m.resourceRules : [];
  let maybe = false;
  if (rules.length > 0 || rulesRequired) {
    const answers = rules.map((r) => ruleMatches(j, operation, r, exact));
    if (!answers.includes(true)) {
      if (!answers.includes('maybe')) return { matches: false };
      maybe = true;
    }
  }
  const excludes = Array.isArray(m.excludeResourceRules) ? m.excludeResourceRules : [];
  const excluded = excludes.map((r) => ruleMatches(j, operation, r, exact));
  if (excluded.includes(true)) return { matches: false };
  if (excluded.includes('maybe')) maybe = true;
  // objectSelector: the new object's labels or the old one's.
  if (isJsonObject(m.objectSelector)) {
    const fresh = labelSelectorMatches(m.objectSelector, labelsOf(j.stored));
    const old = j.live ? labelSelectorMatches(m.objectSelector, labelsOf(j.live)) : false;
    if (fresh === false && old !== true) return { matches: false };
  }
  if (isJsonObject(m.namespaceSelector)) {
    const isNamespace = j.group === '' && j.plural === 'namespaces';
    if (isNamespace) {
      if (labelSelectorMatches(m.namespaceSelector, labelsOf(j.stored)) === false) return { matches: false };
    } else if (j.namespaced) {
      const selects = labelSelectorMatches(m.namespaceSelector, {});
      // An empty selector (undefined here) matches every namespace without reading it.
      if (selects !== undefined || hasSelector(m.namespaceSelector)) {
        const labels = namespaceLabels(j);
        if (!labels) return { unknown: `the labels of namespace ${JSON.stringify(j.namespaceName)} are not known` };
        if (labelSelectorMatches(m.namespaceSelector, labels) === false) return { matches: false };
      }
    }
  }
  if (maybe)
    return {
      unknown: `its rules name other versions of ${j.plural} (matchPolicy Equivalent), and which versions the cluster serves is not known here`,
    };
  return { matches: true };
}

function hasSelector(s: JsonObject): boolean {
  return (
    (isJsonObject(s.matchLabels) && Object.keys(s.matchLabels).length > 0) ||
    (Array.isArray(s.matchExpressions) && s.matchExpressions.length > 0)
  );
}

function namespaceLabels(j: PolicyJudgement): Record<string, string> | undefined {
  return j.namespace?.state === 'exists' ? { ...(j.namespace.labels ?? {}) } : undefined;
}

/** The Namespace object as `namespaceObject` shows it: its name and labels (null for a cluster-scoped object). */
function namespaceObjectOf(j: PolicyJudgement): JsonValue | undefined {
  if (!j.namespaced) return null;
  const labels = namespaceLabels(j);
  if (!labels) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: j.namespaceName, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
  };
}

function judgeBinding(
  j: PolicyJudgement,
  operation: Operation,
  policy: JsonObject,
  binding: JsonObject,
  facts: Extract<AdmissionPolicyFacts, { state: 'known' }>,
): Finding[] {
  const pspec = isJsonObject(policy.spec) ? policy.spec : {};
  const bspec = isJsonObject(binding.spec) ? binding.spec : {};
  const policyName = nameOf(policy);
  const bindingName = nameOf(binding);
  const who = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}'`;
  const actions = strings(bspec.validationActions);
  const deny = actions.includes('Deny');
  const warn = actions.includes('Warn');
  if (!deny && !warn) return []; // Audit only: the audit log, nothing the user sees.
  if (!isJsonObject(pspec.matchConstraints)) return [];
  const matched = [matchResources(j, operation, pspec.matchConstraints, true)];
  if (isJsonObject(bspec.matchResources)) matched.push(matchResources(j, operation, bspec.matchResources, false));
  if (matched.some((m) => 'matches' in m && !m.matches)) return [];
  const unknownMatch = matched.find((m): m is { unknown: string } => 'unknown' in m);
  if (unknownMatch) return [unknownFinding(j, `${who} may apply to it, but ${unknownMatch.unknown}`)];
  const ignore = pspec.failurePolicy === 'Ignore';

  // Params.
  let paramSets: JsonValue[] = [null];
  if (isJsonObject(pspec.paramKind)) {
    const found = paramsFor(j, pspec.paramKind, bspec.paramRef, facts);
    if ('unknown' in found) return [unknownFinding(j, `${who} applies to it, but ${found.unknown}`)];
    if (found.objects.length === 0) {
      const ref = isJsonObject(bspec.paramRef) ? bspec.paramRef : {};
      if (ref.parameterNotFoundAction !== 'Deny') return [];
      return decide(j, who, deny, [
        {
          message:
            'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
          reason: 'Invalid',
          paramMissing: true,
        },
      ]);
    }
    paramSets = found.objects;
  }

  const failures: Failure[] = [];
  const unknowns: string[] = [];
  for (const params of paramSets) {
    const namespaceObject = namespaceObjectOf(j);
    const reads = (e: string) => /\bnamespaceObject\b/.test(e);
    const input: PolicyInput = {
      object: j.stored!,
      oldObject: j.live ?? null,
      params,
      namespaceObject: namespaceObject ?? null,
      request: requestOf(j, operation),
      variables: new Map<string, PolicyAnswer>(),
    };
    const run = (expression: string): PolicyAnswer =>
      namespaceObject === undefined && reads(expression)
        ? {
            kind: 'unknown',
            why: `it reads namespaceObject, and the labels of namespace ${JSON.stringify(j.namespaceName)} are not known`,
          }
        : evaluatePolicyExpression(expression, input);
    // matchConditions (matchconditions/matcher.go): one false skips the policy for this request;
    // else one that fails at run time falls to failurePolicy: Ignore skips, Fail refuses with the
    // errors (an aggregate: one error's words, or several in brackets).
    let skipped = false;
    const conditionErrors: (string | undefined)[] = [];
    let conditionUnknown: string | undefined;
    for (const c of Array.isArray(pspec.matchConditions) ? pspec.matchConditions : []) {
      if (!isJsonObject(c) || typeof c.expression !== 'string') continue;
      const a = run(c.expression);
      if (a.kind === 'value' && a.value === false) {
        skipped = true;
        break;
      }
      if (a.kind === 'value' && a.value === true) continue;
      if (a.kind === 'error')
        conditionErrors.push(a.words !== undefined ? errorWords(c.expression, a.words) : undefined);
      else
        conditionUnknown ??= `its match condition ${JSON.stringify(c.name ?? c.expression)} cannot be told: ${whyOf(a)}`;
    }
    if (!skipped && conditionUnknown !== undefined) {
      unknowns.push(conditionUnknown);
      skipped = true;
    } else if (!skipped && conditionErrors.length > 0) {
      skipped = true;
      if (!ignore) {
        const known = conditionErrors.every((m) => m !== undefined);
        const distinct = [...new Set(conditionErrors as string[])];
        failures.push({
          message: !known ? undefined : distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`,
          reason: 'Invalid',
          runtimeError: 'a match condition fails at run time',
          ...(unknowns.length > 0 ? { uncertain: true } : {}),
        });
      }
    }
    if (skipped) continue;
    const variables = input.variables as Map<string, PolicyAnswer>;
    for (const v of Array.isArray(pspec.variables) ? pspec.variables : []) {
      if (!isJsonObject(v) || typeof v.name !== 'string' || typeof v.expression !== 'string') continue;
      variables.set(v.name, run(v.expression));
    }
    for (const v of Array.isArray(pspec.validations) ? pspec.validations : []) {
      if (!isJsonObject(v) || typeof v.expression !== 'string') continue;
      const a = run(v.expression);
      if (a.kind === 'value' && a.value === true) continue;
      if (a.kind === 'error') {
        // validator.go: an evaluation error is failurePolicy's: Ignore admits, Fail refuses (Invalid)
        // with `expression '<expression>' resulted in error: <error>`.
        if (ignore) continue;
        failures.push({
          message: a.words !== undefined ? errorWords(v.expression, a.words) : undefined,
          reason: 'Invalid',
          expression: v.expression,
          runtimeError: a.why,
          ...(unknowns.length > 0 ? { uncertain: true } : {}),
        });
        continue;
      }
      if (a.kind !== 'value' || typeof a.value !== 'boolean') {
        unknowns.push(`its validation ${JSON.stringify(v.expression.trim())} cannot be told: ${whyOf(a)}`);
        continue;
      }
      failures.push({
        ...messageOf(v, run),
        reason: typeof v.reason === 'string' ? v.reason : 'Invalid',
        expression: v.expression,
        // A validation before it that the product cannot tell may be the one the server names.
        ...(unknowns.length > 0 ? { uncertain: true } : {}),
      });
    }
  }
  if (failures.length > 0) return decide(j, who, deny, failures);
  return unknowns.map((u) => unknownFinding(j, `${who} applies to it, and ${u}`));
}

/** activation.go: an expression's run-time error, in the server's words. */
function errorWords(expression: string, words: string): string {
  return `expression '${expression}' resulted in error: ${words}`;
}

function whyOf(a: PolicyAnswer): string {
  if (a.kind === 'value') return `it gives ${typeof a.value}, not a boolean`;
  return a.kind === 'error'
    ? `it fails here (${a.why}), and the server then refuses by the policy's failurePolicy`
    : a.why;
}

interface Failure {
  /** Undefined when the messageExpression cannot be evaluated here. */
  readonly message: string | undefined;
  readonly reason: string;
  readonly expression?: string;
  readonly paramMissing?: boolean;
  /** An earlier validation's answer is unknown: the server may name that one instead. */
  readonly uncertain?: boolean;
  /** The expression fails at run time (the library's words): failurePolicy Fail refuses. */
  readonly runtimeError?: string;
}

/** validating.go: messageExpression's string when it is one line and not blank, else message, else the failed expression. */
function messageOf(v: JsonObject, run: (e: string) => PolicyAnswer): { message: string | undefined } {
  const fallback =
    typeof v.message === 'string' && v.message.trim() !== ''
      ? v.message
      : `failed expression: ${String(v.expression).trim()}`;
  if (typeof v.messageExpression === 'string') {
    const a = run(v.messageExpression);
    if (a.kind === 'unknown') return { message: undefined };
    if (a.kind === 'value' && typeof a.value === 'string') {
      const m = a.value.trim();
      if (m !== '' && !m.includes('\n') && m.length <= 5 * 1024) return { message: m };
    }
  }
  return { message: fallback };
}

const CODES: Record<string, number> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413, Unauthorized: 401 };

function decide(j: PolicyJudgement, who: string, deny: boolean, failures: Failure[]): Finding[] {
  const place = placeOf(j, failures[0]?.expression);
  const name = JSON.stringify(j.resource.name ?? '');
  const what = qualifiedResource({ group: j.group, resource: j.plural });
  if (deny) {
    // The server answers with the first failure.
    const first = failures[0]!;
    // The message says "forbidden" whatever the reason; the code follows the reason (Invalid by default).
    const code = CODES[first.reason] ?? 422;
    const serverMessage =
      first.message !== undefined && !first.uncertain
        ? `${what} ${name} is forbidden: ${who} denied request: ${first.message}`
        : undefined;
    return [
      {
        code: 'admission-policy-denies',
        severity: defaultSeverity('admission-policy-denies'),
        message:
          serverMessage !== undefined
            ? `A ValidatingAdmissionPolicy refuses the request (${code}${first.paramMissing ? ', its params are missing' : ''}): ${serverMessage}${j.before}`
            : first.uncertain
              ? `${who} refuses the request: its validation ${JSON.stringify(first.expression?.trim() ?? '')} is false${first.message !== undefined ? ` (${JSON.stringify(first.message)})` : ''}, though the server may name an earlier validation whose answer the product cannot tell${j.before}`
              : first.runtimeError !== undefined
                ? `${who} refuses the request (${code}): ${first.expression !== undefined ? `its validation ${JSON.stringify(first.expression.trim())} fails at run time (${first.runtimeError})` : first.runtimeError}, and its failurePolicy is Fail; the server's words for the error are not known here${j.before}`
                : `${who} refuses the request (${code}), with a message built by an expression the product cannot evaluate here (${first.expression?.trim() ?? ''})${j.before}`,
        range: place,
        object: j.object,
        ...(serverMessage !== undefined ? { serverMessage } : {}),
        docs: docsLinks.admissionPolicy,
      },
    ];
  }
  if (j.answeredFirst) return [];
  return failures.map((f) => {
    const serverMessage = f.message !== undefined ? `Validation failed for ${who}: ${f.message}` : undefined;
    return {
      code: 'admission-policy-warns' as const,
      severity: defaultSeverity('admission-policy-warns'),
      message:
        serverMessage !== undefined
          ? `A ValidatingAdmissionPolicy warns, and the server accepts the request: ${serverMessage}`
          : f.runtimeError !== undefined
            ? `${who} warns, and the server accepts the request: ${f.expression !== undefined ? `its validation ${JSON.stringify(f.expression.trim())} fails at run time (${f.runtimeError})` : f.runtimeError}; the server's words for the error are not known here`
            : `${who} warns, and the server accepts the request, with a message built by an expression the product cannot evaluate here (${f.expression?.trim() ?? ''})`,
      range: placeOf(j, f.expression),
      object: j.object,
      ...(serverMessage !== undefined ? { serverMessage } : {}),
      docs: docsLinks.admissionPolicy,
    };
  });
}

function unknownFinding(j: PolicyJudgement, why: string): Finding {
  return {
    code: 'admission-policy-unknown',
    severity: defaultSeverity('admission-policy-unknown'),
    message: `${why}: whether it accepts the request is unknown; a dry run tells`,
    range: j.nameRange,
    object: j.object,
    docs: docsLinks.admissionPolicy,
  };
}

/** The field the failed expression reads first (`object.spec.replicas`) where the manifest writes it, else the name. */
function placeOf(j: PolicyJudgement, expression: string | undefined) {
  const m = expression ? /\bobject((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/.exec(expression) : null;
  if (m) {
    const names = m[1]!.split('.').slice(1);
    for (let n = names.length; n > 0; n--) {
      const path: FieldPath = names.slice(0, n).map((name) => ({ kind: 'field', name }));
      if (writesPath(j.resource.object, path)) return j.at(path).key;
    }
  }
  return j.nameRange;
}

function requestOf(j: PolicyJudgement, operation: Operation): { [key: string]: JsonValue } {
  const version = j.resource.apiVersion.includes('/') ? j.resource.apiVersion.split('/')[1]! : j.resource.apiVersion;
  const kind = { group: groupOf(j.resource.apiVersion), version, kind: j.resource.kind };
  const resource = { group: j.group, version, resource: j.plural };
  return {
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    subResource: '',
    requestSubResource: '',
    name: j.resource.name ?? '',
    namespace: j.namespaceName,
    operation,
  };
}

/** The params a binding names, from the collections the cluster layer read. */
function paramsFor(
  j: PolicyJudgement,
  paramKind: JsonObject,
  paramRef: JsonValue | undefined,
  facts: Extract<AdmissionPolicyFacts, { state: 'known' }>,
): { objects: JsonObject[] } | { unknown: string } {
  if (!isJsonObject(paramRef)) return { unknown: "its binding names no paramRef for the policy's paramKind" };
  const apiVersion = typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : '';
  const kind = typeof paramKind.kind === 'string' ? paramKind.kind : '';
  const sets = facts.params.filter((p) => p.apiVersion === apiVersion && p.kind === kind);
  const namespaced = sets[0]?.namespaced;
  if (namespaced === undefined) return { unknown: `its params (${kind}) were not read` };
  const namespace = namespaced
    ? typeof paramRef.namespace === 'string' && paramRef.namespace !== ''
      ? paramRef.namespace
      : j.namespaceName
    : '';
  if (namespaced && namespace === '') return { unknown: `its params (${kind}) are namespaced and the object is not` };
  const set = sets.find((p) => p.namespace === namespace);
  if (!set) return { unknown: `its params (${kind} in ${JSON.stringify(namespace)}) were not read` };
  if (!set.objects) return { unknown: `its params (${kind}) could not be read (${set.why ?? 'no answer'})` };
  if (typeof paramRef.name === 'string' && paramRef.name !== '')
    return { objects: set.objects.filter((o) => nameOf(o) === paramRef.name) };
  if (isJsonObject(paramRef.selector))
    return {
      objects: set.objects.filter((o) => labelSelectorMatches(paramRef.selector, labelsOf(o)) !== false),
    };
  return { unknown: 'its paramRef names neither a name nor a selector' };
}

// The findings on what admission does to the request an apply sends, besides the object's own
// validation (stored-judgement.ts): the admission webhooks the server calls for it (webhooks.ts),
// and LimitRange and ResourceQuota for the Pods it creates (quota.ts). Which request that is: a
// create or the apply of a missing object is admitted as CREATE, the server-side apply of an
// existing one as UPDATE. A client-side apply of an existing object is an UPDATE too: the webhooks
// are named the same; its stored object is not built, so no quota or limit is judged for it.
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json';
import type { Range } from '../manifest/manifest';
import type { ApplyMode } from '../ssa/predict';
import { defaultSeverity, docsLinks } from './catalogue';
import type { NamespaceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import {
  aggregateErrors,
  containersWithDefaults,
  limitRangeErrors,
  defaultedPodSpec,
  quotaRefusal,
  requestAboveLimit,
  type NamespacePolicyFacts,
} from './quota';
import { groupOf, podSpecPath, storedObjectViolations } from './stored-object';
import { labelsOf, matchingWebhooks, refusesDryRun, type WebhookFacts, type WebhookMatch } from './webhooks';

/** What the admission findings read of one judgement (analysis.ts hands it in). */
export interface AdmissionJudgement {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespaced: boolean;
  /** Where the object lands ('' for a cluster-scoped kind). */
  readonly namespaceName: string;
  readonly namespace: NamespaceFacts | undefined;
  readonly manifest: JsonObject;
  readonly live: JsonObject | undefined;
  readonly mode: ApplyMode;
  readonly webhooks: WebhookFacts | undefined;
  readonly policies: NamespacePolicyFacts | undefined;
  /** The object the request would store (stored-judgement.ts storedObjectOf), when it is built. */
  readonly stored: JsonObject | undefined;
  /** Said after a finding when a refusal of ownership, the lock or validation is answered before it. */
  readonly afterRefusals: string;
  readonly object: ObjectIdentity;
  kindRange(): Range;
}

function versionOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
}

/** The webhooks the server calls for the request, one information finding each, and a warning for each that refuses dry runs. */
export function webhookFindings(j: AdmissionJudgement): Finding[] {
  if (!j.webhooks || j.webhooks.state !== 'known') return [];
  const operation = j.live && j.mode !== 'create' ? 'UPDATE' : 'CREATE';
  // A create of an existing object is refused before admission (409 AlreadyExists).
  if (j.live && j.mode === 'create') return [];
  const isNamespace = groupOf(j.apiVersion) === '' && j.kind === 'Namespace';
  const name = typeof j.object.name === 'string' ? j.object.name : '';
  const namespace = isNamespace ? name : j.namespaced ? j.namespaceName : '';
  const namespaceLabels = isNamespace
    ? labelsOf(j.manifest)
    : j.namespace?.state === 'exists'
      ? j.namespace.labels
      : undefined;
  const matches = matchingWebhooks(j.webhooks, {
    operation,
    group: groupOf(j.apiVersion),
    version: versionOf(j.apiVersion),
    resource: j.resource,
    namespace,
    namespaceLabels,
    newLabels: labelsOf(j.manifest),
    oldLabels: j.live ? labelsOf(j.live) : undefined,
  });
  const verb = operation === 'CREATE' ? 'create' : 'update';
  const out: Finding[] = [];
  for (const m of matches) {
    out.push({
      code: 'admission-webhook',
      severity: defaultSeverity('admission-webhook'),
      message: webhookSentence(m, j.kind, verb),
      range: j.kindRange(),
      object: j.object,
      docs: docsLinks.admissionWebhooks,
    });
    if (refusesDryRun(m)) {
      const refusal = `admission webhook ${JSON.stringify(m.name)} does not support dry run`;
      out.push({
        code: 'webhook-refuses-dry-run',
        severity: defaultSeverity('webhook-refuses-dry-run'),
        message: `Admission webhook ${JSON.stringify(m.name)} ${m.certainty === 'will' ? 'is' : 'may be'} called for this ${j.kind}'s ${verb} and declares sideEffects ${m.sideEffects}: the server refuses every dry run it would be called for (${refusal}), so neither "kubectl apply --dry-run=server" nor the product's own confirmation (check --verify) can ask about this object.`,
        range: j.kindRange(),
        object: j.object,
        serverMessage: refusal,
        docs: docsLinks.admissionWebhooks,
      });
    }
  }
  return out;
}

function webhookSentence(m: WebhookMatch, kind: string, verb: string): string {
  const what = m.webhook.type === 'validating' ? 'judges' : 'may change';
  const config = `${m.webhook.type === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration'} ${JSON.stringify(m.webhook.configuration)}`;
  const when = m.certainty === 'will' ? '' : ` if ${m.why ?? 'its conditions hold'}`;
  const policy =
    m.failurePolicy === 'Ignore'
      ? 'failurePolicy Ignore: an error or timeout of the webhook lets the request through'
      : 'failurePolicy Fail: an error or timeout of the webhook refuses the request';
  return `Admission webhook ${JSON.stringify(m.name)} (${config}) ${what} this ${kind}'s ${verb}${when} (${policy}; sideEffects ${m.sideEffects}). Only a dry run can tell what it says.`;
}

/** The webhook a finding names and whether it is certain (the differential test reads it back). */
export function namedWebhook(f: Pick<Finding, 'code' | 'message'>): { name: string; certain: boolean } | undefined {
  if (f.code !== 'admission-webhook') return undefined;
  const m =
    /^Admission webhook ("(?:[^"\\]|\\.)*") \([^)]*\) (?:judges|may change) this \S+ (?:create|update)( if )?/.exec(
      f.message,
    );
  return m ? { name: JSON.parse(m[1]!) as string, certain: m[2] === undefined } : undefined;
}

/** How many Pods the request makes the controller create now, and in what words. */
function podsCreated(j: AdmissionJudgement, stored: JsonObject): { count: number; how: string } {
  const group = groupOf(j.apiVersion);
  const kind = `${group}/${j.kind}`;
  const spec = isJsonObject(stored.spec) ? stored.spec : {};
  const liveSpec = j.live && isJsonObject(j.live.spec) ? j.live.spec : undefined;
  const replicas = (s: JsonObject | undefined): number =>
    s && typeof s.replicas === 'number' && Number.isInteger(s.replicas) && s.replicas >= 0 ? s.replicas : 1;
  switch (kind) {
    case '/Pod':
      return { count: j.live ? 0 : 1, how: 'the Pod' };
    case 'apps/Deployment': {
      const n = replicas(spec);
      if (!liveSpec) return { count: n, how: `${n} Pod${n === 1 ? '' : 's'} (replicas)` };
      const more = Math.max(0, n - replicas(liveSpec));
      if (jsonEqual(spec.template, liveSpec.template)) return { count: more, how: `${more} more Pod(s) (replicas)` };
      const surge = maxSurge(spec, n);
      return {
        count: more + surge,
        how: `${more + surge} Pod(s) beside the running ones during the rollout (maxSurge ${surge}${more ? `, ${more} more replicas` : ''})`,
      };
    }
    case 'apps/ReplicaSet':
    case 'apps/StatefulSet':
    case '/ReplicationController': {
      const n = replicas(spec);
      const more = liveSpec ? Math.max(0, n - replicas(liveSpec)) : n;
      return { count: more, how: `${more} ${liveSpec ? 'more ' : ''}Pod${more === 1 ? '' : 's'} (replicas)` };
    }
    case 'batch/Job': {
      const p = typeof spec.parallelism === 'number' ? spec.parallelism : 1;
      const c = typeof spec.completions === 'number' ? Math.min(p, spec.completions) : p;
      return { count: liveSpec ? 0 : c, how: `${c} Pod${c === 1 ? '' : 's'} at once (parallelism)` };
    }
    case 'batch/CronJob':
      return { count: 1, how: 'the first Pod of each run' };
    case 'apps/DaemonSet':
      return { count: liveSpec ? 0 : 1, how: 'one Pod per node' };
    default:
      return { count: 0, how: '' };
  }
}

/** A Deployment's maxSurge (RollingUpdate; 25% by default, rounded up), in Pods; 0 for Recreate. */
function maxSurge(spec: JsonObject, replicas: number): number {
  const strategy = isJsonObject(spec.strategy) ? spec.strategy : {};
  if (strategy.type === 'Recreate') return 0;
  const rolling = isJsonObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
  const v: JsonValue | undefined = rolling.maxSurge ?? '25%';
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  return m ? Math.ceil((Number(m[1]) * replicas) / 100) : 1;
}

/**
 * LimitRange and ResourceQuota for the Pods the request creates: a Pod that a LimitRange refuses is
 * an error (403); a workload's Pods refused later, and every quota, a warning: usage moves.
 */
export function quotaFindings(j: AdmissionJudgement): Finding[] {
  const specAt = podSpecPath(j.apiVersion, j.kind);
  if (!specAt || !j.stored || !j.namespaced || j.policies?.state !== 'known') return [];
  if (j.kind === 'PodTemplate') return [];
  const { limitRanges, quotas } = j.policies;
  if (limitRanges.length === 0 && quotas.length === 0) return [];
  let spec: JsonValue | undefined = j.stored;
  for (const n of specAt) spec = isJsonObject(spec) ? spec[n] : undefined;
  if (!isJsonObject(spec) || spec.resources !== undefined || spec.overhead !== undefined) return [];
  const { count, how } = podsCreated(j, j.stored);
  if (count === 0) return [];
  const containers = containersWithDefaults(spec, limitRanges);
  if (!containers) return [];
  const isPod = groupOf(j.apiVersion) === '' && j.kind === 'Pod';
  // A default that puts a request above its limit makes the Pod invalid (422), answered before these checks.
  if (containers.some(requestAboveLimit)) return defaultedInvalid(j, spec, specAt, limitRanges, isPod);
  // The server's validation (422, stored-judgement.ts) answers before the admission plugins.
  const after =
    storedObjectViolations(j.apiVersion, j.kind, j.stored).length > 0
      ? ' The server refuses the object as invalid (422) first; this one comes only after that is fixed.'
      : j.afterRefusals;
  const podName = isPod ? JSON.stringify(j.object.name) : undefined;
  const ns = JSON.stringify(j.namespaceName);
  const at = j.kindRange();
  const limitErrors = limitRangeErrors(containers, limitRanges);
  if (limitErrors.length > 0) {
    const said = aggregateErrors(limitErrors);
    const serverMessage = podName ? `pods ${podName} is forbidden: ${said}` : said;
    return [
      {
        code: isPod ? 'limit-range-forbidden' : 'limit-range-pods-refused',
        severity: defaultSeverity(isPod ? 'limit-range-forbidden' : 'limit-range-pods-refused'),
        message: isPod
          ? `A LimitRange of namespace ${ns} refuses this Pod (403 Forbidden, after its defaults are filled in): ${serverMessage}.${after}`
          : `A LimitRange of namespace ${ns} refuses every Pod this ${j.kind} creates (after its defaults are filled in): the ${j.kind} is accepted, its controller's Pods are not: ${said}.${after}`,
        range: at,
        object: j.object,
        serverMessage,
        docs: docsLinks.quota,
      },
    ];
  }
  const refused = quotaRefusal(containers, quotas, count);
  if (!refused) return [];
  const { refusal, pod } = refused;
  const serverMessage = podName ? `pods ${podName} is forbidden: ${refusal.message}` : refusal.message;
  const which = refusal.kind === 'exceeded' && count > 1 ? `Pod ${pod} of ${how}` : isPod ? 'this Pod' : 'every Pod';
  return [
    {
      code: 'quota-exceeded',
      severity: defaultSeverity('quota-exceeded'),
      message: `ResourceQuota ${JSON.stringify(refusal.quota)} of namespace ${ns} refuses ${which}${isPod ? '' : ` this ${j.kind} creates`}, as its status read now (usage moves): ${serverMessage}.${after}`,
      range: at,
      object: j.object,
      serverMessage,
      docs: docsLinks.quota,
    },
  ];
}

/**
 * The LimitRange's defaults put a request above its limit: the server's validation refuses the Pod
 * (422, validateResourceRequirements) after LimitRanger filled them in. A cause the manifest already
 * has is invalid-merged-object's (stored-judgement.ts); only the ones the defaults make are said here.
 */
function defaultedInvalid(
  j: AdmissionJudgement,
  spec: JsonObject,
  specAt: readonly string[],
  limitRanges: readonly JsonObject[],
  isPod: boolean,
): Finding[] {
  const stored = j.stored!;
  const place = (obj: JsonObject, s: JsonObject): JsonObject => {
    const copy: JsonObject = { ...obj };
    let at: JsonObject = copy;
    for (const [i, n] of specAt.entries()) {
      if (i === specAt.length - 1) at[n] = s;
      else {
        const next: JsonObject = isJsonObject(at[n]) ? { ...(at[n] as JsonObject) } : {};
        at[n] = next;
        at = next;
      }
    }
    return copy;
  };
  const before = new Set(
    storedObjectViolations(j.apiVersion, j.kind, stored).map((v) => `${v.serverField}: ${v.body}`),
  );
  const after = storedObjectViolations(j.apiVersion, j.kind, place(stored, defaultedPodSpec(spec, limitRanges)))
    .map((v) => `${v.serverField}: ${v.body}`)
    .filter((cause) => !before.has(cause));
  const ns = JSON.stringify(j.namespaceName);
  return after.map((cause) =>
    isPod
      ? {
          code: 'invalid-merged-object' as const,
          severity: defaultSeverity('invalid-merged-object'),
          message: `A LimitRange of namespace ${ns} fills in a default that puts a request above its limit: the server refuses the Pod (422 Invalid, validateResourceRequirements): ${cause}${j.afterRefusals}`,
          range: j.kindRange(),
          object: j.object,
          serverField: cause.slice(0, cause.indexOf(': ')),
          serverMessage: cause,
          docs: docsLinks.quota,
        }
      : {
          code: 'limit-range-pods-refused' as const,
          severity: defaultSeverity('limit-range-pods-refused'),
          message: `A LimitRange of namespace ${ns} fills in a default that puts a request above its limit: the ${j.kind} is accepted, every Pod it creates is refused as invalid (422, validateResourceRequirements): ${cause}${j.afterRefusals}`,
          range: j.kindRange(),
          object: j.object,
          // The Pod's own field: its controller makes it from the template.
          serverMessage: cause.replace(/^(spec\.jobTemplate\.spec\.template|spec\.template|template)\./, ''),
          docs: docsLinks.quota,
        },
  );
}

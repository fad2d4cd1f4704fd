// The findings on the object a request would store: the server's built-in validation of it
// (stored-object.ts, 422 Invalid) and Pod Security admission of its pod (pod-security.ts: 403
// Forbidden for a Pod, a warning for a workload, whose Pods are refused later). Which object that
// is: a create or a new object's apply stores the manifest; a server-side apply of an existing
// object stores the merge the prediction computed. A client-side apply of an existing object
// sends kubectl's strategic merge patch, which is not predicted here: nothing is said of it (the
// dry run decides), and nothing where the merge could not be built.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { ManifestResource } from '../manifest/manifest';
import type { FieldPath } from '../ssa/path';
import type { ApplyMode } from '../ssa/predict';
import { formatServerPath } from '../ssa/messages';
import { defaultSeverity, docsLinks } from './catalogue';
import type { NamespaceFacts } from './facts';
import type { Finding, ObjectIdentity } from './finding';
import type { FieldRange } from './locate';
import {
  evaluatePod,
  levelVersionName,
  podForbiddenMessage,
  podSecurityPolicy,
  podSecurityWarning,
  type CheckFailure,
} from './pod-security';
import { groupOf, podSpecPath, storedObjectViolations, writesPath } from './stored-object';

/** What the findings on the stored object read of one judgement (analysis.ts hands it in). */
export interface StoredJudgement {
  readonly resource: ManifestResource;
  readonly object: ObjectIdentity;
  readonly mode: ApplyMode;
  readonly live: JsonObject | undefined;
  /** The server-side apply's merged object (the prediction's), when the object exists. */
  readonly merged: JsonValue | undefined;
  readonly namespace: NamespaceFacts | undefined;
  readonly namespaced: boolean;
  at(path: FieldPath): FieldRange;
  /** Said after a finding of the server's validation when a refusal (a 409) is answered before it. */
  readonly afterRefusals: string;
  /** Whether the server answers something else first (a 409, a missing namespace): no warning is sent then. */
  readonly answeredFirst: boolean;
}

/** The object the request would store, or undefined where the product does not build it. */
export function storedObjectOf(
  j: Pick<StoredJudgement, 'resource' | 'mode' | 'live' | 'merged'>,
): JsonObject | undefined {
  if (j.mode === 'create') return j.live ? undefined : j.resource.object;
  if (!j.live) return j.resource.object;
  if (j.mode === 'serverSide') return isJsonObject(j.merged) ? j.merged : undefined;
  return undefined;
}

/** Where a finding about these fields goes: the first the manifest writes, else the nearest written parent of the first. */
function placeOf(j: StoredJudgement, places: readonly FieldPath[]): FieldRange {
  const written = places.find((p) => writesPath(j.resource.object, p));
  return j.at(written ?? places[0] ?? []);
}

/** The server's built-in validation of the stored object: one finding per cause of its 422. */
export function storedObjectFindings(j: StoredJudgement): Finding[] {
  const stored = storedObjectOf(j);
  if (!stored) return [];
  const merged = stored !== j.resource.object;
  const verb = j.mode === 'create' || !j.live ? 'create' : 'apply';
  return storedObjectViolations(j.resource.apiVersion, j.resource.kind, stored).map((v) => {
    const cause = `${v.serverField}: ${v.body}`;
    // Whether the manifest alone breaks the rule, or only its merge with the live object does.
    const ownFault =
      !merged ||
      storedObjectViolations(j.resource.apiVersion, j.resource.kind, j.resource.object).some(
        (m) => m.serverField === v.serverField && m.body === v.body,
      );
    const where = ownFault
      ? `In the manifest, ${v.what}`
      : `The apply would store the live object with this manifest merged in, and there ${v.what}`;
    const range = placeOf(j, v.places);
    return {
      code: 'invalid-merged-object',
      severity: defaultSeverity('invalid-merged-object'),
      message: `${where}: the server refuses the ${verb} (422 Invalid, ${v.follows}): ${cause}${j.afterRefusals}`,
      range: range.key,
      object: j.object,
      path: formatServerPath(v.path),
      serverField: v.serverField,
      serverMessage: cause,
      docs: docsLinks.storedObject,
    };
  });
}

/**
 * Pod Security admission, from the labels of the namespace the object goes to. A Pod that breaks
 * the enforce level is refused (403); one that breaks only the warn level is accepted with the
 * server's warning. A workload is never refused: it is accepted with the warning of the warn level
 * (which is the enforce level unless labelled otherwise), and its Pods are refused when its
 * controller creates them. `invalidFirst`: the server refuses the object as invalid (422) before.
 */
export function podSecurityFindings(j: StoredJudgement, invalidFirst: boolean): Finding[] {
  const specAt = podSpecPath(j.resource.apiVersion, j.resource.kind);
  if (!specAt || !j.namespaced || j.namespace?.state !== 'exists' || !j.namespace.labels) return [];
  const policy = podSecurityPolicy(j.namespace.labels);
  // Privileged enforce and warn levels (every namespace without labels) check nothing: no pod to build.
  if (!policy || (policy.enforce.level === 'privileged' && policy.warn.level === 'privileged')) return [];
  const isPod = groupOf(j.resource.apiVersion) === '' && j.resource.kind === 'Pod';
  // An update of a Pod is judged by the server only where it changes what the checks read; not predicted here.
  if (isPod && j.live) return [];
  const stored = storedObjectOf(j);
  if (!stored) return [];
  // The pod: a Pod's own metadata and spec, a workload's template.
  const podAt = specAt.slice(0, -1);
  let pod: JsonValue | undefined = stored;
  for (const n of podAt) pod = isJsonObject(pod) ? pod[n] : undefined;
  if (!isJsonObject(pod)) return [];
  const metadata = isJsonObject(pod.metadata) ? pod.metadata : {};
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  const prefix: FieldPath = podAt.map((name) => ({ kind: 'field', name }));
  const ns = JSON.stringify(j.namespace.name);
  const before = invalidFirst
    ? ' The server refuses the object as invalid (422) first; this one comes only after that is fixed.'
    : j.afterRefusals;
  const finding = (
    code: 'pod-security-forbidden' | 'pod-security-warning',
    failure: CheckFailure,
    message: string,
    serverMessage: string | undefined,
  ): Finding => {
    const range = placeOf(
      j,
      failure.places.map((p) => [...prefix, ...p]),
    );
    const first = failure.places[0];
    return {
      code,
      severity: defaultSeverity(code),
      message,
      range: range.key,
      object: j.object,
      ...(first ? { path: formatServerPath([...prefix, ...first]) } : {}),
      ...(serverMessage !== undefined ? { serverMessage } : {}),
      docs: docsLinks.podSecurity,
    };
  };
  const check = (f: CheckFailure) => (f.detail !== '' ? `${f.reason} (${f.detail})` : f.reason);
  const name = j.resource.name ?? '';
  const enforced = evaluatePod(policy.enforce, metadata, spec);
  const warned = evaluatePod(policy.warn, metadata, spec);
  const warning =
    warned.length > 0 && !j.answeredFirst && !invalidFirst ? podSecurityWarning(policy.warn, warned) : undefined;
  const enforce = levelVersionName(policy.enforce);
  if (isPod && enforced.length > 0) {
    const refusal = podForbiddenMessage(name, policy.enforce, enforced);
    return enforced.map((f) =>
      finding(
        'pod-security-forbidden',
        f,
        `Namespace ${ns} enforces Pod Security "${enforce}", and this Pod breaks it: ${check(f)} — the server refuses it (403 Forbidden): ${refusal}.${before}`,
        refusal,
      ),
    );
  }
  const out: Finding[] = [];
  const said = new Set<string>();
  if (!isPod)
    for (const f of enforced) {
      said.add(f.id);
      out.push(
        finding(
          'pod-security-warning',
          f,
          `Namespace ${ns} enforces Pod Security "${enforce}": the ${j.resource.kind} is accepted${warning ? " with the server's warning" : ''}, but ${j.resource.kind === 'PodTemplate' ? 'every Pod made from it is' : 'every Pod it creates is'} refused (403 Forbidden, violates PodSecurity "${enforce}"): ${check(f)}.${before}`,
          warning,
        ),
      );
    }
  const warn = levelVersionName(policy.warn);
  for (const f of warned) {
    if (said.has(f.id)) continue;
    out.push(
      finding(
        'pod-security-warning',
        f,
        `Namespace ${ns} warns at Pod Security "${warn}": the server accepts this ${j.resource.kind} with the warning "would violate PodSecurity "${warn}"": ${check(f)}.${before}`,
        warning,
      ),
    );
  }
  return out;
}

// Fields the API server will not let an update change: it answers 422 Invalid, after everything
// that refuses a request earlier (400 managedFields, 500 typing, the 409s; FINDINGS.md). One rule
// per field, as data, each found from the server itself: a dry-run apply of the change against the
// local kube-apiserver (v1.34), whose answer's `details.causes` gave the field and the words below,
// and the validation function named in `source` (k8s.io/kubernetes, pkg/apis/<group>/validation).
//
// The rules compare the object as the apply leaves it (the merged object of a server-side apply,
// or the manifest's values where it writes them) with the live object. The server compares after
// defaulting; the product does not default, so a rule either compares the whole value (nothing in
// it is defaulted: a field the apply removes is a change too) or only what the apply writes (the
// live object holds defaults the manifest need not repeat; a field left out is no change unless
// the rule knows its default).
//
// A Secret's values are never read (metadata only); its `type` and `immutable` are learned without
// them (cluster/secret-fields.ts) and join the live object, so its rules on those two fields are
// here and apply once they are known. Whether the `data` of an immutable Secret changes is known
// only where the apply removes a key (analysis.ts immutableSecretData); see FINDINGS.md.
import { isJsonObject, jsonAt, jsonEqual, type JsonObject, type JsonValue } from '../json';
import { goJson, goJsonValue } from '../ssa/field-set';
import type { FieldPath, PathElement } from '../ssa/path';

const docs = {
  selector: 'https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#label-selector-updates',
  statefulSet: 'https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#limitations',
  job: 'https://kubernetes.io/docs/concepts/workloads/controllers/job/#mutable-scheduling-directives',
  service: 'https://kubernetes.io/docs/concepts/services-networking/dual-stack/',
  volumes: 'https://kubernetes.io/docs/concepts/storage/persistent-volumes/',
  pod: 'https://kubernetes.io/docs/concepts/workloads/pods/#pod-update-and-replacement',
  configMap: 'https://kubernetes.io/docs/concepts/configuration/configmap/#configmap-immutable',
  secret: 'https://kubernetes.io/docs/concepts/configuration/secret/#secret-immutable',
  secretTypes: 'https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
  rbac: 'https://kubernetes.io/docs/reference/access-authn-authz/rbac/#rolebinding-and-clusterrolebinding',
  storageClass: 'https://kubernetes.io/docs/concepts/storage/storage-classes/',
  ingressClass: 'https://kubernetes.io/docs/concepts/services-networking/ingress/#ingress-class',
} as const;

/** One `details.causes[]` entry of the server's 422. */
export interface ImmutableCause {
  /** The field the server names, in its notation (`spec.selector`, `spec.clusterIPs[0]`, `volumeMode`). */
  readonly field: string;
  /** The cause's message, e.g. `Invalid value: {"matchLabels":{"app":"web"}}: field is immutable`. */
  readonly message: string;
  /**
   * Whether `message` is the server's word for word. Not where the server prints Go values the
   * product cannot reproduce (a pod template as a Go struct, a diff of the old and new spec): then
   * `message` is the server's sentence with `…` where they go.
   */
  readonly exact: boolean;
}

interface CauseInput {
  readonly after: JsonValue | undefined;
  readonly live: JsonValue | undefined;
  readonly afterObject: JsonObject;
  readonly liveObject: JsonObject;
}

export interface ImmutableRule {
  /** API group ('' for the core group) and kinds the rule is about. */
  readonly group: string;
  readonly kinds: readonly string[];
  /** The field, from the object's root. */
  readonly path: readonly string[];
  /**
   * `whole`: the value after the apply must equal the live one (nothing in it is defaulted).
   * `written`: only what the apply writes must equal the live values (the server defaults the rest).
   */
  readonly compare: 'whole' | 'written';
  /** For `written`: what the field becomes when a server-side apply leaves it out (its default). */
  readonly default?: JsonValue;
  /** Fields under `path` that may change (`*` is any list item), possibly depending on the live object. */
  readonly except?: readonly (readonly string[])[] | ((live: JsonObject) => readonly (readonly string[])[]);
  /** Whether the rule holds for this pair of objects (default: always). */
  readonly applies?: (live: JsonObject, after: JsonObject) => boolean;
  /** Whether the field changes, where that is no plain comparison (a Service's primary IP). */
  readonly changed?: (input: CauseInput) => boolean;
  readonly cause: (input: CauseInput) => ImmutableCause;
  /** Where the server says it (k8s.io/kubernetes). */
  readonly source: string;
  /** Where the Kubernetes documentation says what may change instead. */
  readonly docs: string;
}

/** A change the server refuses: where the apply makes it, and what the server says. */
export interface ImmutableChange {
  /** The field that changes (for `written` rules, the first leaf found that differs). */
  readonly path: FieldPath;
  readonly live?: JsonValue;
  readonly after?: JsonValue;
  readonly cause: ImmutableCause;
  readonly docs: string;
  /** What the user is told instead of the two values, where those are not known (a Secret's data). */
  readonly detail?: string;
}

const immutable = (field: string, value: string): ImmutableCause => ({
  field,
  message: `Invalid value: ${value}: field is immutable`,
  exact: true,
});
const forbidden = (field: string, sentence: string, exact = true): ImmutableCause => ({
  field,
  message: `Forbidden: ${sentence}`,
  exact,
});

const selectorRule = (group: string, kinds: string[], source: string): ImmutableRule => ({
  group,
  kinds,
  path: ['spec', 'selector'],
  compare: 'whole',
  cause: ({ after }) => immutable('spec.selector', goLabelSelector(after)),
  source,
  docs: docs.selector,
});

const STATEFULSET_SPEC =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
const statefulSetRule = (field: string, compare: 'whole' | 'written', fallback?: JsonValue): ImmutableRule => ({
  group: 'apps',
  kinds: ['StatefulSet'],
  path: ['spec', field],
  compare,
  ...(fallback !== undefined ? { default: fallback } : {}),
  cause: () => forbidden('spec', STATEFULSET_SPEC),
  source: 'pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate',
  docs: docs.statefulSet,
});

const configMapImmutable = (live: JsonObject) => live.immutable === true;
const CONFIGMAP_IMMUTABLE = 'field is immutable when `immutable` is set';
/** The server's words when an immutable Secret's (or ConfigMap's) `data` changes. */
export const IMMUTABLE_DATA_CAUSE = (field: string): ImmutableCause => forbidden(field, CONFIGMAP_IMMUTABLE);
/** A Secret's type as validation sees it: empty or absent is defaulted to Opaque. */
const secretTypeAfter = (after: JsonValue | undefined): string =>
  typeof after === 'string' && after !== '' ? after : 'Opaque';

/** A Job that is suspended and never started may change its pods' scheduling directives. */
const jobSchedulingMayChange = (live: JsonObject): boolean =>
  isJsonObject(live.spec) &&
  live.spec.suspend === true &&
  !(isJsonObject(live.status) && live.status.startTime !== undefined && live.status.startTime !== null);

const serviceIsExternalName = (o: JsonObject) => isJsonObject(o.spec) && o.spec.type === 'ExternalName';
const stringsAt = (o: JsonObject, name: string): string[] => {
  const spec = isJsonObject(o.spec) ? o.spec : {};
  const v = spec[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
};
const stringAt = (o: JsonObject, name: string): string | undefined => {
  const spec = isJsonObject(o.spec) ? o.spec : {};
  return typeof spec[name] === 'string' ? spec[name] : undefined;
};
/** The Service's cluster IPs after the update, as the registry normalizes them before validation. */
function clusterIPsAfter(after: JsonObject, live: JsonObject): string[] {
  const ip = stringAt(after, 'clusterIP');
  const ips = stringsAt(after, 'clusterIPs');
  // An empty clusterIP keeps the allocated one (service storage patchAllocatedValues).
  if (ip === undefined || ip === '') return ips.length > 0 ? ips : stringsAt(live, 'clusterIPs');
  // clusterIP changed alone: the list follows it (normalizeClusterIPs).
  if (ips.length === 0 || jsonEqual(ips, stringsAt(live, 'clusterIPs')))
    return [ip, ...stringsAt(live, 'clusterIPs').slice(1)];
  return ips;
}
const isHeadless = (ips: readonly string[]) => ips.length === 1 && ips[0] === 'None';

const PVC_SPEC =
  'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';
const POD_SPEC =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,' +
  '`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** A ConfigMap or Secret marked immutable stays so: `immutable` may not be unset or set to false. */
function staysImmutable(kind: 'ConfigMap' | 'Secret', source: string, docsUrl: string): ImmutableRule {
  return {
    group: '',
    kinds: [kind],
    path: ['immutable'],
    compare: 'whole',
    applies: configMapImmutable,
    changed: ({ after }) => after !== true,
    cause: () => forbidden('immutable', CONFIGMAP_IMMUTABLE),
    source,
    docs: docsUrl,
  };
}

/** Every rule, by kind. */
export const immutableRules: readonly ImmutableRule[] = [
  selectorRule('apps', ['Deployment'], 'pkg/apis/apps/validation/validation.go ValidateDeploymentUpdate'),
  selectorRule('apps', ['ReplicaSet'], 'pkg/apis/apps/validation/validation.go ValidateReplicaSetUpdate'),
  selectorRule('apps', ['DaemonSet'], 'pkg/apis/apps/validation/validation.go ValidateDaemonSetUpdate'),
  // The spec as a whole, with the fields that may change put back: one cause, `spec`.
  statefulSetRule('selector', 'whole'),
  statefulSetRule('serviceName', 'whole'),
  statefulSetRule('podManagementPolicy', 'written', 'OrderedReady'),
  statefulSetRule('volumeClaimTemplates', 'written', []),
  selectorRule('batch', ['Job'], 'pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate'),
  {
    group: 'batch',
    kinds: ['Job'],
    path: ['spec', 'template'],
    compare: 'written',
    // Scheduling directives of a suspended Job that never started (validatePodTemplateUpdate).
    except: (live) =>
      jobSchedulingMayChange(live)
        ? [
            ['metadata', 'labels'],
            ['metadata', 'annotations'],
            ['spec', 'nodeSelector'],
            ['spec', 'tolerations'],
            ['spec', 'schedulingGates'],
            ['spec', 'affinity', 'nodeAffinity'],
          ]
        : [],
    // The server prints the whole template as a Go struct, with the defaults and labels it adds.
    cause: () => ({ field: 'spec.template', message: 'Invalid value: …: field is immutable', exact: false }),
    source: 'pkg/apis/batch/validation/validation.go validatePodTemplateUpdate',
    docs: docs.job,
  },
  {
    group: 'batch',
    kinds: ['Job'],
    path: ['spec', 'completions'],
    compare: 'written',
    // An Indexed Job may change completions together with parallelism (elastic Indexed Jobs).
    applies: (live) => !(isJsonObject(live.spec) && live.spec.completionMode === 'Indexed'),
    cause: ({ after }) => immutable('spec.completions', goJsonValue(after ?? null)),
    source: 'pkg/apis/batch/validation/validation.go validateCompletions',
    docs: docs.job,
  },
  {
    group: 'batch',
    kinds: ['Job'],
    path: ['spec', 'completionMode'],
    compare: 'written',
    default: 'NonIndexed',
    cause: ({ after }) => immutable('spec.completionMode', goJsonValue(after ?? 'NonIndexed')),
    source: 'pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate',
    docs: docs.job,
  },
  {
    group: '',
    kinds: ['Service'],
    path: ['spec', 'clusterIP'],
    compare: 'written',
    applies: (live, after) => !serviceIsExternalName(live) && !serviceIsExternalName(after),
    changed: ({ afterObject, liveObject }) => {
      const before = stringsAt(liveObject, 'clusterIPs');
      const now = clusterIPsAfter(afterObject, liveObject);
      if (before.length === 0 || now.length === 0 || (isHeadless(before) && isHeadless(now))) return false;
      // A manifest whose clusterIPs does not start with its clusterIP gets another refusal.
      const ip = stringAt(afterObject, 'clusterIP');
      const ips = stringsAt(afterObject, 'clusterIPs');
      if (ip && ips.length > 0 && !jsonEqual(ips, before) && ips[0] !== ip) return false;
      return now[0] !== before[0];
    },
    cause: ({ afterObject, liveObject }) => ({
      field: 'spec.clusterIPs[0]',
      message: `Invalid value: ${goJsonValue(clusterIPsAfter(afterObject, liveObject))}: may not change once set`,
      exact: true,
    }),
    source: 'pkg/apis/core/validation/validation.go validateUpgradeDowngradeClusterIPs',
    docs: docs.service,
  },
  {
    // The allocated address keeps its family: a Service that asks for the other primary family is
    // refused on its address (on a dual-stack server, `spec.ipFamilies[0]` may be named too).
    group: '',
    kinds: ['Service'],
    path: ['spec', 'ipFamilies'],
    compare: 'written',
    applies: (live, after) =>
      !serviceIsExternalName(live) && !serviceIsExternalName(after) && !isHeadless(stringsAt(live, 'clusterIPs')),
    changed: ({ afterObject, liveObject }) => {
      const family = stringsAt(afterObject, 'ipFamilies')[0];
      const ip = clusterIPsAfter(afterObject, liveObject)[0];
      return family !== undefined && ip !== undefined && !isHeadless([ip]) && family !== familyOf(ip);
    },
    cause: ({ afterObject, liveObject }) => {
      const family = stringsAt(afterObject, 'ipFamilies')[0] ?? '';
      const ip = clusterIPsAfter(afterObject, liveObject)[0] ?? '';
      return {
        field: 'spec.clusterIPs[0]',
        message: `Invalid value: ${goJson(ip)}: expected an ${family} value as indicated by \`ipFamilies[0]\``,
        exact: true,
      };
    },
    source: 'pkg/apis/core/validation/validation.go ValidateService (clusterIPs against ipFamilies)',
    docs: docs.service,
  },
  {
    group: '',
    kinds: ['PersistentVolumeClaim'],
    path: ['spec'],
    compare: 'written',
    except: (live) => {
      const spec = isJsonObject(live.spec) ? live.spec : {};
      const bound = isJsonObject(live.status) && live.status.phase === 'Bound';
      return [
        // A claim without a class may be given one once (retroactive default StorageClass).
        ...(spec.storageClassName === undefined || spec.storageClassName === null ? [['storageClassName']] : []),
        ...(bound ? [['resources', 'requests'], ['volumeAttributesClassName']] : []),
      ];
    },
    // The server appends a diff of the old and new spec as Go structs.
    cause: () => forbidden('spec', `${PVC_SPEC} …`, false),
    source: 'pkg/apis/core/validation/validation.go ValidatePersistentVolumeClaimUpdate',
    docs: docs.volumes,
  },
  {
    group: '',
    kinds: ['PersistentVolume'],
    path: ['spec'],
    compare: 'written',
    // Everything but the volume source may change (or has a rule of its own below).
    except: [
      ['capacity'],
      ['accessModes'],
      ['claimRef'],
      ['persistentVolumeReclaimPolicy'],
      ['storageClassName'],
      ['mountOptions'],
      ['volumeMode'],
      ['nodeAffinity'],
      ['volumeAttributesClassName'],
    ],
    cause: () =>
      forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation …', false),
    source: 'pkg/apis/core/validation/validation.go ValidatePersistentVolumeUpdate',
    docs: docs.volumes,
  },
  {
    group: '',
    kinds: ['PersistentVolume'],
    path: ['spec', 'volumeMode'],
    compare: 'written',
    default: 'Filesystem',
    // The server names the field without `spec.`.
    cause: ({ after }) => immutable('volumeMode', goJsonValue(after ?? 'Filesystem')),
    source: 'pkg/apis/core/validation/validation.go ValidatePersistentVolumeUpdate (ValidateImmutableField volumeMode)',
    docs: docs.volumes,
  },
  {
    group: '',
    kinds: ['Pod'],
    path: ['spec'],
    compare: 'written',
    except: [
      ['containers', '*', 'image'],
      ['initContainers', '*', 'image'],
      ['activeDeadlineSeconds'],
      ['tolerations'],
      ['terminationGracePeriodSeconds'],
      ['schedulingGates'],
      ['ephemeralContainers'],
    ],
    cause: () => forbidden('spec', `${POD_SPEC} …`, false),
    source: 'pkg/apis/core/validation/validation.go ValidatePodUpdate',
    docs: docs.pod,
  },
  staysImmutable('ConfigMap', 'pkg/apis/core/validation/validation.go ValidateConfigMapUpdate', docs.configMap),
  ...['data', 'binaryData'].map((field): ImmutableRule => ({
    group: '',
    kinds: ['ConfigMap'],
    path: [field],
    compare: 'whole',
    applies: configMapImmutable,
    cause: () => forbidden(field, CONFIGMAP_IMMUTABLE),
    source: 'pkg/apis/core/validation/validation.go ValidateConfigMapUpdate',
    docs: docs.configMap,
  })),
  {
    // Known only once the cluster layer has learned the live type; an empty or absent type is
    // defaulted to Opaque before validation (SetDefaults_Secret).
    group: '',
    kinds: ['Secret'],
    path: ['type'],
    compare: 'whole',
    applies: (live) => typeof live.type === 'string',
    changed: ({ after, live }) => secretTypeAfter(after) !== live,
    cause: ({ after }) => immutable('type', goJson(secretTypeAfter(after))),
    source: 'pkg/apis/core/validation/validation.go ValidateSecretUpdate',
    docs: docs.secretTypes,
  },
  staysImmutable('Secret', 'pkg/apis/core/validation/validation.go ValidateSecretUpdate', docs.secret),
  {
    group: 'rbac.authorization.k8s.io',
    kinds: ['RoleBinding', 'ClusterRoleBinding'],
    path: ['roleRef'],
    compare: 'whole',
    cause: ({ after }) => {
      const ref = isJsonObject(after) ? after : {};
      const s = (v: JsonValue | undefined) => goJson(typeof v === 'string' ? v : '');
      // rbac.RoleRef has no JSON tags: Go prints its field names.
      return {
        field: 'roleRef',
        message: `Invalid value: {"APIGroup":${s(ref.apiGroup)},"Kind":${s(ref.kind)},"Name":${s(ref.name)}}: cannot change roleRef`,
        exact: true,
      };
    },
    source: 'pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate, ValidateClusterRoleBindingUpdate',
    docs: docs.rbac,
  },
  ...(['parameters', 'provisioner'] as const).map((field): ImmutableRule => ({
    group: 'storage.k8s.io',
    kinds: ['StorageClass'],
    path: [field],
    compare: 'whole',
    cause: () => forbidden(field, `updates to ${field} are forbidden.`),
    source: 'pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate',
    docs: docs.storageClass,
  })),
  {
    group: 'storage.k8s.io',
    kinds: ['StorageClass'],
    path: ['reclaimPolicy'],
    compare: 'written',
    default: 'Delete',
    cause: () => forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'),
    source: 'pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate',
    docs: docs.storageClass,
  },
  {
    group: 'storage.k8s.io',
    kinds: ['StorageClass'],
    path: ['volumeBindingMode'],
    compare: 'written',
    default: 'Immediate',
    cause: ({ after }) => immutable('volumeBindingMode', goJsonValue(after ?? 'Immediate')),
    source: 'pkg/apis/storage/validation/validation.go validateVolumeBindingModeUpdate',
    docs: docs.storageClass,
  },
  {
    group: 'networking.k8s.io',
    kinds: ['IngressClass'],
    path: ['spec', 'controller'],
    compare: 'whole',
    cause: ({ after }) => immutable('spec.controller', goJsonValue(after ?? '')),
    source: 'pkg/apis/networking/validation/validation.go ValidateIngressClassUpdate',
    docs: docs.ingressClass,
  },
];

export interface ImmutableInput {
  readonly group: string;
  readonly kind: string;
  readonly live: JsonObject;
  /** The object after the apply: the merged object of a server-side apply, else the manifest. */
  readonly after: JsonObject;
  /**
   * Whether `after` is the whole object as the server will hold it (a server-side apply's merged
   * object). When it is only the manifest (a client-side apply patches what it writes), a field
   * it leaves out is never taken for a change.
   */
  readonly afterIsWhole: boolean;
}

/** The changes the server refuses, in the order of the rules. */
export function immutableChanges(input: ImmutableInput): ImmutableChange[] {
  const out: ImmutableChange[] = [];
  for (const rule of immutableRules) {
    if (rule.group !== input.group || !rule.kinds.includes(input.kind)) continue;
    if (rule.applies && !rule.applies(input.live, input.after)) continue;
    const after = jsonAt(input.after, rule.path);
    const live = jsonAt(input.live, rule.path);
    const causeInput: CauseInput = { after, live, afterObject: input.after, liveObject: input.live };
    const base: FieldPath = rule.path.map((name) => ({ kind: 'field', name }));
    let changed: { path: FieldPath; after?: JsonValue; live?: JsonValue } | undefined;
    if (rule.changed) {
      if ((input.afterIsWhole || after !== undefined) && rule.changed(causeInput))
        changed = { path: base, ...values(after, live) };
    } else if (rule.compare === 'whole' && input.afterIsWhole) {
      if (!jsonEqual(after, live)) changed = { path: base, ...values(after, live) };
    } else {
      const compared = after === undefined && input.afterIsWhole ? rule.default : after;
      if (compared !== undefined) {
        const except = typeof rule.except === 'function' ? rule.except(input.live) : (rule.except ?? []);
        changed = firstDifference(compared, live, base, [], except);
        // A value immutable as a whole is named as a whole, however little of it changes.
        if (changed && rule.compare === 'whole') changed = { path: base, ...values(after, live) };
      }
    }
    if (changed) out.push({ ...changed, cause: rule.cause(causeInput), docs: rule.docs });
  }
  return out;
}

const values = (after: JsonValue | undefined, live: JsonValue | undefined) => ({
  ...(after !== undefined ? { after } : {}),
  ...(live !== undefined ? { live } : {}),
});

/**
 * The first field the apply writes with another value than the live one (`written`): maps key by
 * key, lists item by item (a list of another length is a change of the list), a value the live
 * object lacks is a change unless it is empty. `except` paths are relative, `*` for a list item.
 */
function firstDifference(
  after: JsonValue,
  live: JsonValue | undefined,
  path: FieldPath,
  relative: readonly string[],
  except: readonly (readonly string[])[],
): { path: FieldPath; after?: JsonValue; live?: JsonValue } | undefined {
  if (
    except.some(
      (e) =>
        e.length === relative.length &&
        e.every((name, n) => name === relative[n] || (name === '*' && relative[n] === '*')),
    )
  )
    return undefined;
  const changed = { path, ...values(after, live) };
  if (live === undefined || live === null) return isEmpty(after) ? undefined : changed;
  if (isJsonObject(after)) {
    if (!isJsonObject(live)) return changed;
    for (const [key, value] of Object.entries(after)) {
      const found = firstDifference(
        value,
        live[key],
        [...path, { kind: 'field', name: key }],
        [...relative, key],
        except,
      );
      if (found) return found;
    }
    return undefined;
  }
  if (Array.isArray(after)) {
    if (!Array.isArray(live) || live.length !== after.length) return changed;
    for (const [n, item] of after.entries()) {
      const found = firstDifference(item, live[n], [...path, itemElement(item, n)], [...relative, '*'], except);
      if (found) return found;
    }
    return undefined;
  }
  return sameScalar(after, live, relative) ? undefined : changed;
}

/** A list item by its `name` where it has one (how the manifest is searched), else by position. */
function itemElement(item: JsonValue, n: number): PathElement {
  return isJsonObject(item) && typeof item.name === 'string'
    ? { kind: 'key', fields: { name: item.name } }
    : { kind: 'index', index: n };
}

const isEmpty = (v: JsonValue): boolean =>
  v === null || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);

/** Quantities (`requests`, `limits`, `capacity`) are compared by amount: the server stores `1Gi` for `1024Mi`. */
function sameScalar(a: JsonValue, b: JsonValue, relative: readonly string[]): boolean {
  if (jsonEqual(a, b)) return true;
  if (!relative.some((name) => name === 'requests' || name === 'limits' || name === 'capacity')) return false;
  const x = quantity(a);
  const y = quantity(b);
  return x !== undefined && y !== undefined && Math.abs(x - y) <= Math.abs(x) * 1e-12;
}

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** resource.Quantity's amount of a string or number, undefined when it is none. */
function quantity(v: JsonValue): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

function familyOf(ip: string): 'IPv4' | 'IPv6' {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

/** metav1.LabelSelector as encoding/json prints it: struct order, empty fields left out. */
function goLabelSelector(v: JsonValue | undefined): string {
  if (!isJsonObject(v)) return 'null';
  const parts: string[] = [];
  if (isJsonObject(v.matchLabels) && Object.keys(v.matchLabels).length > 0)
    parts.push(`"matchLabels":${goJsonValue(v.matchLabels)}`);
  if (Array.isArray(v.matchExpressions) && v.matchExpressions.length > 0) {
    const items = v.matchExpressions.map((e) => {
      const r = isJsonObject(e) ? e : {};
      const fields = [`"key":${goJson(String(r.key ?? ''))}`, `"operator":${goJson(String(r.operator ?? ''))}`];
      if (Array.isArray(r.values) && r.values.length > 0) fields.push(`"values":${goJsonValue(r.values)}`);
      return `{${fields.join(',')}}`;
    });
    parts.push(`"matchExpressions":[${items.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

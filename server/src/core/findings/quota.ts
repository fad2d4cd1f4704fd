// LimitRange and ResourceQuota admission of the Pods a request creates, in the server's words:
// k8s.io/kubernetes plugin/pkg/admission/limitranger (admission.go: the Container defaults
// `default` and `defaultRequest`, then `min`, `max` and `maxLimitRequestRatio` per Container and per
// Pod) and k8s.io/apiserver pkg/admission/plugin/resourcequota (controller.go checkRequest, with the
// pod evaluator of pkg/quota/v1/evaluator/core/pods.go: a Pod's usage, and a quota on cpu or memory
// that requires each container to say its request or limit). The quota's `status.hard` and
// `status.used` are what the quota controller last wrote: usage moves, so what is left is a
// snapshot. Quotas with scopes, a Pod with pod-level resources or a RuntimeClass overhead are not
// judged: the dry run decides.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { canonicalQuantity, compareQuantities, parseQuantity, type Quantity } from './quantity';

/** The LimitRanges and ResourceQuotas of a namespace, as the cluster stores them; unknown when not read (403). */
export type NamespacePolicyFacts =
  | { readonly state: 'known'; readonly limitRanges: readonly JsonObject[]; readonly quotas: readonly JsonObject[] }
  | { readonly state: 'unknown'; readonly message: string };

type Resources = Map<string, Quantity>;

/** A container's requests and limits after the LimitRange defaults. */
export interface ContainerResources {
  readonly name: string;
  readonly init: boolean;
  readonly sidecar: boolean;
  readonly requests: Resources;
  readonly limits: Resources;
}

function resourcesOf(v: JsonValue | undefined): Resources | undefined {
  const out: Resources = new Map();
  if (v === undefined || v === null) return out;
  if (!isJsonObject(v)) return undefined;
  for (const [k, q] of Object.entries(v)) {
    const parsed = parseQuantity(q);
    if (!parsed) return undefined;
    out.set(k, parsed);
  }
  return out;
}

const str = (q: Quantity): string => canonicalQuantity(q) ?? '?';

function add(a: Quantity, b: Quantity): Quantity {
  const x = Math.min(a.exponent, b.exponent);
  const digits = a.digits * 10n ** BigInt(a.exponent - x) + b.digits * 10n ** BigInt(b.exponent - x);
  return normal(digits, x, a.digits === 0n ? b.format : a.format);
}

function times(a: Quantity, n: number): Quantity {
  return normal(a.digits * BigInt(n), a.exponent, a.format);
}

function normal(digits: bigint, exponent: number, format: Quantity['format']): Quantity {
  let d = digits;
  let x = exponent;
  while (d !== 0n && d % 10n === 0n) {
    d /= 10n;
    x++;
  }
  return { digits: d, exponent: d === 0n ? 0 : x, format };
}

const zero: Quantity = { digits: 0n, exponent: 0, format: 'DecimalSI' };

/** The pod's containers, with the LimitRange defaults merged in; undefined where a quantity is not one read exactly. */
export function containersWithDefaults(
  spec: JsonObject,
  limitRanges: readonly JsonObject[],
): ContainerResources[] | undefined {
  const defaults: { requests: Resources; limits: Resources }[] = [];
  for (const lr of limitRanges) {
    const requests: Resources = new Map();
    const limits: Resources = new Map();
    for (const item of itemsOf(lr)) {
      if (item.type !== 'Container') continue;
      const dr = resourcesOf(item.defaultRequest);
      const dl = resourcesOf(item.default);
      if (!dr || !dl) return undefined;
      for (const [k, v] of dr) requests.set(k, v);
      for (const [k, v] of dl) limits.set(k, v);
    }
    defaults.push({ requests, limits });
  }
  const out: ContainerResources[] = [];
  for (const [field, init] of [
    ['initContainers', true],
    ['containers', false],
  ] as const) {
    const list = Array.isArray(spec[field]) ? spec[field] : [];
    for (const c of list) {
      if (!isJsonObject(c)) return undefined;
      const resources = isJsonObject(c.resources) ? c.resources : {};
      const requests = resourcesOf(resources.requests);
      const limits = resourcesOf(resources.limits);
      if (!requests || !limits) return undefined;
      // The API's own defaulting (SetDefaults_Pod) comes first: a limit without its request is the request too.
      for (const [k, v] of limits) if (!requests.has(k)) requests.set(k, v);
      for (const d of defaults) {
        for (const [k, v] of d.limits) if (!limits.has(k)) limits.set(k, v);
        for (const [k, v] of d.requests) if (!requests.has(k)) requests.set(k, v);
      }
      out.push({
        name: typeof c.name === 'string' ? c.name : '',
        init,
        sidecar: init && c.restartPolicy === 'Always',
        requests,
        limits,
      });
    }
  }
  // The server's order: containers, then init containers (PodValidateLimitFunc, Constraints).
  return [...out.filter((c) => !c.init), ...out.filter((c) => c.init)];
}

/**
 * The pod spec as LimitRanger leaves it (mergeContainerResources): each container's missing
 * limits and requests filled from the LimitRanges' `default` and `defaultRequest`, values as written there.
 */
export function defaultedPodSpec(spec: JsonObject, limitRanges: readonly JsonObject[]): JsonObject {
  const defaults: { requests: JsonObject; limits: JsonObject }[] = limitRanges.map((lr) => {
    const requests: JsonObject = {};
    const limits: JsonObject = {};
    for (const item of itemsOf(lr)) {
      if (item.type !== 'Container') continue;
      if (isJsonObject(item.defaultRequest)) Object.assign(requests, item.defaultRequest);
      if (isJsonObject(item.default)) Object.assign(limits, item.default);
    }
    return { requests, limits };
  });
  const fill = (list: JsonValue | undefined): JsonValue | undefined =>
    Array.isArray(list)
      ? list.map((c) => {
          if (!isJsonObject(c)) return c;
          const resources = isJsonObject(c.resources) ? c.resources : {};
          const requests: JsonObject = isJsonObject(resources.requests) ? { ...resources.requests } : {};
          const limits: JsonObject = isJsonObject(resources.limits) ? { ...resources.limits } : {};
          for (const [k, v] of Object.entries(limits)) if (!Object.hasOwn(requests, k)) requests[k] = v;
          for (const d of defaults) {
            for (const [k, v] of Object.entries(d.limits)) if (!Object.hasOwn(limits, k)) limits[k] = v;
            for (const [k, v] of Object.entries(d.requests)) if (!Object.hasOwn(requests, k)) requests[k] = v;
          }
          return { ...c, resources: { ...resources, requests, limits } };
        })
      : list;
  const out: JsonObject = { ...spec };
  if (spec.containers !== undefined) out.containers = fill(spec.containers)!;
  if (spec.initContainers !== undefined) out.initContainers = fill(spec.initContainers)!;
  return out;
}

/** A request above its limit once the defaults are in: the server's validation refuses the Pod (422) first. */
export function requestAboveLimit(c: ContainerResources): boolean {
  for (const [k, req] of c.requests) {
    const lim = c.limits.get(k);
    if (lim && compareQuantities(req, lim) > 0) return true;
  }
  return false;
}

function itemsOf(lr: JsonObject): JsonObject[] {
  const spec = isJsonObject(lr.spec) ? lr.spec : {};
  return Array.isArray(spec.limits) ? spec.limits.filter(isJsonObject) : [];
}

/** resourcehelper.PodRequests / PodLimits: containers and sidecars summed, the largest init container's need beside them. */
function podTotal(containers: readonly ContainerResources[], which: 'requests' | 'limits'): Resources {
  const sum: Resources = new Map();
  const addTo = (m: Resources, r: Resources) => {
    for (const [k, v] of r) m.set(k, m.has(k) ? add(m.get(k)!, v) : v);
  };
  for (const c of containers) if (!c.init) addTo(sum, c[which]);
  const sidecars: Resources = new Map();
  const initMax: Resources = new Map();
  for (const c of containers.filter((x) => x.init)) {
    if (c.sidecar) {
      addTo(sidecars, c[which]);
      continue;
    }
    const tmp: Resources = new Map(sidecars);
    addTo(tmp, c[which]);
    for (const [k, v] of tmp) if (!initMax.has(k) || compareQuantities(v, initMax.get(k)!) > 0) initMax.set(k, v);
  }
  addTo(sum, sidecars);
  for (const [k, v] of initMax) if (!sum.has(k) || compareQuantities(v, sum.get(k)!) > 0) sum.set(k, v);
  return sum;
}

/** What utilerrors.NewAggregate prints: one message alone, several deduplicated in brackets. */
function aggregate(messages: readonly string[]): string {
  const seen = [...new Set(messages)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** The LimitRanger's refusals of a pod (PodValidateLimitFunc), in its words; empty when it accepts. */
export function limitRangeErrors(
  containers: readonly ContainerResources[],
  limitRanges: readonly JsonObject[],
): string[] {
  const errs: string[] = [];
  for (const lr of limitRanges)
    for (const item of itemsOf(lr)) {
      const type = item.type;
      if (type === 'Container')
        for (const c of containers) errs.push(...constraints('Container', item, c.requests, c.limits));
      if (type === 'Pod')
        errs.push(...constraints('Pod', item, podTotal(containers, 'requests'), podTotal(containers, 'limits')));
    }
  return errs;
}

function constraints(type: string, item: JsonObject, requests: Resources, limits: Resources): string[] {
  const errs: string[] = [];
  const each = (field: string, f: (k: string, enforced: Quantity) => string | undefined) => {
    const list = resourcesOf(item[field]) ?? new Map<string, Quantity>();
    for (const k of [...list.keys()].sort()) {
      const e = f(k, list.get(k)!);
      if (e) errs.push(e);
    }
  };
  each('min', (k, enforced) => {
    const req = requests.get(k);
    const lim = limits.get(k);
    if (!req) return `minimum ${k} usage per ${type} is ${str(enforced)}.  No request is specified`;
    if (compareQuantities(req, enforced) < 0)
      return `minimum ${k} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
    if (lim && compareQuantities(lim, enforced) < 0)
      return `minimum ${k} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
    return undefined;
  });
  each('max', (k, enforced) => {
    const req = requests.get(k);
    const lim = limits.get(k);
    if (!lim) return `maximum ${k} usage per ${type} is ${str(enforced)}.  No limit is specified`;
    if (compareQuantities(lim, enforced) > 0)
      return `maximum ${k} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
    if (req && compareQuantities(req, enforced) > 0)
      return `maximum ${k} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
    return undefined;
  });
  each('maxLimitRequestRatio', (k, enforced) => {
    const req = requests.get(k);
    const lim = limits.get(k);
    if (!req || req.digits === 0n)
      return `${k} max limit to request ratio per ${type} is ${str(enforced)}, but no request is specified or request is 0`;
    if (!lim || lim.digits === 0n)
      return `${k} max limit to request ratio per ${type} is ${str(enforced)}, but no limit is specified or limit is 0`;
    const ratio = toNumber(lim) / toNumber(req);
    if (ratio * 1000 > toNumber(enforced) * 1000 + 1e-9)
      return `${k} max limit to request ratio per ${type} is ${str(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
    return undefined;
  });
  return errs;
}

function toNumber(q: Quantity): number {
  return Number(q.digits) * 10 ** q.exponent;
}

/** The quota evaluator's usage of one Pod (podComputeUsageHelper on PodRequests and PodLimits). */
export function podUsage(containers: readonly ContainerResources[]): Resources {
  const requests = podTotal(containers, 'requests');
  const limits = podTotal(containers, 'limits');
  const one: Quantity = { digits: 1n, exponent: 0, format: 'DecimalSI' };
  const usage: Resources = new Map([
    ['pods', one],
    ['count/pods', one],
  ]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      if (r !== 'ephemeral-storage') usage.set(r, req);
      usage.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) usage.set(`limits.${r}`, lim);
  }
  for (const [r, q] of requests)
    if (r.startsWith('hugepages-') || (r.includes('/') && !r.startsWith('kubernetes.io/')))
      usage.set(`requests.${r}`, q);
  return usage;
}

const validationSet = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

function podResourceName(name: string): boolean {
  return (
    ['pods', 'count/pods', 'cpu', 'memory', 'ephemeral-storage'].includes(name) ||
    name.startsWith('requests.') ||
    name.startsWith('limits.')
  );
}

/** One quota's answer to a Pod; undefined when it accepts or cannot be judged. */
export interface QuotaRefusal {
  readonly quota: string;
  /** The plugin's error, without the `pods "x" is forbidden: ` of the server's 403. */
  readonly message: string;
  readonly kind: 'constraint' | 'exceeded' | 'statusUnknown';
}

/**
 * ResourceQuota admission of `count` Pods created one after another (checkRequest): each quota's
 * constraint first (a quota on cpu or memory needs every container to say its request or limit),
 * then usage against `status.hard − status.used`; the Pod that goes over is named by its number.
 * Quotas are taken by name (the server's order is its cache's).
 */
export function quotaRefusal(
  containers: readonly ContainerResources[],
  quotas: readonly JsonObject[],
  count: number,
): { refusal: QuotaRefusal; pod: number } | undefined {
  const usage = podUsage(containers);
  const judged = [...quotas]
    .filter((q) => {
      const spec = isJsonObject(q.spec) ? q.spec : {};
      return !Array.isArray(spec.scopes) && !isJsonObject(spec.scopeSelector);
    })
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  const relevant: { name: string; hard: Resources; used: Resources }[] = [];
  for (const q of judged) {
    const status = isJsonObject(q.status) ? q.status : {};
    const hard = resourcesOf(status.hard);
    const used = resourcesOf(status.used);
    if (!hard || !used) return undefined;
    const restricted = [...hard.keys()].filter(podResourceName);
    if (restricted.length === 0) continue;
    const required = restricted.filter((r) => validationSet.includes(r));
    const missing = new Map<string, string[]>();
    for (const c of containers) {
      const own = podUsage([{ ...c, init: false, sidecar: false }]);
      for (const r of required) if (!own.has(r)) missing.set(r, [...(missing.get(r) ?? []), c.name]);
    }
    if (missing.size > 0) {
      const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...new Set(missing.get(r))].sort().join(',')}`);
      return {
        refusal: {
          quota: nameOf(q),
          message: `failed quota: ${nameOf(q)}: must specify ${parts.join('; ')}`,
          kind: 'constraint',
        },
        pod: 1,
      };
    }
    if (restricted.some((r) => !used.has(r)))
      return {
        refusal: {
          quota: nameOf(q),
          message: `status unknown for quota: ${nameOf(q)}, resources: ${[...restricted].sort().join(',')}`,
          kind: 'statusUnknown',
        },
        pod: 1,
      };
    relevant.push({ name: nameOf(q), hard, used });
  }
  for (let pod = 1; pod <= count; pod++)
    for (const q of relevant) {
      const requested = new Map([...usage].filter(([k, v]) => q.hard.has(k) && v.digits !== 0n));
      const exceeded: string[] = [];
      for (const [k, v] of requested) {
        const usedNow = add(q.used.get(k) ?? zero, times(v, pod - 1));
        if (compareQuantities(add(usedNow, v), q.hard.get(k)!) > 0) exceeded.push(k);
      }
      if (exceeded.length === 0) continue;
      exceeded.sort();
      const print = (m: (k: string) => Quantity) => exceeded.map((k) => `${k}=${str(m(k))}`).join(',');
      return {
        refusal: {
          quota: q.name,
          message: `exceeded quota: ${q.name}, requested: ${print((k) => requested.get(k)!)}, used: ${print((k) => add(q.used.get(k) ?? zero, times(requested.get(k)!, pod - 1)))}, limited: ${print((k) => q.hard.get(k)!)}`,
          kind: 'exceeded',
        },
        pod,
      };
    }
  return undefined;
}

function nameOf(o: JsonObject): string {
  const m = isJsonObject(o.metadata) ? o.metadata : {};
  return typeof m.name === 'string' ? m.name : '';
}

export { aggregate as aggregateErrors };

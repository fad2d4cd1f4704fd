// Pod Security admission: the namespace's `pod-security.kubernetes.io/<mode>` labels choose a level
// (privileged, baseline, restricted) and a version of the Pod Security Standards; the API server
// (its built-in PodSecurity admission plugin) refuses a Pod that breaks the `enforce` level (403),
// and answers a Pod or a workload that breaks the `warn` level with a warning. A workload (a
// Deployment, a Job...) is never refused: its Pods are, when its controller creates them.
//
// A port of k8s.io/pod-security-admission v0.34 (the server's own): the labels read as
// api/helpers.go PolicyToEvaluate reads them, each check of policy/check_*.go with its versions,
// in the order policy/registry.go runs them (baseline checks, then restricted ones, each by id),
// and the words of admission/admission.go EvaluatePod (`violates PodSecurity "restricted:latest":
// reason (detail), ...`). Each failing check names the fields that make it fail, so the finding
// can sit on the line that causes it. Exemptions are server configuration the product cannot read.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import type { FieldPath, PathElement } from '../ssa/path';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

/** A level at a version (`restricted:latest`, `baseline:v1.25`); `minor` undefined for latest. */
export interface LevelVersion {
  readonly level: PodSecurityLevel;
  readonly minor: number | undefined;
}

export interface PodSecurityPolicy {
  readonly enforce: LevelVersion;
  readonly warn: LevelVersion;
  readonly audit: LevelVersion;
}

/** The newest version the server's checks know (registry.go maxVersion: the last check version). */
const maxMinor = 34;

export const podSecurityLabel = 'pod-security.kubernetes.io/';

/**
 * The policy of a namespace from its labels (PolicyToEvaluate, with the default policy
 * privileged:latest). Undefined when a label does not parse: the server then fails closed for
 * enforce and open for warn and audit, and records an error; the product says nothing.
 */
export function podSecurityPolicy(labels: Readonly<Record<string, string>>): PodSecurityPolicy | undefined {
  const latest: LevelVersion = { level: 'privileged', minor: undefined };
  let enforce = latest;
  let warn = latest;
  let audit = latest;
  const level = (mode: string): PodSecurityLevel | undefined | null => {
    const v = labels[`${podSecurityLabel}${mode}`];
    if (v === undefined) return undefined;
    return v === 'privileged' || v === 'baseline' || v === 'restricted' ? v : null;
  };
  const version = (mode: string): number | undefined | null => {
    const v = labels[`${podSecurityLabel}${mode}-version`];
    if (v === undefined || v === 'latest') return undefined;
    const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(v);
    return m ? Number(m[1]) : null;
  };
  const el = level('enforce');
  const ev = version('enforce');
  const wl = level('warn');
  const wv = version('warn');
  const al = level('audit');
  const av = version('audit');
  if (el === null || ev === null || wl === null || wv === null || al === null || av === null) return undefined;
  if (el !== undefined) enforce = { level: el, minor: undefined };
  if (ev !== undefined) enforce = { ...enforce, minor: ev };
  if (al !== undefined) audit = { level: al, minor: undefined };
  if (av !== undefined) audit = { ...audit, minor: av };
  if (wl !== undefined) warn = { level: wl, minor: undefined };
  if (wv !== undefined) warn = { ...warn, minor: wv };
  // Warn defaults to the enforce level when that is stricter and warn is not set.
  if (wl === undefined && el !== undefined && rank(enforce.level) > rank(warn.level)) {
    warn = { level: enforce.level, minor: wv !== undefined ? wv : enforce.minor };
  }
  return { enforce, warn, audit };
}

function rank(level: PodSecurityLevel): number {
  return level === 'privileged' ? 0 : level === 'baseline' ? 1 : 2;
}

/** `restricted:latest`, `baseline:v1.25`: as the server names a level and version. */
export function levelVersionName(lv: LevelVersion): string {
  return `${lv.level}:${lv.minor === undefined ? 'latest' : `v1.${lv.minor}`}`;
}

/** One check that fails: its reason and detail in the server's words, and the fields that make it fail. */
export interface CheckFailure {
  readonly id: string;
  readonly reason: string;
  readonly detail: string;
  /** Paths from the pod-like object (`metadata`, `spec`), the most telling first. */
  readonly places: readonly FieldPath[];
}

/** The checks the pod (its metadata and spec) fails at a level and version, in the server's order. */
export function evaluatePod(lv: LevelVersion, metadata: JsonObject, spec: JsonObject): CheckFailure[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.minor === undefined || lv.minor > maxMinor ? maxMinor : lv.minor;
  const pod = new PodView(metadata, spec);
  const out: CheckFailure[] = [];
  for (const check of checksAt(lv.level, minor)) {
    const failure = check.run(pod, minor);
    if (failure) out.push({ id: check.id, ...failure });
  }
  return out;
}

/** AggregateCheckResult.ForbiddenDetail: `reason (detail), reason (detail)`. */
export function forbiddenDetail(failures: readonly CheckFailure[]): string {
  return failures.map((f) => (f.detail !== '' ? `${f.reason} (${f.detail})` : f.reason)).join(', ');
}

/** What the server answers a Pod that breaks the enforce level (403 Forbidden, errors.NewForbidden). */
export function podForbiddenMessage(name: string, lv: LevelVersion, failures: readonly CheckFailure[]): string {
  return `pods ${JSON.stringify(name)} is forbidden: violates PodSecurity ${JSON.stringify(levelVersionName(lv))}: ${forbiddenDetail(failures)}`;
}

/** The warning the server sends when the warn level is broken. */
export function podSecurityWarning(lv: LevelVersion, failures: readonly CheckFailure[]): string {
  return `would violate PodSecurity ${JSON.stringify(levelVersionName(lv))}: ${forbiddenDetail(failures)}`;
}

// ---------------------------------------------------------------------------------------------
// The checks

type Result = Omit<CheckFailure, 'id'> | undefined;

interface Check {
  readonly id: string;
  readonly level: 'baseline' | 'restricted';
  /** The first version the check applies at. */
  readonly since: number;
  /** The baseline check it replaces in the restricted level, from `since`. */
  readonly overrides?: string;
  run(pod: PodView, minor: number): Result;
}

/** A container as the checks visit it (visitor.go: init containers, containers, ephemeral containers). */
interface Visited {
  readonly c: JsonObject;
  readonly name: string;
  readonly path: FieldPath;
}

class PodView {
  readonly containers: Visited[] = [];
  constructor(
    readonly metadata: JsonObject,
    readonly spec: JsonObject,
  ) {
    for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
      const items = Array.isArray(spec[list]) ? spec[list] : [];
      items.forEach((c, i) => {
        if (!isJsonObject(c)) return;
        const name = typeof c.name === 'string' ? c.name : '';
        this.containers.push({
          c,
          name,
          path: [f('spec'), f(list), typeof c.name === 'string' ? { kind: 'key', fields: { name } } : idx(i)],
        });
      });
    }
  }
  /** spec.securityContext, when set. */
  get podContext(): JsonObject | undefined {
    return isJsonObject(this.spec.securityContext) ? this.spec.securityContext : undefined;
  }
  get windows(): boolean {
    return isJsonObject(this.spec.os) && this.spec.os.name === 'windows';
  }
  get annotations(): Record<string, string> {
    const a = this.metadata.annotations;
    const out: Record<string, string> = {};
    if (isJsonObject(a)) for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
    return out;
  }
}

const f = (name: string): PathElement => ({ kind: 'field', name });
const idx = (index: number): PathElement => ({ kind: 'index', index });
const sc = (v: Visited): JsonObject | undefined =>
  isJsonObject(v.c.securityContext) ? v.c.securityContext : undefined;
const get = (o: JsonObject | undefined, ...names: string[]): JsonValue | undefined => {
  let v: JsonValue | undefined = o;
  for (const n of names) v = isJsonObject(v) ? v[n] : undefined;
  return v;
};
const under = (v: Visited, ...names: string[]): FieldPath => [...v.path, ...names.map(f)];
const podPath = (...names: string[]): FieldPath => [f('spec'), ...names.map(f)];

function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}
function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}
/** sets.NewString(...).List(): sorted by bytes, each once. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
function containers(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}
/** Go's %q of a string (strconv.Quote) for the plain ASCII the annotations hold; JSON's quoting otherwise. */
function quote(s: string): string {
  return JSON.stringify(s);
}

const capabilitiesAllowed = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const sysctlsAllowed = (minor: number): Set<string> => {
  const s = new Set([
    'kernel.shm_rmid_forced',
    'net.ipv4.ip_local_port_range',
    'net.ipv4.tcp_syncookies',
    'net.ipv4.ping_group_range',
    'net.ipv4.ip_unprivileged_port_start',
  ]);
  if (minor >= 27) s.add('net.ipv4.ip_local_reserved_ports');
  if (minor >= 29)
    for (const n of [
      'net.ipv4.tcp_keepalive_time',
      'net.ipv4.tcp_fin_timeout',
      'net.ipv4.tcp_keepalive_intvl',
      'net.ipv4.tcp_keepalive_probes',
    ])
      s.add(n);
  if (minor >= 32) for (const n of ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']) s.add(n);
  return s;
};

const restrictedVolumeKinds = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];
const allowedVolumeKinds = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
const set = (v: JsonValue | undefined) => v !== undefined && v !== null;

/** setters and values of a field set on the pod's and the containers' security contexts to a value not allowed. */
function badSetters(
  pod: PodView,
  names: string[],
  allowed: (value: JsonValue) => boolean,
): { setters: string[]; containers: string[]; values: string[]; places: FieldPath[] } {
  const out = {
    setters: [] as string[],
    containers: [] as string[],
    values: [] as string[],
    places: [] as FieldPath[],
  };
  const podValue = get(pod.podContext, ...names);
  if (set(podValue) && !allowed(podValue!)) {
    out.setters.push('pod');
    out.values.push(String(podValue));
    out.places.push(podPath('securityContext', ...names));
  }
  for (const v of pod.containers) {
    const value = get(sc(v), ...names);
    if (set(value) && !allowed(value!)) {
      out.containers.push(v.name);
      out.values.push(String(value));
      out.places.push(under(v, 'securityContext', ...names));
    }
  }
  if (out.containers.length > 0) out.setters.push(containers(out.containers));
  return out;
}

const checks: readonly Check[] = [
  {
    id: 'appArmorProfile',
    level: 'baseline',
    since: 0,
    run(pod) {
      const allowedType = (t: JsonValue) => t === 'RuntimeDefault' || t === 'Localhost';
      const setters: string[] = [];
      const values = new Set<string>();
      const places: FieldPath[] = [];
      const podProfile = get(pod.podContext, 'appArmorProfile');
      if (isJsonObject(podProfile) && !allowedType(podProfile.type ?? '')) {
        setters.push('pod');
        values.add(String(podProfile.type ?? ''));
        places.push(podPath('securityContext', 'appArmorProfile', 'type'));
      }
      const bad: string[] = [];
      for (const v of pod.containers) {
        const p = get(sc(v), 'appArmorProfile');
        if (isJsonObject(p) && !allowedType(p.type ?? '')) {
          bad.push(v.name);
          values.add(String(p.type ?? ''));
          places.push(under(v, 'securityContext', 'appArmorProfile', 'type'));
        }
      }
      if (bad.length > 0) setters.push(containers(bad));
      const forbidden: string[] = [];
      for (const [k, val] of Object.entries(pod.annotations)) {
        if (
          k.startsWith('container.apparmor.security.beta.kubernetes.io/') &&
          !(val === '' || val === 'runtime/default' || val.startsWith('localhost/'))
        ) {
          forbidden.push(`${k}=${quote(val)}`);
          places.push([f('metadata'), f('annotations'), f(k)]);
        }
      }
      const list = sortedSet(values);
      if (forbidden.length > 0) {
        list.push(...sortedSet(forbidden));
        setters.push(pluralize('annotation', 'annotations', forbidden.length));
      }
      if (setters.length === 0) return undefined;
      return {
        reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', list.length),
        detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(list)}`,
        places,
      };
    },
  },
  {
    id: 'capabilities_baseline',
    level: 'baseline',
    since: 0,
    run(pod) {
      const bad: string[] = [];
      const caps: string[] = [];
      const places: FieldPath[] = [];
      for (const v of pod.containers) {
        const add = get(sc(v), 'capabilities', 'add');
        if (!isJsonObject(get(sc(v), 'capabilities'))) continue;
        let valid = true;
        for (const c of Array.isArray(add) ? add : []) {
          if (!capabilitiesAllowed.has(String(c))) {
            valid = false;
            caps.push(String(c));
          }
        }
        if (!valid) {
          bad.push(v.name);
          places.push(under(v, 'securityContext', 'capabilities', 'add'));
        }
      }
      if (bad.length === 0) return undefined;
      return {
        reason: 'non-default capabilities',
        detail: `${containers(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
        places,
      };
    },
  },
  {
    id: 'hostNamespaces',
    level: 'baseline',
    since: 0,
    run(pod) {
      const found = ['hostNetwork', 'hostPID', 'hostIPC'].filter((n) => pod.spec[n] === true);
      if (found.length === 0) return undefined;
      return {
        reason: 'host namespaces',
        detail: found.map((n) => `${n}=true`).join(', '),
        places: found.map((n) => podPath(n)),
      };
    },
  },
  {
    id: 'hostPathVolumes',
    level: 'baseline',
    since: 0,
    run(pod) {
      const volumes = volumeList(pod).filter((v) => set(v.volume.hostPath));
      if (volumes.length === 0) return undefined;
      return {
        reason: 'hostPath volumes',
        detail: `${pluralize('volume', 'volumes', volumes.length)} ${joinQuote(volumes.map((v) => v.name))}`,
        places: volumes.map((v) => [...v.path, f('hostPath')]),
      };
    },
  },
  {
    id: 'hostPorts',
    level: 'baseline',
    since: 0,
    run(pod) {
      const bad: string[] = [];
      const ports: string[] = [];
      const places: FieldPath[] = [];
      for (const v of pod.containers) {
        let valid = true;
        const list = Array.isArray(v.c.ports) ? v.c.ports : [];
        list.forEach((p, i) => {
          if (!isJsonObject(p) || typeof p.hostPort !== 'number' || p.hostPort === 0) return;
          valid = false;
          ports.push(String(p.hostPort));
          places.push([
            ...v.path,
            f('ports'),
            typeof p.containerPort === 'number'
              ? {
                  kind: 'key',
                  fields: {
                    containerPort: p.containerPort,
                    protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
                  },
                }
              : idx(i),
            f('hostPort'),
          ]);
        });
        if (!valid) bad.push(v.name);
      }
      if (bad.length === 0) return undefined;
      const list = sortedSet(ports);
      return {
        reason: 'hostPort',
        detail: `${containers(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`,
        places,
      };
    },
  },
  {
    id: 'hostProbesAndHostLifecycle',
    level: 'baseline',
    since: 34,
    run(pod) {
      const bad = new Set<string>();
      const hosts: string[] = [];
      const places: FieldPath[] = [];
      const look = (v: Visited, handler: JsonValue | undefined, names: string[]) => {
        if (!isJsonObject(handler)) return;
        for (const kind of ['httpGet', 'tcpSocket']) {
          const host = get(handler, kind, 'host');
          if (typeof host === 'string' && host !== '') {
            bad.add(v.name);
            hosts.push(host);
            places.push(under(v, ...names, kind, 'host'));
          }
        }
      };
      for (const v of pod.containers) {
        for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) look(v, v.c[probe], [probe]);
        for (const hook of ['postStart', 'preStop']) look(v, get(v.c, 'lifecycle', hook), ['lifecycle', hook]);
      }
      if (bad.size === 0) return undefined;
      const names = sortedSet(bad);
      const list = sortedSet(hosts);
      return {
        reason: 'probe or lifecycle host',
        detail: `${containers(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', list.length)} ${joinQuote(list)}`,
        places,
      };
    },
  },
  {
    id: 'privileged',
    level: 'baseline',
    since: 0,
    run(pod) {
      const bad = pod.containers.filter((v) => get(sc(v), 'privileged') === true);
      if (bad.length === 0) return undefined;
      return {
        reason: 'privileged',
        detail: `${containers(bad.map((v) => v.name))} must not set securityContext.privileged=true`,
        places: bad.map((v) => under(v, 'securityContext', 'privileged')),
      };
    },
  },
  {
    id: 'procMount',
    level: 'baseline',
    since: 0,
    run(pod) {
      const bad = pod.containers.filter((v) => {
        const m = get(sc(v), 'procMount');
        return set(m) && m !== 'Default';
      });
      if (bad.length === 0) return undefined;
      return {
        reason: 'procMount',
        detail: `${containers(bad.map((v) => v.name))} must not set securityContext.procMount to ${joinQuote(sortedSet(bad.map((v) => String(get(sc(v), 'procMount')))))}`,
        places: bad.map((v) => under(v, 'securityContext', 'procMount')),
      };
    },
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    since: 0,
    run(pod, minor) {
      const allowed = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
      if (minor >= 31) allowed.add('container_engine_t');
      const types: string[] = [];
      let setUser = false;
      let setRole = false;
      const valid = (o: JsonObject) => {
        let ok = true;
        const t = typeof o.type === 'string' ? o.type : '';
        if (!allowed.has(t)) {
          ok = false;
          types.push(t);
        }
        if (typeof o.user === 'string' && o.user !== '') {
          ok = false;
          setUser = true;
        }
        if (typeof o.role === 'string' && o.role !== '') {
          ok = false;
          setRole = true;
        }
        return ok;
      };
      const setters: string[] = [];
      const places: FieldPath[] = [];
      const podOpts = get(pod.podContext, 'seLinuxOptions');
      if (isJsonObject(podOpts) && !valid(podOpts)) {
        setters.push('pod');
        places.push(podPath('securityContext', 'seLinuxOptions'));
      }
      const bad: string[] = [];
      for (const v of pod.containers) {
        const o = get(sc(v), 'seLinuxOptions');
        if (isJsonObject(o) && !valid(o)) {
          bad.push(v.name);
          places.push(under(v, 'securityContext', 'seLinuxOptions'));
        }
      }
      if (bad.length > 0) setters.push(containers(bad));
      if (setters.length === 0) return undefined;
      const data: string[] = [];
      const t = sortedSet(types);
      if (t.length > 0) data.push(`${pluralize('type', 'types', t.length)} ${joinQuote(t)}`);
      if (setUser) data.push('user may not be set');
      if (setRole) data.push('role may not be set');
      return {
        reason: 'seLinuxOptions',
        detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
        places,
      };
    },
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    since: 0,
    run(pod, minor) {
      if (minor < 19) {
        const validValue = (v: string) =>
          v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
        const forbidden: string[] = [];
        const places: FieldPath[] = [];
        const a = pod.annotations;
        const podKey = 'seccomp.security.alpha.kubernetes.io/pod';
        const consider = (k: string) => {
          if (Object.hasOwn(a, k) && !validValue(a[k]!)) {
            forbidden.push(`${k}=${quote(a[k]!)}`);
            places.push([f('metadata'), f('annotations'), f(k)]);
          }
        };
        consider(podKey);
        for (const v of pod.containers) consider(`container.seccomp.security.alpha.kubernetes.io/${v.name}`);
        if (forbidden.length === 0) return undefined;
        const list = sortedSet(forbidden);
        return {
          reason: 'seccompProfile',
          detail: `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}`,
          places,
        };
      }
      const bad = badSetters(pod, ['seccompProfile', 'type'], (t) => t === 'Localhost' || t === 'RuntimeDefault');
      if (bad.setters.length === 0) return undefined;
      return {
        reason: 'seccompProfile',
        detail: `${bad.setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(bad.values))}`,
        places: bad.places,
      };
    },
  },
  {
    id: 'sysctls',
    level: 'baseline',
    since: 0,
    run(pod, minor) {
      const allowed = sysctlsAllowed(minor);
      const list = get(pod.podContext, 'sysctls');
      const bad: string[] = [];
      const places: FieldPath[] = [];
      (Array.isArray(list) ? list : []).forEach((s) => {
        if (!isJsonObject(s)) return;
        const name = typeof s.name === 'string' ? s.name : '';
        if (!allowed.has(name)) {
          bad.push(name);
          places.push([...podPath('securityContext', 'sysctls'), { kind: 'key', fields: { name } }]);
        }
      });
      if (bad.length === 0) return undefined;
      return { reason: 'forbidden sysctls', detail: bad.join(', '), places };
    },
  },
  {
    id: 'windowsHostProcess',
    level: 'baseline',
    since: 0,
    run(pod) {
      const bad = pod.containers.filter((v) => get(sc(v), 'windowsOptions', 'hostProcess') === true);
      const setters: string[] = [];
      const places: FieldPath[] = [];
      if (get(pod.podContext, 'windowsOptions', 'hostProcess') === true) {
        setters.push('pod');
        places.push(podPath('securityContext', 'windowsOptions', 'hostProcess'));
      }
      if (bad.length > 0) setters.push(containers(bad.map((v) => v.name)));
      places.push(...bad.map((v) => under(v, 'securityContext', 'windowsOptions', 'hostProcess')));
      if (setters.length === 0) return undefined;
      return {
        reason: 'hostProcess',
        detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`,
        places,
      };
    },
  },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    since: 8,
    run(pod, minor) {
      if (minor >= 25 && pod.windows) return undefined;
      const bad = pod.containers.filter((v) => get(sc(v), 'allowPrivilegeEscalation') !== false);
      if (bad.length === 0) return undefined;
      return {
        reason: 'allowPrivilegeEscalation != false',
        detail: `${containers(bad.map((v) => v.name))} must set securityContext.allowPrivilegeEscalation=false`,
        places: bad.map((v) => under(v, 'securityContext', 'allowPrivilegeEscalation')),
      };
    },
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    since: 22,
    overrides: 'capabilities_baseline',
    run(pod, minor) {
      if (minor >= 25 && pod.windows) return undefined;
      const missingDrop: Visited[] = [];
      const adding: Visited[] = [];
      const caps: string[] = [];
      for (const v of pod.containers) {
        const capabilities = get(sc(v), 'capabilities');
        if (!isJsonObject(capabilities)) {
          missingDrop.push(v);
          continue;
        }
        const drop = Array.isArray(capabilities.drop) ? capabilities.drop : [];
        if (!drop.includes('ALL')) missingDrop.push(v);
        const add = Array.isArray(capabilities.add) ? capabilities.add : [];
        let forbidden = false;
        for (const c of add) {
          if (c !== 'NET_BIND_SERVICE') {
            forbidden = true;
            caps.push(String(c));
          }
        }
        if (forbidden) adding.push(v);
      }
      const details: string[] = [];
      if (missingDrop.length > 0)
        details.push(
          `${containers(missingDrop.map((v) => v.name))} must set securityContext.capabilities.drop=["ALL"]`,
        );
      if (adding.length > 0)
        details.push(
          `${containers(adding.map((v) => v.name))} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
        );
      if (details.length === 0) return undefined;
      return {
        reason: 'unrestricted capabilities',
        detail: details.join('; '),
        places: [
          ...missingDrop.map((v) => under(v, 'securityContext', 'capabilities', 'drop')),
          ...adding.map((v) => under(v, 'securityContext', 'capabilities', 'add')),
        ],
      };
    },
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    since: 0,
    overrides: 'hostPathVolumes',
    run(pod) {
      const bad: string[] = [];
      const kinds: string[] = [];
      const places: FieldPath[] = [];
      for (const v of volumeList(pod)) {
        if (allowedVolumeKinds.some((k) => set(v.volume[k]))) continue;
        bad.push(v.name);
        const kind = restrictedVolumeKinds.find((k) => set(v.volume[k])) ?? 'unknown';
        kinds.push(kind);
        places.push(kind === 'unknown' ? v.path : [...v.path, f(kind)]);
      }
      if (bad.length === 0) return undefined;
      const list = sortedSet(kinds);
      return {
        reason: 'restricted volume types',
        detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', list.length)} ${joinQuote(list)}`,
        places,
      };
    },
  },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    since: 0,
    run(pod) {
      const setters: string[] = [];
      const places: FieldPath[] = [];
      let podNonRoot = false;
      const podValue = get(pod.podContext, 'runAsNonRoot');
      if (typeof podValue === 'boolean') {
        if (!podValue) {
          setters.push('pod');
          places.push(podPath('securityContext', 'runAsNonRoot'));
        } else podNonRoot = true;
      }
      const explicit: Visited[] = [];
      const implicit: Visited[] = [];
      for (const v of pod.containers) {
        const value = get(sc(v), 'runAsNonRoot');
        if (typeof value === 'boolean') {
          if (!value) explicit.push(v);
        } else if (!podNonRoot) implicit.push(v);
      }
      if (explicit.length > 0) {
        setters.push(containers(explicit.map((v) => v.name)));
        places.push(...explicit.map((v) => under(v, 'securityContext', 'runAsNonRoot')));
      }
      if (setters.length > 0)
        return {
          reason: 'runAsNonRoot != true',
          detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
          places,
        };
      if (implicit.length === 0) return undefined;
      return {
        reason: 'runAsNonRoot != true',
        detail: `pod or ${containers(implicit.map((v) => v.name))} must set securityContext.runAsNonRoot=true`,
        places: [
          ...implicit.map((v) => under(v, 'securityContext', 'runAsNonRoot')),
          podPath('securityContext', 'runAsNonRoot'),
        ],
      };
    },
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    since: 23,
    run(pod) {
      const setters: string[] = [];
      const places: FieldPath[] = [];
      if (get(pod.podContext, 'runAsUser') === 0) {
        setters.push('pod');
        places.push(podPath('securityContext', 'runAsUser'));
      }
      const bad = pod.containers.filter((v) => get(sc(v), 'runAsUser') === 0);
      if (bad.length > 0) {
        setters.push(containers(bad.map((v) => v.name)));
        places.push(...bad.map((v) => under(v, 'securityContext', 'runAsUser')));
      }
      if (setters.length === 0) return undefined;
      return { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0`, places };
    },
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    since: 19,
    overrides: 'seccompProfile_baseline',
    run(pod, minor) {
      if (minor >= 25 && pod.windows) return undefined;
      const validType = (t: JsonValue) => t === 'Localhost' || t === 'RuntimeDefault';
      const setters: string[] = [];
      const values: string[] = [];
      const places: FieldPath[] = [];
      let podSet = false;
      const podProfile = get(pod.podContext, 'seccompProfile');
      if (isJsonObject(podProfile)) {
        if (!validType(podProfile.type ?? '')) {
          setters.push('pod');
          values.push(String(podProfile.type ?? ''));
          places.push(podPath('securityContext', 'seccompProfile', 'type'));
        } else podSet = true;
      }
      const explicit: Visited[] = [];
      const implicit: Visited[] = [];
      for (const v of pod.containers) {
        const profile = get(sc(v), 'seccompProfile');
        if (isJsonObject(profile)) {
          if (!validType(profile.type ?? '')) {
            explicit.push(v);
            values.push(String(profile.type ?? ''));
          }
        } else if (!podSet) implicit.push(v);
      }
      if (explicit.length > 0) {
        setters.push(containers(explicit.map((v) => v.name)));
        places.push(...explicit.map((v) => under(v, 'securityContext', 'seccompProfile', 'type')));
      }
      if (setters.length > 0)
        return {
          reason: 'seccompProfile',
          detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
          places,
        };
      if (implicit.length === 0) return undefined;
      return {
        reason: 'seccompProfile',
        detail: `pod or ${containers(implicit.map((v) => v.name))} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
        places: [
          ...implicit.map((v) => under(v, 'securityContext', 'seccompProfile')),
          podPath('securityContext', 'seccompProfile'),
        ],
      };
    },
  },
];

function volumeList(pod: PodView): { name: string; volume: JsonObject; path: FieldPath }[] {
  const list = Array.isArray(pod.spec.volumes) ? pod.spec.volumes : [];
  return list.flatMap((v, i) =>
    isJsonObject(v)
      ? [
          {
            name: typeof v.name === 'string' ? v.name : '',
            volume: v,
            path: [
              f('spec'),
              f('volumes'),
              typeof v.name === 'string' ? ({ kind: 'key', fields: { name: v.name } } as PathElement) : idx(i),
            ],
          },
        ]
      : [],
  );
}

/** The checks of a level at a version, in the server's order: baseline ids, then restricted ids, each sorted. */
function checksAt(level: 'baseline' | 'restricted', minor: number): Check[] {
  const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const live = checks.filter((c) => c.since <= minor);
  const baseline = live.filter((c) => c.level === 'baseline').sort(byId);
  if (level === 'baseline') return baseline;
  const restricted = live.filter((c) => c.level === 'restricted').sort(byId);
  const overridden = new Set(restricted.map((c) => c.overrides).filter((o) => o !== undefined));
  return [...baseline.filter((c) => !overridden.has(c.id)), ...restricted];
}

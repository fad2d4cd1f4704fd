// Kubernetes' CEL libraries the product has, as the API server's (k8s.io/apiserver pkg/cel/library):
// lists, regular expressions, quantities, semantic versions, URLs, IP addresses, CIDRs and named
// formats (network.ts parses the URLs, addresses and prefixes as Go does). A Kubernetes 1.34 API
// server enables them all for new and stored expressions alike (pkg/cel/environment/base.go: URLs
// since 1.0, IP and CIDR since 1.30, format since 1.31, semver since 1.33), and a policy or a rule
// the cluster holds was compiled by its server, so no version is checked here. Registered on the
// environments of the ValidatingAdmissionPolicies (admission.ts) and of the CRD validation rules
// (validate.ts) alike; a function outside them is said as unknown by both, never guessed.
import { Optional, type Environment } from '@marcbachmann/cel-js';
import {
  CelRuntimeError,
  CIDR,
  IPAddr,
  isCIDR,
  isIP,
  isURL,
  parseCIDR,
  parseIP,
  parseURL,
  requestURIError,
  URLValue,
} from './network';

export class Quantity {
  constructor(
    readonly num: bigint,
    readonly den: bigint,
  ) {}
  compare(o: Quantity): number {
    const a = this.num * o.den;
    const b = o.num * this.den;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  plus(o: Quantity, sign: bigint): Quantity {
    return new Quantity(this.num * o.den + sign * o.num * this.den, this.den * o.den);
  }
}

const SUFFIX: Record<string, [bigint, bigint]> = {
  n: [1n, 1_000_000_000n],
  u: [1n, 1_000_000n],
  m: [1n, 1000n],
  '': [1n, 1n],
  k: [1000n, 1n],
  M: [10n ** 6n, 1n],
  G: [10n ** 9n, 1n],
  T: [10n ** 12n, 1n],
  P: [10n ** 15n, 1n],
  E: [10n ** 18n, 1n],
  Ki: [1n << 10n, 1n],
  Mi: [1n << 20n, 1n],
  Gi: [1n << 30n, 1n],
  Ti: [1n << 40n, 1n],
  Pi: [1n << 50n, 1n],
  Ei: [1n << 60n, 1n],
};

/** resource.ParseQuantity's grammar; undefined where the server would refuse the text. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const [whole = '', frac = ''] = m[2]!.split('.');
  let num = BigInt((whole || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (m[4] !== undefined) {
    const e = Number(m[4]);
    if (Math.abs(e) > 30) return undefined;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else {
    const [mul, div] = SUFFIX[m[3] ?? '']!;
    num *= mul;
    den *= div;
  }
  return new Quantity(m[1] === '-' ? -num : num, den);
}

function quantityOf(s: string): Quantity {
  const q = parseQuantity(s);
  // resource.ParseQuantity's error names one of three causes, which the product does not tell apart.
  if (!q) throw new Error(`quantities must match the regular expression`);
  return q;
}

// -------------------------------------------------------------------------------------------------
// Semver (k8s.io/apiserver pkg/cel/library/semverlib.go, on blang/semver: strict SemVer 2.0.0;
// `normalize` first drops a leading v, fills a missing minor or patch, and drops leading zeros).

export class Semver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly string[],
  ) {}
  compare(o: Semver): number {
    for (const [a, b] of [
      [this.major, o.major],
      [this.minor, o.minor],
      [this.patch, o.patch],
    ] as const)
      if (a !== b) return a < b ? -1 : 1;
    // A version without pre-release parts is greater than one with them.
    if (this.pre.length === 0 || o.pre.length === 0)
      return o.pre.length - this.pre.length === 0 ? 0 : this.pre.length === 0 ? 1 : -1;
    for (let i = 0; i < Math.min(this.pre.length, o.pre.length); i++) {
      const a = this.pre[i]!;
      const b = o.pre[i]!;
      if (a === b) continue;
      const an = /^\d+$/.test(a);
      const bn = /^\d+$/.test(b);
      if (an && bn) return BigInt(a) < BigInt(b) ? -1 : 1;
      if (an !== bn) return an ? -1 : 1;
      return a < b ? -1 : 1;
    }
    return this.pre.length === o.pre.length ? 0 : this.pre.length < o.pre.length ? -1 : 1;
  }
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function parseSemver(text: string, normalize = false): Semver | undefined {
  let t = text;
  if (normalize) {
    t = t.replace(/^v/, '');
    const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/.exec(t);
    if (!m) return undefined;
    const n = (x: string | undefined) => String(BigInt(x ?? '0'));
    t = `${n(m[1])}.${n(m[2])}.${n(m[3])}${m[4]}`;
  }
  const m = SEMVER.exec(t);
  if (!m) return undefined;
  return new Semver(BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!), m[4] !== undefined ? m[4].split('.') : []);
}

function semverOf(s: string, normalize = false): Semver {
  const v = parseSemver(s, normalize);
  // blang/semver's error names the part that fails, in words the product does not follow.
  if (!v) throw new Error('could not parse semver');
  return v;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

// -------------------------------------------------------------------------------------------------
// Named formats (k8s.io/apiserver pkg/cel/library/format.go, with k8s.io/apimachinery
// pkg/util/validation/validation.go's checks and messages)

/** A named format; `validate` gives the errors, none when the text is valid. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

const utf8Length = (s: string) => new TextEncoder().encode(s).length;
const maxLen = (n: number) => `must be no more than ${n} characters`;
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN_FMT = `${LABEL_FMT}(\\.${LABEL_FMT})*`;
const DNS1035_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const whole = (fmt: string) => new RegExp(`^(?:${fmt})$`);

function dns1123Label(v: string): string[] {
  const errs: string[] = [];
  if (utf8Length(v) > 63) errs.push(maxLen(63));
  if (!whole(LABEL_FMT).test(v)) {
    if (whole(SUBDOMAIN_FMT).test(v)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}
function dns1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (utf8Length(v) > 253) errs.push(maxLen(253));
  if (!whole(SUBDOMAIN_FMT).test(v))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  return errs;
}
function dns1035Label(v: string): string[] {
  const errs: string[] = [];
  if (utf8Length(v) > 63) errs.push(maxLen(63));
  if (!whole(DNS1035_FMT).test(v))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_FMT,
        'my-name',
        'abc-123',
      ),
    );
  return errs;
}
function qualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (utf8Length(name) > 63) errs.push(`name part ${maxLen(63)}`);
  if (!whole(QNAME_FMT).test(name))
    errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}
function labelValue(v: string): string[] {
  const errs: string[] = [];
  if (utf8Length(v) > 63) errs.push(maxLen(63));
  if (!whole(LABEL_VALUE_FMT).test(v))
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return errs;
}
/**
 * kube-openapi strfmt IsDateTime: the text lower-cased and split at each `t`, a date before the
 * first and a time after it (a second `t` and what follows are not looked at).
 */
function isDateTime(str: string): boolean {
  // Go lower-cases Unicode as JavaScript does not always: such a text is not judged here.
  if (/[^\x00-\x7f]/.test(str)) throw new Error('a datetime with non-ASCII text is not judged here');
  if (str.length < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** apimachinery's maskTrailingDash: a generateName prefix may end in a dash. */
const prefix = (check: (s: string) => string[]) => (s: string) =>
  check(s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s);

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[mo - 1]!;
}

/** format.go ConstantFormats. */
export const FORMATS: Readonly<Record<string, NamedFormat>> = {
  dns1123Label: new NamedFormat('DNS1123Label', dns1123Label),
  dns1123Subdomain: new NamedFormat('DNS1123Subdomain', dns1123Subdomain),
  dns1035Label: new NamedFormat('DNS1035Label', dns1035Label),
  qualifiedName: new NamedFormat('QualifiedName', qualifiedName),
  dns1123LabelPrefix: new NamedFormat('DNS1123LabelPrefix', prefix(dns1123Label)),
  dns1123SubdomainPrefix: new NamedFormat('DNS1123SubdomainPrefix', prefix(dns1123Subdomain)),
  dns1035LabelPrefix: new NamedFormat('DNS1035LabelPrefix', prefix(dns1035Label)),
  labelValue: new NamedFormat('LabelValue', labelValue),
  uri: new NamedFormat('URI', (s) => {
    const e = requestURIError(s);
    return e === undefined ? [] : [e];
  }),
  uuid: new NamedFormat('uuid', (s) =>
    /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)
      ? []
      : ['does not match the UUID format'],
  ),
  byte: new NamedFormat('byte', (s) =>
    /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s)
      ? []
      : ['invalid base64'],
  ),
  date: new NamedFormat('date', (s) => (isDate(s) ? [] : ['invalid date'])),
  datetime: new NamedFormat('datetime', (s) => (isDateTime(s) ? [] : ['invalid datetime'])),
};

/** The namespaces `ip` and `format`, as constants whose methods are the namespaced functions. */
export class IPNamespace {}
export class FormatNamespace {}

// -------------------------------------------------------------------------------------------------
// The environment

/** The Kubernetes library functions added here, as `name()` for a function and `.name()` for a method. */
export const ADDED_FUNCTIONS: ReadonlySet<string> = new Set([
  'matches',
  'quantity',
  'isQuantity',
  'semver',
  'isSemver',
  'url',
  'isURL',
  'ip',
  'isIP',
  'cidr',
  'isCIDR',
]);
/** Functions of a namespace (`ip.isCanonical()`, `format.dns1123Label()`) added here. */
export const ADDED_NAMESPACED: ReadonlySet<string> = new Set([
  'ip.isCanonical',
  'format.named',
  ...Object.keys(FORMATS).map((name) => `format.${name}`),
]);
export const ADDED_METHODS: ReadonlySet<string> = new Set([
  'isSorted',
  'sum',
  'min',
  'max',
  'indexOf',
  'lastIndexOf',
  'find',
  'findAll',
  'sign',
  'isInteger',
  'asInteger',
  'asApproximateFloat',
  'add',
  'sub',
  'isGreaterThan',
  'isLessThan',
  'compareTo',
  'major',
  'minor',
  'patch',
  'getScheme',
  'getHost',
  'getHostname',
  'getPort',
  'getEscapedPath',
  'getQuery',
  'family',
  'isUnspecified',
  'isLoopback',
  'isLinkLocalMulticast',
  'isLinkLocalUnicast',
  'isGlobalUnicast',
  'containsIP',
  'containsCIDR',
  'ip',
  'masked',
  'prefixLength',
  'validate',
]);

function regex(pattern: string): RegExp {
  // RE2's inline flags and classes JavaScript lacks are not translated: the library then throws, and the answer is unknown.
  return new RegExp(pattern, 'u');
}

function compareCel(a: unknown, b: unknown): number {
  if (a instanceof Quantity && b instanceof Quantity) return a.compare(b);
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error('no such overload');
}

function celEquals(a: unknown, b: unknown): boolean {
  if (a instanceof Quantity || b instanceof Quantity || a instanceof Semver || b instanceof Semver) return false;
  return (
    JSON.stringify(a, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ===
    JSON.stringify(b, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))
  );
}

function lastIndex(l: unknown[], x: unknown): bigint {
  for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], x)) return BigInt(i);
  return -1n;
}

/**
 * Kubernetes' CEL libraries this product has (lists, regular expressions, quantities, semantic
 * versions: k8s.io/apiserver pkg/cel/library), registered on an environment: the admission
 * policies' and the CRD validation rules' (validate.ts) alike.
 */
export function withKubernetesLibraries(base: Environment): Environment {
  let env = base
    .registerType('Quantity', Quantity)
    .registerType('Semver', Semver)
    .registerFunction('matches(string, string): bool', (s: string, r: string) => regex(r).test(s))
    .registerFunction('string.find(string): string', (s: string, r: string) => regex(r).exec(s)?.[0] ?? '')
    .registerFunction('string.findAll(string): list<string>', (s: string, r: string) =>
      [...s.matchAll(new RegExp(r, 'gu'))].map((m) => m[0]),
    )
    .registerFunction('string.findAll(string, int): list<string>', (s: string, r: string, n: bigint) => {
      const all = [...s.matchAll(new RegExp(r, 'gu'))].map((m) => m[0]);
      return n < 0n ? all : all.slice(0, Number(n));
    })
    .registerFunction('list.isSorted(): bool', (l: unknown[]) =>
      l.every((x, i) => i === 0 || compareCel(l[i - 1], x) <= 0),
    )
    .registerFunction('list.sum(): dyn', (l: unknown[]) => {
      if (l.length === 0) return 0n;
      if (l.every((x) => typeof x === 'bigint')) {
        const s = (l as bigint[]).reduce((a, b) => a + b, 0n);
        if (s > INT64_MAX || s < INT64_MIN) throw new Error('integer overflow');
        return s;
      }
      if (l.every((x) => typeof x === 'number')) return (l as number[]).reduce((a, b) => a + b, 0);
      throw new Error('no such overload');
    })
    .registerFunction('list.min(): dyn', (l: unknown[]) => {
      if (l.length === 0) throw new CelRuntimeError('min called on empty list');
      return l.reduce((a, b) => (compareCel(b, a) < 0 ? b : a));
    })
    .registerFunction('list.max(): dyn', (l: unknown[]) => {
      if (l.length === 0) throw new CelRuntimeError('max called on empty list');
      return l.reduce((a, b) => (compareCel(b, a) > 0 ? b : a));
    })
    .registerFunction('list.indexOf(dyn): int', (l: unknown[], x: unknown) =>
      BigInt(l.findIndex((y) => celEquals(y, x))),
    )
    .registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], x: unknown) => lastIndex(l, x))
    .registerFunction('quantity(string): Quantity', quantityOf)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction('Quantity.sign(): int', (q: Quantity) => BigInt(q.compare(new Quantity(0n, 1n))))
    .registerFunction('Quantity.isInteger(): bool', (q: Quantity) => q.num % q.den === 0n)
    .registerFunction('Quantity.asInteger(): int', (q: Quantity) => {
      if (q.num % q.den !== 0n) throw new CelRuntimeError('cannot convert value to integer');
      const v = q.num / q.den;
      if (v > INT64_MAX || v < INT64_MIN) throw new CelRuntimeError('cannot convert value to integer');
      return v;
    })
    .registerFunction('Quantity.asApproximateFloat(): double', (q: Quantity) => Number(q.num) / Number(q.den))
    .registerFunction('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => a.plus(b, 1n))
    .registerFunction('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => a.plus(new Quantity(b, 1n), 1n))
    .registerFunction('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => a.plus(b, -1n))
    .registerFunction('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => a.plus(new Quantity(b, 1n), -1n))
    .registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => a.compare(b) > 0)
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => a.compare(b) < 0)
    .registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(a.compare(b)))
    .registerFunction('semver(string): Semver', (s: string) => semverOf(s))
    .registerFunction('semver(string, bool): Semver', (s: string, n: boolean) => semverOf(s, n))
    .registerFunction('isSemver(string): bool', (s: string) => parseSemver(s) !== undefined)
    .registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => parseSemver(s, n) !== undefined)
    .registerFunction('Semver.major(): int', (v: Semver) => v.major)
    .registerFunction('Semver.minor(): int', (v: Semver) => v.minor)
    .registerFunction('Semver.patch(): int', (v: Semver) => v.patch)
    .registerFunction('Semver.isGreaterThan(Semver): bool', (a: Semver, b: Semver) => a.compare(b) > 0)
    .registerFunction('Semver.isLessThan(Semver): bool', (a: Semver, b: Semver) => a.compare(b) < 0)
    .registerFunction('Semver.compareTo(Semver): int', (a: Semver, b: Semver) => BigInt(a.compare(b)))
    // URLs (urls.go)
    .registerType('kubernetes.URL', URLValue)
    .registerFunction('url(string): kubernetes.URL', parseURL)
    .registerFunction('isURL(string): bool', isURL)
    .registerFunction('kubernetes.URL.getScheme(): string', (u: URLValue) => u.getScheme())
    .registerFunction('kubernetes.URL.getHost(): string', (u: URLValue) => u.getHost())
    .registerFunction('kubernetes.URL.getHostname(): string', (u: URLValue) => u.getHostname())
    .registerFunction('kubernetes.URL.getPort(): string', (u: URLValue) => u.getPort())
    .registerFunction('kubernetes.URL.getEscapedPath(): string', (u: URLValue) => u.getEscapedPath())
    .registerFunction('kubernetes.URL.getQuery(): map<string, list<string>>', (u: URLValue) => u.getQuery())
    .registerOperator('kubernetes.URL == kubernetes.URL', (a: URLValue, b: URLValue) => a.equals(b))
    // IP addresses (ip.go)
    .registerType('net.IP', IPAddr)
    .registerType('kubernetes.IPNamespace', IPNamespace)
    .registerConstant('ip', 'kubernetes.IPNamespace', new IPNamespace())
    .registerFunction('ip(string): net.IP', parseIP)
    .registerFunction('isIP(string): bool', isIP)
    .registerFunction('kubernetes.IPNamespace.isCanonical(string): bool', (_: IPNamespace, s: string) => {
      const addr = parseIP(s);
      return addr.toString() === s;
    })
    .registerFunction('net.IP.family(): int', (a: IPAddr) => (a.is4 ? 4n : 6n))
    .registerFunction('net.IP.isUnspecified(): bool', (a: IPAddr) => a.isUnspecified())
    .registerFunction('net.IP.isLoopback(): bool', (a: IPAddr) => a.isLoopback())
    .registerFunction('net.IP.isLinkLocalMulticast(): bool', (a: IPAddr) => a.isLinkLocalMulticast())
    .registerFunction('net.IP.isLinkLocalUnicast(): bool', (a: IPAddr) => a.isLinkLocalUnicast())
    .registerFunction('net.IP.isGlobalUnicast(): bool', (a: IPAddr) => a.isGlobalUnicast())
    .registerFunction('string(net.IP): string', (a: IPAddr) => a.toString())
    .registerOperator('net.IP == net.IP', (a: IPAddr, b: IPAddr) => a.equals(b))
    // CIDRs (cidr.go)
    .registerType('net.CIDR', CIDR)
    .registerFunction('cidr(string): net.CIDR', parseCIDR)
    .registerFunction('isCIDR(string): bool', isCIDR)
    .registerFunction('net.CIDR.containsIP(string): bool', (c: CIDR, s: string) => {
      // cidr.go passes ip()'s error to an overload that takes only an IP: cel-go answers no such overload.
      if (!isIP(s)) throw new CelRuntimeError('no such overload');
      return c.containsIP(parseIP(s));
    })
    .registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CIDR, a: IPAddr) => c.containsIP(a))
    .registerFunction('net.CIDR.containsCIDR(string): bool', (c: CIDR, s: string) => c.containsCIDR(parseCIDR(s)))
    .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CIDR, o: CIDR) => c.containsCIDR(o))
    .registerFunction('net.CIDR.ip(): net.IP', (c: CIDR) => c.addr)
    .registerFunction('net.CIDR.masked(): net.CIDR', (c: CIDR) => c.masked())
    .registerFunction('net.CIDR.prefixLength(): int', (c: CIDR) => BigInt(c.bits))
    .registerFunction('string(net.CIDR): string', (c: CIDR) => c.toString())
    .registerOperator('net.CIDR == net.CIDR', (a: CIDR, b: CIDR) => a.equals(b))
    // Named formats (format.go)
    .registerType('kubernetes.NamedFormat', NamedFormat)
    .registerType('kubernetes.FormatNamespace', FormatNamespace)
    .registerConstant('format', 'kubernetes.FormatNamespace', new FormatNamespace())
    .registerFunction(
      'kubernetes.FormatNamespace.named(string): optional<kubernetes.NamedFormat>',
      (_: FormatNamespace, name: string) =>
        Object.hasOwn(FORMATS, name) ? Optional.of(FORMATS[name]) : Optional.none(),
    )
    .registerFunction(
      'kubernetes.NamedFormat.validate(string): optional<list<string>>',
      (f: NamedFormat, s: string) => {
        const errs = f.check(s);
        return errs.length === 0 ? Optional.none() : Optional.of(errs);
      },
    )
    .registerOperator(
      'kubernetes.NamedFormat == kubernetes.NamedFormat',
      (a: NamedFormat, b: NamedFormat) => a.name === b.name,
    );
  for (const [name, f] of Object.entries(FORMATS))
    env = env.registerFunction(`kubernetes.FormatNamespace.${name}(): kubernetes.NamedFormat`, () => f);
  return env;
}

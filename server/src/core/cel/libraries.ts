// Kubernetes' CEL libraries the product has, as the API server's (k8s.io/apiserver pkg/cel/library):
// lists, regular expressions, quantities and semantic versions. Registered on the environments of the
// ValidatingAdmissionPolicies (admission.ts) and of the CRD validation rules (validate.ts) alike; a
// function outside them is said as unknown by both, never guessed.
import type { Environment } from '@marcbachmann/cel-js';

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
  if (!v) throw new Error('could not parse semver');
  return v;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

// -------------------------------------------------------------------------------------------------
// The environment

/** The Kubernetes library functions added here, as `name()` for a function and `.name()` for a method. */
export const ADDED_FUNCTIONS: ReadonlySet<string> = new Set([
  'matches',
  'quantity',
  'isQuantity',
  'semver',
  'isSemver',
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
  return base
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
      if (l.length === 0) throw new Error('min(list) called on empty list');
      return l.reduce((a, b) => (compareCel(b, a) < 0 ? b : a));
    })
    .registerFunction('list.max(): dyn', (l: unknown[]) => {
      if (l.length === 0) throw new Error('max(list) called on empty list');
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
      if (q.num % q.den !== 0n) throw new Error('cannot convert value to integer');
      const v = q.num / q.den;
      if (v > INT64_MAX || v < INT64_MIN) throw new Error('cannot convert value to integer');
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
    .registerFunction('Semver.compareTo(Semver): int', (a: Semver, b: Semver) => BigInt(a.compare(b)));
}

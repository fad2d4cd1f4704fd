// The CEL of ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) as the API server
// evaluates it (k8s.io/apiserver pkg/admission/plugin/policy/validating): the expressions of a
// policy's matchConditions, variables and validations see `object`, `oldObject` (null on a create),
// `params`, `namespaceObject`, `request` and `variables`, and `authorizer`.
//
// Values are the JSON of the objects (integers as CEL ints, other numbers as doubles). The
// Kubernetes libraries a policy commonly calls are added where the product's CEL library lacks them
// (k8s.io/apiserver pkg/cel/library): lists (`isSorted`, `sum`, `min`, `max`, `indexOf`,
// `lastIndexOf`), regex (`find`, `findAll`), quantity (`quantity`, `isQuantity` and the Quantity
// methods), semver (`semver`, `isSemver` and the Semver methods) and the standard
// `matches(string, string)`. What is not here — `authorizer`,
// `request.userInfo`, the URL, IP, CIDR and format libraries, an expression the library
// cannot compile or evaluate — is an `unknown` answer, for the dry run to decide; never a guess.
import { Environment } from '@marcbachmann/cel-js';
import { isJsonObject, type JsonValue } from '../json';
import { FUNCTIONS, METHODS, NAMESPACES, firstLine } from './validate';

export type PolicyAnswer =
  | { readonly kind: 'value'; readonly value: unknown }
  /** The product cannot tell: the library lacks something, or the expression reads what is not known. */
  | { readonly kind: 'unknown'; readonly why: string }
  /** The expression fails at run time as the server's would (a missing key): the server's words differ. */
  | { readonly kind: 'error'; readonly why: string };

/** What a policy's expressions see, as JSON; `variables` are the answers of the policy's variables so far. */
export interface PolicyInput {
  readonly object: JsonValue;
  readonly oldObject: JsonValue;
  readonly params: JsonValue;
  readonly namespaceObject: JsonValue;
  /** The admission request's known fields (operation, name, namespace, kind, resource…). */
  readonly request: { readonly [key: string]: JsonValue };
  readonly variables: ReadonlyMap<string, PolicyAnswer>;
}

/** The fields of `request` the product knows for the apply it predicts. */
const REQUEST_FIELDS = new Set([
  'kind',
  'resource',
  'subResource',
  'requestKind',
  'requestResource',
  'requestSubResource',
  'name',
  'namespace',
  'operation',
]);

// -------------------------------------------------------------------------------------------------
// Quantity (k8s.io/apimachinery resource.Quantity), exact: a rational with a power-of-ten denominator.

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
const ADDED_FUNCTIONS = new Set(['matches', 'quantity', 'isQuantity', 'semver', 'isSemver']);
const ADDED_METHODS = new Set([
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

let environment: Environment | undefined;
function env(): Environment {
  environment ??= new Environment({ enableOptionalTypes: true })
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('request', 'dyn')
    .registerVariable('variables', 'dyn')
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
  return environment;
}

interface Compiled {
  readonly evaluate?: (ctx: Record<string, unknown>) => unknown;
  readonly why?: string;
  /** The names after `variables.` the expression reads. */
  readonly variables: ReadonlySet<string>;
}

const cache = new Map<string, Compiled>();

function compile(expression: string): Compiled {
  let c = cache.get(expression);
  if (!c) {
    c = compileUncached(expression);
    if (cache.size > 2000) cache.clear();
    cache.set(expression, c);
  }
  return c;
}

function compileUncached(expression: string): Compiled {
  const variables = new Set<string>();
  for (const m of expression.matchAll(/\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) variables.add(m[1]!);
  if (/\bauthorizer\b/.test(expression))
    return { variables, why: "it asks the authorizer, whose answer for the request's user the product does not know" };
  for (const m of expression.matchAll(/\brequest\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g))
    if (!REQUEST_FIELDS.has(m[1]!))
      return { variables, why: `it reads request.${m[1]}, which the product does not know for the user's apply` };
  let parsed: ((ctx: Record<string, unknown>) => unknown) & { ast: unknown };
  try {
    parsed = env().parse(expression) as typeof parsed;
  } catch (e) {
    return { variables, why: `the product's CEL library cannot compile it (${firstLine(e)})` };
  }
  const calls = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (typeof n !== 'object' || n === null || seen.has(n)) return;
    seen.add(n);
    const node = n as { op?: string; args?: unknown };
    if ((node.op === 'call' || node.op === 'rcall') && Array.isArray(node.args) && typeof node.args[0] === 'string') {
      const name = node.args[0];
      const receiver = node.op === 'rcall' ? (node.args[1] as { op?: string; args?: unknown } | undefined) : undefined;
      if (receiver?.op === 'id' && typeof receiver.args === 'string' && NAMESPACES.has(receiver.args)) {
        if (!['optional.of', 'optional.none'].includes(`${receiver.args}.${name}`))
          calls.add(`${receiver.args}.${name}()`);
      } else if (
        node.op === 'call'
          ? !FUNCTIONS.has(name) && !ADDED_FUNCTIONS.has(name)
          : !METHODS.has(name) && !ADDED_METHODS.has(name)
      ) {
        calls.add(node.op === 'call' ? `${name}()` : `.${name}()`);
      }
    }
    if (node.args !== undefined) visit(node.args);
  };
  visit(parsed.ast);
  if (calls.size > 0)
    return {
      variables,
      why: `it uses ${[...calls].join(', ')}, ${calls.size === 1 ? 'a Kubernetes CEL function' : 'Kubernetes CEL functions'} the product's CEL library does not have`,
    };
  return { variables, evaluate: parsed };
}

/** JSON as the server's CEL sees an object without its schema's types: integers are ints, other numbers doubles. */
function celValue(v: JsonValue): unknown {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celValue);
  if (isJsonObject(v)) {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x);
    return out;
  }
  return v;
}

/** Activations by input: the same input is converted once for every expression of a policy. */
const converted = new WeakMap<PolicyInput, Record<string, unknown>>();

/** One expression's answer on the input. */
export function evaluatePolicyExpression(expression: string, input: PolicyInput): PolicyAnswer {
  const c = compile(expression);
  if (!c.evaluate) return { kind: 'unknown', why: c.why ?? 'it cannot be compiled' };
  const values = new Map<string, unknown>();
  for (const name of c.variables) {
    const v = input.variables.get(name);
    if (v === undefined) continue;
    if (v.kind !== 'value') return { kind: 'unknown', why: `it reads variables.${name}, which is unknown: ${v.why}` };
    values.set(name, v.value);
  }
  let base = converted.get(input);
  if (!base) {
    base = {
      object: celValue(input.object),
      oldObject: celValue(input.oldObject),
      params: celValue(input.params),
      namespaceObject: celValue(input.namespaceObject),
      request: celValue(input.request),
    };
    converted.set(input, base);
  }
  const variables = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of input.variables) if (v.kind === 'value') variables[k] = v.value;
  try {
    return { kind: 'value', value: c.evaluate({ ...base, variables }) };
  } catch (e) {
    const message = firstLine(e);
    // Errors the server's CEL gives too; anything else may be the library's own limit.
    if (
      /no such key|out of bounds|division by zero|modulus by zero|overflow|cannot convert|empty list|could not parse semver|quantities must match/i.test(
        message,
      )
    )
      return { kind: 'error', why: message };
    return { kind: 'unknown', why: `the product's CEL library cannot evaluate it here (${message})` };
  }
}

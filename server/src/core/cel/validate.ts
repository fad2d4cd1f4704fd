// CustomResourceDefinition validation rules (`x-kubernetes-validations`) evaluated as the API server
// evaluates them (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go), on the object an
// apply would store and the live object it replaces:
// - each rule runs at its schema node, for every value there (each list item, each map value), with
//   `self` the value; a null or absent value runs nothing;
// - a transition rule (one that names `oldSelf`) runs only where an old value is correlated with the
//   new one: the same property, the same map key, the item of a map-type list with the same keys;
//   items of other lists have none. With `optionalOldSelf` it always runs, `oldSelf` an optional;
// - a failed rule that does not name `oldSelf` is forgiven on an update when its value is unchanged
//   (or, where the value cannot be correlated, its nearest correlated parent is): CRD validation
//   ratcheting, on by default since Kubernetes 1.30;
// - the failure is reported at the node, or at `fieldPath` below it, as
//   `Invalid value: "<schema type>": <message>` (or `Forbidden: `, `Required value: `, per `reason`),
//   the message from `messageExpression`, else `message`, else `failed rule: <rule>`.
// - a rule that fails at run time with an error the server's CEL gives too (a missing key, an index
//   out of bounds, a division by zero, an overflow, a Kubernetes library's refusal of its argument)
//   is refused at its node, ratcheting or not, as `<error> evaluating rule: <message, else rule>`
//   (a run-time `no such overload`: `'<error>': call arguments did not match …`).
// The CEL library is pure computation. What it cannot do as Kubernetes does is never guessed: a
// rule that calls a Kubernetes extension function it lacks, a value Kubernetes types as a timestamp,
// duration or bytes, an expression it cannot compile or evaluate, an object large enough to reach the
// server's cost budget — each gives an `unknown` verdict, for the dry run to decide.
import { Environment, Optional } from '@marcbachmann/cel-js';
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../json';
import { goQuote, type FieldPath, type PathElement } from '../ssa/path';
import { ADDED_FUNCTIONS, ADDED_METHODS, ADDED_NAMESPACED, withKubernetesLibraries } from './libraries';
import { CelRuntimeError } from './network';
import type { CelNode, CelRule } from './schema';

export type RuleVerdict =
  | {
      readonly kind: 'broken';
      readonly rule: CelRule;
      /** Where the failure is reported, to find it in the manifest. */
      readonly path: FieldPath;
      /** The server's field: `spec.ports[0].port`; `<nil>` for the object's root. */
      readonly field: string;
      /** The server's error after the field (`Invalid value: "string": region is immutable`); undefined when a messageExpression cannot be evaluated here. */
      readonly detail?: string;
      readonly transition: boolean;
    }
  | {
      readonly kind: 'unknown';
      readonly rule: CelRule;
      readonly path: FieldPath;
      readonly field: string;
      /** Why the product cannot tell. */
      readonly why: string;
      readonly transition: boolean;
    };

export interface CelValidationInput {
  readonly schema: CelNode;
  /** The object the request would store (defaults are applied here, as the server decodes it). */
  readonly object: JsonObject;
  /** The live object, for an update; undefined for a create. */
  readonly old?: JsonObject;
}

/** Every rule that fails, or whose answer cannot be known here, for one object. */
export function validateCelRules(input: CelValidationInput): RuleVerdict[] {
  const out: RuleVerdict[] = [];
  const object = withDefaults(input.schema, input.object) as JsonObject;
  walk(
    input.schema,
    object,
    input.old,
    { path: [], field: '' },
    { update: input.old !== undefined, parentUnchanged: false },
    true,
    out,
  );
  return out;
}

interface Place {
  readonly path: FieldPath;
  readonly field: string;
}

const child = (at: Place, name: string): Place => ({
  path: [...at.path, { kind: 'field', name }],
  field: at.field === '' ? name : `${at.field}.${name}`,
});
const mapKey = (at: Place, key: string): Place => ({
  path: [...at.path, { kind: 'field', name: key }],
  field: `${at.field}[${key}]`,
});
const item = (at: Place, i: number, element: PathElement): Place => ({
  path: [...at.path, element],
  field: `${at.field}[${i}]`,
});

/**
 * Ratcheting: on an update, a failure of a rule without `oldSelf` is forgiven where the nearest
 * correlated value (this one, else a parent's) is unchanged; never on a create.
 */
interface Ratchet {
  readonly update: boolean;
  readonly parentUnchanged: boolean;
}

function walk(
  node: CelNode,
  value: JsonValue | undefined,
  old: JsonValue | undefined,
  at: Place,
  ratchet: Ratchet,
  resourceRoot: boolean,
  out: RuleVerdict[],
): void {
  if (value === undefined || value === null || !node.hasRules) return;
  const unchanged = ratchet.update && (old !== undefined ? jsonEqual(value, old) : ratchet.parentUnchanged);
  const below: Ratchet = { update: ratchet.update, parentUnchanged: unchanged };
  for (const rule of node.rules) {
    const verdict = evaluateRule(node, rule, value, old, at, unchanged, resourceRoot);
    if (verdict) out.push(verdict);
  }
  if (Array.isArray(value)) {
    if (!node.items) return;
    const keys = node.listType === 'map' ? (node.listMapKeys ?? []) : undefined;
    const olds = Array.isArray(old) ? old : [];
    value.forEach((v, i) => {
      const correlated =
        keys && isJsonObject(v)
          ? olds.find((o) => isJsonObject(o) && keys.every((k) => jsonEqual(o[k], v[k])))
          : undefined;
      const element: PathElement =
        keys && isJsonObject(v)
          ? { kind: 'key', fields: Object.fromEntries(keys.filter((k) => v[k] !== undefined).map((k) => [k, v[k]!])) }
          : node.listType === 'set'
            ? { kind: 'value', value: v }
            : { kind: 'index', index: i };
      walk(node.items!, v, correlated, item(at, i, element), below, node.items!.embeddedResource === true, out);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  const oldMap = isJsonObject(old) ? old : undefined;
  if (node.additionalProperties) {
    for (const [k, v] of Object.entries(value))
      walk(
        node.additionalProperties,
        v,
        oldMap?.[k],
        mapKey(at, k),
        below,
        node.additionalProperties.embeddedResource === true,
        out,
      );
  }
  if (node.properties) {
    for (const [k, v] of Object.entries(value)) {
      const sub = Object.hasOwn(node.properties, k) ? node.properties[k] : undefined;
      // At a resource's root only apiVersion, kind and metadata's name and generateName are visible.
      if (sub && !(resourceRoot && k === 'metadata'))
        walk(sub, v, oldMap?.[k], child(at, k), below, sub.embeddedResource === true, out);
    }
  }
}

function evaluateRule(
  node: CelNode,
  rule: CelRule,
  value: JsonValue,
  old: JsonValue | undefined,
  at: Place,
  unchanged: boolean,
  resourceRoot: boolean,
): RuleVerdict | undefined {
  const compiled = compile(rule.rule, rule.optionalOldSelf === true);
  const transition = compiled.ok ? compiled.usesOldSelf : /\boldSelf\b/.test(rule.rule);
  // A transition rule needs an old value, unless it takes oldSelf as an optional.
  if (transition && old === undefined && rule.optionalOldSelf !== true) return undefined;
  const unknown = (why: string): RuleVerdict => ({
    kind: 'unknown',
    rule,
    path: at.path,
    field: at.field || '<nil>',
    why,
    transition,
  });
  if (!compiled.ok) return unknown(compiled.why);
  let self: unknown;
  let oldSelf: unknown;
  try {
    self = toCel(node, value, resourceRoot);
    if (old !== undefined) oldSelf = toCel(node, old, resourceRoot);
  } catch (e) {
    if (e instanceof Unsupported) return unknown(e.message);
    throw e;
  }
  if (JSON.stringify(value).length > COST_GUARD_BYTES)
    return unknown(
      "the value is large enough to reach the API server's CEL cost budget, which the product does not count",
    );
  const activation = (opt: boolean): Record<string, unknown> => {
    if (opt) return { self, oldSelf: old !== undefined ? Optional.of(oldSelf) : Optional.none() };
    return old !== undefined ? { self, oldSelf } : { self };
  };
  const result = run(compiled, activation(rule.optionalOldSelf === true));
  if (!result.ok) {
    // A rule that fails at run time is refused at its node, ratcheting or not (validation.go):
    // `<error> evaluating rule: <message, else the rule>`. Where set and map lists are compared, their
    // order might decide whether it fails: unknown.
    if (result.words === undefined || hasUnorderedList(node)) return unknown(result.why);
    const ruleWords = rule.message !== undefined && rule.message !== '' ? rule.message.trim() : rule.rule.trim();
    const said = result.words.startsWith('no such overload')
      ? `'${result.words}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleWords}`
      : `${result.words} evaluating rule: ${ruleWords}`;
    return {
      kind: 'broken',
      rule,
      path: at.path,
      field: at.field || '<nil>',
      detail: fieldError(node, undefined, said),
      transition,
    };
  }
  if (typeof result.value !== 'boolean') return unknown(`the rule gives ${typeof result.value}, not a boolean, here`);
  // Lists of type set and map are equal whatever their order for the server's CEL; the library
  // compares in order. Where the two orders could disagree, evaluate again with both sides sorted:
  // a different answer means the order decides, and the product cannot tell which the server sees.
  if (hasUnorderedList(node)) {
    try {
      const sorted = run(compiled, {
        ...activation(rule.optionalOldSelf === true),
        ...sortedActivation(node, value, old, resourceRoot, rule.optionalOldSelf === true),
      });
      if (!sorted.ok || sorted.value !== result.value)
        return unknown('it compares lists whose order the API server ignores (list type set or map)');
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
  }
  if (result.value) return undefined;
  if (!transition && unchanged) return undefined;

  const where = rule.fieldPath !== undefined ? relativePath(rule.fieldPath) : { path: [], field: '' };
  const path = [...at.path, ...where.path];
  const field = where.field === '' ? at.field || '<nil>' : at.field === '' ? where.field : `${at.field}.${where.field}`;
  let message: string | undefined;
  if (rule.messageExpression !== undefined) {
    // The message's expression sees oldSelf as a plain value (absent without an old one).
    const m = compile(rule.messageExpression, false);
    const said = m.ok ? run(m, activation(false)) : { ok: false as const, why: m.why, runtime: false };
    if (said.ok && typeof said.value === 'string') {
      const trimmed = said.value.trim();
      message = trimmed !== '' && !/\n/.test(trimmed) && trimmed.length <= 5 * 1024 ? trimmed : fallbackMessage(rule);
    } else if (said.ok || (!said.ok && said.runtime)) {
      // The server logs a message expression that fails at run time and uses the rule's message.
      message = fallbackMessage(rule);
    }
  } else {
    message = fallbackMessage(rule);
  }
  return {
    kind: 'broken',
    rule,
    path,
    field,
    ...(message !== undefined ? { detail: fieldError(node, rule.reason, message) } : {}),
    transition,
  };
}

const COST_GUARD_BYTES = 256 * 1024;

function fallbackMessage(rule: CelRule): string {
  return rule.message !== undefined ? rule.message.trim() : `failed rule: ${rule.rule.trim()}`;
}

/** field.Error's body for the rule's reason (validation.go fieldErrorForReason). */
function fieldError(node: CelNode, reason: string | undefined, detail: string): string {
  const type = goQuote(node.type);
  switch (reason) {
    case 'FieldValueForbidden':
      return `Forbidden: ${detail}`;
    case 'FieldValueRequired':
      return `Required value: ${detail}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: ${type}`;
    default:
      return `Invalid value: ${type}: ${detail}`;
  }
}

/** A rule's fieldPath (`.a.b`, `.m['k.x']`) as path elements and as the server prints it. */
function relativePath(jsonPath: string): Place {
  const path: PathElement[] = [];
  let field = '';
  const re = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/g;
  for (let m = re.exec(jsonPath); m; m = re.exec(jsonPath)) {
    if (m[1] !== undefined) {
      path.push({ kind: 'field', name: m[1] });
      field = field === '' ? m[1] : `${field}.${m[1]}`;
    } else {
      const name = m[2]!.replace(/\\(.)/g, '$1');
      path.push({ kind: 'field', name });
      // A quoted name of a declared property is a child; of a map, a key: both read `[name]` once a
      // dot could not spell it, which is the only reason to quote it.
      field = `${field}[${name}]`;
    }
  }
  return { path, field };
}

// -------------------------------------------------------------------------------------------------
// The CEL library

/** Kubernetes' CEL has these and the library evaluates them the same way. Anything else is unknown. */
export const FUNCTIONS: ReadonlySet<string> = new Set([
  'size',
  'int',
  'uint',
  'double',
  'string',
  'bool',
  'bytes',
  'dyn',
  'type',
  'timestamp',
  'duration',
  'has',
  'matches',
]);
export const METHODS: ReadonlySet<string> = new Set([
  'size',
  'startsWith',
  'endsWith',
  'contains',
  'matches',
  'lowerAscii',
  'upperAscii',
  'trim',
  'indexOf',
  'lastIndexOf',
  'substring',
  'split',
  'join',
  'all',
  'exists',
  'exists_one',
  'map',
  'filter',
  'orValue',
  'hasValue',
  'value',
  'or',
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getFullYear',
  'getHours',
  'getMilliseconds',
  'getMinutes',
  'getMonth',
  'getSeconds',
]);
/** Namespaces of Kubernetes CEL libraries: `sets.contains(...)`, `format.dns1123Label()`. */
export const NAMESPACES: ReadonlySet<string> = new Set([
  'optional',
  'sets',
  'math',
  'format',
  'strings',
  'base64',
  'lists',
  'regex',
  'ip',
  'cidr',
  'url',
  'quantity',
  'semver',
  'authorizer',
]);
const NAMESPACED = new Set(['optional.of', 'optional.none']);

type Compiled =
  { ok: true; usesOldSelf: boolean; evaluate: (ctx: Record<string, unknown>) => unknown } | { ok: false; why: string };

// Made on the first rule: most runs judge no CRD rule, and the bundles load the CEL library itself
// only when one is (scripts/bundle.mjs).
let environments: { plain: Environment; optional: Environment } | undefined;
function environment(optionalOldSelf: boolean): Environment {
  environments ??= {
    plain: withKubernetesLibraries(
      new Environment({ enableOptionalTypes: true }).registerVariable('self', 'dyn').registerVariable('oldSelf', 'dyn'),
    ),
    optional: withKubernetesLibraries(
      new Environment({ enableOptionalTypes: true })
        .registerVariable('self', 'dyn')
        .registerVariable('oldSelf', 'optional<dyn>'),
    ),
  };
  return optionalOldSelf ? environments.optional : environments.plain;
}
/** Compiled expressions by text; rules repeat on every keystroke and every list item. */
const compiledCache = new Map<string, Compiled>();

function compile(expression: string, optionalOldSelf: boolean): Compiled {
  const key = `${optionalOldSelf ? 'o' : 'p'}${expression}`;
  let compiled = compiledCache.get(key);
  if (!compiled) {
    compiled = compileUncached(expression, optionalOldSelf);
    if (compiledCache.size > 2000) compiledCache.clear();
    compiledCache.set(key, compiled);
  }
  return compiled;
}

function compileUncached(expression: string, optionalOldSelf: boolean): Compiled {
  let parsed: ((ctx: Record<string, unknown>) => unknown) & { ast: unknown };
  try {
    parsed = environment(optionalOldSelf).parse(expression) as typeof parsed;
  } catch (e) {
    return { ok: false, why: `the product's CEL library cannot compile it (${firstLine(e)})` };
  }
  let usesOldSelf = false;
  const calls = unsupportedCalls(parsed.ast, (node) => {
    if (node.op === 'id' && node.args === 'oldSelf') usesOldSelf = true;
  });
  if (calls.size > 0) return { ok: false, why: unsupportedWhy(calls) };
  return { ok: true, usesOldSelf, evaluate: parsed };
}

/** A node of the CEL library's syntax tree, as far as the walks below read it. */
export interface CelAstNode {
  readonly op?: string;
  readonly args?: unknown;
}

/**
 * The functions and methods an expression calls that neither CEL's standard library nor Kubernetes'
 * libraries the product has (libraries.ts) hold, as `name()`, `.name()` or `namespace.name()`; `each`
 * sees every node (a caller notes the variables it reads).
 */
export function unsupportedCalls(ast: unknown, each?: (node: CelAstNode) => void): Set<string> {
  const calls = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (n: unknown, bound: ReadonlySet<string>): void => {
    if (Array.isArray(n)) return n.forEach((x) => visit(x, bound));
    if (typeof n !== 'object' || n === null || seen.has(n)) return;
    seen.add(n);
    const node = n as CelAstNode;
    each?.(node);
    if ((node.op === 'call' || node.op === 'rcall') && Array.isArray(node.args) && typeof node.args[0] === 'string') {
      const name = node.args[0];
      const receiver = node.op === 'rcall' ? (node.args[1] as CelAstNode | undefined) : undefined;
      if (
        receiver?.op === 'id' &&
        typeof receiver.args === 'string' &&
        NAMESPACES.has(receiver.args) &&
        !bound.has(receiver.args)
      ) {
        const qualified = `${receiver.args}.${name}`;
        if (!NAMESPACED.has(qualified) && !ADDED_NAMESPACED.has(qualified)) calls.add(`${qualified}()`);
      } else if (
        node.op === 'call'
          ? !FUNCTIONS.has(name) && !ADDED_FUNCTIONS.has(name)
          : !METHODS.has(name) && !ADDED_METHODS.has(name)
      ) {
        calls.add(node.op === 'call' ? `${name}()` : `.${name}()`);
      }
      // A macro's variables (`self.all(ip, ip.startsWith('10.'))`) name values, not a library.
      const macroArgs = node.op === 'rcall' && MACROS.has(name) ? node.args[2] : undefined;
      if (Array.isArray(macroArgs)) {
        const names = macroArgs
          .slice(0, -1)
          .flatMap((a: CelAstNode) => (a?.op === 'id' && typeof a.args === 'string' ? [a.args] : []));
        visit(node.args.slice(0, 2), bound);
        visit(macroArgs, new Set([...bound, ...names]));
        return;
      }
    }
    if (node.args !== undefined) visit(node.args, bound);
  };
  visit(ast, new Set());
  return calls;
}

/** The comprehension macros: their leading identifiers are variables of the expression after them. */
const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** Why an expression with such calls is unknown, in the user's words. */
export function unsupportedWhy(calls: ReadonlySet<string>): string {
  return `it uses ${[...calls].join(', ')}, ${calls.size === 1 ? 'a Kubernetes CEL function' : 'Kubernetes CEL functions'} the product's CEL library does not have`;
}

type Run = { ok: true; value: unknown } | { ok: false; why: string; runtime: boolean; words?: string };

function run(compiled: Extract<Compiled, { ok: true }>, ctx: Record<string, unknown>): Run {
  try {
    return { ok: true, value: compiled.evaluate(ctx) };
  } catch (e) {
    const message = firstLine(e);
    const words = goRuntimeError(e);
    if (words !== undefined)
      return { ok: false, why: `it fails at run time as the server's does (${words})`, runtime: true, words };
    // Errors the server's CEL gives too (index out of bounds, overflow) in other words; anything
    // else may be the library's own limit.
    const runtime = /out of bounds|overflow/i.test(message);
    return { ok: false, why: `the product's CEL library cannot evaluate it here (${message})`, runtime };
  }
}

/**
 * The API server's words (cel-go's) for a run-time error the product's CEL library gave, where they
 * are known: a missing key, an index out of bounds, a division or modulus by zero, an integer
 * overflow, and the Kubernetes libraries' own errors (written in the server's words).
 */
export function goRuntimeError(e: unknown): string | undefined {
  if (e instanceof CelRuntimeError) return e.message;
  const cause = e instanceof Error && e.cause instanceof CelRuntimeError ? e.cause : undefined;
  if (cause) return cause.message;
  const message = firstLine(e);
  let m = /^No such key: index out of bounds, index (-?\d+)/.exec(message);
  if (m) return `index out of bounds: ${m[1]}`;
  m = /^No such key: (.*)$/.exec(message);
  if (m) return `no such key: ${m[1]}`;
  if (message === 'division by zero') return message;
  if (message === 'modulo by zero') return 'modulus by zero';
  if (/^integer overflow\b/.test(message)) return 'integer overflow';
  return overloadWords(message);
}

/** The runtime types whose names cel-go writes as the product's CEL library does. */
const GO_TYPE_NAMES: Readonly<Record<string, string>> = {
  int: 'int',
  uint: 'uint',
  double: 'double',
  bool: 'bool',
  string: 'string',
  'net.IP': 'net.IP',
  'net.CIDR': 'net.CIDR',
  'kubernetes.URL': 'kubernetes.URL',
};

/**
 * A call no overload of which takes its arguments' runtime types (a number where a string is
 * wanted: an int-or-string value): cel-go says `no such overload: isIP(int)` for a Kubernetes
 * library function (the receiver's type first for a method: `containsIP(net.CIDR, int)`), and only
 * `no such overload` for a method of CEL's standard library (`startsWith`). Only calls on plain
 * values are answered; others (lists, maps, operators) are left unknown.
 */
function overloadWords(message: string): string | undefined {
  const m = /^found no matching overload for '([\w.]+)\(([^()]*)\)'$/.exec(message);
  if (!m) return undefined;
  const args = m[2] === '' ? [] : m[2]!.split(', ');
  const dot = m[1]!.lastIndexOf('.');
  const name = dot < 0 ? m[1]! : m[1]!.slice(dot + 1);
  const receiver = dot < 0 ? undefined : m[1]!.slice(0, dot);
  const types = [...(receiver !== undefined ? [receiver] : []), ...args].map((t) => GO_TYPE_NAMES[t]);
  if (types.some((t) => t === undefined)) return undefined;
  const kubernetes = receiver === undefined ? ADDED_FUNCTIONS.has(name) : ADDED_METHODS.has(name);
  const standard = receiver === undefined ? FUNCTIONS.has(name) : METHODS.has(name);
  if (kubernetes && !standard) return `no such overload: ${name}(${types.join(', ')})`;
  // A standard method on a number or a bool: cel-go has none (the product's library may lack an
  // overload cel-go has on a string, such as split(string, int), so strings are not answered).
  if (standard && !kubernetes && receiver !== undefined && ['int', 'uint', 'double', 'bool'].includes(receiver))
    return 'no such overload';
  return undefined;
}

export function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!.trim();
}

// -------------------------------------------------------------------------------------------------
// Values: JSON as Kubernetes' CEL types it from the schema

class Unsupported extends Error {}

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** A property name as CEL spells it (apiserver/pkg/cel escaping); undefined when it cannot be spelled. */
export function escapeProperty(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_][a-zA-Z0-9_./-]*$/.test(name)) return undefined;
  return name.replace(/__|\.|-|\//g, (m) =>
    m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__',
  );
}

function record(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

function toCel(node: CelNode | undefined, v: JsonValue, resourceRoot: boolean): unknown {
  if (v === null) return null;
  if (!node || (node.preserveUnknownFields && !node.properties && !node.additionalProperties && !node.items))
    return untyped(v);
  if (node.intOrString) return typeof v === 'number' ? integer(v) : v;
  switch (node.type) {
    case 'integer':
      if (typeof v !== 'number') throw new Unsupported(`the value ${JSON.stringify(v)} is not an integer`);
      return integer(v);
    case 'number':
      return v;
    case 'string':
      if (node.format !== undefined && ['date', 'date-time', 'datetime', 'duration', 'byte'].includes(node.format)) {
        throw new Unsupported(
          `it reads a string of format ${node.format}, which Kubernetes' CEL types as a ${node.format === 'duration' ? 'duration' : node.format === 'byte' ? 'bytes value' : 'timestamp'}`,
        );
      }
      return v;
    case 'array':
      return Array.isArray(v) ? v.map((x) => toCel(node.items, x, node.items?.embeddedResource === true)) : untyped(v);
    case 'object':
    case '': {
      if (!isJsonObject(v)) return untyped(v);
      const out = record();
      const resource = resourceRoot || node.embeddedResource === true;
      if (node.properties) {
        for (const [k, x] of Object.entries(v)) {
          // A resource's metadata is replaced below by the part CEL sees.
          if (resource && k === 'metadata') continue;
          const sub = Object.hasOwn(node.properties, k) ? node.properties[k] : undefined;
          const name = escapeProperty(k);
          if (name === undefined) continue;
          if (sub) out[name] = toCel(sub, x, sub.embeddedResource === true);
          else if (node.preserveUnknownFields) out[name] = untyped(x);
        }
      } else if (node.additionalProperties) {
        for (const [k, x] of Object.entries(v))
          out[k] = toCel(node.additionalProperties, x, node.additionalProperties.embeddedResource === true);
      } else if (node.preserveUnknownFields) {
        return untyped(v);
      }
      if (resource) {
        if (typeof v.apiVersion === 'string') out.apiVersion = v.apiVersion;
        if (typeof v.kind === 'string') out.kind = v.kind;
        const meta = isJsonObject(v.metadata) ? v.metadata : undefined;
        if (meta) {
          const visible = record();
          if (typeof meta.name === 'string') visible.name = meta.name;
          if (typeof meta.generateName === 'string') visible.generateName = meta.generateName;
          out.metadata = visible;
        }
      }
      return out;
    }
    default:
      return untyped(v);
  }
}

function integer(v: number): bigint {
  if (!Number.isSafeInteger(v)) throw new Unsupported(`the number ${v} is not an integer the product reads exactly`);
  return BigInt(v);
}

/** Values without a schema type: JSON integers are CEL ints, other numbers doubles. */
function untyped(v: JsonValue): unknown {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(untyped);
  if (isJsonObject(v)) {
    const out = record();
    for (const [k, x] of Object.entries(v)) out[k] = untyped(x);
    return out;
  }
  return v;
}

function hasUnorderedList(node: CelNode | undefined, depth = 0): boolean {
  if (!node || depth > 64) return false;
  if (node.type === 'array' && (node.listType === 'set' || node.listType === 'map')) return true;
  if (node.items && hasUnorderedList(node.items, depth + 1)) return true;
  if (node.additionalProperties && hasUnorderedList(node.additionalProperties, depth + 1)) return true;
  return Object.values(node.properties ?? {}).some((p) => hasUnorderedList(p, depth + 1));
}

/** The same values with every set and map list sorted: what the server's order-blind equality sees. */
function sortedActivation(
  node: CelNode,
  value: JsonValue,
  old: JsonValue | undefined,
  resourceRoot: boolean,
  optional: boolean,
): Record<string, unknown> {
  const self = toCel(node, sortLists(node, value), resourceRoot);
  if (old === undefined) return optional ? { self, oldSelf: Optional.none() } : { self };
  const oldSelf = toCel(node, sortLists(node, old), resourceRoot);
  return { self, oldSelf: optional ? Optional.of(oldSelf) : oldSelf };
}

function sortLists(node: CelNode | undefined, v: JsonValue): JsonValue {
  if (!node) return v;
  if (Array.isArray(v)) {
    const items = v.map((x) => sortLists(node.items, x));
    if (node.listType !== 'set' && node.listType !== 'map') return items;
    const keyOf = (x: JsonValue) =>
      JSON.stringify(
        node.listType === 'map' && isJsonObject(x) ? (node.listMapKeys ?? []).map((k) => x[k] ?? null) : x,
      );
    return [...items].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  }
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v))
      out[k] = sortLists(
        node.properties && Object.hasOwn(node.properties, k) ? node.properties[k] : node.additionalProperties,
        x,
      );
    return out;
  }
  return v;
}

// -------------------------------------------------------------------------------------------------
// Defaults, as the server applies them when it decodes the object (structural defaulting)

/** The object with the schema's defaults filled in where a field is absent (or null and not nullable). */
export function withDefaults(node: CelNode, v: JsonValue): JsonValue {
  if (Array.isArray(v)) return node.items ? v.map((x) => withDefaults(node.items!, x)) : v;
  if (!isJsonObject(v)) return v;
  const out: JsonObject = { ...v };
  if (node.properties) {
    for (const [k, sub] of Object.entries(node.properties)) {
      const present = Object.hasOwn(out, k) && !(out[k] === null && !sub.nullable);
      if (!present && sub.default !== undefined) out[k] = structuredClone(sub.default);
      if (Object.hasOwn(out, k) && out[k] !== null) out[k] = withDefaults(sub, out[k]!);
    }
  } else if (node.additionalProperties) {
    for (const [k, x] of Object.entries(out)) if (x !== null) out[k] = withDefaults(node.additionalProperties, x);
  }
  return out;
}

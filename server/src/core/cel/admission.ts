// The CEL of ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) as the API server
// evaluates it (k8s.io/apiserver pkg/admission/plugin/policy/validating): the expressions of a
// policy's matchConditions, variables and validations see `object`, `oldObject` (null on a create),
// `params`, `namespaceObject`, `request` and `variables`, and `authorizer`.
//
// Values are the JSON of the objects (integers as CEL ints, other numbers as doubles). The
// Kubernetes libraries a policy commonly calls are added where the product's CEL library lacks them
// (k8s.io/apiserver pkg/cel/library): lists (`isSorted`, `sum`, `min`, `max`, `indexOf`,
// `lastIndexOf`), regex (`find`, `findAll`), quantity (`quantity`, `isQuantity` and the Quantity
// methods), semver (`semver`, `isSemver` and the Semver methods), URLs, IP addresses, CIDRs and
// named formats, and the standard `matches(string, string)`. An expression that fails at run time
// as the server's does is an `error` answer, in the server's words where they are known (the policy's
// failurePolicy then decides). What is not here — `authorizer`, `request.userInfo`, the `sets` and
// `strings` extensions, an expression the library cannot compile or evaluate, a key missing where
// the server may fill it — is an `unknown` answer, for the dry run to decide; never a guess.
import { Environment } from '@marcbachmann/cel-js';
import { isJsonObject, type JsonValue } from '../json';
import { firstLine, goRuntimeError, unsupportedCalls, unsupportedWhy } from './validate';
import { withKubernetesLibraries } from './libraries';
import { CelRuntimeError } from './network';

export { parseQuantity } from './libraries';

export type PolicyAnswer =
  | { readonly kind: 'value'; readonly value: unknown }
  /** The product cannot tell: the library lacks something, or the expression reads what is not known. */
  | { readonly kind: 'unknown'; readonly why: string }
  /**
   * The expression fails at run time as the server's does (a missing key, a division by zero, a
   * text url() or ip() refuses); `words` are the server's CEL error, where the product knows them.
   */
  | { readonly kind: 'error'; readonly why: string; readonly words?: string };

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

let environment: Environment | undefined;
function env(): Environment {
  environment ??= withKubernetesLibraries(
    new Environment({ enableOptionalTypes: true })
      .registerVariable('object', 'dyn')
      .registerVariable('oldObject', 'dyn')
      .registerVariable('params', 'dyn')
      .registerVariable('namespaceObject', 'dyn')
      .registerVariable('request', 'dyn')
      .registerVariable('variables', 'dyn'),
  );
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
  const calls = unsupportedCalls(parsed.ast);
  if (calls.size > 0) return { variables, why: unsupportedWhy(calls) };
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

/**
 * Objects converted once, whatever input they are part of: the stored and the live object for
 * every policy and binding that judges them, a param object for every object it judges (values are
 * never changed once made, and the CEL library only reads them).
 */
const convertedObjects = new WeakMap<object, unknown>();

function celValueOnce(v: JsonValue): unknown {
  if (v === null || typeof v !== 'object') return celValue(v);
  let c = convertedObjects.get(v);
  if (c === undefined) convertedObjects.set(v, (c = celValue(v)));
  return c;
}

/** One expression's answer on the input. */
export function evaluatePolicyExpression(expression: string, input: PolicyInput): PolicyAnswer {
  const c = compile(expression);
  if (!c.evaluate) return { kind: 'unknown', why: c.why ?? 'it cannot be compiled' };
  const values = new Map<string, unknown>();
  for (const name of c.variables) {
    const v = input.variables.get(name);
    if (v === undefined) continue;
    // A variable that fails in known words fails the expression only if it is read (below).
    if (v.kind === 'error' && v.words !== undefined) continue;
    if (v.kind !== 'value') return { kind: 'unknown', why: `it reads variables.${name}, which is unknown: ${v.why}` };
    values.set(name, v.value);
  }
  let base = converted.get(input);
  if (!base) {
    base = {
      object: celValueOnce(input.object),
      oldObject: celValueOnce(input.oldObject),
      params: celValueOnce(input.params),
      namespaceObject: celValue(input.namespaceObject),
      request: celValue(input.request),
    };
    converted.set(input, base);
  }
  const variables = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of input.variables) {
    if (v.kind === 'value') variables[k] = v.value;
    else if (v.kind === 'error' && v.words !== undefined) {
      // The server evaluates a variable when an expression reads it (composited variables):
      // its error is then the expression's, in these words.
      const words = `composited variable ${JSON.stringify(k)} fails to evaluate: ${v.words}`;
      Object.defineProperty(variables, k, {
        enumerable: true,
        get() {
          throw new CelRuntimeError(words);
        },
      });
    }
  }
  try {
    return { kind: 'value', value: c.evaluate({ ...base, variables }) };
  } catch (e) {
    const words = goRuntimeError(e);
    const missing = words !== undefined ? /^no such key: (.*)$/.exec(words) : null;
    if (missing) {
      // The key may be one the server fills before the policy sees the object (a built-in kind's
      // defaults, a CRD's): only where nothing fills it is the error the server's too.
      const path = missingKeyPath(c.evaluate, { ...base, variables });
      if (!path || path[path.length - 1] !== missing[1])
        return { kind: 'unknown', why: `it fails here (${words}), at a key the product cannot place` };
      if (!nothingFills(path, input))
        return {
          kind: 'unknown',
          why: `it reads ${path.join('.').replaceAll('.[]', '[]')}, which the manifest does not write and the server may fill (its defaults) before the policy runs`,
        };
    }
    if (words !== undefined) return { kind: 'error', why: words, words };
    const message = firstLine(e);
    // Errors the server's CEL gives too, in words the product does not know; anything else may be
    // the library's own limit.
    if (/out of bounds|overflow|could not parse semver|quantities must match/i.test(message))
      return { kind: 'error', why: message };
    return { kind: 'unknown', why: `the product's CEL library cannot evaluate it here (${message})` };
  }
}

/**
 * Where an expression's missing key is (`object.spec.template.spec.containers.[].imagePullPolicy`):
 * the expression again, on values that note each key looked up and not found; the last is the one
 * the error names.
 */
function missingKeyPath(
  evaluate: (ctx: Record<string, unknown>) => unknown,
  ctx: Record<string, unknown>,
): string[] | undefined {
  let last: string[] | undefined;
  const plain = (v: unknown): v is object =>
    typeof v === 'object' &&
    v !== null &&
    (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype);
  const wrap = (v: unknown, path: string[]): unknown => {
    if (Array.isArray(v))
      return new Proxy(v, {
        get: (t, k, r) => {
          const x: unknown = Reflect.get(t, k, r);
          return typeof k === 'string' && /^\d+$/.test(k) ? wrap(x, [...path, '[]']) : x;
        },
      });
    if (!plain(v)) return v;
    const miss = (t: object, k: string | symbol): void => {
      if (typeof k === 'string' && !Reflect.has(t, k)) last = [...path, k];
    };
    return new Proxy(v, {
      get: (t, k, r) => {
        miss(t, k);
        const x: unknown = Reflect.get(t, k, r);
        return typeof k === 'string' ? wrap(x, [...path, k]) : x;
      },
      has: (t, k) => {
        miss(t, k);
        return Reflect.has(t, k);
      },
      getOwnPropertyDescriptor: (t, k) => {
        miss(t, k);
        return Reflect.getOwnPropertyDescriptor(t, k);
      },
    });
  };
  const traced: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(ctx)) traced[k] = k === 'variables' ? v : wrap(v, [k]);
  try {
    evaluate(traced);
  } catch {
    return last;
  }
  return undefined;
}

/**
 * Whether a key missing at this path is missing on the server too: the live object (`oldObject`),
 * the params and the request are as the server has them; the namespace's labels are; of the object
 * the request would store, only free-form maps nothing defaults — its labels and annotations (a
 * Namespace's excepted: the server labels it with its name) and a ConfigMap's data. Anything else
 * may be filled by the server's defaults (a built-in kind's, a CRD's) before the policy runs.
 */
function nothingFills(path: readonly string[], input: PolicyInput): boolean {
  const [root, ...rest] = path;
  if (root === 'oldObject' || root === 'params' || root === 'request') return true;
  if (root === 'namespaceObject') return rest[0] === 'metadata' && rest[1] === 'labels';
  if (root !== 'object') return false;
  const kind = isJsonObject(input.request.kind) ? input.request.kind : {};
  const core = kind.group === '';
  if (rest[0] === 'metadata' && (rest[1] === 'labels' || rest[1] === 'annotations'))
    return !(core && kind.kind === 'Namespace' && rest[1] === 'labels');
  return core && kind.kind === 'ConfigMap' && (rest[0] === 'data' || rest[0] === 'binaryData');
}

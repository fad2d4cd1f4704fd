// Turning failed requests into ClusterProblem records. Pure: no I/O, unit-tested with Status bodies
// captured from a real kube-apiserver.
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json';
import { redactProblem } from './redact';
import type { ClusterProblem, ConflictCause } from './types';

/** What came back from one HTTP request, before any interpretation. */
export type HttpOutcome =
  | {
      kind: 'response';
      status: number;
      body: string;
      /** The server's Retry-After (429, 503), in milliseconds from when the answer arrived. */
      retryAfterMs?: number;
      /** The answer's ETag (a 200 or 304), for a later If-None-Match (ReadRequest.ifNoneMatch). */
      etag?: string;
    }
  | { kind: 'network'; code: string; message: string };

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when
 * absent or unreadable. Capped: a misconfigured server must not silence the editor for days.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number | undefined;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const date = Date.parse(text);
    if (!Number.isNaN(date)) ms = Math.max(0, date - now);
  }
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** A 429: the server (API Priority and Fairness, a gateway) asks this client to slow down. */
export function isThrottled(problem: ClusterProblem): boolean {
  return problem.httpStatus === 429;
}

/** A 5xx: the server (or a proxy in front of it) failed to answer. */
export function isServerFailure(problem: ClusterProblem): boolean {
  return problem.httpStatus !== undefined && problem.httpStatus >= 500;
}

/** What a request was for, so that a 403 can say "cannot list deployments.apps in default". */
export interface RequestPurpose {
  method: string;
  path: string;
  verb?: string;
  /** resource[.group] */
  resource?: string;
  namespace?: string;
  /** A read whose refusal (403) only leaves a fact unknown (does a namespace exist): no health problem. */
  optional?: boolean;
}

/** A metav1.Status body (apimachinery/pkg/apis/meta/v1/types.go), when the body is one. */
export interface StatusBody {
  message: string;
  reason: string;
  code: number;
  causes: ConflictCause[];
  details?: JsonObject;
}

export function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

export function parseStatus(body: string): StatusBody | undefined {
  const parsed = parseJson(body);
  if (!isJsonObject(parsed) || parsed.kind !== 'Status') return undefined;
  const details = isJsonObject(parsed.details) ? parsed.details : undefined;
  return {
    message: typeof parsed.message === 'string' ? parsed.message : '',
    reason: typeof parsed.reason === 'string' ? parsed.reason : '',
    code: typeof parsed.code === 'number' ? parsed.code : 0,
    causes: uniqueCauses(details?.causes),
    ...(details ? { details } : {}),
  };
}

/**
 * The causes of a Status, each once. The server can list the same conflict more than once
 * (kubernetes/kubernetes#119141), so equal (reason, message, field) triples are merged.
 */
export function uniqueCauses(raw: JsonValue | undefined): ConflictCause[] {
  if (!Array.isArray(raw)) return [];
  const seen = new Set<string>();
  const causes: ConflictCause[] = [];
  for (const item of raw) {
    if (!isJsonObject(item)) continue;
    const cause: ConflictCause = {
      reason: typeof item.reason === 'string' ? item.reason : '',
      message: typeof item.message === 'string' ? item.message : '',
      field: typeof item.field === 'string' ? item.field : '',
    };
    const key = JSON.stringify([cause.reason, cause.message, cause.field]);
    if (seen.has(key)) continue;
    seen.add(key);
    causes.push(cause);
  }
  return causes;
}

/** The request's client certificate or key cannot be used (the transport checks them before sending). */
export const CLIENT_CREDENTIAL = 'CLIENT_CREDENTIAL';
/** The request could not be made with the kubeconfig's settings (a certificate authority, the server URL). */
export const CLIENT_SETUP = 'CLIENT_SETUP';

// Network error codes that mean "the server could not be reached" rather than "it said no".
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EADDRNOTAVAIL',
  CLIENT_SETUP,
]);

/**
 * The problem behind a request that did not succeed (any non-2xx response, or no response). Its
 * message is shown to users as it is, so it never carries a credential (see redact.ts).
 */
export function classifyFailure(outcome: HttpOutcome, purpose: RequestPurpose): ClusterProblem {
  return redactProblem(describeFailure(outcome, purpose));
}

function describeFailure(outcome: HttpOutcome, purpose: RequestPurpose): ClusterProblem {
  const request = `${purpose.method} ${purpose.path}`;
  if (outcome.kind === 'network') {
    if (outcome.code === 'EXEC_CREDENTIAL' || outcome.code === CLIENT_CREDENTIAL) {
      return { kind: 'unauthenticated', message: outcome.message, code: outcome.code, request };
    }
    const unreachable =
      UNREACHABLE_CODES.has(outcome.code) || outcome.code.startsWith('ERR_TLS') || /CERT|SSL/.test(outcome.code);
    return {
      kind: unreachable ? 'unreachable' : 'other',
      message: outcome.message,
      code: outcome.code,
      request,
    };
  }
  const status = parseStatus(outcome.body);
  const message = status?.message || `${outcome.status} ${firstLine(outcome.body) || 'no message'}`;
  const common = {
    message,
    httpStatus: outcome.status,
    ...(status?.reason ? { reason: status.reason } : {}),
    request,
  };
  const wait =
    outcome.retryAfterMs !== undefined
      ? `; it asks to wait ${Math.ceil(outcome.retryAfterMs / 1000)} s before trying again`
      : '';
  switch (outcome.status) {
    case 401:
      return {
        kind: 'unauthenticated',
        ...common,
        message: `The cluster refused the credentials (401 ${status?.message || 'Unauthorized'}).`,
      };
    case 429:
      return {
        kind: 'other',
        ...common,
        message: `The cluster is throttling requests (429 Too Many Requests${wait}): ${message}`,
      };
    case 403:
      return { kind: 'forbidden', ...common, ...forbiddenScope(message, purpose) };
    case 404:
      return { kind: 'notFound', ...common };
    default:
      // A read that fails says the server is in trouble; a dry run's 500 is often its verdict on the
      // object (resourceVersion set on a create), so its words stand alone.
      if (outcome.status >= 500 && purpose.method === 'GET')
        return {
          kind: 'other',
          ...common,
          message: `The cluster is failing (HTTP ${outcome.status}${wait}): ${message}`,
        };
      return { kind: 'other', ...common };
  }
}

// The authorizer's wording (apiserver/pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage):
//   User "x" cannot list resource "deployments" in API group "apps" in the namespace "default"
const FORBIDDEN_MESSAGE = /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]*)")?/;

function forbiddenScope(
  message: string,
  purpose: RequestPurpose,
): Pick<ClusterProblem, 'verb' | 'resource' | 'namespace'> {
  const m = FORBIDDEN_MESSAGE.exec(message);
  if (m) {
    const [, verb, resource, group, namespace] = m;
    return {
      verb: verb!,
      resource: group ? `${resource}.${group}` : resource!,
      ...(namespace ? { namespace } : {}),
    };
  }
  return {
    ...(purpose.verb ? { verb: purpose.verb } : {}),
    ...(purpose.resource ? { resource: purpose.resource } : {}),
    ...(purpose.namespace ? { namespace: purpose.namespace } : {}),
  };
}

/** The first line of a body or an error that says something, trimmed and cut at 200 characters. */
export function firstLine(text: string): string {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l) ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
